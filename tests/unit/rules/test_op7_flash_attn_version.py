"""OP-7.211: a FlashAttention version this GPU cannot run, from the lines people pasted."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.evaluate import evaluate
from rules.facts import Facts
from tests.unit.rules.factories import top_finding

# Dao-AILab/flash-attention#1853, verbatim (trailing space kept): an RTX PRO 4500 Blackwell (sm_120); the maintainer:
# FA3 does not target sm_120, FA2 runs there
FA3_ON_SM120 = (
    "FA version 3 is not supported due to FA3 is only supported on devices with compute capability >= 8 excluding "
    "8.6 and 8.9 and Blackwell archs (>=10) "
)
# vllm-project/vllm#15853, verbatim: a T4 under V1 (0.8), the reason being flash-attention's FA3 text for FA2
FA2_ON_T4 = (
    "ERROR 03-20 07:42:38 [utils.py:613] Cannot use FA version 2 is not supported due to FA3 is only supported on "
    "devices with compute capability >= 8 excluding 8.6 and 8.9 and Blackwell archs (>=10)"
)
# opendatalab/MinerU#3705, verbatim: a T4; a maintainer answered that vLLM switches to another backend on T4
FA2_ON_T4_LATER = (
    "(EngineCore_DP0 pid=2780936) ERROR 10-13 11:36:41 [fa_utils.py:57] Cannot use FA version 2 is not supported due "
    "to FA2 is only supported on devices with compute capability >= 8"
)


def test_fa3_outside_hopper_is_a_forced_version_and_the_variable_is_unset():
    top = top_finding(FA3_ON_SM120)
    assert top.rule == "OP-7.211" and "FlashAttention 3 was forced" in top.title
    [change] = top.changes
    assert (change.flag, change.proposed, change.kind) == ("VLLM_FLASH_ATTN_VERSION", "", "env")
    assert "sm_120" in top.summary and "FA2 serves it" in top.summary


def test_fa2_below_ampere_is_a_note_that_vllm_picks_another_backend():
    for line in (FA2_ON_T4, FA2_ON_T4_LATER):
        top = top_finding(line)
        assert top.rule == "OP-7.211" and top.severity.value == "low", line
        assert "compute capability below 8.0" in top.title and top.changes == []
        assert "not the failure" in top.summary


def test_fa2_missing_from_the_build_quotes_flash_attentions_reason_instead_of_a_capability():
    # vllm-project/vllm PR #35341, verbatim: a Blackwell SM 12.x GPU whose bundled FA2 was not built for it
    top = top_finding(
        "Cannot use FA version 2 is not supported due to FA2 is unavaible due to: SM 12.x not supported by flash-attn "
        "FA2"
    )
    assert top.rule == "OP-7.211" and "SM 12.x not supported" in top.title
    assert "below 8.0" not in top.title and "not built for this GPU" in top.summary


# A forced FA3 and the backend's check that stops the engine after it, as a V1 server logs them (the assert is
# flash_attn.py's, 0.14 on; the refusal's words are vLLM's fa_utils.py)
FORCED_THEN_ASSERT = [
    "(EngineCore_DP0 pid=1) ERROR 03-20 07:42:38 [fa_utils.py:212] Cannot use FA version 3 is not supported due to "
    "FA3 is only supported on devices with compute capability >= 8 excluding 8.6 and 8.9 and Blackwell archs (>=10)",
    "(EngineCore_DP0 pid=1) ERROR 03-20 07:42:39 [core.py:700] EngineCore failed to start.",
    "(EngineCore_DP0 pid=1) ERROR 03-20 07:42:39 [core.py:700] Traceback (most recent call last):",
    '(EngineCore_DP0 pid=1) ERROR 03-20 07:42:39 [core.py:700]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/'
    'attention/backends/flash_attn.py", line 400, in __init__',
    "(EngineCore_DP0 pid=1) ERROR 03-20 07:42:39 [core.py:700]     assert self.vllm_flash_attn_version is not None, (",
    "(EngineCore_DP0 pid=1) ERROR 03-20 07:42:39 [core.py:700] AssertionError: FlashAttention version not detected.",
]


def test_the_check_after_a_forced_version_says_what_to_unset_and_the_refusal_is_cited():
    findings = evaluate(Facts(events=parse_lines(FORCED_THEN_ASSERT).events)).findings
    top, forced = findings[0], next(f for f in findings if f.rule == "OP-7.211")
    assert top.rule == "VC-1" and "internal check" not in top.title
    assert "VLLM_FLASH_ATTN_VERSION" in top.actions[0] and "below Ampere" in top.actions[0]
    assert forced.severity.value == "critical" and "--attention-config.flash_attn_version" in forced.summary
    assert [e.location for e in forced.evidence] == ["log:1", "log:6"]


def test_a_build_without_fa3_or_without_its_extension_is_named_as_the_build():
    top = top_finding("Cannot use FA version 3 is not supported due to FA3 is unavaible due to: no _vllm_fa3_C")
    assert "this vLLM build has no FA3" in top.title
    top = top_finding(
        "Cannot use FA version 2 is not supported due to FA2 is unavaible due to: No module named "
        "'vllm.vllm_flash_attn._vllm_fa2_C'"
    )
    assert top.rule == "OP-7.211" and top.severity.value == "high" and "extension is missing" in top.title


def test_fa4_is_not_read_as_a_forced_fa3():
    top = top_finding("Cannot use FA version 4 is not supported due to FA4 is only supported on compute capability 10")
    assert top is None or top.rule != "OP-7.211"
