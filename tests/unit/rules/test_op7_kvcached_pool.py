"""OP-7.217: kvcached's shared KV pool short of pages, and the engine death its allocation race caused."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# ovg-project/kvcached#262 (vLLM 0.14.0, six engines on one MI300X pool), verbatim
SHORT = "[kvcached][WARNING] kv_cache_manager.py:174 available_size()=71 < need_size=76"
DIED = "ERROR core.py:938 EngineCore encountered a fatal error."


def test_the_shortfall_before_the_engine_death_is_its_cause():
    top = top_finding(SHORT, DIED)
    assert top.rule == "OP-7.217" and top.severity.name == "CRITICAL"
    assert "71 free < 76 needed" in top.title and top.actions[0].startswith("Upgrade kvcached")


def test_the_shortfall_alone_is_a_warning_about_the_shared_pool():
    top = top_finding(SHORT)
    assert top.rule == "OP-7.217" and top.severity.name == "MEDIUM" and "died" not in top.title
