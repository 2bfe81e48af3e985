"""OP-7.94: a launcher that starts vLLM gave up on it or hid its output (Lemonade's journal lines as
noamsto/nix-amd-ai#68 pasted them; InstructLab's line from instructlab/instructlab#3466, verbatim)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_launchers
from rules.evaluate import evaluate
from rules.facts import Facts

_WAIT = "Jul 25 14:36:08 zentraldenker lemond[594237]: Waiting for vllm-server to be ready (timeout: {secs}s)..."
_FAILED = (
    "Jul 25 14:36:08 zentraldenker lemond[594237]: 2026-07-25 14:36:08.362 [Error] (WrappedServer) vllm-server failed "
    "to start within timeout"
)


def _facts(*lines: str) -> Facts:
    return Facts(events=parse_lines(list(lines)).events)


def test_a_wait_of_zero_is_lemonades_global_timeout_not_vllm():
    top = evaluate(_facts(_WAIT.format(secs=0), _FAILED)).top
    assert top.rule == "OP-7.94" and top.title.startswith("Lemonade waited 0 s for vllm-server")
    [change] = top.changes
    assert (change.flag, change.current, change.proposed, change.kind) == ("global_timeout", "0", "600", "setting")


def test_a_wait_that_ran_out_doubles_it():
    [finding] = op7_launchers.RULE_LAUNCHERS.evaluate(_facts(_WAIT.format(secs=600), _FAILED))
    assert "after 600 s" in finding.title
    assert finding.changes[0].proposed == "1200"


def test_the_failure_alone_still_names_the_setting():
    [finding] = op7_launchers.RULE_LAUNCHERS.evaluate(_facts(_FAILED))
    assert finding.changes[0].current is None and finding.changes[0].proposed == "1200"  # twice the default wait


def test_the_wait_alone_is_no_failure():
    assert op7_launchers.RULE_LAUNCHERS.evaluate(_facts(_WAIT.format(secs=600))) == []


def test_instructlab_asks_for_its_serving_output():
    line = "vLLM failed to start.  Retry with --enable-serving-output to learn more about the failure."
    top = evaluate(_facts(line)).top
    assert top.rule == "OP-7.94" and "--enable-serving-output" in top.actions[0]
