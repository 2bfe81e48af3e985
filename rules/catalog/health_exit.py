"""HL-7: the text holds only a process's exit noise, the lines every stopping process prints, whatever stopped it.

Why a rule of its own: the last lines of a crashed container's log are what a person copies first, and they are
often only what Python and PyTorch print on the way out: ProcessGroupNCCL's `destroy_process_group() was not called
before program exit, which can leak resources` (every exit of a process that used NCCL without destroying its group,
torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp), the multiprocessing resource tracker's `There appear to be N leaked
shared_memory objects to clean up at shutdown` (Lib/multiprocessing/resource_tracker.py: the process that created them
died first), and `Exception ignored in: <function … __del__>` from objects torn down after the interpreter began to
exit. None says why the process stopped; read as a cause, each sends the night the wrong way. A fallback: any other
finding, which names something the text does say, takes its place.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check(facts: Facts) -> list[Finding]:
    noise = facts.events_of(LogEventKind.EXIT_NOISE)
    if not noise:
        return []
    kinds = list(dict.fromkeys(e.message for e in noise if e.message))
    return [
        RULE.finding(
            Severity.LOW,
            "the text holds only the process's exit noise (" + ", ".join(kinds) + "): why it stopped is in the "
            "lines before",
            summary="These lines are printed by every process of a vLLM server on its way out, whether it finished, "
            "was killed or crashed: PyTorch's warning about a process group not destroyed, Python's resource "
            "tracker cleaning up shared memory a dead process left, objects whose finaliser failed at shutdown. They "
            "say nothing of the cause.",
            evidence=[c.log_evidence(e, name="exit noise", value=e.message) for e in noise[:3]],
            actions=[
                "Fetch the lines before them: `kubectl logs <pod> --previous --tail=-1`, `docker logs <container> "
                "2>&1 | tail -n 1000`, `journalctl -u <unit> -n 1000`, and paste the whole into `servops triage --logs "
                "-`; the first ERROR or Traceback above the noise is the cause.",
                "Nothing above them (the log just stops): the process was killed from outside, SIGKILL from the OOM "
                "killer or an orchestrator; `kubectl describe pod` (Last State) or `dmesg` says which.",
            ],
            confidence=0.5,
        )
    ]


RULE = Rule(
    code="HL-7",
    title="the text holds only a process's exit noise",
    category=Category.HEALTH,
    check=_check,
    needs=("events",),
    fallback="failure",
    page=RulePage(
        checks="PyTorch's `destroy_process_group() was not called before program exit`, Python's resource tracker's "
        "`There appear to be N leaked shared_memory objects to clean up at shutdown`, `Exception ignored in: "
        "<function … __del__ …>`.",
        why="The last lines of a stopped server are what gets copied first, and these are printed by every exit: "
        "read as the cause, each points the wrong way.",
        example="A pod's log ending in `[rank0]:[W1201 …] ProcessGroupNCCL.cpp:1538] Warning: WARNING: "
        "destroy_process_group() was not called before program exit`; the engine's traceback was 300 lines above.",
        fix="The lines before them (the previous container's whole log); with nothing above, the kill from outside.",
        limits="A fallback: any other finding in the text takes its place.",
        references=["https://pytorch.org/docs/stable/distributed.html#shutdown"],
    ),
)

RULES: list[Rule] = [RULE]
