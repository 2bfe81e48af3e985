"""OP-7.63: a CPU kernel with no implementation for the dtype the model runs in (`"X_cpu" not implemented for 'Half'`).

Why a rule of its own: PyTorch dispatches each op by device and dtype, and says so in one sentence when a CPU kernel
has no version for the dtype: `RuntimeError: "addmm_impl_cpu_" not implemented for 'Half'`. vLLM's CPU backend
registers its own ops the same way (`reshape_and_cache_cpu_impl`), and a model whose config says float16 runs in
float16 unless told otherwise. The cause is the dtype on this device, not the model or the request: vLLM 0.8.5's
CPU build lost float16 in its KV cache write (vllm#17225; PR #18430 added it back on x86), and PyTorch's own CPU
matmul long had no float16 either (huggingface/transformers#27769: "torch … does not support FP16 on CPU";
bigscience-workshop/petals#432: use float32, or bfloat16). The fix that works on any release is the dtype: bfloat16,
which vLLM's CPU backend runs natively (and fast on AVX512-BF16 or AMX), or float32. vLLM PR #18542, fixing the same
issue, names a second cause: the CPU image pinned Intel Extension for PyTorch 2.6.0 beside torch 2.7.0, and IPEX
2.7.0 made it go away.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# PyTorch's dispatch refusal for a CPU kernel (its name says cpu) and the dtype it was given.
# vLLM's CPU layer-norm kernels are named without it (csrc/cpu/layernorm.cpp): `rms_norm_impl` on a macOS build,
# which has no bfloat16 kernels (vllm PR #18249 restored the float16 fallback there)
_CPU_DTYPE = re.compile(
    r"\"(?P<op>\w*cpu\w*|(?:fused_add_)?rms_norm_impl)\" not implemented for '(?P<dtype>Half|BFloat16|Float8\w*)'"
)
# torch's dtype names → the value of vLLM's --dtype to move away from, and the one to move to.
_INSTEAD = {"Half": ("float16", "bfloat16"), "BFloat16": ("bfloat16", "float32")}
# vLLM's own CPU layer-norm kernel without bfloat16 is the macOS (Apple silicon) build, which compiles no bfloat16
# kernels; vLLM itself serves bfloat16 models in float16 there where the fallback of vllm PR #18249 is in the release
_VLLM_LAYER_NORM = "rms_norm_impl"
_MACOS_BFLOAT16 = (
    "This is vLLM's own CPU layer-norm kernel, which the macOS (Apple silicon) build compiles without bfloat16: vLLM "
    "casts bfloat16 models to float16 there itself where vllm PR #18249's fallback is in the release."
)


def _instead(dtype: str, op: str) -> tuple[str, str]:
    """The dtype to move from and to: float16 for vLLM's layer norm on macOS, else bfloat16 from float16 and float32
    from bfloat16."""
    if dtype == "BFloat16" and op.endswith(_VLLM_LAYER_NORM):
        return "bfloat16", "float16"
    return _INSTEAD.get(dtype, (dtype, "bfloat16"))


def _actions(dtype: str, op: str) -> list[str]:
    """What else to do besides the dtype: for float16, the vLLM release with its CPU kernel; for bfloat16 in vLLM's
    layer norm, the macOS build; for any, an IPEX that matches torch."""
    ipex = (
        "In a CPU build with Intel Extension for PyTorch, check that its release is the one built for the installed "
        "torch (`pip show intel_extension_for_pytorch torch`): vLLM's CPU image pinned IPEX 2.6.0 beside torch 2.7.0 "
        "and met this error until IPEX 2.7.0 (vLLM PR #18542)."
    )
    if dtype == "BFloat16":
        return [_MACOS_BFLOAT16, ipex] if op.endswith(_VLLM_LAYER_NORM) else [ipex]
    upgrade = (
        "Or upgrade vLLM: its CPU build added float16 to the KV cache write after vllm#17225 (PR #18430). "
        if "reshape_and_cache" in op
        else ""
    )
    return [
        upgrade + "bfloat16 is the CPU backend's native dtype and needs no upgrade; `lscpu | grep -o "
        "'avx512_bf16\\|amx_bf16'` says whether the CPU computes it in hardware (else float32 is the faster choice).",
        ipex,
    ]


def _check_cpu_dtype(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR):
        found = _CPU_DTYPE.search(event.message or "")
        if found is None:
            continue
        current, proposed = _instead(found["dtype"], found["op"])
        evidence = c.log_evidence(event, name="cpu_kernel_dtype", value=found.group(0))
        evidence.description = f"PyTorch has no {found['dtype']} version of the CPU kernel {found['op']}"
        return [
            RULE_CPU_DTYPE.finding(
                Severity.HIGH,
                f"the CPU kernel {found['op']} has no {current} version: serve the model in {proposed} on this CPU",
                summary="PyTorch dispatches each op by device and dtype; this CPU kernel has no version for the dtype "
                "the model runs in (its config's, unless --dtype says otherwise). Nothing is wrong with the model or "
                "the request: the dtype is not one this CPU code path implements.",
                evidence=[evidence],
                changes=[
                    ConfigChange(
                        flag="--dtype",
                        current=current,
                        proposed=proposed,
                        reason=f"the CPU kernels run {proposed}; {current} has no version of {found['op']} here",
                    )
                ],
                actions=_actions(found["dtype"], found["op"]),
                confidence=0.85,
            )
        ]
    return []


RULE_CPU_DTYPE = Rule(
    code="OP-7.63",
    title="a CPU kernel without the model's dtype",
    category=Category.CONFIGURATION,
    check=_check_cpu_dtype,
    needs=("events",),
    page=RulePage(
        checks="PyTorch's `\"<op>\" not implemented for '<dtype>'` where the op is a CPU kernel (its name says cpu: "
        "`reshape_and_cache_cpu_impl`, `addmm_impl_cpu_`) and the dtype is Half, BFloat16 or a Float8.",
        why="The op has no version for that dtype on the CPU; the model runs in its config's dtype unless --dtype "
        "says otherwise, so every request fails the same way.",
        example="RuntimeError: \"reshape_and_cache_cpu_impl\" not implemented for 'Half' (vllm#17225: vLLM's CPU "
        "build with PyTorch 2.7, serving a float16 model).",
        fix="--dtype bfloat16 (float32 for a kernel without bfloat16); or upgrade vLLM when the op is its own.",
        limits="Only kernels whose name says cpu: a GPU kernel without a dtype is another cause (a GPU without "
        "bfloat16 is VC-1's).",
        references=[
            "https://github.com/vllm-project/vllm/issues/17225",
            "https://github.com/vllm-project/vllm/pull/18430",
            "https://github.com/vllm-project/vllm/pull/18542",
            "https://github.com/huggingface/transformers/issues/27769",
        ],
    ),
)

RULES: list[Rule] = [RULE_CPU_DTYPE]
