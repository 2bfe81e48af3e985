"""OP-7.191: Docker cannot stop a vLLM container whose PID 1 is a zombie; `--init` is the daemon's own advice."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.events import LogEventKind
from tests.unit.rules.factories import top_finding

# NVIDIA/NemoClaw#7219, verbatim: `docker restart` of a managed vLLM container created without --init (its reporter
# quoted the daemon's message without the container's id and PID)
ZOMBIE = (
    "container PID is zombie and can not be killed. Use the --init option when creating containers to run an init "
    "inside the container that forwards signals and reaps processes"
)
# the daemon's own wording names the container and the PID (moby's container stop: `container %s PID %d is zombie …`)
DAEMON = (
    "Error response from daemon: Cannot restart container vllm: container 3f2a1b9c8d7e PID 4032621 is zombie and can "
    "not be killed. Use the --init option when creating containers to run an init inside the container that forwards "
    "signals and reaps processes"
)


def test_dockers_zombie_refusal_proposes_an_init_and_asks_whether_there_was_one():
    top = top_finding(ZOMBIE)
    assert top.rule == "OP-7.191" and top.severity.value == "high"
    [change] = top.changes
    assert (change.flag, change.proposed, change.kind) == ("docker run --init", "--init", "setting")
    assert "HostConfig.Init" in top.actions[0] and "must be recreated" in top.actions[0]
    assert "awk '$2 ~ /D/'" in top.actions[1] and "Xid" in top.actions[1]  # an init already: what cannot die


def test_the_daemons_own_words_with_the_container_and_pid_read_the_same():
    assert top_finding(DAEMON).rule == "OP-7.191"


def test_words_without_the_daemons_phrase_are_no_zombie():
    line = "Error response from daemon: Container 3f2a is not running"
    assert not parse_lines([line]).of_kind(LogEventKind.CONTAINER_ZOMBIE)
