"""OP-7.146: a source build of vLLM could not find out which GPU architectures to compile for; OP-7.147: a compiler
building it found no header it includes.

OP-7.146: the architectures come from the environment, or the build asks the machine. CMake asks nvcc for its
default (`Failed to detect a default CUDA architecture.`, CMakeDetermineCUDACompiler: the nvcc it found could not
answer, most often none of the toolkit's on PATH; in vllm#1391 a commenter's build went through after `export
PATH=/usr/local/cuda/bin:$PATH`); PyTorch's select_compute_arch.cmake runs a probe on the installed GPUs and stops at
`arch_bin wasn't set for some reason` when there is none to probe (a container build, a node without GPUs,
vllm#6683); on ROCm, `offload-arch` probes the GPU and, without one, prints a warning that the build's flags then
carry into clang++'s command line as a file name (vllm#35642: `clang++: error: no such file or directory: '[WARNING]
offload-arch failed …'`, a Docker build without the GPU passed through). Naming the architectures
(TORCH_CUDA_ARCH_LIST, PYTORCH_ROCM_ARCH, both read by vLLM's setup.py and CMake files) skips every probe.

OP-7.147: `fatal error: X.h: No such file or directory` (gcc; clang: `fatal error: 'X.h' file not found`) is a
header the machine lacks: a development package, the CUDA toolkit's headers (the runtime wheels and the driver have
none), or, for vLLM's CPU backend, oneDNN's source tree: csrc/cpu/dnnl_helper.cpp includes oneDNN's internal
`common/…` headers, which an installed oneDNN does not carry (nixpkgs PR #447722 met it with a packaged oneDNN;
cmake/cpu_extension.cmake takes a source checkout through FETCHCONTENT_SOURCE_DIR_ONEDNN).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

ARCH_UNKNOWN = re.compile(
    r"(?P<cmake>Failed to detect a default CUDA architecture)"
    r"|(?P<torch>arch_bin wasn't set for some reason)"
    r"|(?P<rocm>offload-arch failed with return code \d+)"
)


def _arch_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    if match["rocm"]:
        title = "building vLLM for ROCm found no GPU to ask its architecture (offload-arch failed), and its warning "
        title += "went into the compiler's flags"
        fix = (
            "Name the architectures so the build probes nothing: `PYTORCH_ROCM_ARCH=gfx1151` (the GPU's gfx name; "
            "several separated by `;`), the usual way to build in a container without the GPU passed through."
        )
    else:
        title = "building vLLM for CUDA could not learn which GPU architectures to compile for: " + (
            "CMake's nvcc gave no default" if match["cmake"] else "PyTorch's probe found no GPU"
        )
        fix = (
            'Name the architectures: `TORCH_CUDA_ARCH_LIST="8.0 8.6 8.9 9.0"` (the GPUs\' compute capabilities, '
            "`nvidia-smi --query-gpu=compute_cap --format=csv`), needed wherever the build sees no GPU."
        )
    return RULE_ARCH.finding(
        Severity.CRITICAL,
        title,
        summary="The build compiles its kernels for the architectures it is given, and asks the machine when it is "
        "given none: the compiler, or a probe of the installed GPUs, and here the answer did not come.",
        evidence=[c.log_evidence(event, name="the architecture probe", value=match.group(0))],
        actions=[
            fix,
            "Put the toolkit's compiler first on PATH: `export PATH=/usr/local/cuda/bin:$PATH` (and CUDA_HOME, "
            "CUDACXX naming the same nvcc): a distribution's older nvcc, or none, gives CMake no default (vllm#1391)."
            if not match["rocm"]
            else "Or build where the GPU is visible (`docker run --device /dev/kfd --device /dev/dri`), or use "
            "vLLM's ROCm image.",
        ],
        confidence=0.75,
    )


RULE_ARCH = Rule(
    code="OP-7.146",
    title="a source build of vLLM could not learn the GPU architectures to compile for",
    category=Category.STARTUP,
    check=c.on_phrase(ARCH_UNKNOWN, _arch_finding, kinds=(LogEventKind.SOURCE_BUILD_STOPPED,)),
    needs=("events",),
    page=RulePage(
        checks="CMake's `Failed to detect a default CUDA architecture.`, PyTorch's `arch_bin wasn't set for some "
        "reason`, ROCm's `offload-arch failed with return code N` carried into clang++'s arguments.",
        why="Without architectures named, the build probes the machine; without a GPU or the toolkit's nvcc there "
        "is no answer.",
        example="A source build whose CMake found no nvcc on PATH (vllm#1391); a ROCm build in Docker without the "
        "GPU (vllm#35642).",
        fix="TORCH_CUDA_ARCH_LIST or PYTORCH_ROCM_ARCH; the toolkit's nvcc first on PATH.",
        limits="Reads the three messages; an architecture named but unsupported by the toolkit is nvcc's own error.",
        references=[
            "https://github.com/vllm-project/vllm/issues/1391",
            "https://github.com/vllm-project/vllm/issues/6683",
            "https://github.com/vllm-project/vllm/issues/35642",
        ],
    ),
)

HEADER_MISSING = re.compile(
    r"fatal error: '?(?P<header>[\w./+-]+\.(?:h|hpp|cuh|hxx))'?(?::| file not found)"
    r"(?: No such file or directory)?"
)

# What provides a header a vLLM build includes (by its name, or its folder): its short name, and how to install it
_PROVIDERS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (
        re.compile(r"^Python\.h$"),
        "Python's development headers",
        "`apt install python3-dev` (python3.X-dev for the Python that builds; conda's Python has them)",
    ),
    (
        re.compile(
            r"^(?:cuda|cuda_runtime|cuda_fp8|cuda_bf16|cuda_fp16|cublas\w*|cusparse\w*|cusolver\w*|curand\w*|"
            r"nvtx3/.*|cub/.*|thrust/.*)\.(?:h|cuh|hpp)$"
        ),
        "the CUDA toolkit's headers",
        "the CUDA toolkit of the release PyTorch was built for, with CUDA_HOME naming it (the driver and the CUDA "
        "runtime wheels carry no headers)",
    ),
    (re.compile(r"^numa\.h$"), "libnuma's headers", "`apt install libnuma-dev` (vLLM's CPU backend links libnuma)"),
    (re.compile(r"^hip/.*\.h$"), "ROCm's HIP headers", "ROCm's HIP development files (ROCM_PATH, /opt/rocm)"),
    (re.compile(r"^omp\.h$"), "OpenMP's headers", "the compiler's OpenMP (gcc ships it; clang needs libomp-dev)"),
    (
        re.compile(r"^common/.*\.hpp$"),
        "oneDNN's source tree",
        "oneDNN from source: vLLM's CPU build includes oneDNN's internal headers, which an installed oneDNN does not "
        "carry; let the build fetch it, or point FETCHCONTENT_SOURCE_DIR_ONEDNN at a source checkout of the version "
        "cmake/cpu_extension.cmake pins (nixpkgs PR #447722)",
    ),
    (re.compile(r"^nccl\.h$"), "NCCL's headers", "NCCL's development files (`libnccl-dev`)"),
)


def _header_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    header = match["header"]
    source = re.search(r"(?P<file>[\w.-]+\.(?:cpp|cu|cc|c)):\d+", event.raw or "")
    provider = next(((name, how) for pattern, name, how in _PROVIDERS if pattern.search(header)), None)
    return RULE_HEADER.finding(
        Severity.CRITICAL,
        f"a compiler found no {header}"
        + (f" building {source['file']}" if source else "")
        + (f": it comes with {provider[0]}" if provider else ": a header the machine lacks"),
        summary="The build includes a header no include folder holds; nothing built after it. The header's "
        "package is what to install, not vLLM.",
        evidence=[c.log_evidence(event, name="the missing header", value=header)],
        actions=[
            f"Install {provider[1]}, then build again."
            if provider
            else f"Install the development package that provides {header} (`apt-file search {header}` or the "
            "distribution's package search finds it), then build again.",
            "Or skip the build: the released wheel or image, when one fits the platform.",
        ],
        confidence=0.75 if provider else 0.55,
    )


RULE_HEADER = Rule(
    code="OP-7.147",
    title="a header a source build includes is missing",
    category=Category.STARTUP,
    check=c.on_phrase(HEADER_MISSING, _header_finding, kinds=(LogEventKind.SOURCE_BUILD_STOPPED,)),
    needs=("events",),
    page=RulePage(
        checks="gcc's `fatal error: X.h: No such file or directory` and clang's `fatal error: 'X.h' file not found`.",
        why="A missing header stops the build; the package that carries it is the fix.",
        example="`csrc/cpu/dnnl_helper.cpp:4:10: fatal error: common/memory_desc.hpp: No such file or directory` "
        "building vLLM's CPU backend against a packaged oneDNN (nixpkgs PR #447722).",
        fix="The header's package: Python's dev headers, the CUDA toolkit, libnuma-dev, oneDNN's sources, …",
        limits="A header the table does not know is named with its package left to the user; Triton's launcher "
        "build missing Python.h is its own event.",
        references=["https://github.com/NixOS/nixpkgs/pull/447722"],
    ),
)

RULES: list[Rule] = [RULE_ARCH, RULE_HEADER]
