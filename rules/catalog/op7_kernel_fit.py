"""OP-7.50 and OP-7.52: a kernel asks more of the GPU than this one has.

OP-7.50: a Triton kernel of vLLM's asks more shared memory per block than this GPU has.

Why a rule of its own: Triton refuses to launch a compiled kernel whose shared memory per thread block exceeds the
GPU's opt-in maximum (`out of resource: shared memory, Required: N, Hardware limit: M`, triton/compiler/compiler.py;
the limit is CUDA's CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN). It is fixed per GPU model, so no memory
flag (--gpu-memory-utilization, --max-model-len, batch sizes) moves it: a kernel's block sizes and pipeline stages
decide what it asks, and vLLM's kernels choose them for the GPUs they were tuned on. In vLLM's threads the fix was
a release whose kernel checks the GPU (vllm#2513, Turing's 64 KiB, fixed by PR #2517 in prefix prefill), another
kernel, or a setting that changes what the kernel holds (an fp8 KV cache took MLA decode 1,024 bytes over the
99 KiB of RTX PRO 6000 Blackwell and GB10: vllm#53748, vllm#46721).

OP-7.52: FlashAttention's kernels ran on a GPU older than Ampere. flash-attn (and vLLM's fork of it, vllm_flash_attn)
checks the compute capability before it runs (csrc/flash_attn/flash_api.cpp: "FlashAttention only supports Ampere GPUs
or newer"). vLLM 0.32 admits its FLASH_ATTN and FLASHINFER backends only from compute capability 8.0 and picks
TRITON_ATTN below it by itself (vllm/v1/attention/backends/flash_attn.py, flashinfer.py, triton_attn.py;
vllm/platforms/cuda.py), so the error there means the backend was forced (`--attention-backend FLASH_ATTN`) or a
model's own code calls flash-attn; V0 releases fell back to XFormers below 8.0 by themselves ("Cannot use
FlashAttention-2 backend for Volta and Turing GPUs. … Using XFormers backend.") unless VLLM_ATTENTION_BACKEND forced
another, and some paths called flash-attn whatever was chosen (vllm#8189, FLASHINFER on a 2080 Ti).
"""

from __future__ import annotations

from typing import NamedTuple

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# Limits seen in vLLM's threads, with the GPUs that reported them (bytes per block, opt-in maximum).
SEEN_LIMITS: dict[int, str] = {
    49_152: "48 KiB, the limit of Pascal GPUs such as the P40 (vLLM PR #11584)",
    65_536: "64 KiB, the limit of Turing GPUs (T4, Quadro RTX: vllm#2513, vllm#57712) and of AMD Instinct's LDS "
    "(MI300X: vllm#12498)",
    163_840: "160 KiB, the LDS of AMD Instinct GPUs of arch gfx950 (MI350 series: vllm#49778)",
    101_376: "99 KiB, the limit of consumer and workstation GPUs of compute capability 8.6 to 12.x (RTX PRO 6000 "
    "Blackwell, GB10: vllm#53748)",
}


class KernelFamily(NamedTuple):
    """Which of vLLM's kernels a path names, and what moves it off the refused configuration."""

    name: str
    words: tuple[str, ...]
    action: str


FAMILIES: tuple[KernelFamily, ...] = (
    KernelFamily(
        "a fused MoE or LoRA kernel",
        ("fused_moe", "/lora/", "moe"),
        "Its block sizes come from a tuned configuration per GPU and shape: give one that fits this GPU through "
        "VLLM_TUNED_CONFIG_FOLDER (vLLM 0.32 reads it for MoE, LoRA and Mamba kernels; benchmarks/kernels/"
        "benchmark_moe.py in vLLM's source tunes one).",
    ),
    KernelFamily(
        "an attention kernel",
        ("attention", "attn", "prefix_prefill", "triton_decode", "mla"),
        "Choose another attention backend (`--attention-backend` in vLLM 0.32, VLLM_ATTENTION_BACKEND in older "
        "releases): FLASH_ATTN and FLASHINFER need compute capability 8.0 or newer, FLEX_ATTENTION runs below it; an "
        "fp8 KV cache (--kv-cache-dtype) enlarges what MLA decode holds, and `auto` may fit.",
    ),
    KernelFamily(
        "a Mamba (state-space) kernel",
        ("mamba", "ssd", "ssm"),
        "Its configuration can be overridden per GPU through VLLM_TUNED_CONFIG_FOLDER (vLLM 0.32).",
    ),
)


def _family(event: LogEvent) -> KernelFamily | None:
    path = f"{event.code_file or ''} {event.function or ''}".lower()
    return next((family for family in FAMILIES if any(word in path for word in family.words)), None)


def _check(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.TRITON_OUT_OF_RESOURCES)
    return [_finding(events[0])] if events else []


def _finding(event: LogEvent) -> Finding:
    required, limit = event.resource_required or 0, event.resource_limit or 0
    resource = event.message or "a resource"
    if not limit:  # the figures were cut from the paste (its `Required: N, Hardware limit: M` wrapped away)
        return _finding_without_figures(event, resource)
    family = _family(event)
    where = (event.code_file or "").replace("\\", "/").rsplit("/", 1)[-1]
    kernel = f"{where} in {event.function}" if where and event.function else None
    named = family.name if family else "a Triton kernel"
    gpu = SEEN_LIMITS.get(limit)
    actions = [
        "Upgrade vLLM: kernels refused on smaller GPUs were given checks of the GPU's limit in later releases "
        "(prefix prefill for Turing, vllm#2513; the MoE LoRA kernel, PR #47209); search vLLM's issues for the "
        f"kernel{f' ({kernel})' if kernel else ''} and `Hardware limit: {limit}`.",
        *([family.action] if family else []),
        "No memory flag helps: the limit is per thread block and fixed for the GPU model. Triton's own hint (smaller "
        "blocks or fewer stages) is the kernel's code to change, not a setting; report it to vLLM with the GPU and "
        "the traceback if no release fits.",
    ]
    over = f"{required:,} bytes of {resource} per block, {required - limit:,} over" if required else resource
    return RULE.finding(
        Severity.CRITICAL,
        f"{named}{f' ({kernel})' if kernel else ''} needs {over} this GPU's {limit:,}",
        summary=f"Triton refused to launch a kernel compiled to use more {resource} per thread block than the GPU "
        f"allows ({limit:,} bytes{f', {gpu}' if gpu else ''}). vLLM chose the kernel's block sizes for larger GPUs; "
        "it fails at its first launch (warm-up, graph capture or the first request), whatever the memory settings.",
        evidence=[c.log_evidence(event, name=f"Triton {resource}", value=f"{required:,} > {limit:,} bytes")],
        actions=actions,
        confidence=0.85,
    )


def _finding_without_figures(event: LogEvent, resource: str) -> Finding:
    """The same refusal, its figures not pasted: the kernel and the limit are unknown, the cause is not."""
    family = _family(event)
    named = family.name if family else "a Triton kernel"
    return RULE.finding(
        Severity.CRITICAL,
        f"{named} needs more {resource} per thread block than this GPU has (the paste cut Triton's figures)",
        summary=f"Triton refused to launch a kernel compiled to use more {resource} per thread block than the GPU "
        "allows. The limit is fixed per GPU model, so no memory flag moves it: vLLM chose the kernel's block sizes "
        "for other GPUs. The line's next words, `Required: N, Hardware limit: M`, say by how much, and the limit "
        "says the class of GPU (48 KiB Pascal, 64 KiB Turing and AMD MI300, 99 KiB consumer Ampere to Blackwell, "
        "160 KiB AMD gfx950).",
        evidence=[c.log_evidence(event, name=f"Triton {resource}", value="more than the GPU's limit per block")],
        actions=[
            "Paste the traceback's last vLLM frame and the figures after `Hardware limit:`: they name the kernel "
            "and the GPU class, and so the fix.",
            "Upgrade vLLM: kernels refused on smaller GPUs were given checks of the GPU's limit in later releases "
            "(prefix prefill for Turing, vllm#2513; the MoE LoRA kernel, PR #47209).",
            *([family.action] if family else [known.action for known in FAMILIES[:2]]),
        ],
        confidence=0.75,
    )


RULE = Rule(
    code="OP-7.50",
    title="a Triton kernel needs more shared memory per block than the GPU has",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="Triton's `OutOfResources: out of resource: shared memory, Required: N, Hardware limit: M` (and its "
        "other per-block resources); the deepest vLLM frame of its traceback names the kernel.",
        why="Triton checks a compiled kernel against the GPU's per-block opt-in maximum at its first launch; vLLM's "
        "kernels pick block sizes and stages for the GPUs they were tuned on, so a smaller GPU refuses them.",
        example="`Required: 65538, Hardware limit: 65536` from prefix prefill on four T4s (vllm#2513; PR #2517 gave "
        "Turing a smaller block).",
        fix="A vLLM release whose kernel checks the GPU; another --attention-backend for an attention kernel (or "
        "--kv-cache-dtype auto where fp8 enlarged it); a tuned configuration through VLLM_TUNED_CONFIG_FOLDER for "
        "MoE, LoRA and Mamba kernels.",
        limits="Names the kernel only when its traceback is pasted; the limit narrows the GPU to a class, and 64 KiB "
        "is both Turing's and AMD Instinct's.",
        references=[
            "https://github.com/vllm-project/vllm/issues/2513",
            "https://github.com/vllm-project/vllm/issues/53748",
            "https://github.com/vllm-project/vllm/issues/12498",
        ],
    ),
)

# --- OP-7.52 FlashAttention on a GPU older than Ampere ----------------------------------------------------------------


def _check_flash_attn(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.FLASH_ATTN_OLD_GPU)
    if not events:
        return []
    rocm = [e for e in events if e.message == "rocm"]
    if rocm:
        return [_radeon(rocm[0])]
    gpu = [e for e in events if e.message == "gpu"]
    if gpu:
        return [_old_gpu(gpu[0])]
    early_v1 = [e for e in events if e.message == "fa_version"]
    return [_early_v1(early_v1[0]) if early_v1 else _float32(events[0])]


def _early_v1(event: LogEvent) -> Finding:
    """vLLM 0.7's V1 attended only through FlashAttention and asserted that a FlashAttention version fits the GPU
    (`assert is_fa_version_supported(self.fa_version)`, vllm/v1/attention/backends/flash_attn.py); FA2 needs compute
    capability 8.0, so a V100 or T4 fails there (vllm#13398, VLLM_USE_V1=1 on V100s). V0 served those GPUs through
    XFormers, and later V1 releases pick another backend below 8.0 (0.32: TRITON_ATTN)."""
    return RULE_FLASH_ATTN.finding(
        Severity.CRITICAL,
        "vLLM's V1 engine found no FlashAttention version for this GPU: early V1 attends only through "
        "FlashAttention, which needs compute capability 8.0 (Ampere or newer)",
        summary="vLLM 0.7's V1 FlashAttention backend asserts that a FlashAttention build fits the GPU; on Volta and "
        "Turing (V100, T4, RTX 20xx) none does, and V1 had no other attention backend yet.",
        evidence=[c.log_evidence(event, name="FlashAttention", value="no version for this GPU")],
        actions=[
            "Serve with the V0 engine on that release (VLLM_USE_V1=0, or leave VLLM_USE_V1 unset on 0.7, whose "
            "default is V0): V0 attends through XFormers on these GPUs.",
            "Or upgrade: later V1 releases choose another attention backend below compute capability 8.0 (0.32 picks "
            "TRITON_ATTN by itself).",
            "bfloat16 needs compute capability 8.0 too: `--dtype half` on Volta and Turing.",
        ],
        confidence=0.8,
    )


def _radeon(event: LogEvent) -> Finding:
    """ROCm's CK flash-attention on a GPU other than AMD Instinct: vLLM's ROCm docs (0.5.1 to 0.6.5) built it only for
    gfx90a and gfx942 and told Radeon RX 7900 (gfx1100) builds to leave it out (BUILD_FA=0); vLLM PR #2768 made
    gfx1100 serve without it (vllm#3040: a maintainer pointed the RX 7900 XTX at the path without it)."""
    return RULE_FLASH_ATTN.finding(
        Severity.CRITICAL,
        "ROCm's CK flash-attention ran on a GPU other than AMD Instinct (MI200 or newer): build or run vLLM without it",
        summary="On ROCm, vLLM's image could build AMD's Composable Kernel flash-attention, which supports only the "
        "Instinct GPUs (gfx90a, gfx942); on a Radeon (RX 7900, gfx1100) it refuses, and vLLM must use its Triton "
        "flash attention or its plain attention path instead.",
        evidence=[c.log_evidence(event, name="FlashAttention", value="needs AMD MI200 or newer")],
        actions=[
            "Build the image without CK flash-attention: `--build-arg BUILD_FA=0` for vLLM's Dockerfile.rocm, as "
            "vLLM's ROCm installation guide says for the Radeon RX 7900 series (0.5.1 to 0.6.5).",
            "On a release with ROCm's Triton flash attention (0.4 on), keep VLLM_USE_TRITON_FLASH_ATTN at 1 (its "
            "default); 0 selects CK's, which this GPU lacks.",
        ],
        confidence=0.7,
    )


def _float32(event: LogEvent) -> Finding:
    return RULE_FLASH_ATTN.finding(
        Severity.CRITICAL,
        "FlashAttention ran on float32 tensors: its kernels take float16 and bfloat16 only",
        summary="flash-attn checks the tensors' dtype before it runs. vLLM 0.32 serves a float32 checkpoint in half "
        "precision under `--dtype auto` and admits FLASH_ATTN for float16 and bfloat16 only, so the error means "
        "`--dtype float32` with FLASH_ATTN forced, an older release, or a model's own code calling flash-attn.",
        evidence=[c.log_evidence(event, name="FlashAttention", value="takes float16 and bfloat16 only")],
        actions=[
            "Serve in half precision: `--dtype auto` (0.32 downcasts a float32 checkpoint itself: vllm/config/"
            "model.py) or `--dtype bfloat16` (`half` below compute capability 8.0).",
            "If float32 is what you need, an attention backend that takes it: `--attention-backend TRITON_ATTN` or "
            "FLEX_ATTENTION (0.32), not FLASH_ATTN.",
            "If the traceback's last frames are the model's own code calling flash_attn, its dtype is set there (or by "
            "--dtype for the whole model).",
        ],
        confidence=0.8,
    )


def _old_gpu(event: LogEvent) -> Finding:
    return RULE_FLASH_ATTN.finding(
        Severity.CRITICAL,
        "FlashAttention ran on a GPU older than Ampere (compute capability below 8.0): its kernels need 8.0",
        summary="flash-attn checks the GPU before it runs and refuses Volta and Turing (V100, T4, RTX 20xx). vLLM "
        "0.32 does not choose it there by itself: the backend was forced, a V0 path called it, or the model's "
        "own code imports flash-attn.",
        evidence=[c.log_evidence(event, name="FlashAttention", value="needs compute capability 8.0")],
        actions=[
            "Take FLASH_ATTN (and FLASHINFER) off: without `--attention-backend` vLLM 0.32 picks TRITON_ATTN on "
            "this GPU; with it, `--attention-backend TRITON_ATTN` (or FLEX_ATTENTION). V0 releases chose XFormers "
            "here by themselves (their log: 'Cannot use FlashAttention-2 backend for Volta and Turing GPUs.'): "
            "unset a VLLM_ATTENTION_BACKEND that forces FLASH_ATTN, or set it to XFORMERS.",
            "If the traceback's last frames are the model's own code (a remote-code model that imports "
            "flash_attn), no vLLM flag reaches it: a model implementation without flash-attn, or a newer GPU.",
            "bfloat16 needs compute capability 8.0 too: `--dtype half` on Volta and Turing.",
        ],
        confidence=0.85,
    )


RULE_FLASH_ATTN = Rule(
    code="OP-7.52",
    title="FlashAttention on a GPU older than Ampere, or on float32 tensors",
    category=Category.STARTUP,
    check=_check_flash_attn,
    needs=("events",),
    page=RulePage(
        checks="flash-attn's `FlashAttention only supports Ampere GPUs or newer.` and `FlashAttention only support "
        "fp16 and bf16 data type`; early V1's `assert is_fa_version_supported(self.fa_version)` (0.7).",
        why="FlashAttention's kernels need compute capability 8.0; vLLM 0.32 admits its FLASH_ATTN and FLASHINFER "
        "backends from 8.0 only and picks TRITON_ATTN below it, so the error means a forced backend, a V0 path or "
        "a model's own import.",
        example="A 2080 Ti on V0 with VLLM_ATTENTION_BACKEND=FLASHINFER still reaching flash_attn_varlen_func "
        "(vllm#8189).",
        fix="No forced FLASH_ATTN or FLASHINFER (`--attention-backend TRITON_ATTN` where one is set; "
        "VLLM_ATTENTION_BACKEND=XFORMERS on V0); `--dtype half` on these GPUs; for float32, `--dtype auto` (half "
        "precision) or a backend that takes float32 (TRITON_ATTN, FLEX_ATTENTION).",
        limits="The words do not name the caller; the traceback's frames say whether vLLM or the model called it.",
        references=["https://github.com/vllm-project/vllm/issues/8189"],
    ),
)

RULES: list[Rule] = [RULE, RULE_FLASH_ATTN]
