"""OP-7.36: the code that ran was built for other GPUs: no kernel for this one's compute capability.

Why a rule of its own: CUDA's `no kernel image is available for execution on the device` (its NoKernelImageForDevice)
says a binary holds no code for the GPU it runs on. For a vLLM server the binaries are PyTorch's, vLLM's own compiled
ops and the attention libraries, each built for a list of compute capabilities; torch says which at its first CUDA
call (`<GPU> with CUDA capability sm_120 is not compatible with the current PyTorch installation. The current PyTorch
install supports CUDA capabilities sm_50 … sm_90.`, torch/cuda/__init__.py). The GPU is either newer than the build
(Blackwell's sm_100 and sm_120 need builds made with CUDA 12.8 or later: PyTorch's cu128 wheels from 2.7, vLLM's
binaries since they moved to CUDA 12.8) or older than vLLM supports (its installation guide: compute capability 7.0
or higher through 0.14 at least, 7.5 or higher by 0.31: V100 is no longer listed).
"""

from __future__ import annotations

import re

from rules import vllm_defaults
from rules.catalog import common as c
from rules.events import (
    PTX_BUILD,
    PTX_CODEGEN_TOO_OLD,
    PTX_TOO_OLD,
    PTX_TRITON,
    TRITON_FP8_TYPE,
    VLLM_BUILD,
    LogEvent,
    LogEventKind,
)
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity

BLACKWELL_CAPABILITY = 100  # sm_100 (B200) and sm_120 (RTX 50xx, RTX PRO 6000): builds with CUDA 12.8 or later
_SM = re.compile(r"sm_(\d+)")

_CHECK = (
    'See what the build holds against the GPU: `python -c "import torch; print(torch.cuda.get_device_name(), '
    'torch.cuda.get_device_capability(), torch.cuda.get_arch_list(), torch.version.cuda)"`.'
)


def _capability(sm: str | None) -> int | None:
    match = _SM.search(sm or "")
    return int(match.group(1)) if match else None


def _check_gpu_arch(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.GPU_ARCH_UNSUPPORTED)
    if not events:
        return []
    rocm = [e for e in events if e.component == "ROCm"]
    if rocm:
        return [_rocm(next((e for e in rocm if e.version), rocm[0]))]
    too_old = next((e for e in events if e.component == PTX_TOO_OLD), None)
    if too_old is not None:
        return [_ptxas_too_old(too_old)]
    codegen = next((e for e in events if e.component == PTX_CODEGEN_TOO_OLD), None)
    if codegen is not None:
        return [_ptx_version_too_old(codegen)]
    fp8 = next((e for e in events if e.component == TRITON_FP8_TYPE), None)
    if fp8 is not None:
        return [_triton_fp8(fp8)]
    ptx = next((e for e in events if e.component in (PTX_BUILD, PTX_TRITON)), None)
    if ptx is not None:
        return [_ptx_feature(ptx)]
    build = next((e for e in events if e.component == VLLM_BUILD), None)
    if build is not None:
        return [_build_refused(build)]
    gpu = next((e for e in events if e.version), None)
    built = next((e for e in events if e.component == "PyTorch"), None)
    cuda = next((e for e in events if e.component is None), None)
    if gpu is None:
        return [_no_kernel(cuda or events[0])]
    return [_torch_says(gpu, built, cuda)]


def _fix_for(capability: int | None) -> str:
    if capability is not None and capability < vllm_defaults.MIN_CAPABILITY_0_14:
        return (
            f"This GPU's capability (sm_{capability}) is below what any vLLM release's builds support (7.0 at the "
            "lowest, its installation guide): run on a GPU of 7.5 or later (T4, A10, L4, A100, H100 …), or a "
            "community build for it (vllm-pascal for Pascal)."
        )
    if capability is not None and capability < vllm_defaults.MIN_CAPABILITY:
        return (
            f"This GPU's capability (sm_{capability}, V100) is below the 7.5 current vLLM releases' installation guide "
            "lists (0.31 and 0.32); releases up to 0.14 at least listed 7.0: run an older release whose build carries "
            "sm_70, build from source with TORCH_CUDA_ARCH_LIST=7.0, or serve on a GPU of 7.5 or later."
        )
    if capability is not None and capability >= BLACKWELL_CAPABILITY:
        return (
            f"Install builds with kernels for sm_{capability}: a PyTorch made with CUDA 12.8 or later (its cu128 "
            "wheels, from 2.7, carry Blackwell's sm_100 and sm_120) and the vLLM release built against that PyTorch "
            "(or vLLM's container image of that release); build from source with TORCH_CUDA_ARCH_LIST set to the "
            "GPU's capability otherwise."
        )
    return (
        "Install a PyTorch (and the vLLM release built against it) whose list holds this GPU's capability, or build "
        "from source with TORCH_CUDA_ARCH_LIST set to it."
    )


def _torch_says(gpu: LogEvent, built: LogEvent | None, cuda: LogEvent | None) -> Finding:
    capability = _capability(gpu.version)
    archs = f": it was built for {built.message}" if built is not None else ""
    evidence = [c.log_evidence(gpu, name="the GPU torch found", value=gpu.version)]
    evidence += [c.log_evidence(e, name=n) for e, n in ((built, "what PyTorch holds"), (cuda, "CUDA's error")) if e]
    return RULE_GPU_ARCH.finding(
        Severity.CRITICAL,
        f"the installed PyTorch has no kernels for the {gpu.component} ({gpu.version}){archs}",
        summary=f"torch's own check found the {gpu.component}, of compute capability {gpu.version}, outside the "
        "capabilities its build carries code for; every kernel launched on it fails with CUDA's 'no kernel image is "
        "available for execution on the device', and vLLM's compiled ops were built against that PyTorch.",
        evidence=evidence,
        actions=[_fix_for(capability), _CHECK],
        confidence=0.9,
    )


def _build_refused(event: LogEvent) -> Finding:
    """vLLM 0.1-0.3's setup.py, building from source (pip installing the sdist, `pip install -e .`): with
    TORCH_CUDA_ARCH_LIST unset it targets every GPU the machine shows and refuses one below compute capability 7.0.
    The maintainers' answer: vLLM did not support GPUs before Volta (vllm#774); nothing technical stopped Pascal,
    it was untested (vllm#963)."""
    floor = event.message or "7.0"
    return RULE_GPU_ARCH.finding(
        Severity.CRITICAL,
        f"vLLM's build from source refused a GPU below compute capability {floor} (Pascal or older)",
        summary=f"vLLM's setup.py (0.1-0.3) compiles its kernels for every GPU the machine shows when "
        f"TORCH_CUDA_ARCH_LIST is unset, and stops at one of compute capability below {floor}: a P100, P40, P4 or "
        "GTX 10xx. It happens while installing, before any server runs. vLLM's maintainers said vLLM did not "
        "support GPUs older than Volta, which were untested rather than impossible (vllm#774, vllm#963).",
        evidence=[c.log_evidence(event, name="vLLM's build floor", value=floor)],
        actions=[
            f"Serve on a GPU of compute capability {floor} or newer (V100, T4, A10, A100, L4, H100 …); current vLLM "
            "releases need 7.5.",
            "If the machine also has a supported GPU, build for that one only: TORCH_CUDA_ARCH_LIST set to its "
            "capability (8.0 for an A100) skips the check of every GPU, or CUDA_VISIBLE_DEVICES hides the old one "
            "during the install.",
            "To run on the Pascal GPU itself: community builds (vllm-pascal) remove the check, at your own risk; "
            "vLLM's own releases never supported it.",
        ],
        confidence=0.9,
    )


def _ptx_feature(event: LogEvent) -> Finding:
    """ptxas refusing an instruction the target architecture lacks: nvcc building vLLM from source for an older GPU
    than one of its kernels supports, or Triton compiling a kernel at run time for the GPU it runs on."""
    feature, needed = event.message or "an instruction", event.version or "a newer architecture"
    evidence = c.log_evidence(event, name="the compiler's refusal", value=f"{feature} needs {needed}")
    return (
        _ptx_in_build(feature, needed, evidence)
        if event.component == PTX_BUILD
        else _ptx_in_triton(feature, needed, evidence)
    )


def _ptx_in_build(feature: str, needed: str, evidence: Evidence) -> Finding:
    return RULE_GPU_ARCH.finding(
        Severity.CRITICAL,
        f"building vLLM from source for a GPU older than one of its kernels: {feature} needs {needed}",
        summary=f"nvcc compiled one of vLLM's kernels for a GPU architecture below {needed}, whose instructions it "
        "uses ('tmpxft_' is nvcc's temporary file; its name may say the target, `.compute_70.ptx`). The build targets "
        "the GPUs it sees, or TORCH_CUDA_ARCH_LIST's list; a kernel that does not guard its newer instructions fails "
        "the whole install there. vLLM 0.2.0's AWQ GEMM needed sm_80 (vllm#1063, on a Turing GPU; PR #1252 added a "
        "Turing path); a Maxwell M40 fails vLLM's own half-precision attention kernels at sm_53 (vllm#15751), below "
        f"any vLLM release's floor (sm_{vllm_defaults.MIN_CAPABILITY_0_14}).",
        evidence=[evidence],
        actions=[
            "Install a released wheel instead of building, if one supports this GPU (compute capability "
            f"{vllm_defaults.MIN_CAPABILITY / 10:.1f} or later for current releases): its kernels are built and "
            "guarded per architecture.",
            f"Building for a GPU of {needed} or newer: set TORCH_CUDA_ARCH_LIST to that GPU's capability alone (8.0 "
            "for an A100) so no older target is compiled; a GPU older than the kernel needs a release whose kernel "
            "has a path for it, or the kernel's feature left out of the build.",
        ],
        confidence=0.8,
    )


# What a Triton kernel's refused instruction belongs to, by words in it: (what the GPU lacks, what to serve instead).
_TRITON_LACKS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (
        ("bf16",),
        "bfloat16, which GPUs before Ampere (sm_80) lack: V100, T4",
        "Serve in float16: --dtype half (a bfloat16 checkpoint converts on load), and no bfloat16 KV cache.",
    ),
    (
        ("e4m3", "e5m2", "fp8", "f8"),
        "FP8, which GPUs before Ada and Hopper (sm_89, sm_90) lack",
        "Leave FP8 out on this GPU: no --kv-cache-dtype fp8 and no FP8 checkpoint or --quantization fp8 (vllm PR "
        "#35720: an FP8 KV cache crashed on sm<89).",
    ),
)


def _ptx_in_triton(feature: str, needed: str, evidence: Evidence) -> Finding:
    words, reason, action = next(
        (row for row in _TRITON_LACKS if any(word in feature for word in row[0])),
        (
            (),
            f"an instruction of {needed}",
            f"Serve this model's configuration on a GPU of {needed} or later, or without the feature that chose this "
            "kernel (its quantization, its KV cache dtype).",
        ),
    )
    bf16 = words == ("bf16",)
    return RULE_GPU_ARCH.finding(
        Severity.CRITICAL,
        f"a Triton kernel needs {needed} for {feature}: this GPU is older",
        summary="Triton compiles vLLM's Triton kernels (attention, MoE, quantization) for the GPU it runs on, and "
        f"refused one (Triton itself, or ptxas under it): it uses {reason}. The model's dtype or quantization chose a "
        "kernel this GPU cannot run.",
        evidence=[evidence],
        actions=[action, _CHECK],
        changes=[ConfigChange(flag="--dtype", current=None, proposed="half", reason="bfloat16 needs sm_80")]
        if bf16
        else [],
        confidence=0.8,
    )


def _ptx_version_too_old(event: LogEvent) -> Finding:
    """ptxas knows the GPU, but the PTX it was handed declares an ISA version from before it: the code generator
    (Triton's, compiling vLLM's kernels or torch.compile's at run time) is older than the GPU, so a newer ptxas alone
    does not help."""
    arch, ptx = event.version or "this GPU's architecture", event.message or "an older"
    return RULE_GPU_ARCH.finding(
        Severity.CRITICAL,
        f"Triton wrote PTX {ptx} for {arch}, which needs a later PTX version: the Triton installed is older than "
        "this GPU",
        summary="Triton compiles kernels (vLLM's own, and torch.compile's) to PTX of the newest ISA version it knows, "
        f"then runs ptxas on it; ptxas knows {arch} but refuses PTX {ptx} for it, so Triton predates the GPU. "
        "Pointing Triton at a newer ptxas does not help here: the PTX itself is too old.",
        evidence=[c.log_evidence(event, name="PTX version ptxas refused", value=f"{ptx} for {arch}")],
        actions=[
            "Install a Triton (with the PyTorch it belongs to) that supports the GPU: for Blackwell's sm_120 the "
            "Triton of PyTorch 2.7 or later; vLLM's release notes and container images pair them.",
            _CHECK,
        ],
        confidence=0.8,
    )


# Triton's names for the FP8 E4M3 flavours: MI300's (gfx942) "fnuz" one, and the OCP one NVIDIA's Ada and Hopper and
# AMD's MI350 (gfx950) compute; fp8e4b15 is Triton's own, for NVIDIA GPUs before Hopper alone
_E4M3 = ("fp8e4nv", "fp8e4b8")
_FP8_OFF = (
    "Leave FP8 out on this GPU: a BF16 or FP16 checkpoint (or another quantization: GPTQ, AWQ) instead of an FP8 one, "
    "no --quantization fp8, and --kv-cache-dtype auto."
)


def _triton_fp8(event: LogEvent) -> Finding:
    """Triton refusing an FP8 type on the AMD side, or a kernel asking for Triton's fp8e4b15 where it does not exist:
    with no E4M3 type in what Triton offers, the GPU computes no FP8 of the kind FP8 checkpoints hold (vllm#16394:
    DeepSeek-R1's FP8 weights on an MI210, which offers fp8e5 alone); with one, the kernel asked for the wrong kind,
    a kernel written for other GPUs (vllm PR #43804: a ROCm attention kernel's fp8e4b15 on MI300)."""
    dtype, offered = event.message or "an FP8 type", event.accepted_instead
    has_e4m3 = offered is not None and any(kind in offered for kind in _E4M3)
    nvidia = offered is not None and "fp8e4b15" in offered  # Triton offers its own type on NVIDIA alone
    evidence = c.log_evidence(event, name="Triton's refusal", value=f"{dtype} (offers {offered or 'not listed'})")
    if dtype == "fp8e4b15" or has_e4m3 or nvidia:
        return RULE_GPU_ARCH.finding(
            Severity.CRITICAL,
            f"a Triton kernel asks for {dtype}, an FP8 type this GPU's Triton backend does not have: the kernel was "
            "written for other GPUs",
            summary=f"Triton compiles vLLM's Triton kernels for the GPU it runs on and refused {dtype}"
            + (f"; it offers {offered} here" if offered else "")
            + ". fp8e4b15 is Triton's own type for NVIDIA GPUs before Hopper, fp8e4b8 MI300's E4M3 and fp8e4nv "
            "the E4M3 of NVIDIA's Ada and Hopper and AMD's MI350: a kernel that names one type for every GPU fails "
            "on the others (vllm PR #43804: a ROCm attention kernel's fp8e4b15 on MI300).",
            evidence=[evidence],
            actions=[
                "Upgrade vLLM: kernels that named one GPU's FP8 type get the type of each GPU in later releases.",
                "Meanwhile serve without the feature that chose the kernel (its attention backend, --kv-cache-dtype "
                "fp8, the FP8 quantization), and report the kernel and the GPU to vLLM.",
            ],
            confidence=0.75,
        )
    return RULE_GPU_ARCH.finding(
        Severity.CRITICAL,
        f"this GPU computes no FP8 E4M3 in Triton ({dtype} refused"
        + (f", {offered} offered" if offered else "")
        + "): an AMD GPU without FP8 (before MI300, or a Radeon before RDNA4)",
        summary="Triton compiles vLLM's FP8 kernels (FP8 weights, an FP8 KV cache) for the GPU it runs on, and this "
        "GPU's backend has no E4M3 type: on the AMD side MI300 (gfx942) is the first GPU to compute FP8, in its "
        "'fnuz' flavour (fp8e4b8), and MI350 (gfx950) the OCP one (fp8e4nv); MI200 (gfx90a), MI100 and Radeon "
        "GPUs before RDNA4 have neither (vllm#16394: DeepSeek-R1's FP8 checkpoint on an MI210).",
        evidence=[evidence],
        actions=[_FP8_OFF, "Or serve the FP8 checkpoint on an MI300 or later (an NVIDIA GPU of sm_89 or later)."],
        confidence=0.8,
    )


def _ptxas_too_old(event: LogEvent) -> Finding:
    """ptxas was asked for an architecture it does not know: the GPU is newer than the CUDA toolkit that ptxas came
    with. At run time that is Triton's own ptxas, bundled with the Triton release vLLM pins; Triton takes another
    one from TRITON_PTXAS_PATH (nvidia-cosmos/cosmos-reason2#30 on a DGX Spark, sm_121; the fix reported in
    triton-lang/triton#8539 is CUDA 13's ptxas)."""
    arch = event.version or "this GPU's architecture"
    return RULE_GPU_ARCH.finding(
        Severity.CRITICAL,
        f"ptxas does not know {arch}: the CUDA compiler Triton runs is older than this GPU",
        summary=f"Triton compiles vLLM's Triton kernels with ptxas for the GPU it runs on; this ptxas has no {arch} "
        "(`--gpu-name`), so it comes from a CUDA release made before the GPU. At run time that is the ptxas Triton "
        "ships with the release vLLM pins; building from source, the toolkit's.",
        evidence=[c.log_evidence(event, name="the architecture ptxas was asked for", value=arch)],
        changes=[
            ConfigChange(
                flag="TRITON_PTXAS_PATH",
                proposed="<the ptxas of a CUDA toolkit that knows the GPU, e.g. /usr/local/cuda-13.0/bin/ptxas>",
                reason=f"Triton then compiles with a ptxas that has {arch} (triton-lang/triton#8539: CUDA 13's for "
                "sm_121)",
                cost="a CUDA toolkit of that release on the host (or in the image)",
                kind="env",
            )
        ],
        actions=[
            "Or install a vLLM release (or its container image) whose Triton and CUDA support this GPU: check "
            '`python -c "import triton, torch; print(triton.__version__, torch.version.cuda)"`.',
            _CHECK,
        ],
        confidence=0.8,
    )


def _no_kernel(event: LogEvent) -> Finding:
    return RULE_GPU_ARCH.finding(
        Severity.CRITICAL,
        "a binary holds no code for this GPU (CUDA: no kernel image is available for execution on the device)",
        summary="CUDA found no code for this GPU's compute capability in the kernel it launched: PyTorch, vLLM's "
        "compiled ops or an attention library was built for other GPUs. Most often the GPU is newer than the build "
        "(Blackwell's sm_100 and sm_120 need builds made with CUDA 12.8 or later) or older than vLLM supports "
        "(compute capability below 7.5 in current releases, 7.0 in older ones). torch's warning at start (`… with "
        "CUDA capability sm_… is not compatible with the current PyTorch installation`) names which, when the log "
        "holds it.",
        evidence=[c.log_evidence(event, name="CUDA's error")],
        actions=[_CHECK, _fix_for(None)],
        confidence=0.75,
    )


# The AMD GPUs vLLM's installation guide lists for its ROCm builds (docs/getting_started/installation/gpu.rocm.inc.md,
# 0.31), by gfx target.
ROCM_TARGETS = "gfx90a (MI200), gfx942 (MI300), gfx950 (MI350), gfx1100/1101 (RX 7900), gfx1200/1201 (RX 9000), " + (
    "gfx1150/1151 (Ryzen AI 300 / MAX)"
)


def _rocm(event: LogEvent) -> Finding:
    target = f" ({event.version})" if event.version else ""
    triton = event.message == "triton"  # Triton's compiler, not a prebuilt binary, lacks the target
    return RULE_GPU_ARCH.finding(
        Severity.CRITICAL,
        f"Triton's compiler has no target for this AMD GPU's architecture{target}: vLLM's Triton kernels cannot be "
        "built for it"
        if triton
        else f"a binary holds no code for this AMD GPU's architecture{target}: ROCm found no kernel for it",
        summary="ROCm's builds (PyTorch's, vLLM's compiled ops, rocBLAS's Tensile kernels) carry code objects for a "
        "list of gfx targets; a GPU outside the list runs none of them, and HIP says so (`invalid device function`, "
        f"`hipErrorNoBinaryForGpu`) or rocBLAS does, naming the target. vLLM's ROCm builds list {ROCM_TARGETS}.",
        evidence=[c.log_evidence(event, name="ROCm's error", value=event.version)],
        actions=[
            "See the GPU's target and what the build holds: `rocminfo | grep -m1 gfx`, and `python -c \"import torch; "
            'print(torch.cuda.get_device_name(), torch.cuda.get_arch_list())"`.',
            "Serve on a listed GPU, or build vLLM (and PyTorch) from source for the target: PYTORCH_ROCM_ARCH set to "
            "it.",
            *(
                [
                    "Triton compiles vLLM's attention and other Triton kernels at run time, and its AMD backend "
                    "supports the targets its release lists; an older GPU (gfx906: MI50, MI60) needs a Triton and "
                    "vLLM built for it (community forks exist), or V0's VLLM_USE_TRITON_FLASH_ATTN=0 for the "
                    "attention kernel alone."
                ]
                if triton
                else []
            ),
            "For a GPU of a listed family but another target (an integrated Radeon such as gfx1103), ROCm's "
            "HSA_OVERRIDE_GFX_VERSION (11.0.0 reads as gfx1100) makes the runtime use that target's code: "
            "unsupported, and wrong results are possible.",
        ],
        confidence=0.8,
    )


RULE_GPU_ARCH = Rule(
    code="OP-7.36",
    title="code built for other GPUs: no kernel for this one",
    category=Category.STARTUP,
    check=_check_gpu_arch,
    needs=("events",),
    page=RulePage(
        checks="CUDA's `no kernel image is available for execution on the device`; vLLM 0.1-0.3's build refusing "
        "a GPU (`GPUs with compute capability below 7.0 are not supported.`, setup.py); torch's `<GPU> with CUDA "
        "capability sm_<cc> is not compatible with the current PyTorch installation` and its `The current PyTorch "
        "install supports CUDA capabilities …`; ROCm's `HIP error: invalid device function`, `hipErrorNoBinaryForGpu: "
        "Unable to find code object for all current devices` and rocBLAS's `Cannot read …TensileLibrary…: No such "
        "file or directory for GPU arch : gfx…`; Triton's `error: unsupported target: 'gfx…'` compiling one of vLLM's "
        "Triton kernels; ptxas's `Feature '…' requires .target sm_<cc> or higher`, from nvcc building vLLM from "
        "source (its `tmpxft_` files) or from Triton at run time (bfloat16 before sm_80, FP8 before sm_89), and "
        "Triton's own `type fp8e4nv not supported in this architecture`; ptxas's `PTX .version 8.4 does not support "
        ".target sm_120a` (Triton's code generator older than the GPU, NixOS/nixpkgs#406675).",
        why="PyTorch, vLLM's compiled ops and the attention libraries carry code for a list of compute capabilities; "
        "a GPU outside the list runs none of it.",
        example="`NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
        "installation. The current PyTorch install supports CUDA capabilities sm_50 … sm_90.`: a build made before "
        "Blackwell; PyTorch's cu128 wheels (2.7 and later) carry sm_120.",
        fix="Builds whose list holds the GPU (CUDA 12.8 or later for Blackwell), a source build with "
        "TORCH_CUDA_ARCH_LIST, or a GPU of compute capability 7.5 or later for current vLLM (7.0 for releases up to "
        "0.14 at least).",
        limits="Without torch's warning the GPU is not named; which library lacked the kernel is in the traceback's "
        "frames.",
        references=[
            "https://docs.vllm.ai/en/latest/getting_started/installation/gpu.html",
            "https://pytorch.org/get-started/locally/",
            "https://github.com/vllm-project/vllm/issues/1063",
            "https://github.com/vllm-project/vllm/pull/35720",
        ],
    ),
)

RULES: list[Rule] = [RULE_GPU_ARCH]
