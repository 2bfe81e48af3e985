"""OP-1.11: the API server stopped waiting for the engine before the engine had started (the engine-ready wait)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op1_engine_ready
from rules.facts import Facts

OLD_WORDS = (
    "(ApiServer_3 pid=39385) TimeoutError: Timed out waiting for engines to send initial message on input socket."
)
NEW_WORDS = (
    "TimeoutError: Timed out waiting for engine core processes to start. This is often caused by slow weight loading "
    "for large models. Waited 900s (configured by VLLM_ENGINE_READY_TIMEOUT_S). To increase the timeout, set the "
    "environment variable: VLLM_ENGINE_READY_TIMEOUT_S=<seconds>"
)
# vllm#35547, as pasted: the bar still running when an API server process died
BAR = "Loading safetensors checkpoint shards:  65% Completed | 106/163 [09:36<05:20,  5.63s/it]"
DIED = "(ApiServer_5 pid=463645) Process ApiServer_5:"


def _evaluate(lines: list[str]):
    return op1_engine_ready.RULE_ENGINE_READY.evaluate(Facts(events=parse_lines(lines).events))


def test_vllms_old_words_raise_the_wait_and_say_the_variable_needs_014_when_the_version_is_unknown():
    [finding] = _evaluate([OLD_WORDS])
    [change] = finding.changes
    assert (change.flag, change.kind, change.current, change.proposed) == (
        "VLLM_ENGINE_READY_TIMEOUT_S",
        "env",
        "600",
        "1200",
    )
    assert "exists from vLLM 0.14" in finding.actions[0] and finding.confidence == 0.95


def test_the_wait_vllm_names_and_the_load_the_bar_projects_size_the_proposal_on_a_release_that_has_the_variable():
    [finding] = _evaluate(["vLLM API server version 0.17.1", BAR, NEW_WORDS])
    [change] = finding.changes
    assert (change.current, change.proposed) == ("900", "1800")  # 2 x max(900 s waited, 9:36 + 5:20 = 896 s)
    assert "after 900 s while the weights were still loading (9 min 36 s in)" in finding.title
    assert not any("exists from vLLM" in action for action in finding.actions)


def test_an_api_server_dying_while_the_bar_nears_the_wait_is_read_as_the_wait_running_out():
    [finding] = _evaluate([BAR, DIED])
    assert finding.title.startswith("an API server process died while the weights were still loading (9 min 36 s in)")
    assert finding.changes[0].proposed == "1800" and finding.confidence == 0.7
    assert [e.value for e in finding.evidence] == ["ApiServer_5", "106/163"]


def test_no_wait_is_blamed_early_in_the_load_after_a_short_one_or_beside_an_engine_error():
    early = "Loading safetensors checkpoint shards:  10% Completed | 16/163 [02:00<20:00,  7.5s/it]"
    done = "Loading safetensors checkpoint shards: 100% Completed | 163/163 [02:30<00:00,  0.9s/it]"
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
    assert not _evaluate([early, DIED])
    assert not _evaluate([done, DIED])
    assert not _evaluate([BAR, oom, DIED])
