"""OP-7.13 to OP-7.15 and OP-7.22: the CUDA toolchain under vLLM — a kernel compiled at engine start with no
compiler to build it, a CUDA library of the major version a binary was built for that the loader cannot find,
Triton's C launcher with no C compiler or no Python headers to build it, and a compiled kernel built for another
GPU architecture than the one it ran on.

Why a family of their own: these are neither vLLM's checks nor a package at the wrong version; they are the
image or host vLLM runs in. vLLM on CUDA samples top-k/top-p with FlashInfer by default
(VLLM_USE_FLASHINFER_SAMPLER, vllm/envs.py of 0.32), and FlashInfer compiles kernels it was not shipped with
at their first use, during the engine's start-up profile run, with the CUDA toolkit's nvcc found through
CUDA_HOME (else /usr/local/cuda). A runtime image has no nvcc. Sources: davanstrien/uv-scripts-for-ai#9
(VLLM_USE_FLASHINFER_SAMPLER=0), odysseus-dev/odysseus#228 (CUDA_HOME at pip's nvcc), kserve/kserve#4565 and
#4567 (the kernels built ahead of time in the image), vllm#7112 (libcudart.so.12 beside a PyTorch for CUDA
11.8).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.catalog.op7_build_cuda import vllm_was_running
from rules.events import LAUNCHER_COMPILE_FAILED, NO_LIBCUDA_LIBRARY, NO_LIBCUDA_LINK, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

SAMPLER_ENV = "VLLM_USE_FLASHINFER_SAMPLER"


# --- OP-7.13 a kernel compiled at engine start: no compiler, or a failed build ---------------------


def _check_jit(facts: Facts) -> list[Finding]:
    # torch's "CUDA_HOME environment variable is not set" in vLLM's own log is a JIT build's, not an install's
    no_toolkit = facts.events_of(LogEventKind.BUILD_NO_CUDA_HOME) if vllm_was_running(facts) else []
    missing = facts.events_of(LogEventKind.JIT_NO_NVCC) + no_toolkit
    failed = facts.events_of(LogEventKind.JIT_BUILD_FAILED)
    if missing:
        return [_jit_finding(missing[0], NO_COMPILER)]
    no_ninja = next((e for e in failed if (e.message or "").startswith(NO_NINJA_WORDS)), None)
    if no_ninja is not None:
        return [_jit_finding(no_ninja, NO_NINJA)]
    kernel = next((e for e in failed if e.function and "sampling" not in e.function), None)
    if kernel is not None:  # nvcc's errors in a kernel other than the sampler's: turning the sampler off does nothing
        return [_jit_kernel_finding(kernel)]
    return [_jit_finding(failed[0], BUILD_FAILED)] if failed else []


def _jit_kernel_finding(event: LogEvent) -> Finding:
    """nvcc failed on a named JIT kernel (FlashInfer's `gdn_prefill_sm90`): its errors are above the summary."""
    whose = f"{event.component}'s" if event.component else "A"
    return RULE_JIT.finding(
        Severity.CRITICAL,
        f"{whose} JIT build of its {event.function} kernel failed in nvcc at engine start: nvcc's errors are above "
        "its summary",
        summary=f"{event.message}. The kernel is compiled at its first use, during the engine's start-up, with the "
        "CUDA toolkit found through CUDA_HOME (else /usr/local/cuda); nvcc rejected its source, which the kernel's "
        "library ships for the toolkits it supports: a toolkit older than the one that library release needs, or "
        "headers of another CUDA than the compiler's, fail this way.",
        evidence=[c.log_evidence(event, name="JIT compilation", value=event.message)],
        actions=[
            "Read nvcc's `error:` lines above the summary: they name the construct it could not compile.",
            "Check the toolkit the build used (`$CUDA_HOME/bin/nvcc --version`) against the one the kernel library's "
            "release supports (FlashInfer's README and release notes); a CUDA `-devel` image of that version, or "
            "CUDA_HOME at it, is the fix, not vLLM's flags.",
            "Or install the library's kernels built ahead of time (FlashInfer's flashinfer-jit-cache of the same "
            "version), so nothing compiles at start.",
        ],
        confidence=0.6,
    )


# Why the JIT build stopped: no compiler, no ninja (torch.utils.cpp_extension's verify_ninja_availability, torch 2.13:
# "… (pip install ninja to get it)"), or a build that failed; each with the title's words and the actions that lead.
NO_COMPILER, NO_NINJA, BUILD_FAILED = "no nvcc", "Ninja is required to load C++ extensions", "failed"
# torch's words, FlashInfer's JIT as a framework reports it (unsloth#4541), and running `ninja` finding no such command
NO_NINJA_WORDS = (
    NO_NINJA,
    "FlashInfer failed to JIT-compile: ninja (build tool) not found",
    "No such file or directory: 'ninja'",
)
_JIT_REASONS: dict[str, tuple[str, list[str]]] = {
    NO_COMPILER: ("found no CUDA compiler (nvcc)", []),
    NO_NINJA: (
        "found no ninja, the build tool its JIT runs",
        [
            "Install ninja where vLLM runs (`pip install ninja`, as torch's own words say) and start the server with "
            "that environment's bin folder on PATH: torch's C++ extension loader and FlashInfer's JIT run the `ninja` "
            "command and will not build without it (a virtual environment not activated hides its ninja, FlashInfer "
            "PR #3386)."
        ],
    ),
    BUILD_FAILED: ("failed to build", []),
}
_SAMPLER_OFF = ConfigChange(
    flag=SAMPLER_ENV,
    current=None,
    proposed="0",
    reason="vLLM's PyTorch-native top-k/top-p sampler: nothing to compile at start",
    cost="top-k/top-p sampling a little slower than FlashInfer's kernel; greedy requests do not sample",
    kind="env",
)
_CUDA_HOME = ConfigChange(
    flag="CUDA_HOME",
    current=None,
    proposed="<the CUDA toolkit directory that holds bin/nvcc>",
    reason="FlashInfer's JIT finds the compiler through CUDA_HOME before /usr/local/cuda; pip's nvidia-cuda-nvcc wheel "
    "unpacks a toolkit under site-packages/nvidia/",
    cost="the first start compiles (minutes); the kernels are cached for the next",
    kind="env",
)


# vLLM's CUDA wheels require one flashinfer-python exactly (vllm 0.21.0's metadata: flashinfer-python==0.6.8.post1),
# so a FlashInfer another install upgraded runs JIT code this vLLM was never tested with
_FLASHINFER_PIN = (
    'Check that flashinfer-python is the release the installed vLLM requires (`python -c "import importlib.metadata '
    "as m; print([r for r in m.requires('vllm') or [] if r.startswith('flashinfer')])\"` against `pip show "
    "flashinfer-python`): recent vLLM wheels pin it exactly, and a FlashInfer installed or upgraded apart from vLLM "
    "fails its JIT build at start where the pinned one does not; reinstall the pinned release."
)


def _jit_finding(event: LogEvent, reason: str) -> Finding:
    what, first_actions = _JIT_REASONS[reason]
    no_compiler = reason == NO_COMPILER
    return RULE_JIT.finding(
        Severity.CRITICAL,
        f"a kernel JIT-compiled at engine start {what}: FlashInfer's sampler compiles at start by default",
        summary="vLLM on CUDA samples top-k/top-p with FlashInfer unless VLLM_USE_FLASHINFER_SAMPLER=0, and "
        "FlashInfer's JIT compilation builds every kernel it was not shipped with at its first use: during the "
        "engine's start-up profile run, so the engine dies before it serves. The build needs the CUDA toolkit "
        "(nvcc and its headers, matching the CUDA runtime), found through CUDA_HOME or /usr/local/cuda; a "
        "runtime image, or CUDA installed as pip wheels without CUDA_HOME, has none"
        + ("." if no_compiler else ", and a toolkit whose headers do not match its compiler fails the same way."),
        evidence=[c.log_evidence(event, name="JIT compilation")],
        changes=[_SAMPLER_OFF],
        alternatives=[_CUDA_HOME],
        actions=[
            *first_actions,
            "Or give the image a CUDA compiler that matches its runtime: a CUDA `-devel` base image, or set "
            "CUDA_HOME to the toolkit that holds bin/nvcc.",
            "Or build FlashInfer's kernels ahead of time into the image (its AOT build, or the flashinfer-jit-cache "
            "package of the same FlashInfer version), so nothing compiles when the engine starts.",
            _FLASHINFER_PIN,
        ],
        confidence=0.85 if no_compiler else 0.7,
    )


RULE_JIT = Rule(
    code="OP-7.13",
    title="a kernel compiled at engine start found no compiler or failed to build",
    category=Category.CONFIGURATION,
    check=_check_jit,
    needs=("events",),
    page=RulePage(
        checks="FlashInfer's `Could not find nvcc and default cuda_home=… doesn't exist`, torch's `_run_ninja_build` "
        "frame, `Ninja build failed`, `Error building extension`, `Ninja is required to load C++ extensions`, or "
        "`CUDA compiler and CUDA toolkit headers are incompatible`.",
        why="FlashInfer compiles kernels at their first use, which for its sampler is vLLM's start-up profile run; "
        "without a matching CUDA toolkit the engine dies before serving.",
        example="`RuntimeError: Could not find nvcc and default cuda_home='/usr/local/cuda' doesn't exist` at "
        "engine start in an image with the CUDA runtime only (davanstrien/uv-scripts-for-ai#9).",
        fix=f"{SAMPLER_ENV}=0; or a CUDA toolkit in the image (a -devel base, CUDA_HOME at nvcc); or FlashInfer's "
        "kernels built ahead of time.",
        limits="Names the sampler because it is the JIT user every CUDA start runs; an attention backend or MoE "
        "kernel compiled at start needs the same toolkit, and turning the sampler off does not help those.",
        references=[
            "https://github.com/davanstrien/uv-scripts-for-ai/issues/9",
            "https://github.com/odysseus-dev/odysseus/pull/228",
            "https://github.com/kserve/kserve/pull/4567",
        ],
    ),
)


# --- OP-7.14 a CUDA library of another major version --------------------------------------------------


# Libraries whose soname's major number is their own release, not CUDA's (libcudnn.so.9 is cuDNN 9 for CUDA 12;
# libnccl.so.2 is NCCL 2; libcufft.so.11 and libcurand.so.10 ship with CUDA 12): the name, and the directory pip's
# nvidia-* wheel of it unpacks to under site-packages/nvidia/. cudart, cuBLAS, NVRTC, nvJitLink and cuSPARSE carry
# CUDA's major.
OWN_RELEASE: dict[str, tuple[str, str]] = {
    "libcudnn": ("cuDNN", "cudnn"),
    "libnccl": ("NCCL", "nccl"),
    "libcufft": ("cuFFT", "cufft"),
    "libcurand": ("cuRAND", "curand"),
    "libcusparseLt": ("cuSPARSELt", "cusparselt"),
}


def _own_release(library: str) -> tuple[str, str] | None:
    base = library.split(".so", 1)[0]
    return next(
        (named for prefix, named in OWN_RELEASE.items() if base == prefix or base.startswith(prefix + "_")), None
    )


def _check_cuda_library(facts: Facts) -> list[Finding]:
    missing = facts.events_of(LogEventKind.CUDA_LIBRARY_MISSING)
    if not missing:
        return []
    own = _own_release(missing[0].component or "")
    if own is not None:
        return [_own_library_finding(missing[0], own)]
    torch_build = facts.events_of(LogEventKind.TORCH_CUDA_BUILD)
    return [_library_finding(missing[0], torch_build[0].version if torch_build else None)]


def _own_library_finding(event: LogEvent, own: tuple[str, str]) -> Finding:
    """A library versioned on its own (cuDNN 9, NCCL 2): its major is not a CUDA version to compare with torch's."""
    library, major = event.component or "a CUDA library", event.version or "?"
    name, folder = own
    return RULE_CUDA_LIBRARY.finding(
        Severity.CRITICAL,
        f"{library} ({name} {major}) not found by the loader",
        summary=f"A compiled binary was linked against {name} {major} ({library}), and no directory the loader "
        f"searches holds it. Its major number is {name}'s own release, not CUDA's. PyTorch's CUDA wheels bring the "
        f"{name} they were built with as a pip package (nvidia-{folder}-cuNN); a binary of another package that asks "
        "for it finds that copy only when it is installed and on the loader's path.",
        evidence=[c.log_evidence(event, name="missing CUDA library")],
        changes=[
            ConfigChange(
                flag="LD_LIBRARY_PATH",
                current=None,
                proposed=f"<site-packages/nvidia/{folder}/lib, where pip's nvidia-{folder} wheel puts {library}>",
                reason=f"the loader finds the {name} {major} library the binary was linked against",
                cost="none, while only one copy of the library is on the path",
                kind="env",
            )
        ],
        actions=[
            f"See which package's binary asks for it (the traceback's frames: vLLM's, torch's, or another such as a "
            f"speech or ONNX runtime) and install {name} {major} for the CUDA it uses: `pip install "
            f"nvidia-{folder}-cu12` (or -cu11) at the release that package requires, or the system package.",
            "A torch installed with --no-deps, or copied without its nvidia-* packages, lacks them all: reinstall "
            "torch (or vLLM) with its dependencies.",
        ],
        confidence=0.8,
    )


def _library_finding(event: LogEvent, torch_cuda: str | None) -> Finding:
    library, major = event.component or "a CUDA library", event.version or "?"
    other = torch_cuda is not None and torch_cuda.split(".")[0] != major
    title = f"{library} (CUDA {major}) not found by the loader"
    title += f": PyTorch here is built for CUDA {torch_cuda}, a CUDA version mismatch" if other else ""
    return RULE_CUDA_LIBRARY.finding(
        Severity.CRITICAL,
        title,
        summary=f"A compiled binary (vLLM's own ops, or a kernel package) was linked against CUDA {major}'s "
        f"{library}, and no directory the loader searches holds it"
        + (
            f"; the PyTorch installed beside it was built for CUDA {torch_cuda}, so the two came from builds for "
            "different CUDA versions."
            if other
            else "."
        )
        + " vLLM then runs without the ops that library serves, or fails to import them.",
        evidence=[c.log_evidence(event, name="missing CUDA library")],
        changes=[
            ConfigChange(
                flag="LD_LIBRARY_PATH",
                current=None,
                proposed=f"<the directory that holds {library}, first (pip's nvidia-cuda-runtime wheel: "
                "site-packages/nvidia/cuda_runtime/lib)>",
                reason=f"the loader finds CUDA {major}'s library the binary was linked against",
                cost="none, while the two CUDA versions' other libraries do not clash",
                kind="env",
            )
        ],
        actions=[
            f"Better, builds for one CUDA version: upgrade PyTorch to the release vLLM requires (`pip show vllm`) "
            f"in its build for CUDA {major}, whose Linux wheels on PyPI bring their CUDA libraries as "
            f"nvidia-*-cu{major} packages (`pip install --upgrade torch` where the default build is for CUDA {major}); "
            "or install vLLM's wheel for the CUDA that PyTorch uses.",
            f"Or install a CUDA {major} toolkit on the host, whose libraries the loader finds.",
        ],
        confidence=0.85,
    )


RULE_CUDA_LIBRARY = Rule(
    code="OP-7.14",
    title="a CUDA library of the version a binary needs is missing",
    category=Category.CONFIGURATION,
    check=_check_cuda_library,
    needs=("events",),
    page=RulePage(
        checks="The loader's `libcudart.so.12: cannot open shared object file` (cudart, cuBLAS, cuDNN, NCCL, NVRTC, "
        "nvJitLink, cuSPARSE, cuFFT, cuRAND; not the driver's libcuda), and the CUDA release PyTorch was built for "
        "(`CUDA used to build PyTorch: 11.8`, or a `+cu118` version) when the text has it.",
        why="A binary needs the major version of each CUDA library it was linked against; builds for two CUDA "
        "versions in one environment leave one of them without its libraries.",
        example="`Failed to import from vllm._C with ImportError('libcudart.so.12: cannot open shared object file…')` "
        "beside `CUDA used to build PyTorch: 11.8` (vllm#7112; CUDA 12.4 fixed it).",
        fix="Builds for one CUDA version (PyTorch's PyPI wheels carry their CUDA runtime: torch 2.1.0 requires "
        "nvidia-cuda-runtime-cu12==12.1.105); or LD_LIBRARY_PATH at that version's runtime.",
        limits="Says which library and version; which package brought the binary is in the path the loader printed.",
        references=["https://github.com/vllm-project/vllm/issues/7112"],
    ),
)


# --- OP-7.15 Triton's C launcher --------------------------------------------------------------------------


def _check_triton_build(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.TRITON_BUILD_FAILED)
    if not events:
        return []
    missing = events[0].message or "a C compiler or the Python headers"
    if missing in (NO_LIBCUDA_LINK, NO_LIBCUDA_LIBRARY):
        return [_no_libcuda(events[0])]
    if missing == LAUNCHER_COMPILE_FAILED:
        return [_compiler_failed(events[0])]
    return [
        RULE_TRITON_BUILD.finding(
            Severity.CRITICAL,
            f"Triton could not build its C launcher: {missing} where vLLM runs",
            summary="Triton, which runs vLLM's own kernels and those torch.compile generates, compiles a small C "
            "file (cuda_utils.c, a kernel's launcher) with the system's C compiler the first time it loads a kernel, "
            "against the headers of the Python it runs in. A slim image or a fresh host without gcc or without "
            "Python's development headers fails there, at start-up or at the first request that needs a new kernel.",
            evidence=[c.log_evidence(events[0], name="Triton's build")],
            actions=[
                "Install a C compiler and the headers of the Python vLLM runs: `apt-get install build-essential "
                "python3.X-dev` (X: that Python's minor; `dnf install gcc python3-devel` on RHEL-like hosts), or use "
                "an image that has them (vLLM's own does).",
                "Or point CC at a compiler that exists (Triton reads CC before looking for gcc and clang).",
            ],
            confidence=0.9,
        )
    ]


def _compiler_failed(event: LogEvent) -> Finding:
    """Only the failed command was pasted: it names the compiler and the launcher, not why; the two causes above
    (no Python headers, no unversioned libcuda.so) are the common ones, and the compiler's own lines say which."""
    compiler = event.component or "the C compiler"
    return RULE_TRITON_BUILD.finding(
        Severity.CRITICAL,
        f"Triton could not build its C launcher: {compiler} failed on it (the compiler's own error is above the "
        "command)",
        summary="Triton compiles a small C file (its CUDA launcher: main.c, driver.c in 3.9) with the host's C "
        "compiler the first time it loads a kernel, against the running Python's headers and the driver's libcuda. "
        "The command failed; its own error lines, printed before this one, say why: most often `Python.h: No such "
        "file or directory` (no development headers for this Python) or `cannot find -lcuda` (no unversioned "
        "libcuda.so beside the driver's libcuda.so.1), and on clusters a compiler module too old or without its "
        "libraries.",
        evidence=[c.log_evidence(event, name="Triton's build", value=compiler)],
        actions=[
            "Read the compiler's lines above the CalledProcessError (or rerun the command it quotes by hand): they "
            "name the missing header or library.",
            "Python.h missing: `apt-get install python3.X-dev` (X: the Python's minor; `python3-devel` on RHEL-like "
            "hosts, the environment's own headers under conda).",
            "-lcuda not found: set TRITON_LIBCUDA_PATH to the directory holding the driver's libcuda.so.1 (`ldconfig "
            "-p | grep libcuda`), or link libcuda.so to it there; Triton reads it before ldconfig's cache.",
            "Or point CC at another compiler: Triton takes CC before looking for gcc and clang.",
        ],
        confidence=0.75,
    )


def _no_libcuda(event: LogEvent) -> Finding:
    if event.message == NO_LIBCUDA_LIBRARY:
        return RULE_TRITON_BUILD.finding(
            Severity.CRITICAL,
            "Triton found no NVIDIA driver library (libcuda.so.1) to link its C launcher against",
            summary="Triton looks for the driver's libcuda.so.1 where `ldconfig -p` says it is (or on "
            "LD_LIBRARY_PATH) and found none there: no driver library reaches the process, or the loader's cache is "
            "stale.",
            evidence=[c.log_evidence(event, name="Triton's build", value=event.message)],
            actions=[
                "`ldconfig -p | grep libcuda` where vLLM runs: nothing listed in a container means it was started "
                "without GPUs (the NVIDIA Container Toolkit mounts the host driver's library); listed but missing "
                "means a stale cache: `sudo ldconfig` refreshes it.",
                "Or set TRITON_LIBCUDA_PATH to the directory that holds libcuda.so.1.",
            ],
            confidence=0.8,
        )
    return RULE_TRITON_BUILD.finding(
        Severity.CRITICAL,
        "Triton could not link its C launcher: no libcuda.so beside the driver's libcuda.so.1",
        summary="Triton links the launcher it compiles against the NVIDIA driver's library, in the directories where "
        "`ldconfig -p` finds libcuda.so.1. Releases that link it as `-lcuda` need the unversioned libcuda.so there "
        "too, which a driver installed without its development link (or a container's mounted driver) lacks; "
        "Triton 3.9 links libcuda.so.1 by name (triton/backends/nvidia/driver.py).",
        evidence=[c.log_evidence(event, name="Triton's build", value=event.message)],
        actions=[
            "Give the linker libcuda.so: `ldconfig -p | grep libcuda` shows where libcuda.so.1 is; create the link "
            "there (`ln -s libcuda.so.1 libcuda.so`), or set TRITON_LIBCUDA_PATH to a directory that holds both "
            "(the CUDA toolkit's lib64/stubs has a libcuda.so to link against).",
            "Or upgrade to a vLLM release whose Triton links libcuda.so.1 by name.",
        ],
        confidence=0.85,
    )


RULE_TRITON_BUILD = Rule(
    code="OP-7.15",
    title="Triton could not build its C launcher",
    category=Category.CONFIGURATION,
    check=_check_triton_build,
    needs=("events",),
    page=RulePage(
        checks="Triton's `Failed to find C compiler. Please specify via CC environment variable …`, or gcc's "
        "`<file>.c:L:C: fatal error: Python.h: No such file or directory` on the launcher it compiles; the linker's "
        "`cannot find -lcuda` and Triton's `libcuda.so cannot found!` when it links the launcher; alone, the "
        "`CalledProcessError: Command '['<cc>', '…/main.c', '-O3', '-shared', …` its build raises (the compiler "
        "named, its reason above).",
        why="Triton compiles its launcher at a kernel's first use with the system's C compiler against Python's "
        "headers; an image without either cannot run a Triton kernel.",
        example="`cuda_utils.c:9:10: fatal error: Python.h: No such file or directory` at vLLM's start after a clean "
        "install (vllm#27890); sgl-project/sglang#18644 installs python3-dev for exactly this.",
        fix="build-essential and python3.X-dev in the image (or CC at a compiler); a libcuda.so link beside the "
        "driver's libcuda.so.1 (or TRITON_LIBCUDA_PATH).",
        limits="A source build of vLLM missing Python.h fails in its C++ or CUDA files, which this does not read.",
        references=[
            "https://github.com/vllm-project/vllm/issues/27890",
            "https://github.com/sgl-project/sglang/pull/18644",
        ],
    ),
)

# --- OP-7.22 a kernel built for another GPU architecture ------------------------------------------------------

# What vLLM's guards name, as the GPUs an operator knows (compute capability 12.1 is DGX Spark's GB10).
ARCH_GPUS: dict[str, str] = {
    "sm90": "Hopper (H100, H200, H20)",
    "sm100": "Blackwell data-center GPUs (B200, GB200)",
    "sm120": "compute capability 12.0 exactly (RTX 50-series, RTX PRO 6000 Blackwell)",
}


SM121_NOTE = (
    " (DGX Spark's GB10 is compute capability 12.1, sm121, and the sm120-only guard of vLLM's FP8 GEMMs, "
    "scaled_mm_sm120_fp8, refuses it)"
)


def _check_arch_guard(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.KERNEL_ARCH_GUARD)
    if not events:
        return []
    arch = events[0].message or "another architecture"
    base = arch.rstrip("af")
    gpus = ARCH_GPUS.get(base)
    return [
        RULE_ARCH_GUARD.finding(
            Severity.CRITICAL,
            f"a vLLM kernel built for {arch} only ran on a GPU of another architecture, and trapped",
            summary=f"vLLM's CUTLASS kernels check the GPU's architecture when they run and stop the process (a trap: "
            f"'unspecified launch failure') on any other; this one takes {arch}"
            + (f", {gpus}" if gpus else "")
            + ". This vLLM build picked it for a GPU its guard does not admit: a GPU of the same family that the "
            "guard names too narrowly"
            + (SM121_NOTE if base == "sm120" else "")
            + ", or a build whose kernels do not cover this GPU.",
            evidence=[c.log_evidence(events[0], name="kernel architecture guard", value=arch)],
            actions=[
                "Upgrade vLLM to a build whose kernels admit this GPU's architecture (the SM12x family guard, "
                "enable_sm120_family, covers sm121), or build it from source with the GPU's architecture in "
                "TORCH_CUDA_ARCH_LIST (`12.1` for GB10).",
                "Until then serve without the kernel: for the FP8 GEMMs, an unquantized or otherwise quantized "
                "checkpoint, or another FP8 backend if the build offers one.",
            ],
            confidence=0.8,
        )
    ]


RULE_ARCH_GUARD = Rule(
    code="OP-7.22",
    title="a vLLM kernel built for another GPU architecture trapped",
    category=Category.CONFIGURATION,
    check=_check_arch_guard,
    needs=("events",),
    page=RulePage(
        checks="The architecture guard of vLLM's CUTLASS kernels: `This kernel only supports sm120.` (sm100f, "
        "sm90, a range), usually followed by CUDA's `unspecified launch failure`.",
        why="The guard (csrc/cutlass_extensions/common.hpp: enable_sm120_only and its kin) prints its architecture "
        "and traps when the kernel runs on any other; a build that selects it for a GPU outside the guard fails "
        "at the first GEMM, often in the start-up warm-up.",
        example="`This kernel only supports sm120.` then `cudaErrorLaunchFailure` on a DGX Spark (GB10, sm121) in "
        "FP8 warm-up; the SM12x family guard fixed it (eugr/spark-vllm-docker#143, vllm PR #35568).",
        fix="A vLLM build whose kernels admit the GPU (upgrade, or a source build with its architecture); until "
        "then a checkpoint that does not use the kernel.",
        limits="Names the architecture the kernel takes; which GPU the server has is the host's to say "
        "(`nvidia-smi --query-gpu=name,compute_cap --format=csv`).",
        references=["https://github.com/eugr/spark-vllm-docker/issues/143"],
    ),
)

RULES: list[Rule] = [RULE_JIT, RULE_CUDA_LIBRARY, RULE_TRITON_BUILD, RULE_ARCH_GUARD]
