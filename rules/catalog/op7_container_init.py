"""OP-7.191: Docker could not stop vLLM's container: its main process is a zombie, because nothing in it reaps.

Why a rule of its own: vLLM's server is a tree of processes (the API server, the engine core, a worker per GPU, and
compile and tokenizer helpers), and in a container started without an init the server itself is PID 1, the process
that must reap the children that exit (orphans are handed to it) and that ignores a signal it set no handler for. A
Python server is no init, so on `docker stop` or `docker restart` children that exited can stay zombies and PID 1
end up one too. Docker then gives up with `container PID is zombie and can not be killed. Use the --init
option when creating containers to run an init inside the container that forwards signals and reaps processes` (the
daemon's own advice). Docker's `--init` runs a small init (tini) as PID 1 that forwards the signals and reaps.
Source: NVIDIA/NemoClaw#7219 (`docker restart` of a managed vLLM container created without `--init`, on DGX Station
GB300; starting the stopped container again restored inference; the reporter proposes `--init` for every such
container).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity


def _zombie_finding(facts: Facts, event: LogEvent, _match: object) -> Finding:
    return RULE_CONTAINER_INIT.finding(
        Severity.HIGH,
        "Docker could not stop the vLLM container: its main process is a zombie, as the container runs no init",
        summary="vLLM's server runs as a tree of processes (API server, engine core, a worker per GPU), and in a "
        "container without an init the server is PID 1, which must reap the children that exit. On stop or restart "
        "they stayed zombies and so did PID 1, which no signal removes; Docker's message names its own fix, an init "
        "as PID 1.",
        evidence=[c.log_evidence(event, name="Docker's refusal to kill the container")],
        changes=[
            ConfigChange(
                flag="docker run --init",
                proposed="--init",
                reason="Docker runs tini as PID 1: it forwards stop signals to vLLM's server and reaps the processes "
                "that exit, so stop and restart complete",
                cost="none worth naming: one small process",
                kind="setting",
            )
        ],
        actions=[
            "Recreate the container with `docker run --init …` (Compose: `init: true` under the service); a restart "
            "policy or `docker restart` keeps the old container's settings, so it must be recreated.",
            "Until then, `docker start` the stopped container to serve again (it did in NVIDIA/NemoClaw#7219).",
        ],
        confidence=0.8,
    )


RULE_CONTAINER_INIT = Rule(
    code="OP-7.191",
    title="Docker cannot stop a vLLM container that runs without an init",
    category=Category.RELIABILITY,
    check=c.on_kind(LogEventKind.CONTAINER_ZOMBIE, _zombie_finding),
    needs=("events",),
    page=RulePage(
        checks="Docker's `container PID is zombie and can not be killed. Use the --init option …` on stop or restart.",
        why="vLLM's server is PID 1 of a container without an init: it neither reaps its exited children nor "
        "stops as an init would, so Docker cannot stop the container.",
        example="`docker restart` of a vLLM container created without `--init` timing out with the zombie message "
        "(NVIDIA/NemoClaw#7219).",
        fix="Create the container with `--init` (Compose `init: true`).",
        limits="Kubernetes runs no such init by default either, but says it in other words (a pod stuck "
        "Terminating); only Docker's message is read.",
        references=["https://github.com/NVIDIA/NemoClaw/issues/7219"],
    ),
)

RULES: list[Rule] = [RULE_CONTAINER_INIT]
