"""OP-7.217: kvcached's shared KV pool short of pages, and the engine death its allocation race caused."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# ovg-project/kvcached#262 (vLLM 0.14.0, six engines on one MI300X pool), verbatim
SHORT = "[kvcached][WARNING] kv_cache_manager.py:174 available_size()=71 < need_size=76"
DIED = "ERROR core.py:938 EngineCore encountered a fatal error."


def test_the_shortfall_before_the_engine_death_is_its_cause():
    top = top_finding(SHORT, DIED)
    assert top.rule == "OP-7.217" and top.severity.name == "CRITICAL"
    assert "71 blocks free < 76 needed" in top.title and top.actions[0].startswith("Upgrade kvcached")


def test_the_shortfall_alone_is_a_note_about_a_full_pool():
    # from kvcached's PR #301 on the shortfall is transient: the scheduler waits for blocks
    top = top_finding(SHORT)
    assert (
        top.rule == "OP-7.217"
        and top.severity.name == "LOW"
        and top.title.startswith("kvcached's shared KV pool was full")
    )
    assert "Upgrade kvcached" not in top.actions[0]


def test_a_death_with_another_cause_is_that_causes():
    # constructed: the same shortfall, then an engine death whose cause is an out of memory
    oom = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 "
        "GiB of which 1.02 GiB is free."
    )
    top = top_finding(SHORT, DIED, oom)
    assert top.rule != "OP-7.217"
