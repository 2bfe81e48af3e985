"""HL-4: a CUDA kernel faulted (illegal memory access, misaligned address, illegal instruction, unspecified launch
failure).

A kernel that reads or writes outside its memory is a bug in one of the kernels the server runs, and
CUDA reports it at the next call, often in an unrelated frame ("the stacktrace below might be
incorrect"), so the traceback does not say which. The operator's lever is to turn off, one at a
time, the optional kernels the launch chose, starting with the one chosen most deliberately: an
attention backend forced by VLLM_ATTENTION_BACKEND, then prefix caching, custom all-reduce (TP > 1)
and CUDA-graph replay; CUDA's own message suggests CUDA_LAUNCH_BLOCKING=1 to find the kernel
(docs/environment-failures.md).
"""

from __future__ import annotations

import re

from rules import vllm_defaults
from rules.catalog import common as c
from rules.catalog.op7_toolchain import SAMPLER_ENV
from rules.events import FLASHINFER_SAMPLER, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# the release whose default engine (V1) has no xformers backend to fall back to, as (major, minor)
V1_DEFAULT_FROM = vllm_defaults.V1_DEFAULT_FROM[:2]
# who reported the fault: PyTorch's CUDA check, or Triton's launcher (cuGetErrorString's words after either)
_PREFIX = re.compile(r"^(?:CUDA error|HIP error|Triton Error \[CUDA\]): ")
CONFIDENCE = 0.9  # the fault is certain; which kernel faulted is what the changes bisect
AITER_ENV = "VLLM_ROCM_USE_AITER"  # vllm/envs.py: ROCm's AITER kernels, off unless set
SKINNY_GEMM_ENV = "VLLM_ROCM_USE_SKINNY_GEMM"  # vllm/envs.py: ROCm's skinny GEMM kernels, on unless set to 0


def _check_kernel_fault(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.CUDA_KERNEL_FAULT)
    if not events:
        return []
    fault = next((e for e in events if e.code_file), events[0])  # a fault whose launch names its source file
    rocm = fault.component == "rocm"
    aborted = (fault.message or "").startswith("memory access fault")  # HSA's own words: the process is gone
    reporting = _sampler(fault) or _skinny_gemm(fault) or _reporting_library(facts, fault)
    suspects = [s for s in (reporting, _aiter(facts) if rocm else None) if s] + _suspects(facts)
    return [
        RULE_KERNEL_FAULT.finding(
            Severity.CRITICAL,
            f"a {'GPU kernel faulted (ROCm' if rocm else 'CUDA kernel faulted ('}"
            f"{': ' if rocm else ''}{_PREFIX.sub('', fault.message or 'illegal memory access')}): "
            + (f"first suspect the {suspects[0][0]}" if suspects else "the traceback cannot say which kernel"),
            summary=(
                "ROCm's runtime caught a kernel touching memory outside its allocations and aborted the process "
                "(no Python traceback follows)."
                if aborted
                else f"A kernel read or wrote outside its memory; {'HIP' if rocm else 'CUDA'} reported it at a later "
                "call, so the frame in the traceback is not where it happened."
            )
            + (
                f" Here the check that reported it is in a kernel library's own launch ({fault.code_file}): the "
                "likeliest kernel, though a fault is reported at the next check, so an earlier kernel's is possible."
                if fault.code_file
                else " Turn off the optional kernels one at a time, most deliberately chosen first."
            ),
            evidence=[c.log_evidence(fault)],
            changes=[change for _, change in suspects[:1]],
            alternatives=[change for _, change in suspects[1:]],
            actions=[
                (
                    "Rerun with AMD_SERIALIZE_KERNEL=3 (HIP's counterpart of CUDA_LAUNCH_BLOCKING) to make the "
                    "failing kernel's own launch report it (slow: debugging only)."
                    if rocm
                    else "Rerun with CUDA_LAUNCH_BLOCKING=1 to make the failing kernel's own call raise (slow: "
                    "debugging only)."
                ),
                "Upgrade vLLM: kernel faults are bugs, and the fix is often in a later release.",
            ],
            confidence=CONFIDENCE,
        )
    ]


# The attention backend whose own kernels a faulting launch's source file belongs to: flash-attn's check prints the
# launch template's path (vllm-flash-attn-src/hopper/…), FlashInfer's its csrc or include path.
_LIBRARY_BACKENDS = (("flash-attn", "FLASH_ATTN"), ("flash_attn", "FLASH_ATTN"), ("flashinfer", "FLASHINFER"))


def _reporting_library(facts: Facts, fault) -> Suspect | None:
    """The attention backend whose kernel's launch reported the fault: direct evidence, so the first suspect."""
    path = (fault.code_file or "").lower()
    backend = next((name for word, name in _LIBRARY_BACKENDS if word in path), None)
    if backend is None:
        return None
    reason = f"the fault was reported by {backend}'s own kernel launch check ({fault.code_file})"
    change = _another_backend(facts, backend, reason)
    if change.proposed.startswith("<"):  # a library whose launch reports by file is a V1-era one: FlashInfer is there
        change.proposed = "FLASHINFER"
    return f"attention backend ({backend}, whose kernel launch reported the fault)", change


def _sampler(fault: LogEvent) -> Suspect | None:
    """FlashInfer's top-k/top-p sampling kernel, when its own launch check named itself: vLLM samples with it on CUDA
    unless VLLM_USE_FLASHINFER_SAMPLER=0, and PyTorch's sampling runs instead (vllm/envs.py)."""
    if fault.component != FLASHINFER_SAMPLER:
        return None
    kernel = (fault.message or "").split(":", 1)[0]
    return _turned_off(
        f"FlashInfer sampler ({kernel}, whose launch reported the fault)",
        SAMPLER_ENV,
        reason=f"the fault was reported by FlashInfer's own sampling kernel ({kernel}); vLLM then samples with "
        "PyTorch's top-k/top-p",
        cost="PyTorch's sampling instead of FlashInfer's fused kernel; a fault elsewhere would still show",
    )


def _skinny_gemm(fault: LogEvent) -> Suspect | None:
    """vLLM's ROCm skinny GEMM kernels (csrc/rocm/skinny_gemms.hip: wvSplitK, LLMM1), which small-batch linear
    layers use on ROCm unless VLLM_ROCM_USE_SKINNY_GEMM=0 (vllm/envs.py; vLLM's own tests set it for models whose
    results they change)."""
    if "skinny_gemms" not in (fault.code_file or ""):
        return None
    return _turned_off(
        "ROCm skinny GEMM (its kernel's own assertion)",
        SKINNY_GEMM_ENV,
        reason="the assertion is in vLLM's ROCm skinny GEMM kernel (csrc/rocm/skinny_gemms.hip); off, the linear "
        "layers use the generic GEMM",
        cost="the skinny kernels' speed at small batches",
    )


def _turned_off(what: str, env: str, reason: str, cost: str) -> Suspect:
    """A kernel that named itself in the fault's report, and the environment variable of vLLM's that turns it off."""
    return what, ConfigChange(flag=env, current=None, proposed="0", reason=reason, cost=cost, kind="env")


def _aiter(facts: Facts) -> Suspect | None:
    """ROCm's AITER kernels, when the launch turned them on (VLLM_ROCM_USE_AITER=1; off by default)."""
    if facts.config is None or facts.config.env.get(AITER_ENV, "").lower() not in ("1", "true"):
        return None
    change = ConfigChange(
        flag=AITER_ENV,
        current=facts.config.env[AITER_ENV],
        proposed="0",
        reason="AITER swaps in its own attention, MoE and GEMM kernels on ROCm; off, vLLM's defaults run",
        cost="AITER's speed-ups",
        kind="env",
    )
    return f"AITER kernels ({AITER_ENV}=1)", change


Suspect = tuple[str, ConfigChange]  # what it turns off, and the change that does


def _suspects(facts: Facts) -> list[Suspect]:
    """The launch's optional kernels, in the order to turn them off: most deliberately chosen first."""
    found = (each(facts) for each in SUSPECTS_IN_ORDER)
    return [suspect for suspect in found if suspect is not None]


def _forced_backend(facts: Facts) -> Suspect | None:
    backend = _forced(facts)
    if not backend:
        return None
    reason = f"the attention kernels are the ones the launch chose on purpose ({c.ATTENTION_BACKEND_ENV}={backend})"
    change = _another_backend(facts, backend, reason, current=backend)
    return f"attention backend ({backend}, forced by {c.ATTENTION_BACKEND_ENV})", change


def _prefix_caching(facts: Facts) -> Suspect | None:
    config = facts.config
    if config is None or not config.enable_prefix_caching or not c.explicitly_set(facts, "enable_prefix_caching"):
        return None
    change = ConfigChange(
        flag="--enable-prefix-caching",
        current="true",
        proposed="false",
        reason="prefix caching adds block sharing and copy kernels to every step",
        cost="shared prompt prefixes are recomputed",
    )
    return "prefix caching", change


def _custom_all_reduce(facts: Facts) -> Suspect | None:
    if c.tensor_parallel_size(facts) <= 1:
        return None
    reason = "vLLM's custom all-reduce kernel runs between the tensor-parallel ranks"
    return "custom all-reduce", c.custom_all_reduce_off(reason)


def _graph_replay(facts: Facts) -> Suspect | None:
    if facts.config is not None and facts.config.enforce_eager:
        return None
    change = ConfigChange(
        flag="--enforce-eager",
        proposed="true",
        reason="graph replay reuses buffers captured at start-up; eager mode runs each kernel as called",
        cost="slower decode, most at small batches",
    )
    return "CUDA-graph replay", change


def _chosen_backend(facts: Facts) -> Suspect | None:
    """The backend the log says vLLM chose (`Using FlashInfer backend on V1 engine.`), when none was forced."""
    chosen = facts.last_event(LogEventKind.ATTENTION_BACKEND)
    if _forced(facts) or chosen is None or not chosen.message:
        return None
    reason = (
        f"the log says the attention kernels are {chosen.message}'s; another backend's kernels tell whether the "
        "fault is theirs"
    )
    change = _another_backend(facts, chosen.message, reason)
    return f"attention backend ({chosen.message}, the one the log says vLLM chose)", change


def _forced(facts: Facts) -> str | None:
    return (facts.config.env.get(c.ATTENTION_BACKEND_ENV) if facts.config else None) or None


def _another_backend(facts: Facts, backend: str, reason: str, current: str | None = None) -> ConfigChange:
    """VLLM_ATTENTION_BACKEND set to another backend than `backend` (the forced one, or the one vLLM chose)."""
    return ConfigChange(
        flag=c.ATTENTION_BACKEND_ENV,
        current=current,
        proposed=_other_backend(facts, backend),
        reason=reason,
        cost="another backend's speed and feature set",
        kind="env",
    )


SUSPECTS_IN_ORDER = (_forced_backend, _prefix_caching, _custom_all_reduce, _graph_replay, _chosen_backend)


def _other_backend(facts: Facts, backend: str) -> str:
    """Another attention backend to try: the V0 fallback (xformers) on releases before V1 was the default,
    FlashInfer (or FlashAttention, if FlashInfer faulted) from it; said as a choice when the release is unknown."""
    version = c.vllm_version(facts)
    if backend.upper() == "FLASHINFER":
        return "FLASH_ATTN"
    if "MLA" in backend.upper():  # a model with MLA attention runs on MLA kernels only
        return "TRITON_MLA" if backend.upper() != "TRITON_MLA" else "FLASHMLA"
    if version is None:
        return "<another backend: XFORMERS before vLLM 0.8 (V0), FLASHINFER from 0.8>"
    return "XFORMERS" if version < V1_DEFAULT_FROM else "FLASHINFER"


RULE_KERNEL_FAULT = Rule(
    code="HL-4",
    title="CUDA kernel fault (illegal memory access)",
    category=Category.HEALTH,
    check=_check_kernel_fault,
    needs=("events",),
    page=RulePage(
        checks="`CUDA error: an illegal memory access was encountered` (or a misaligned address, an illegal "
        "instruction, an unspecified launch failure: CUDA's cudaErrorLaunchFailure, an exception on the device while "
        "a kernel ran) in the log, with the launch's source file where a kernel library's check prints it "
        "(`CUDA error (…/vllm-flash-attn-src/hopper/…h:60): …`); ROCm's `HIP error: an illegal memory access was "
        "encountered` (torch 2.8 on raises either as torch.AcceleratorError) and `Memory access fault by GPU node-N … "
        "Reason: …`.",
        why="A kernel bug: the engine cannot continue, and the traceback's frame is only where CUDA noticed.",
        example="RuntimeError: CUDA error: an illegal memory access was encountered, with VLLM_ATTENTION_BACKEND="
        "FLASH_ATTN -> VLLM_ATTENTION_BACKEND=XFORMERS (vLLM 0.4).",
        fix="Turn off the launch's optional kernels one at a time: a forced attention backend, prefix caching, "
        "custom all-reduce (TP > 1), CUDA graphs (--enforce-eager), then the attention backend the log says vLLM "
        "chose (`Using FlashInfer backend on V1 engine.`); find the kernel with CUDA_LAUNCH_BLOCKING=1; upgrade. "
        "A fault a kernel library's launch reported puts that library's attention backend first; on ROCm, AITER's "
        "kernels when VLLM_ROCM_USE_AITER=1, and AMD_SERIALIZE_KERNEL=3 to find the kernel.",
        limits="The order is a bisection, not a diagnosis: the first change is the likeliest, not a certainty.",
        references=[
            "docs/environment-failures.md",
            "https://github.com/vllm-project/vllm/issues/25032",
            "https://github.com/vllm-project/vllm/issues/35169",
        ],
    ),
)

RULES: list[Rule] = [RULE_KERNEL_FAULT]
