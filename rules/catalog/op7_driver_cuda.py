"""OP-7.43: the NVIDIA driver supports an older CUDA release than the PyTorch (and vLLM) build needs.

Why a rule of its own: vLLM's wheels and images pin a PyTorch built for one CUDA release, and a CUDA build runs only
on a driver of its major release's family or newer: NVIDIA's minor version compatibility puts the floor at driver 450
for CUDA 11.x, 525 for 12.x and 580 for 13.x (its "CUDA Compatibility" guide). torch asks the driver which CUDA release
it supports (`cudaDriverGetVersion`, 1000 × major + 10 × minor; nvidia-smi shows it as `CUDA Version`) and refuses
an older one in its own words, `The NVIDIA driver on your system is too old (found version 12040)`
(c10/cuda/CUDAFunctions.cpp); CUDA's runtime says `CUDA driver version is insufficient for CUDA runtime version`
(cudaErrorInsufficientDriver, 35). vLLM then sees no usable GPU. Triton's own compiler meets the same floor: the ptxas
it ships compiles for its CUDA release, and an older driver refuses the result (`Triton Error [CUDA]: device kernel
image is invalid`: vllm#5713, fixed by a newer CUDA on the host; pytorch/pytorch#119054, by TRITON_PTXAS_PATH at the
system's older ptxas). The fix is on the host (a newer driver) or in the
build chosen (one for the driver's CUDA), never a vLLM flag.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# The oldest driver branch each CUDA major release runs on (NVIDIA's minor version compatibility table).
MIN_DRIVER_BY_CUDA_MAJOR: dict[int, int] = {11: 450, 12: 525, 13: 580}


def _major(release: str | None) -> int | None:
    """A CUDA release's major number (`12.4` → 12), read by the one parser of version text rules have."""
    parsed = c.release_of(release)
    return parsed[0] if parsed else None


def _check(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.DRIVER_TOO_OLD)
    if not events:
        return []
    if all(e.component == "Triton" for e in events):
        return [_triton_finding(events[0])]
    if all(e.component == "PTX" for e in events):
        return [_ptx_finding(events[0])]
    event = next((e for e in events if e.version), events[0])
    required = next((e.cuda_required for e in events if e.cuda_required), None)
    build = required or next((e.version for e in facts.events_of(LogEventKind.TORCH_CUDA_BUILD) if e.version), None)
    compat = any(e.component == "cuda-compat" for e in events)
    return [_finding(event, event.version, build, image=required is not None, compat=compat)]


_COMPAT_UNSUPPORTED = (
    "Error 804 is CUDA's forward-compatibility libraries (the image's cuda-compat, found on LD_LIBRARY_PATH) tried "
    "on a GPU that does not support them (GeForce and workstation cards): the host's driver must itself support the "
    "image's CUDA. Upgrade it, or run the previous image whose CUDA the driver supports (vllm#5283: v0.4.3 failed "
    "where v0.4.2 ran, on driver 535)."
)


def _upgrade(build: str | None, image: bool) -> str:
    """The driver to install: one whose own CUDA release reaches the image's (the container runtime compares the
    two), else a branch of the build's CUDA family (minor version compatibility)."""
    if image:
        return (
            f"Upgrade the host's NVIDIA driver to one whose CUDA Version (nvidia-smi's header) is {build} or later: "
            "the container runtime compares the image's declared CUDA with the driver's own"
        )
    major = _major(build)
    floor = MIN_DRIVER_BY_CUDA_MAJOR.get(major or 0)
    if build and floor:
        return (
            f"Upgrade the host's NVIDIA driver to a branch for CUDA {build} or newer (CUDA {major}.x builds need "
            f"driver {floor} or later)"
        )
    return (
        "Upgrade the host's NVIDIA driver to a branch for the build's CUDA release (CUDA 12.x builds need driver "
        f"{MIN_DRIVER_BY_CUDA_MAJOR[12]} or later, CUDA 13.x {MIN_DRIVER_BY_CUDA_MAJOR[13]})"
    )


_SKIP_CHECK = (
    "Or, where minor version compatibility lets the image run anyway (a CUDA {major}.x image on a driver of "
    "{floor} or later), set NVIDIA_DISABLE_REQUIRE=1 in the container's environment to skip the runtime's check; "
    "what needs the newer driver still fails."
)


def _finding(
    event: LogEvent, driver_cuda: str | None, build: str | None, image: bool = False, compat: bool = False
) -> Finding:
    supports = f" supports CUDA {driver_cuda} at most," if driver_cuda else " is"
    needs = f"the CUDA {build} this PyTorch was built for" if build else "the CUDA release this PyTorch was built for"
    if image:
        needs = f"CUDA {build}, which the image declares (the NVIDIA container runtime refused to start it)"
    actions = [_COMPAT_UNSUPPORTED] if compat else []
    actions += [
        _upgrade(build, image) + "; reboot after installing it (on Kubernetes, the GPU operator's driver version). "
        "`nvidia-smi`'s `CUDA Version` then shows the newer release.",
        "Or run a build for the driver's CUDA"
        + (f" ({driver_cuda} or older)" if driver_cuda else "")
        + ": PyTorch's wheels for that CUDA (`--index-url https://download.pytorch.org/whl/cu<XY>`) with the vLLM "
        "release built for that PyTorch, or the vLLM image of that CUDA release.",
        "On data-center GPUs, NVIDIA's CUDA forward-compatibility package (cuda-compat) runs a newer CUDA on an "
        "older supported driver branch; GeForce cards do not support it.",
    ]
    major = _major(build)
    if image and major in MIN_DRIVER_BY_CUDA_MAJOR:
        actions.append(_SKIP_CHECK.format(major=major, floor=MIN_DRIVER_BY_CUDA_MAJOR[major]))
    return RULE.finding(
        Severity.CRITICAL,
        f"the NVIDIA driver{supports} older than {needs}: no GPU is usable",
        summary="A CUDA build runs only on a driver of its major release's family or newer; the driver here is older "
        "than the build (or the image) needs, so CUDA does not start and vLLM sees no GPU. vLLM's wheels and images "
        "pin one PyTorch, built for one CUDA release: the driver decides which of them can run here.",
        evidence=[c.log_evidence(event, name="the driver's CUDA", value=driver_cuda)],
        actions=actions,
        confidence=0.9,
    )


def _ptx_finding(event: LogEvent) -> Finding:
    """A kernel shipped as PTX from a newer CUDA toolkit than the driver's own compiler takes: the driver is older."""
    return RULE.finding(
        Severity.CRITICAL,
        "a kernel's PTX was compiled by a newer CUDA toolkit than the NVIDIA driver supports: the provided PTX was "
        "compiled with an unsupported toolchain",
        summary="Kernels built as PTX are compiled for the GPU by the driver when they first load, and a driver takes "
        "only PTX from CUDA releases up to its own (`nvidia-smi`'s CUDA Version). This build's kernels (vLLM's, a "
        "kernel library's, or ones compiled on another machine) came from a newer toolkit, so they fail to load "
        "while the rest of CUDA works.",
        evidence=[c.log_evidence(event, name="the driver's refusal", value="cudaErrorUnsupportedPtxVersion")],
        actions=[
            "Upgrade the host's NVIDIA driver to a branch whose CUDA Version is at or above the toolkit that built "
            "the kernels (`nvcc --version` where they were built; the CUDA of the wheel or image).",
            "Or build with a toolkit no newer than the driver's CUDA Version (CUDA_HOME at that toolkit), or install "
            "the wheel or image built for that CUDA release.",
        ],
        confidence=0.85,
    )


def _triton_finding(event: LogEvent) -> Finding:
    """Triton's bundled ptxas compiled a kernel for a newer CUDA than the driver loads."""
    return RULE.finding(
        Severity.CRITICAL,
        "a Triton kernel was compiled for a newer CUDA than the driver supports: device kernel image is invalid",
        summary="Triton compiles its kernels with the ptxas it ships, of a recent CUDA release; the driver could not "
        "load the result because it supports only an older CUDA (`nvidia-smi`'s CUDA Version). vLLM's Triton kernels "
        "(fused MoE, attention, torch.compile's) fail at their first launch.",
        evidence=[c.log_evidence(event, name="Triton's kernel", value="device kernel image is invalid")],
        changes=[
            ConfigChange(
                flag="TRITON_PTXAS_PATH",
                proposed="<the ptxas of the CUDA release the driver supports, e.g. /usr/local/cuda-11.8/bin/ptxas>",
                reason="Triton then compiles for a CUDA the driver can load",
                cost="a CUDA toolkit (or pip's nvidia-cuda-nvcc wheel) of that release on the host",
                kind="env",
            )
        ],
        actions=[
            "Better, a newer driver: its CUDA Version (`nvidia-smi`) at or above the CUDA of the Triton vLLM ships "
            "(vllm#5713: moving the host from CUDA 11.8 to 12.2 fixed it; triton-lang/triton#3001: driver 470 to 535).",
        ],
        confidence=0.8,
    )


RULE = Rule(
    code="OP-7.43",
    title="NVIDIA driver older than the build's CUDA",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="torch's `The NVIDIA driver on your system is too old (found version N)` (N: the driver's CUDA release, "
        "1000 × major + 10 × minor), CUDA's `CUDA driver version is insufficient for CUDA runtime version` and the "
        "NVIDIA container runtime's `requirement error: unsatisfied condition: cuda>=X.Y`, Triton's `Triton Error "
        "[CUDA]: device kernel image is invalid` (its ptxas newer than the driver's CUDA), CUDA's `the provided PTX "
        "was compiled with an unsupported toolchain` and `Error 804: forward compatibility was attempted on non "
        "supported HW`; the build's CUDA from "
        "`python collect_env.py`, torch's `+cuXYZ` version or the image's declared CUDA.",
        why="A CUDA build needs a driver of its major release's family or newer (CUDA 12.x: 525, 13.x: 580); vLLM "
        "pins one PyTorch per release, so the driver decides which builds run.",
        example="`RuntimeError: The NVIDIA driver on your system is too old (found version 12040)` after installing a "
        "vLLM whose PyTorch is built for CUDA 13 on a host whose 550 driver supports CUDA 12.4.",
        fix="A newer driver (reboot after installing it); or PyTorch and vLLM built for the driver's CUDA; "
        "cuda-compat on data-center GPUs; for Triton, TRITON_PTXAS_PATH at the ptxas of the driver's CUDA.",
        limits="Names the build's CUDA only when the text holds it (collect_env's line, torch's version suffix).",
        references=[
            "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html",
            "https://docs.nvidia.com/deploy/cuda-compatibility/",
            "https://github.com/vllm-project/vllm/issues/5713",
            "https://github.com/pytorch/pytorch/issues/119054",
        ],
    ),
)

RULES: list[Rule] = [RULE]
