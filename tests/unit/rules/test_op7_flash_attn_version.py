"""OP-7.211: a FlashAttention version this GPU cannot run, from the lines people pasted."""

from __future__ import annotations

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
