"""The closed loop: apply a change, ramp again, keep it or roll it back (`servops tune`, `servops demo`).

Answers "did the change really help?": `measure` ramps a running server and triages it, `round`
chooses the change to try from the performance model's ranking, `loop` runs rounds until nothing
helps, `demo` is the same loop on the bundled engine with a planted misconfiguration.
"""
