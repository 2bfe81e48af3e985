"""OP-7.191: Docker cannot stop a vLLM container without an init: its PID 1 is a zombie; `--init` is the fix."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# NVIDIA/NemoClaw#7219, verbatim: `docker restart` of a managed vLLM container created without --init
ZOMBIE = (
    "container PID is zombie and can not be killed. Use the --init option when creating containers to run an init "
    "inside the container that forwards signals and reaps processes"
)


def test_dockers_zombie_refusal_proposes_an_init_as_a_container_setting():
    top = top_finding(ZOMBIE)
    assert top.rule == "OP-7.191" and top.severity.value == "high"
    [change] = top.changes
    assert (change.flag, change.proposed, change.kind) == ("docker run --init", "--init", "setting")
    assert "must be recreated" in top.actions[0] and "init: true" in top.actions[0]


def test_a_container_that_was_merely_stopped_is_not_read_as_a_zombie():
    top = top_finding("Error response from daemon: Container 3f2a is not running")
    assert top is None or top.rule != "OP-7.191"
