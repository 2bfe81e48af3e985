"""OP-7.50: Triton's refusal of a kernel that asks more shared memory per block than the GPU has."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from advisor.collect.logs import parse_lines
from rules.catalog.op7_kernel_fit import RULE, RULE_FLASH_ATTN
from rules.facts import Facts

PREFIX = "ERROR 01-20 10:01:02 async_llm_engine.py:41] "
SITE = "/usr/local/lib/python3.10/dist-packages"
LINE = (
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: {}, Hardware limit: {}. "
    "Reducing block sizes or `num_stages` may help."
)


def _traceback(vllm_file: str, function: str, required: int, limit: int) -> list[str]:
    return [
        PREFIX + "Traceback (most recent call last):",
        PREFIX + f'  File "{SITE}/vllm/{vllm_file}", line 708, in {function}',
        PREFIX + "    _fwd_kernel[grid](",
        PREFIX + f'  File "{SITE}/triton/compiler/compiler.py", line 475, in _init_handles',
        PREFIX + '    raise OutOfResources(self.metadata.shared, max_shared, "shared memory")',
        PREFIX + LINE.format(required, limit),
    ]


def _findings(*lines: str):
    return RULE.evaluate(Facts(events=parse_lines(list(lines)).events))


def test_the_words_are_tritons_own():
    """The installed Triton (3.9, beside the CPU torch) formats exactly this message."""
    errors = Path(importlib.util.find_spec("triton").submodule_search_locations[0]) / "runtime" / "errors.py"
    assert (
        'f"out of resource: {self.name}, Required: {self.required}, Hardware limit: {self.limit}. Reducing block '
        'sizes or `num_stages` may help."'
    ) in errors.read_text()


def test_turings_prefix_prefill_names_the_kernel_and_an_attention_backend_that_runs_below_ampere():
    [finding] = _findings(
        *_traceback("model_executor/layers/triton_kernel/prefix_prefill.py", "context_attention_fwd", 65538, 65536)
    )
    assert finding.title == (
        "an attention kernel (prefix_prefill.py in context_attention_fwd) needs 65,538 bytes of shared memory per "
        "block, 2 over this GPU's 65,536"
    )
    assert "Turing GPUs" in finding.summary
    assert "vllm#2513" in finding.actions[0]
    assert "FLEX_ATTENTION runs below it" in finding.actions[1]
    assert "No memory flag helps" in finding.actions[-1]
    assert finding.changes == []


def test_a_fused_moe_kernel_points_at_a_tuned_configuration():
    [finding] = _findings(
        *_traceback("model_executor/layers/fused_moe/fused_moe.py", "invoke_fused_moe_kernel", 73728, 65536)
    )
    assert finding.title.startswith("a fused MoE or LoRA kernel (fused_moe.py in invoke_fused_moe_kernel)")
    assert "VLLM_TUNED_CONFIG_FOLDER" in finding.actions[1]


def test_the_line_alone_still_gives_the_numbers():
    [finding] = _findings(LINE.format(102400, 101376))
    assert finding.title == (
        "a Triton kernel needs 102,400 bytes of shared memory per block, 1,024 over this GPU's 101,376"
    )
    assert "RTX PRO 6000 Blackwell" in finding.summary
    assert len(finding.actions) == 2


def test_flash_attention_on_turing_takes_the_forced_backend_off_and_names_the_dtype():
    [finding] = RULE_FLASH_ATTN.evaluate(
        Facts(events=parse_lines(["RuntimeError: FlashAttention only supports Ampere GPUs or newer."]).events)
    )
    assert finding.title == (
        "FlashAttention ran on a GPU older than Ampere (compute capability below 8.0): its kernels need 8.0"
    )
    assert "--attention-backend TRITON_ATTN" in finding.actions[0] and "XFORMERS" in finding.actions[0]
    assert "--dtype half" in finding.actions[2]


def test_flash_attention_on_float32_serves_in_half_precision_or_another_backend():
    [finding] = RULE_FLASH_ATTN.evaluate(
        Facts(events=parse_lines(["RuntimeError: FlashAttention only support fp16 and bf16 data type"]).events)
    )
    assert finding.title == "FlashAttention ran on float32 tensors: its kernels take float16 and bfloat16 only"
    assert "--dtype auto" in finding.actions[0] and "TRITON_ATTN" in finding.actions[1]


def test_a_line_cut_after_the_resource_is_still_the_refusal_without_its_figures():
    # vllm#49778: the reporter's paste wrapped the message after `shared memory,` (gfx950; its limit on the next line)
    [finding] = _findings("triton.runtime.errors.OutOfResources: out of resource: shared memory,")
    assert finding.title == (
        "a Triton kernel needs more shared memory per thread block than this GPU has (the paste cut Triton's figures)"
    )
    assert finding.actions[0].startswith("Paste the traceback's last vLLM frame")
    assert "160 KiB AMD gfx950" in finding.summary


def test_rocms_ck_flash_attention_on_a_radeon_is_built_or_run_without():
    """vllm#3040's line, verbatim but for its backticks (an RX 7900 XTX, gfx1100)."""
    line = "RuntimeError: FlashAttention only supports AMD MI200 GPUs or newer."
    [finding] = RULE_FLASH_ATTN.evaluate(Facts(events=parse_lines([line]).events))
    assert finding.title.startswith("ROCm's CK flash-attention ran on a GPU other than AMD Instinct")
    assert "BUILD_FA=0" in finding.actions[0] and "VLLM_USE_TRITON_FLASH_ATTN" in finding.actions[1]


def test_early_v1s_flash_attention_version_assert_points_at_v0_or_a_later_release():
    # vllm#13398, verbatim: VLLM_USE_V1=1 on V100s with 0.7
    facts = Facts(
        events=parse_lines(
            ["ERROR 02-17 20:51:49 core.py:210]     assert is_fa_version_supported(self.fa_version)"]
        ).events
    )
    [finding] = RULE_FLASH_ATTN.evaluate(facts)
    assert finding.title.startswith("vLLM's V1 engine found no FlashAttention version for this GPU")
    assert "VLLM_USE_V1=0" in finding.actions[0] and "TRITON_ATTN" in finding.actions[1]
