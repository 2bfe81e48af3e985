"""The CUDA toolchain under vLLM, in its own words and the loader's: a kernel compiled at engine start that finds
no compiler or fails to build (FlashInfer's JIT through torch's cpp_extension), Triton's C launcher that finds no C
compiler or no Python headers, a CUDA library of the major version a binary was linked against that the loader
cannot find, and the CUDA release PyTorch was built for (`python collect_env.py`, which issue templates ask for).

Why apart from environment.py: these name versions that must agree (the toolkit, the runtime, PyTorch's build,
vLLM's wheel), and the rules compare them.
"""

from __future__ import annotations

import re

from advisor.collect.log_patterns.pattern import Fields, Pattern, wording
from rules.catalog.op7_build_compile import ARCH_UNKNOWN, HEADER_MISSING
from rules.catalog.op7_flashinfer_head_dim import FA2_REFUSAL, TILE_REFUSAL, TRTLLM_REFUSAL
from rules.events import (
    COMPILED_KERNEL,
    LAUNCHER_COMPILE_FAILED,
    NO_LIBCUDA_LIBRARY,
    NO_LIBCUDA_LINK,
    NOT_REGISTERED,
    PIP_CONFLICT,
    UV_RESOLVER,
)
from rules.events import LogEventKind as K


def _jit_build(match: re.Match[str]) -> Fields:
    return {"message": match.group(0), "component": "FlashInfer" if "flashinfer" in match.string.lower() else None}


# The dispatch keys of a device among the backends PyTorch lists for an op (the rest are its own machinery).
_DEVICE_KEYS = ("CUDA", "HIP", "CPU", "XPU", "MPS", "HPU", "XLA", "PrivateUse1")


# One of vLLM's compiled extensions as torch.ops names it: `_C`, `_moe_C`, `_rocm_C`, `_C_cache_ops` …, with names of
# several parts too: its FlashAttention build's `_vllm_fa2_C` and `_vllm_fa3_C` (vllm/vllm_flash_attn;
# OpenBMB/MiniCPM-V#800: a fork's source checkout built with VLLM_USE_PRECOMPILED=1, whose `_vllm_fa2_C` lacked
# `varlen_fwd`) and FlashMLA's `_flashmla_extension_C`
_EXTENSION = r"_(?:[a-z0-9]+_)*C(?:_\w+)?"


def _op_schema(match: re.Match[str]) -> Fields:
    """One of vLLM's ops refused: its signature (`expected at most …`), its absence, or no kernel for the device it
    was called on (`backend:<device>`, with the devices the extension registered it for after `|`)."""
    if match["unrun"]:
        listed = [key.strip() for key in (match["available"] or "").split(",")]
        devices = ",".join(key for key in listed if key in _DEVICE_KEYS)
        return {"message": f"backend:{match['backend']}|{devices}", "component": match["unrun"]}
    missing = match["missing"] or (f"{match['namespace']}::{match['attr']}" if match["namespace"] else None)
    return {
        "message": match["what"] if match["op"] else NOT_REGISTERED,
        "component": match["op"] or missing,
    }


def _jit_kernel(path: str) -> str | None:
    """The kernel a JIT build compiles, from its cache path (FlashInfer's `generated/<kernel>/`, torch's
    `torch_extensions/<python>/<extension>/`)."""
    found = re.search(r"/(?:generated|torch_extensions/[^/]+)/(?P<kernel>[\w.-]+)/", path)
    return found["kernel"] if found else None


def _triton_build(match: re.Match[str]) -> Fields:
    words = match.group(0)
    if words.startswith("Failed"):
        return {"message": "no C compiler"}
    if "-lcuda" in words or "create a symlink" in words:
        return {"message": NO_LIBCUDA_LINK}
    if "cannot found" in words:
        return {"message": NO_LIBCUDA_LIBRARY}
    if match["compiler"]:
        return {"message": LAUNCHER_COMPILE_FAILED, "component": match["compiler"]}
    return {"message": "no Python headers (Python.h)"}


def _torch_cuda(match: re.Match[str]) -> Fields:
    """`11.8` from collect_env's line, or from a version suffix `+cu118` (`cu130` → `13.0`)."""
    if match["release"]:
        return {"version": match["release"]}
    digits = match["cu"]
    return {"version": f"{digits[:-1]}.{digits[-1]}"}


# What refused a build newer than the driver, by the group of its words: Triton's ptxas, a kernel's PTX, an image's
# cuda-compat libraries (torch's and CUDA's own words name none)
_BUILD_REFUSALS = (("ptxas", "Triton"), ("ptx", "PTX"), ("compat", "cuda-compat"))


def _driver_cuda(match: re.Match[str]) -> Fields:
    """The CUDA release the driver supports, from torch's number (12040 → 12.4), when its words give one."""
    found = int(match["found"]) if match["found"] else None
    return {
        "component": next((name for group, name in _BUILD_REFUSALS if match[group]), None),
        "message": match.group(0),
        "version": f"{found // 1000}.{found % 1000 // 10}" if found else None,
        "cuda_required": match["required"],
    }


def _torch_without_cuda(match: re.Match[str]) -> Fields:
    if match["cpu"]:
        return {"message": "cpu_build", "version": match["cpu"]}
    if match["package"]:
        return {"message": "platform", "component": match["package"].replace("-", "_")}
    if match["library"]:
        return {"message": "no_cuda_library", "component": match["library"]}
    return {"message": "assert"}


# Inductor's own words for the two things it needs of the host, whichever exception carries them (torch 2.13:
# torch/_inductor/exc.py, TritonMissing and GPUTooOldForTriton)
_NO_TRITON = "Cannot find a working triton installation"
# ptxas refusing PTX that uses an instruction of compute capability 7.0 for a GPU below it (`Modifier '.evict_last' on
# 'ld' requires .target sm_70 or higher`, sasha0552/pascal-pkgs-ci#46: a Pascal build of Triton 3.4 on a P40)
_PTX_NEEDS_VOLTA = "requires .target sm_70 or higher"
_GPU_TOO_OLD = re.compile(r"too old to be supported by the triton GPU compiler.*?CUDA capability (?P<cc>\d+\.\d+)")


def _compile_failed(match: re.Match[str]) -> Fields:
    if _NO_TRITON in match.string:
        return {"message": _NO_TRITON, "component": "no_triton"}
    if old := _GPU_TOO_OLD.search(match.string):
        return {"message": old["cc"], "component": "gpu_too_old"}
    if _PTX_NEEDS_VOLTA in match.string:  # Triton's PTX for a GPU below it: Triton's floor, said by ptxas
        return {"message": "below 7.0", "component": "gpu_too_old"}
    if match["cache"]:
        return {"message": match["cache"], "component": "cache"}
    if match["backend"]:
        return {"message": (match["raised"] or "").strip() or None, "component": "backend"}
    stage = "inductor" if match["inductor"] else "dynamo"
    words = (match["words"] or match["words2"] or "").strip()
    return {"message": f"{match[stage]}: {words}" if words else match[stage], "component": stage}


def _torchvision(match: re.Match[str]) -> Fields:
    if match["op"]:
        return {"message": "op", "component": f"torchvision::{match['op']}"}
    if match["cpu_op"]:
        return {"message": "cpu_build", "component": f"torchvision::{match['cpu_op']}"}
    if match["torch_cuda"]:
        return {"message": "cuda", "installed": match["torch_cuda"], "version": match["tv_cuda"]}
    return {"message": "ops"}


_PINNED = re.compile(r"^(?P<name>[A-Za-z0-9][\w.-]*)(?:\[[^\]]*\])?\s*(?:===?\s*(?P<version>[^\s,;]+))?")


def _first_name(listed: str) -> str | None:
    """The first distribution of a list pip prints (`vllm`, `vllm and outlines`, `torch==2.4.0, vllm`); None where the
    list starts with what is no name (`-r requirements.txt (line 1), …`)."""
    found = _PINNED.match(listed)
    return found["name"] if found else None


def _pip_not_found(match: re.Match[str]) -> Fields:
    requirement = (match["req"] or match["req2"]).strip()
    pinned = _PINNED.match(requirement)
    return {
        "message": requirement,
        "component": pinned["name"] if pinned else None,
        "version": pinned["version"] if pinned else None,
        "versions_offered": match["versions"].strip() if match["versions"] is not None else None,
    }


def _built_package(target: str) -> str | None:
    """Whose source an object file is: flash-attn's kernels sit under csrc/flash_attn; vLLM's under csrc/, built by
    setuptools (0.1 to 0.3) or by CMake into its extension targets (`_C`, `_moe_C`, `_rocm_C`, `_flashmla_C` …)."""
    if "flash_attn" in target:
        return "flash-attn"
    if "csrc/" in target or re.search(r"CMakeFiles/_\w*C\.dir/|/vllm/_\w*C\.abi3\.so$", target):
        return "vllm"
    return None


PATTERNS: tuple[Pattern, ...] = (
    wording(  # torch's extension builder (torch/utils/cpp_extension.py) building vLLM's kernels from source with a
        # toolkit of another CUDA release than PyTorch's (vllm#129; the line may end where a paste wrapped it)
        ("mismatches the version that was used to compile",),
        K.BUILD_CUDA_MISMATCH,
        r"The detected CUDA version \((?P<toolkit>[\d.]+)\) mismatches the version that was used to compile"
        r"(?: PyTorch \((?P<torch>[\d.]+)\))?",
        lambda m: {"version": m["toolkit"], "cuda_required": m["torch"]},
    ),
    wording(  # a build of CUDA code with no toolkit: torch's extension builder (cpp_extension.py, for a source build or
        # a JIT one) and vLLM's setup.py of the CUDA target (tenstorrent/tt-xla#2338, a fork built without CUDA); the
        # setup.py of 2023-24 said it as a RuntimeError (`pip install vllm` on a Mac, OpenBMB/MiniCPM#6; on an AMD
        # Radeon 780M, vllm#2493)
        ("CUDA_HOME environment variable is not set", "CUDA_HOME is not set", "Cannot find CUDA_HOME"),
        K.BUILD_NO_CUDA_HOME,
        r"(?P<torch>CUDA_HOME environment variable is not set)\. Please set it to your CUDA install root"
        r"|AssertionError: (?P<setup>CUDA_HOME is not set)$"
        r"|(?P<setup_then>Cannot find CUDA_HOME\. CUDA must be available to build the package)",
        # the 2023-24 words were copied into other packages' setup.py (thu-ml/SageAttention's among them): whose
        # build it was is in pip's lines, not this one
        lambda m: {
            "message": m.group(0),
            "component": "vLLM's setup.py" if m["setup"] else "setup.py" if m["setup_then"] else "torch",
        },
    ),
    wording(  # FlashInfer's JIT (jit/cpp_ext.py) when neither CUDA_HOME nor /usr/local/cuda holds a compiler; and the
        # bare FileNotFoundError of running it (flashinfer-ai/flashinfer#1781: vLLM 0.11's FlashInfer sampler
        # JIT-building with the AOT wheels installed and no nvcc)
        ("Could not find nvcc", "No such file or directory: 'nvcc'", "/bin/nvcc'"),
        K.JIT_NO_NVCC,
        r"Could not find nvcc(?: and default cuda_home='[^']*' doesn't exist)?"
        r"|\[Errno 2\] No such file or directory: '(?:[^']*/)?nvcc'",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # torch.utils.cpp_extension building a JIT kernel: its frame, or its error's words
        (
            "_run_ninja_build",
            "Ninja build failed",
            "Error building extension",
            "CUDA toolkit headers are incompatible",
            "Ninja is required to load C++ extensions",
            "ninja (build tool) not found",
            "No such file or directory: 'ninja'",
        ),
        K.JIT_BUILD_FAILED,
        # no ninja in three wordings: torch's loader, FlashInfer's JIT as a framework reports it, and the bare
        # FileNotFoundError of running `ninja` (FlashInfer's run_ninja, a venv whose bin is not on PATH)
        r"in _run_ninja_build|Ninja build failed.*|Error building extension '[^']*'|CUDA compiler and CUDA toolkit "
        r"headers are incompatible|Ninja is required to load C\+\+ extensions|FlashInfer failed to JIT-compile: ninja "
        r"\(build tool\) not found|No such file or directory: 'ninja'",
        _jit_build,
    ),
    wording(  # nvcc's own summary of a failed compile, when the file is a JIT build's (FlashInfer's cache, torch's
        # extensions folder): `7 errors detected in the compilation of "/root/.cache/flashinfer/0.6.4/90a/generated/
        # gdn_prefill_sm90/….cu".`; the kernel is the generated folder's name
        ("errors detected in the compilation of", "error detected in the compilation of"),
        K.JIT_BUILD_FAILED,
        r"(?P<count>\d+) errors? detected in the compilation of "
        r"\"(?P<file>[^\"]*(?:flashinfer|torch_extensions)[^\"]*)\"",
        lambda m: {
            "message": f"nvcc: {m['count']} error(s) compiling {m['file'].rsplit('/', 1)[-1]}",
            "component": "FlashInfer" if "flashinfer" in m["file"].lower() else None,
            "function": _jit_kernel(m["file"]),
        },
    ),
    wording(  # Triton's runtime build (runtime/build.py) of its C launcher, and gcc's error on it (a source build of
        # vLLM fails in its C++ and CUDA files, not in a .c file)
        (
            "Failed to find C",
            "Python.h: No such file or directory",
            "cannot find -lcuda",
            "libcuda.so cannot found",
            "Please create a symlink of libcuda.so",
            ".c', '-O3', '-",
        ),
        K.TRITON_BUILD_FAILED,
        r"Failed to find C(?:\+\+)? compiler|[\w.-]+\.c:\d+:\d+: fatal error: Python\.h: No such file or directory"
        # the launcher linked against the driver's library: older Triton links `-lcuda`, which needs an unversioned
        # libcuda.so beside the driver's libcuda.so.1; Triton's own check, `libcuda.so cannot found!`, is no
        # libcuda.so.1 in the directories ldconfig's cache names
        r"|cannot find -lcuda\b|libcuda\.so cannot found"
        # Triton 2.x's next line when `whereis` found the versioned library: it asks for the unversioned link
        r"|Possible files are located at \[[^\]]*\]\.\s*Please create a symlink of libcuda\.so"
        # the build's command itself, as subprocess's CalledProcessError quotes it (runtime/build.py: `[cc, src,
        # "-O3", "-shared", …]`, src main.c in Triton 2-3.x, driver.c in 3.9; Triton 2.x put its include folders
        # between: `'-O3', '-I…/triton/common/../third_party/cuda/include', '-I/usr/include/python3.10', …`, vllm#3909);
        # the compiler's words come before it
        r"|Command '\['(?P<compiler>[^']+)', '[^']*\.c', '-O3',(?: '-I[^']*',)* '-shared'",
        _triton_build,
    ),
    wording(  # a source build's compiler or CMake stopping: a missing header (gcc's and clang's words; Triton's C
        # launcher missing Python.h is read above), the GPU architectures no probe could name (CMake's, PyTorch's
        # select_compute_arch.cmake, ROCm's offload-arch)
        (
            "fatal error:",
            "Failed to detect a default CUDA architecture",
            "arch_bin wasn't set",
            "offload-arch failed",
        ),
        K.SOURCE_BUILD_STOPPED,
        # the words OP-7.146 and OP-7.147 tell apart, from their own patterns
        f"{HEADER_MISSING.pattern}|{ARCH_UNKNOWN.pattern}",
        # a header inside ROCm's own include folder is read below (that ROCm release lacks what it includes)
        lambda m: None if re.search(r"/opt/rocm[-\d.]*/include/", m.string) else {"message": m.string.strip()},
    ),
    wording(  # vllm/version.py (read in 0.32; vllm#15592 on 0.8): vllm/_version.py, which a build writes, is missing
        ("Failed to read commit hash",),
        K.VLLM_VERSION_UNBUILT,
        r"(?:(?P<file>\S+\.py):\d+: )?RuntimeWarning: Failed to read commit hash",
        lambda m: {"component": m["file"]},
    ),
    wording(  # vllm_omni/version.py (vLLM-Omni PR #2691): its release and vLLM's differ in major or minor version
        ("appear to have mismatched major/minor versions",),
        K.PLUGIN_VERSION_MISMATCH,
        r"vLLM and (?P<plugin>[\w-]+) appear to have mismatched major/minor versions",
        lambda m: {"message": m["plugin"]},
    ),
    wording(  # the interpreter's `python -m MODULE` when the module's package is not importable
        ("Error while finding module specification for",),
        K.MODULE_NOT_FOUND,
        r"Error while finding module specification for '(?P<asked>[\w.]+)' \((?P<exc>ModuleNotFoundError|ImportError): "
        r"No module named '(?P<missing>[\w.]+)'\)",
        lambda m: {"message": m["missing"], "component": m["asked"], "exception": m["exc"]},
    ),
    wording(  # the dynamic loader, for a library of CUDA's own (not the driver's libcuda.so.1)
        (": cannot open shared object file",),
        K.CUDA_LIBRARY_MISSING,
        r"(?P<library>lib(?:cudart|cublas|cublasLt|cudnn\w*|nccl|nvrtc|nvJitLink|cusparse\w*|cufft|curand)\.so"
        r"\.(?P<major>\d+))[\d.]*: cannot open shared object file",
        lambda m: {"message": m.group(0), "component": m["library"], "version": m["major"]},
    ),
    wording(  # ROCr's and HIP's debug lines (AMD_LOG_LEVEL) for an IPC export refused, and the call's own result
        # (OP-7.160: the legacy IPC mode vLLM's ROCm image sets, on Radeon GPUs)
        ("Failed to create memory for IPC", "IPC memory creation failed", "hipIpcGetMemHandle"),
        K.ROCM_IPC_EXPORT_FAILED,
        r"Failed to create memory for IPC, failed with hsa_status: \d+"
        r"|IPC memory creation failed for memory: 0x[0-9a-f]+"
        r"|hipIpcGetMemHandle(?: ->|:| returned| failed:?) ?(?:1 \()?invalid argument\)?",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # oneCCL (Intel GPUs' collectives) not found by the loader as a worker builds its communicator (OP-7.156)
        ("oneCCL could not be initialized", "Cannot open plugin library: libccl"),
        K.ONECCL_LIBRARY_MISSING,
        r"oneCCL could not be initialized! Could not load any plugin\.?"
        r"|Cannot open plugin library: libccl\.so[\d.]*: cannot open shared object file",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # the loader, for a system library (not CUDA's) that a package's binary vLLM imports links: OpenCV's GUI
        # build (libGL, GLib's gthread), vLLM's CPU build (libnuma), Mooncake's Ascend transport (vllm-ascend#6949),
        # FFmpeg's libraries under a package built against the system's FFmpeg (torchcodec: vllm#48395), oneAPI's SYCL
        # runtime under PyTorch's XPU build and IPEX (vllm#11734), Ascend NNAL's libatb.so under torch_npu
        (": cannot open shared object file",),
        K.SYSTEM_LIBRARY_MISSING,
        r"(?P<library>libGL\.so\.1|libgthread-2\.0\.so\.0|libnuma\.so\.1|ascend_transport\.so|libatb\.so"
        r"|libsycl\.so\.\d+"
        r"|lib(?:avutil|avcodec|avformat|avdevice|avfilter|swresample|swscale)\.so\.\d+): cannot open "
        r"shared object file",
        lambda m: {"message": m.group(0), "component": m["library"]},
    ),
    wording(  # torchcodec's summary after it tried each FFmpeg major it supports (torchcodec/_core/ops.py)
        ("Could not load libtorchcodec",),
        K.SYSTEM_LIBRARY_MISSING,
        r"Could not load libtorchcodec",
        lambda m: {"message": m.group(0), "component": "libtorchcodec"},
    ),
    wording(  # NIXL's backend status (its nixl_types.h: NIXL_ERR_BACKEND), and UCX's own warnings about the library it
        # loaded: no CUDA transports (a UCX built without CUDA), or an older UCP than NIXL was built against
        # (the status in another program's log line, Dynamo's `ERROR engine.start: NIXL_ERR_BACKEND`, stays that log's
        # line, which OP-7.109 reads too)
        (
            "nixlBackendError: NIXL_ERR_BACKEND",
            "are not available, please use one or more of",
            "version is incompatible",
        ),
        K.NIXL_BACKEND_ERROR,
        r"(?P<backend>nixlBackendError: NIXL_ERR_BACKEND)"
        r"|(?P<ucx_no_cuda>transports '(?:cuda_ipc|cuda_copy)'(?:,'(?:cuda_ipc|cuda_copy)')? (?:is|are) not available)"
        # (NIXL's own words for it: `UCP API version is incompatible: required >= 1.19, actual 1.16.0`,
        # ai-dynamo/nixl#1023)
        r"|(?P<ucx_version>UCP (?:API )?version is incompatible(?:, required: |: required >= )"
        r"(?P<required>\d+(?:\.\d+)*),? actual:? (?P<actual>\d+(?:\.\d+)*))",
        lambda m: {
            "message": m.lastgroup,  # the outer group closes after the versions nested in it
            "version": f"required {m['required']}, loaded {m['actual']}" if m["required"] else None,
        },
    ),
    wording(  # Triton's cache (runtime/cache.py) losing the temporary file one process wrote while another compiled
        # the same kernel into the same directory: `<kernel>.<ext>.tmp.pid_<pid>_<uuid or number>`
        (".tmp.pid_",),
        K.TRITON_CACHE_RACE,
        r"No such file or directory: '(?P<dir>[^']*)/[0-9a-f]{20,}/(?P<kernel>\w+)\.\w+\.tmp\.pid_\d+[^']*'",
        lambda m: {"message": m["kernel"], "component": m["dir"]},
    ),
    wording(  # uv's command line (clap's words) refusing the PyTorch-backend flag vLLM's install guide gives it
        ("unexpected argument '--torch-backend",),
        K.UV_FLAG_UNKNOWN,
        r"error: unexpected argument '(?P<flag>--torch-backend)(?:=[^']*)?' found",
        lambda m: {"message": m["flag"]},
    ),
    wording(  # setuptools copying a compiled extension of vLLM's that the CMake step did not write under that name
        # (vllm#18748: CMake 3.26.0 left the abi3 suffix off, per vLLM's maintainer; PR #19019)
        ("can't copy '",),
        K.BUILD_EXTENSION_MISSING,
        r"can't copy '(?P<path>(?:[^']*/)?vllm/[^'/]+\.so)': doesn't exist or not a regular file",
        lambda m: {"message": m["path"]},
    ),
    wording(  # vLLM's dispatch to a kernel its build holds no variant of for the GPU: the CUTLASS scaled-mm entry's
        # TORCH_CHECK (csrc/quantization/…/scaled_mm_entry.cu) and the MoE backends' own device checks
        ("No compiled ", "kernel does not support current device"),
        K.KERNEL_NOT_FOR_CAPABILITY,
        # the MoE data entry's words name the scaled-mm kernel it lacks (`No compiled get_cutlass_moe_mm_data: no
        # cutlass_scaled_mm kernel for CUDA device capability: 120`, vllm#24921 on an RTX 5090 with 0.10.2)
        # (cut before the capability: `No compiled cutlass_scaled_mm for a compute capability`, vllm PR #49904)
        r"No compiled (?P<compiled>\w+)(?:: no \w+ kernel)? for (?:(?P<less>a compute capability less than )?CUDA "
        r"device capability: (?P<cap>\d+)"
        r"|(?P<cut>a compute capability(?: less than(?: CUDA device capability)?)?)(?=[\s.`'\"]*(?:$|`)))"
        r"|(?P<kernel>[\w-]+(?: [\w-]+){0,3}) kernel does not support current device (?P<sm>sm_\d+)",
        lambda m: {
            "message": m["compiled"] or m["kernel"],
            "version": m["sm"] or (f"sm_{m['cap']}" if m["cap"] else None),
            # the build's arch list decides these two: no variant at or below the device's capability, or the words
            # cut before it; a listed required capability (`Required capability: 90 or 100`) is the source's own
            "component": COMPILED_KERNEL if m["less"] or m["cut"] else None,
        },
    ),
    wording(  # FlashInfer's attention kernels refusing the model's head dimension: its FA2 path's check (`Invalid
        # head_dim: 512, must be divisible by 16 and in range [16, 256]`, flashinfer-ai/flashinfer#4546: Gemma 4's
        # global layers on an RTX 5090) and its TensorRT-LLM kernels' (`Expect (32 <= headDim <= 2048) && …`,
        # vllm#25811), and its prefill's dispatch finding no KV tile that fits (`Unsupported max_mma_kv: 0`, vllm PR
        # #49917: Gemma 4 on an RTX 3090)
        ("Invalid head_dim:", "<= headDim <=", "Unsupported max_mma_kv"),
        K.ATTENTION_HEAD_DIM_REFUSED,
        f"{FA2_REFUSAL}|{TRTLLM_REFUSAL}|{TILE_REFUSAL}",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # TensorRT-LLM's fused-MoE runner (FlashInfer's CUTLASS MoE) checking the grouped GEMM's initialize():
        # its TLLM_CHECK_WITH_INFO words, logged per tactic the autotuner skips, or raised
        ("Failed to initialize cutlass TMA WS grouped gemm",),
        K.MOE_GROUPED_GEMM_INIT_FAILED,
        r"Failed to initialize cutlass TMA WS grouped gemm(?:\.? ?(?:Error: [^(]*\((?:\S*?_(?P<arch>sm\d+)_)?)?)?",
        lambda m: {"message": m["arch"]},
    ),
    wording(  # the architecture guard of vLLM's CUTLASS kernels (csrc/cutlass_extensions/common.hpp: printf, then trap)
        ("This kernel only supports",),
        K.KERNEL_ARCH_GUARD,
        r"This kernel only supports (?P<arch>sm ?(?:\d+[a-z]?|\[\d+, ?\d+\)|>= ?\d+))",
        lambda m: {"message": m["arch"].replace(" ", "")},
    ),
    wording(  # the driver older than the build's CUDA: torch's check (c10/cuda/CUDAFunctions.cpp prints the CUDA
        # release the driver supports as 1000 × major + 10 × minor), CUDA's cudaErrorInsufficientDriver (35), and the
        # NVIDIA container runtime checking the image's NVIDIA_REQUIRE_CUDA before the container starts
        (
            "driver on your system is too old",
            "CUDA driver version is insufficient",
            "unsatisfied condition: cuda",
            "device kernel image is invalid",
            "compiled with an unsupported toolchain",
            "forward compatibility was attempted",
        ),
        K.DRIVER_TOO_OLD,
        # (the version cut off when a person retypes or cuts the line: still the driver, its release unknown)
        r"The NVIDIA driver on your system is too old(?: \(found version (?P<found>\d+)\))?"
        r"|CUDA driver version is insufficient for CUDA runtime version"
        r"|requirement error: unsatisfied condition: cuda>=(?P<required>\d+\.\d+)"
        # Triton's driver call loading a kernel its bundled ptxas compiled for a newer CUDA than the driver's
        r"|(?P<ptxas>Triton Error \[CUDA\]: device kernel image is invalid)"
        # a kernel's PTX from a newer CUDA toolkit than the driver can compile (cudaErrorUnsupportedPtxVersion, 222),
        # and an image's CUDA forward-compatibility libraries on a GPU that has none (Error 804,
        # cudaErrorCompatNotSupportedOnDevice: GeForce and workstation cards)
        r"|(?P<ptx>the provided PTX was compiled with an unsupported toolchain)"
        r"|(?P<compat>forward compatibility was attempted on non supported HW)",
        _driver_cuda,
    ),
    wording(  # the dynamic loader (ld.so): a symbol version the system's glibc or libstdc++ does not have; Python's
        # ImportError may stop before the binary that asked (`ImportError: /lib64/libstdc++.so.6: version
        # `GLIBCXX_3.4.30' not found`, llm-d/llm-d-kv-cache#445: an extension built with GCC 12 in a GCC 11 image)
        ("' not found (required by", "' not found"),
        K.SYSTEM_LIBRARY_TOO_OLD,
        r"version `(?P<symbol>GLIBC|GLIBCXX|CXXABI)_(?P<version>[\d.]+)' not found"
        r"(?: \(required by (?P<binary>[^)]+)\))?",
        lambda m: {
            "component": "glibc" if m["symbol"] == "GLIBC" else "libstdc++",
            "version": f"{m['symbol']}_{m['version']}",
            "message": m["binary"],
        },
    ),
    wording(  # pip's resolver listing the conflicts an install left (pip/_internal/commands/install.py's wording; its
        # older one said "has requirement … but you'll have"), one per line
        ("which is incompatible", "which is not installed"),
        K.PACKAGE_CONFLICT,
        r"^(?:ERROR: )?(?P<requirer>[A-Za-z0-9][\w.-]*) (?P<rversion>\S+) (?:requires|has requirement) (?P<req>.+?)"
        r"(?:, but you(?: have|'ll have) [\w.-]+ (?P<installed>\S+) which is incompatible"
        r"|, which is not installed)\.?$",
        lambda m: {
            "component": m["requirer"],
            "version": m["rversion"],
            "message": m["req"].split(";", 1)[0].strip(),
            "installed": m["installed"],
        },
    ),
    wording(  # transformers' require_version (utils/versions.py), which frameworks call at import (LLaMA-Factory's
        # check of its vLLM range): the requirement and the version found; the requirer is not named
        ("is required for a normal functioning of this module",),
        K.PACKAGE_CONFLICT,
        r"(?P<req>[A-Za-z0-9][\w.-]*(?:\[[\w,]+\])?(?:[<>=!~]=?[\w.*+-]+,?)+) is required for a normal functioning of "
        r"this module, but found [\w.-]+==(?P<found>[\w.+-]+?)\.?\s*$",
        lambda m: {"message": m["req"], "installed": m["found"]},
    ),
    wording(  # torch/cuda/__init__.py's _lazy_init, when torch._C has no CUDA functions (a build without CUDA); beside
        # it, the installed build: collect_env's or `pip list`'s version with its `+cpu` suffix, or another
        # accelerator's PyTorch package (Ascend's torch_npu, TPU's torch_xla) in `pip list`
        (
            "Torch not compiled with CUDA enabled",
            "+cpu",
            "torch-npu",
            "torch_npu",
            "torch-xla",
            "torch_xla",
            "libtorch_cuda.so",
            "libc10_cuda.so",
        ),
        K.TORCH_WITHOUT_CUDA,
        r"Torch not compiled with CUDA enabled"
        # the loader, for a binary linked against PyTorch's CUDA library (vLLM's _C), which a CPU build lacks
        r"|(?P<library>lib(?:torch|c10)_cuda\.so): cannot open shared object file"
        r"|^\s*(?:PyTorch version:|torch)\s+(?P<cpu>\d+\.\d+(?:\.\d+)?\+cpu)\b"
        r"|^\s*(?P<package>torch[-_](?:npu|xla))\s+\d",
        _torch_without_cuda,
    ),
    wording(  # Triton at a kernel's first launch (compiler/compiler.py): the compiled kernel asks more of a per-block
        # resource than the GPU allows (shared memory: CUDA's opt-in maximum per block); a paste that wrapped the line
        # ends it after the resource, its figures on the next line
        ("out of resource: ",),
        K.TRITON_OUT_OF_RESOURCES,
        r"out of resource: (?P<resource>[a-z ]+?)"
        r"(?:, Required: (?P<required>\d+), Hardware limit: (?P<limit>\d+)|,?\s*$)",
        lambda m: {
            "message": m["resource"],
            "resource_required": int(m["required"]) if m["required"] else None,
            "resource_limit": int(m["limit"]) if m["limit"] else None,
        },
    ),
    wording(  # torchvision's compiled ops missing from this torch: torch's dispatcher when torchvision registers a fake
        # for an op its _C never loaded (torchvision/_meta_registrations.py), and torchvision's own words
        # (torchvision/extension.py: _assert_has_ops, _check_cuda_version)
        (
            "operator torchvision::",
            "Couldn't load custom C++ ops",
            "PyTorch and torchvision were compiled",
            "Could not run 'torchvision::",
        ),
        K.TORCHVISION_MISMATCH,
        r"operator torchvision::(?P<op>\w+) does not exist"
        # torch's dispatcher: the op loaded, with no kernel for CUDA tensors (a CPU build of torchvision)
        r"|Could not run 'torchvision::(?P<cpu_op>\w+)' with arguments from the 'CUDA' backend"
        r"|Couldn't load custom C\+\+ ops\. This can happen if your PyTorch and torchvision versions are incompatible"
        r"|PyTorch and torchvision were compiled with different CUDA major versions\.(?: PyTorch has CUDA "
        r"Version=(?P<torch_cuda>\d+\.\d+) and torchvision has CUDA Version=(?P<tv_cuda>\d+\.\d+))?",
        _torchvision,
    ),
    wording(  # FlashAttention's checks (flash_api.cpp): the GPU's compute capability (8.x or 9.0, later >= 8) and the
        # tensors' dtype
        # the last: early V1's FlashAttention backend asserting that a FlashAttention version fits the GPU
        # (vllm/v1/attention/backends/flash_attn.py, 0.7; vllm#13398 on a V100)
        ("FlashAttention only support", "assert is_fa_version_supported("),
        K.FLASH_ATTN_OLD_GPU,
        r"FlashAttention only supports Ampere GPUs or newer|FlashAttention only supports? fp16 and bf16 data type"
        r"|FlashAttention only supports AMD MI200 GPUs or newer"  # ROCm's CK flash-attention on a Radeon
        r"|assert is_fa_version_supported\(self\.fa_version\)",
        lambda m: {
            "message": "rocm"
            if "AMD" in m.group(0)
            else "gpu"
            if "Ampere" in m.group(0)
            else "fa_version"
            if "is_fa_version" in m.group(0)
            else "dtype"
        },
    ),
    wording(  # torch.compile failing under vLLM (vllm/compilation/): Dynamo's and Inductor's exceptions by class, and
        # vLLM's own words for a compile cache a failed compilation left broken (compiler_interface.py, 0.7-0.33)
        (
            "BackendCompilerFailed",
            "InductorError",
            "LoweringException",
            "torch._dynamo.exc.",
            "failed to get the hash of the compiled graph",
            "corrupted compilation artifact",
            "Bytes object is corrupted, checksum does not match",
            _NO_TRITON,
            "too old to be supported by the triton GPU compiler",
            "requires .target sm_70 or higher",
        ),
        K.TORCH_COMPILE_FAILED,
        r"BackendCompilerFailed: backend=(?P<backend>'[^']*'|<[^>]*>) raised:(?P<raised>.*)"
        r"|(?P<inductor>InductorError|LoweringException): (?P<words>.*)"
        r"|torch\._dynamo\.exc\.(?P<dynamo>Unsupported|InternalTorchDynamoError|TorchRuntimeError): (?P<words2>.*)"
        r"|(?P<cache>failed to get the hash of the compiled graph|a previous compilation failed, leading to a "
        r"corrupted compilation artifact"
        # torch's reader of a saved compile artifact (utils/_appending_byte_serializer.py) finding its bytes changed:
        # processes sharing one cache directory wrote it at once (ray PR #59319, Ray's tests on one ~/.cache/vllm)
        r"|Bytes object is corrupted, checksum does not match)"
        rf"|{_NO_TRITON}|too old to be supported by the triton GPU compiler|requires \.target sm_70 or higher",
        _compile_failed,
    ),
    wording(  # uv's hint that a package has no wheel for this Python's ABI (`hint: You require CPython 3.14 (`cp314`),
        # but we only found wheels for `cuda-tile` (v1.3.0) with the following Python ABI tags: `cp310`, …`, vllm#43435)
        ("but we only found wheels for",),
        K.PIP_NO_DISTRIBUTION,
        r"You require CPython (?P<python>[\d.]+) \(`cp\d+`\), but we only found wheels for "
        r"`(?P<req>[A-Za-z0-9][\w.-]*)`(?: \(v(?P<version>[^)]+)\))? with the following Python ABI tags: "
        r"(?P<tags>.+?)\s*$",
        lambda m: {
            "message": m["req"],
            "component": m["req"],
            "version": m["version"],
            "versions_offered": f"abi:{m['python']}:{m['tags'].replace('`', '')}",
        },
    ),
    wording(  # uv's resolver: a requirement with no wheel for this interpreter's platform tag (`…==2.11.0+cpu has no
        # wheels with a matching platform tag (e.g., `macosx_26_0_x86_64`)`, vllm-project/vllm-metal#379)
        ("has no wheels with a matching platform tag",),
        K.PIP_NO_DISTRIBUTION,
        r"(?P<req>[A-Za-z0-9][\w.-]*)(?:\{[^}]*\})?(?P<pin>==\S+?)? has no wheels with a matching platform tag "
        r"\(e\.g\., `(?P<tag>[^`]+)`\)",
        lambda m: {
            "message": f"{m['req']}{m['pin'] or ''}",
            "component": m["req"],
            "versions_offered": f"platform:{m['tag']}",
        },
    ),
    wording(  # uv's resolver: a requirement with no wheel for this interpreter's Python ABI (`and
        # xgrammar{platform_machine == 'x86_64'}>=0.1.6 has no wheels with a matching Python ABI tag, we can
        # conclude …`, mlc-ai/xgrammar#193: vLLM main on Python 3.13 before xgrammar published cp313 wheels)
        ("has no wheels with a matching Python ABI tag",),
        K.PIP_NO_DISTRIBUTION,
        r"(?<![\w.<>=~!-])(?P<req>[A-Za-z][\w.-]*)(?:\{[^}]*\})?(?P<pin>(?:[=<>~!]=|[<>])[^\s,]+)? has no wheels "
        r"with a matching Python ABI tag(?: \(e\.g\., `(?P<tag>[^`]+)`\))?",
        lambda m: {
            "message": f"{m['req']}{m['pin'] or ''}",
            "component": m["req"],
            "versions_offered": f"pyabi:{m['tag'] or ''}",
        },
    ),
    wording(  # pip refusing a wheel file given to it whose tags this interpreter does not take (pip/_internal/
        # req/constructors.py: "%s is not a supported wheel on this platform."): another Python's, or another OS's
        # (vllm#1999: vLLM's manylinux wheel on Windows; a maintainer: Windows only through WSL)
        ("is not a supported wheel on this platform",),
        K.PIP_NO_DISTRIBUTION,
        r"(?P<req>[A-Za-z0-9][\w.]*)-(?P<version>[\w.+]+)-(?P<tags>[\w.]+-[\w.]+-[\w.]+)\.whl is not a supported "
        r"wheel on this platform",
        lambda m: {
            "message": f"{m['req']}=={m['version']}",
            "component": m["req"],
            "versions_offered": f"wheel:{m['tags']}",
        },
    ),
    wording(  # pip's note of the versions it skipped for their Requires-Python (pip/_internal/index/package_finder.py:
        # "Ignored the following versions that require a different python version: …"), before its "Could not find"
        # (phoronix-test-suite/test-profiles#337: vLLM 0.8 to 0.10 on Debian 13's Python 3.13)
        ("require a different python version",),
        K.PIP_NO_DISTRIBUTION,
        r"Ignored the following versions that require a different python version: (?P<listed>.+?)\s*$",
        lambda m: {"message": m["listed"], "versions_offered": f"python:{m['listed']}"},
    ),
    wording(  # setuptools naming the wheel it builds, or pip the distribution it installed, UNKNOWN: no project name
        # was read (vllm PR #19035: `creating 'dist/UNKNOWN-0.8.6-cp310-cp310-linux_x86_64.whl'` from a ROCm image)
        ("UNKNOWN",),
        K.WHEEL_NAMED_UNKNOWN,
        r"(?P<file>\bUNKNOWN-[\w.+]+-[\w.]+-[\w.]+-[\w.]+\.whl)"
        # pip lists what it built or installed sorted by name, so UNKNOWN may come after others
        r"|Successfully (?:built|installed) (?:\S+ )*?(?P<said>UNKNOWN\b\S*)",
        lambda m: {"message": m["file"] or m["said"]},
    ),
    wording(  # torch/utils/cpp_extension.py: a toolkit found, torch.cuda.is_available() false where the build runs
        ("No CUDA runtime is found, using CUDA_HOME=",),
        K.BUILD_NO_CUDA_RUNTIME,
        r"No CUDA runtime is found, using CUDA_HOME='(?P<home>/[^']*)'",
        lambda m: {"message": m["home"]},
    ),
    wording(  # uv's resolver explaining why no solution exists (`╰─▶ Because there is no version of
        # xformers{platform_machine == …}==0.0.33+5d4b92a5.d20251029 …`, vllm#27851, wrapped mid-marker): the package
        # it found no version of; the marker and the pin when the paste holds them
        ("Because there is no version of",),
        K.PIP_NO_DISTRIBUTION,
        r"Because there is no version of (?P<req>[A-Za-z0-9][\w.-]*)(?:\{[^}]*\}?)?(?P<pin>[=<>~!]=\S+)?",
        lambda m: {"message": f"{m['req']}{m['pin'] or ''}", "component": m["req"], "versions_offered": UV_RESOLVER},
    ),
    wording(  # uv's resolver finding no package of that name on any index it was given (`╰─▶ Because pyairports was
        # not found in the package registry and you require pyairports, …`, zeroQiaoba/AffectGPT#21)
        ("was not found in the package registry",),
        K.PIP_NO_DISTRIBUTION,
        r"Because (?P<req>[A-Za-z0-9][\w.-]*) was not found in the package registry",
        lambda m: {"message": m["req"], "component": m["req"], "versions_offered": UV_RESOLVER},
    ),
    wording(  # pip's resolver giving up (pip/_internal/resolution/resolvelib/factory.py, ResolutionImpossible):
        # `ERROR: Cannot install vllm because these package versions have conflicting dependencies.` (vllm#23983)
        ("because these package versions have conflicting dependencies",),
        K.PIP_NO_DISTRIBUTION,
        r"Cannot install (?P<listed>.+?) because these package versions have conflicting dependencies",
        lambda m: {
            "message": m["listed"],
            "component": _first_name(m["listed"]),
            "versions_offered": PIP_CONFLICT,
        },
    ),
    wording(  # pip's list under `The conflict is caused by:`: a requirer at a version and what it requires
        # (`outlines 0.0.46 depends on pyairports`, vllm#23983; `vllm 0.6.3 depends on torch==2.4.0`)
        ("depends on",),
        K.PIP_NO_DISTRIBUTION,
        r"^\s*(?P<requirer>[A-Za-z0-9][\w.-]*) (?P<rversion>\d[\w.+!-]*) depends on "
        r"(?P<req>[A-Za-z0-9][\w.-]*)(?:\[[^\]]*\])?(?P<spec>[^;]*?)\s*(?:;.*)?$",
        lambda m: {
            "message": f"{m['req']}{m['spec']}",
            "component": m["req"],
            "versions_offered": f"{PIP_CONFLICT}{m['requirer']} {m['rversion']}",
        },
    ),
    wording(  # uv's resolver explaining a conflict from a package's exact pin (`╰─▶ Because vllm==0.6.5 depends on
        # torch{platform_machine != 'aarch64'}==2.5.1 and …`, vllm#11283): the requirer, its version and the pin
        ("depends on",),
        K.PACKAGE_CONFLICT,
        r"Because (?P<requirer>[A-Za-z0-9][\w.-]*)==(?P<rversion>[\w.+-]+) depends on (?P<req>[A-Za-z0-9][\w.-]*)"
        r"(?:\{[^}]*\})?(?P<pin>[=<>~!]=[\w.*+-]+)",
        lambda m: {
            "component": m["requirer"],
            "version": m["rversion"],
            "message": f"{m['req']}{m['pin']}",
            "versions_offered": UV_RESOLVER,
        },
    ),
    wording(  # pip's resolver finding nothing to install (pip/_internal/resolution/resolvelib/factory.py): its list of
        # what the index offered, then its one-line summary
        ("that satisfies the requirement", "No matching distribution found for"),
        K.PIP_NO_DISTRIBUTION,
        r"Could not find a (?:\w+ )?version that satisfies the requirement (?P<req>.+?)(?: \(from versions: "
        r"(?P<versions>[^)]*)\)|\s*$)|No matching distribution found for (?P<req2>\S.*?)\s*$",
        _pip_not_found,
    ),
    wording(  # pip building a package from its source distribution and failing (pip/_internal/operations/build/
        # wheel.py: "Failed building wheel for %s"; older pips: "Could not build wheels for X")
        # pip 24's summary names them in parentheses: `ERROR: Failed to build installable wheels for some
        # pyproject.toml based projects (vllm)` (vllm#14034, macOS)
        ("Failed building wheel for", "Could not build wheels for", "Failed to build installable wheels"),
        K.PIP_BUILD_FAILED,
        r"(?:Failed building wheel for|Could not build wheels for) (?P<package>[A-Za-z0-9][\w.-]*?)(?:,|\s|$)"
        r"|Failed to build installable wheels for some pyproject\.toml based projects \((?P<listed>[A-Za-z0-9][\w.-]*)",
        lambda m: {"message": m.group(0).strip(" ,"), "component": m["package"] or m["listed"]},
    ),
    wording(  # PyTorch's dispatcher (aten/src/ATen/core/function_schema_inl.h) refusing a call to an op of one of
        # vLLM's extensions (`_C`, `_moe_C`, `_rocm_C`, `_C_cache_ops` …), or asked for one they do not register
        (
            "argument(s) but received",
            "is missing value for argument",
            "No such operator _",
            "Could not run '_",
            "'_OpNamespace' '_",
            "'_OpNamespace' 'vllm'",
        ),
        K.VLLM_OP_SCHEMA_MISMATCH,
        rf"(?P<op>{_EXTENSION}::\w+)\(\) (?P<what>expected at most \d+ argument\(s\) but received \d+ "
        r"argument\(s\)|is missing value for argument '\w+')"
        rf"|No such operator (?P<missing>{_EXTENSION}::\w+)"
        # torch.ops' words for an op its namespace lacks: the extension that registers it was not loaded, or lacks it
        # (vllm#5454: `'_OpNamespace' '_C' object has no attribute 'rms_norm'` on a source install without its .so)
        # (`vllm`: the namespace of the ops vLLM registers from Python and of its flash-attention fork's, where
        # `flash_attn_with_kvcache` was missing from a release before it: ByteDance-Seed/FlexPrefill#17)
        rf"|'_OpNamespace' '(?P<namespace>{_EXTENSION}|vllm)' object has no attribute '(?P<attr>\w+)'"
        # the op exists, but not for the device it was called on: the extension was built for another one
        rf"|Could not run '(?P<unrun>{_EXTENSION}::\w+)' with arguments from the '(?P<backend>\w+)' "
        r"backend(?:.*?is only available for these backends: \[(?P<available>[^\]]*)\])?",
        _op_schema,
    ),
    wording(  # pip's box around a build step that failed (pip/_internal/exceptions.py, InstallationSubprocessError:
        # `× <step> did not run successfully.`), and the error code it prints first
        ("did not run successfully", "subprocess-exited-with-error"),
        K.PIP_BUILD_FAILED,
        r"(?P<step>Getting requirements to build (?:wheel|editable)"
        r"|Preparing (?:editable )?metadata \(pyproject\.toml\)"
        r"|Building (?P<mode>wheel|editable) for (?P<package>[A-Za-z0-9][\w.-]*) \(pyproject\.toml\)"
        r"|python setup\.py (?:egg_info|bdist_wheel|develop)) did not run successfully"
        r"|error: subprocess-exited-with-error",
        lambda m: {
            "message": ("editable" if m["mode"] == "editable" else m["step"] or "subprocess-exited-with-error"),
            "component": m["package"],
        },
    ),
    wording(  # Triton's compiler aborting on a tensor-core layout conversion it supports only from Ampere
        ("mma -> mma layout conversion",),
        K.TRITON_MMA_LAYOUT,
        r"Unexpected mma -> mma layout conversion|mma -> mma layout conversion is only supported on Ampere",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # Ascend's compiled kernel package checking the device's SoC at load (its bin package's words, typo kept)
        ("of bin package does not match the current device",),
        K.ASCEND_SOC_MISMATCH,
        r"the socversion (?P<built>\w+) of bin package does not match the current device "
        r"socver(?:si|is)on (?P<dev>\w+)",
        lambda m: {"message": m["dev"], "component": m["built"]},
    ),
    wording(  # GCC refusing what vLLM's CPU build (cmake/cpu_extension.cmake) asks for: an x86 intrinsic it does not
        # declare, an Arm -march feature modifier or an -m option it does not know (curly or straight quotes)
        # and the build's own check of the compiler's version (`X86 backend requires gcc/g++ >= 12.3`)
        (
            "was not declared in this scope",
            "invalid feature modifier in",
            "unrecognized command-line option",
            "backend requires gcc/g++",
        ),
        K.COMPILER_TOO_OLD,
        r"error: [‘'`](?P<intrinsic>_mm\d*_\w+)[’'`] was not declared in this scope"
        r"|error: invalid feature modifier in [‘'`](?P<march>-march=[^’'`]+)[’'`]"
        r"|error: unrecognized command-line option [‘'`](?P<option>-m(?:avx|amx|arch)[^’'`]*)[’'`]"
        r"|\w+ backend requires (?P<version>gcc/g\+\+ >= \d+(?:\.\d+)*)",
        lambda m: {"message": m["intrinsic"] or m["march"] or m["option"] or m["version"]},
    ),
    wording(  # Triton's compiler giving up on a kernel: LLVM's fatal error (the process aborts), the pass manager's
        # exception, or an MLIR diagnostic on a Triton op at the kernel's Python line; and the kernel in the module
        # Triton dumps after a pipeliner error
        ("LLVM ERROR: ", "PassManager::run failed", ": error: '", "tt.func "),
        K.TRITON_COMPILE_ABORT,
        r"LLVM ERROR: (?P<llvm>.*?(?:Cannot select: intrinsic %(?P<intrinsic>llvm\.[\w.]+))?.*?)\s*$"
        r"|(?P<pm>PassManager::run failed)"
        r"|(?P<file>[^\s:]+\.py):\d+:\d+: error: (?P<mlir>'(?:tt|ttg|ttng|triton_gpu|amdgpu|nvgpu|llvm)\.[\w.]+' op .*)"
        r"|^\s*tt\.func (?:public |private )?@(?P<kernel>\w+)\(",
        lambda m: {
            "message": m["llvm"] or m["pm"] or m["mlir"],
            "component": m["intrinsic"],
            "function": m["kernel"],
            "code_file": m["file"],
        },
    ),
    wording(  # ninja refusing to start: a file the build links or reads does not exist and nothing builds it
        ("missing and no known rule to make it",),
        K.PIP_BUILD_FAILED,
        r"ninja: error: '(?P<missing>[^']+)', needed by '(?P<target>[^']+)', missing and no known rule to make it",
        lambda m: {"message": f"MISSING: {m['missing']}", "component": _built_package(m["target"])},
    ),
    wording(  # the compiler missing a header that a ROCm header includes (`/opt/rocm-5.6.0/include/hip/hip_bf16.h:
        # 30:10: fatal error: 'hip/amd_detail/amd_hip_bf16.h' file not found`, vLLM PR #1313): that ROCm lacks it
        ("file not found",),
        K.PIP_BUILD_FAILED,
        r"/opt/rocm-?(?P<version>[\d.]*)/include/\S+?:\d+:\d+: fatal error: '(?P<header>[^']+)' file not found",
        lambda m: {"message": f"ROCM_HEADER: {m['header']}|{m['version'] or ''}", "component": "rocm"},
    ),
    wording(  # ninja's line for a compile step that failed (`FAILED: CMakeFiles/_C.dir/csrc/activation_kernels.cu.o`;
        # 1.12 adds `[code=1] `): the object names the source file, and the compiler's own words follow it
        ("FAILED: ",),
        K.PIP_BUILD_FAILED,
        r"(?:^|\s)FAILED: (?:\[code=\d+\] )?(?P<target>\S+?\.(?:o|obj))(?=\s|$)",
        lambda m: {"message": f"FAILED: {m['target']}", "component": _built_package(m["target"])},
    ),
    wording(  # FlashInfer's check of its prebuilt-kernel packages against itself (flashinfer/jit/env.py, its
        # `_check_jit_cache_version`), at import in vLLM's engine (vllm#49804: cubin 0.6.13 beside flashinfer 0.6.14)
        ("does not match flashinfer version",),
        K.FLASHINFER_VERSION_SKEW,
        r"(?P<package>flashinfer-(?:cubin|jit-cache)) version \((?P<mine>[^)]+)\) does not match flashinfer version "
        r"\((?P<theirs>[^)]+)\)",
        lambda m: {"component": m["package"], "message": m["mine"], "version": m["theirs"]},
    ),
    wording(  # setuptools-scm finding no version for a source tree: vLLM's setup.py asks it (since vllm PR #4738), and
        # a tree without its git metadata (a Docker build context without .git, GitHub's tarball) has none
        ("setuptools-scm was unable to detect version for",),
        K.PIP_BUILD_FAILED,
        r"setuptools-scm was unable to detect version for (?P<root>\S+?)\.?(?:\s|$)",
        lambda m: {"message": f"NO_SCM_VERSION: {m['root']}"},
    ),
    wording(  # torch's cpp_extension (utils/cpp_extension.py, _run_ninja_build) when a setup.py's C++/CUDA build
        # failed: vLLM's own build before it moved to CMake (2024), flash-attn's, any extension's (vllm#3180: the
        # compiler killed for memory, fixed with MAX_JOBS=2)
        ("Error compiling objects for extension",),
        K.PIP_BUILD_FAILED,
        r"Error compiling objects for extension",
        lambda m: {"message": "EXTENSION"},
    ),
    wording(  # vLLM's setup.py (get_vllm_version) finding no platform to build for: the PyTorch of the build has no
        # CUDA or ROCm while VLLM_TARGET_DEVICE says cuda, or VLLM_TARGET_DEVICE names a target setup.py lacks
        ("Unknown runtime environment",),
        K.VLLM_BUILD_NO_DEVICE,
        r"(?:RuntimeError: )?Unknown runtime environment\b",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # vLLM's CMakeLists.txt finding neither CUDA nor HIP in the PyTorch it configures against (0.4 on), and
        # its CPU extension finding no instruction set it has kernels for (cmake/cpu_extension.cmake: AVX512 only in
        # 0.4.x, then `AVX512 or AVX2 or Power9+`, later more)
        ("Can't find CUDA or HIP installation", "vLLM CPU backend requires"),
        K.VLLM_BUILD_NO_DEVICE,
        r"(?P<gpu>Can't find CUDA or HIP installation)\.?|vLLM CPU backend requires (?P<isas>.+?) (?:ISA )?support\.?",
        lambda m: {"message": m.group(0).strip(), "component": "cpu" if m["isas"] else "cmake"},
    ),
    wording(  # ninja's own last word when a compile step failed (vllm-windows#38, ms-swift#8349's FlashInfer JIT
        # build): the `FAILED:` line and the compiler's output before it say which and why
        ("ninja: build stopped: subcommand failed",),
        K.PIP_BUILD_FAILED,
        r"ninja: build stopped: subcommand failed",
        lambda m: {"message": "NINJA_STOPPED"},
    ),
    wording(  # a failed build step around the compiler: Docker BuildKit's summary of a RUN step (`failed to solve:
        # process "…" did not complete successfully: exit code: 1`), and setuptools' CMake call for vLLM's extension
        # targets (`CalledProcessError: Command '['cmake', '--build', '.', …, '--target=_C' …]' returned non-zero
        # exit status 1.`); message: STEP <exit status>
        ("did not complete successfully: exit code", "returned non-zero exit status"),
        K.PIP_BUILD_FAILED,
        r"failed to solve: process \"(?P<run>.+)\" did not complete successfully: exit code: (?P<code>\d+)"
        r"|CalledProcessError: Command '\['cmake', '--build'(?P<targets>[^\]]*)\]' returned non-zero exit status "
        r"(?P<status>\d+)",
        lambda m: {
            "message": f"STEP {m['code'] or m['status']}",
            "component": "vllm"
            if re.search(r"--target=_\w*C\b|VLLM_TARGET_DEVICE|setup\.py|pip install (?:-e )?\.|vllm", m.group(0))
            else None,
        },
    ),
    wording(  # `python collect_env.py` (asked for by vLLM's issue template), or torch's version with its suffix
        ("CUDA used to build PyTorch:", "PyTorch version:"),
        K.TORCH_CUDA_BUILD,
        r"CUDA used to build PyTorch: (?P<release>\d+\.\d+)|PyTorch version: \S+\+cu(?P<cu>\d{3,})",
        _torch_cuda,
    ),
)
