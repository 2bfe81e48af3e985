"""OP-7.46: a CUDA runtime error, and what CUDA's documentation says it means, when no rule names a cause of its own.

Why a rule of its own: torch prints CUDA's failures as `CUDA error: <cudaGetErrorString's words>`, and each of CUDA's
error codes says where to look (the CUDA Runtime API's cudaError enum): memory CUDA could not allocate outside
PyTorch's own allocator (cudaErrorMemoryAllocation, 2; cuBLAS' CUBLAS_STATUS_ALLOC_FAILED for its workspace), cuBLAS
failing to start (CUBLAS_STATUS_NOT_INITIALIZED from cublasCreate: "the CUDA Runtime initialization failed", cuBLAS'
documentation; a GPU already full, as PyTorch's and lm-evaluation-harness' maintainers answer it), a
kernel's own assertion (cudaErrorAssert, 710: the context is unusable after it), a kernel ended by the display's
watchdog (cudaErrorLaunchTimeout, 6), a GPU held in an exclusive or prohibited compute mode
(cudaErrorDevicesUnavailable, 46), a GPU index the process cannot see (cudaErrorInvalidDevice, 101), a system not
ready for CUDA work (cudaErrorSystemNotReady, 802: on NVSwitch systems, NVIDIA's Fabric Manager not running, or not at
the driver's version: its user guide), an operation
CUDA graph capture forbids (cudaErrorStreamCaptureUnsupported, 900), an operating-system call CUDA made failing
(cudaErrorOperatingSystem, 304: pinned host memory or inter-process sharing, as the frame shows), a launch with a grid,
block or shared-memory size the GPU refuses (cudaErrorInvalidConfiguration, 9). A kernel fault (illegal memory access,
unspecified launch failure) is HL-4's, torch's own allocator running out (`CUDA out of memory. Tried to allocate …`)
OP-1.8's.
"""

from __future__ import annotations

from typing import NamedTuple

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

CUDA_ERRORS_DOC = "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html"
CUBLAS_DOC = "https://docs.nvidia.com/cuda/cublas/index.html#cublascreate"
FABRIC_MANAGER_DOC = "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html"


class CudaError(NamedTuple):
    name: str
    meaning: str
    actions: tuple[str, ...]


# What to do when a CUDA library cannot create its handle (cuBLAS, cuDNN): the GPU full, or a late-reported fault.
HANDLE_INIT_ACTIONS = (
    "The library creates its handle at its first call (cuBLAS' first matrix multiply, cuDNN's first convolution); "
    "both libraries' documentation reads this status from their create call as the CUDA runtime's initialisation "
    "failing, and in practice the GPU had no memory left for it: lower --gpu-memory-utilization, and look for "
    "another process on the GPU (`nvidia-smi`).",
    "An earlier kernel fault reported late surfaces here too (an embedding index past the vocabulary: a "
    "tokenizer that is not the model's): rerun with CUDA_LAUNCH_BLOCKING=1 to see the first failing kernel.",
)


ERRORS: dict[str, CudaError] = {
    "oom": CudaError(
        "cudaErrorMemoryAllocation",
        "memory allocated outside PyTorch's allocator did not fit: the GPU was full",
        (
            "What failed was not vLLM's own tensors but a library's memory beside them (cuBLAS' workspace, NCCL's "
            "buffers, an attention library's, the CUDA context of another process): lower --gpu-memory-utilization "
            "so more of the GPU stays outside vLLM's share.",
            "`nvidia-smi` on that GPU: another process holding memory (a second server, a notebook) takes it from "
            "vLLM's share; give each server its own GPU.",
        ),
    ),
    "cublas_init": CudaError(
        "CUBLAS_STATUS_NOT_INITIALIZED",
        "cuBLAS could not start on the GPU: the CUDA runtime under it failed, most often with the GPU already full",
        HANDLE_INIT_ACTIONS,
    ),
    "cudnn_init": CudaError(
        "CUDNN_STATUS_NOT_INITIALIZED",
        "cuDNN could not start on the GPU: the CUDA runtime under it failed (cuDNN's documentation for cudnnCreate), "
        "most often with the GPU already full",
        HANDLE_INIT_ACTIONS,
    ),
    "assert": CudaError(
        "cudaErrorAssert",
        "a kernel's own check failed (an index out of range, most often)",
        (
            "An index past its dimension (`srcIndex < srcSelectDimSize` is an embedding lookup): a token id at or "
            "above the model's vocabulary size, from a tokenizer that is not the model's (--tokenizer), or a "
            "client's token ids on a release that did not check them (0.32 refuses out-of-vocabulary prompt ids: "
            "vllm/renderers/base.py); rerun with CUDA_LAUNCH_BLOCKING=1 to see the kernel and the request.",
            "The process's CUDA context is unusable after it: the server must restart.",
        ),
    ),
    "launch_timeout": CudaError(
        "cudaErrorLaunchTimeout",
        "a kernel ran longer than the display's watchdog allows",
        (
            "The GPU also drives a display (an X server, or the Windows desktop under WSL), whose watchdog ends "
            "kernels that run for seconds: serve from a GPU without a display (`nvidia-smi`'s Disp.A Off), or "
            "stop the display server on it.",
        ),
    ),
    "busy": CudaError(
        "cudaErrorDevicesUnavailable",
        "the GPU is held by another process in exclusive mode, or its compute mode prohibits new processes",
        (
            "`nvidia-smi -q -d COMPUTE` shows the compute mode: Exclusive_Process admits one process (another server, "
            "or one of vLLM's own left from an earlier start, holds it), Prohibited none; stop the holder, or "
            "`sudo nvidia-smi -c DEFAULT` where the cluster's policy allows.",
        ),
    ),
    "invalid_device": CudaError(
        "cudaErrorInvalidDevice",
        "a GPU index the process cannot see",
        (
            "vLLM needs tensor-parallel-size × pipeline-parallel-size GPUs visible to it: CUDA_VISIBLE_DEVICES lists "
            "fewer, or the container or pod was given fewer (its nvidia.com/gpu limit); `nvidia-smi -L` inside it "
            "shows what it has.",
            "A device index named elsewhere (`torch.device('cuda:3')` in the calling code, a plugin's device index) "
            "past the visible ones reads the same.",
        ),
    ),
    "not_ready": CudaError(
        "cudaErrorSystemNotReady",
        "the system is not ready for CUDA work: a driver daemon it needs is not running",
        (
            "On an NVSwitch system (HGX and DGX A100, H100, H200: eight GPUs joined by NVSwitch) CUDA needs NVIDIA's "
            "Fabric Manager: `systemctl status nvidia-fabricmanager` must show it running, at the same version as "
            "the driver (`nvidia-smi`); start it, or install the fabric manager package of the driver's exact "
            "version, then restart the server.",
            "Its log (`journalctl -u nvidia-fabricmanager`) says why it stopped; `nvidia-smi -q | grep -i -A2 "
            "fabric` shows the GPUs' fabric state on drivers that report it.",
        ),
    ),
    "capture": CudaError(
        "cudaErrorStreamCaptureUnsupported",
        "an operation CUDA graph capture forbids ran while vLLM captured its graphs",
        (
            "Something synchronised, allocated or copied to the host inside the captured region: a custom op or "
            "plugin kernel that is not capture-safe. --enforce-eager confirms it (and serves without graphs); "
            "report it to the op's project.",
        ),
    ),
    "capture_other": CudaError(
        "cudaErrorStreamCapture*/cudaErrorCapturedEvent",
        "work outside the captured stream, or a query of one of its events, broke the CUDA graph vLLM was capturing",
        (
            "Another thread or stream touched the capture: PyTorch's NCCL watchdog querying a collective's event "
            "(its `Process group watchdog thread terminated with exception` line), a collective issued through "
            "torch.distributed rather than vLLM's own communicator, or a plugin's stream. --enforce-eager confirms "
            "it (and serves without graphs); a multi-GPU LoRA or custom-op setup is the usual place to look.",
        ),
    ),
    "peer_access": CudaError(
        "cudaErrorPeerAccessUnsupported",
        "CUDA refused peer-to-peer access between two of the GPUs: this host does not let them read each other's "
        "memory",
        (
            "vLLM's custom all-reduce and NCCL's P2P transport both use peer access between the tensor-parallel "
            "GPUs: check what the host allows with `nvidia-smi topo -p2p r` (consumer cards, many cloud VMs and "
            "PCIe hosts without NVLink allow none).",
            "Run without it: --disable-custom-all-reduce for vLLM's own kernel, and NCCL_P2P_DISABLE=1 for NCCL, "
            "which then copies through host memory; vLLM's troubleshooting guide also names NCCL_CUMEM_HOST_ENABLE=0 "
            "(or a newer driver) for this error on PCIe machines.",
        ),
    ),
    "os_call": CudaError(
        "cudaErrorOperatingSystem",
        "a call CUDA made to the operating system failed: most often pinning host memory or sharing memory between "
        "processes",
        (
            "Read the frame it surfaced in: a pinned-memory allocation (`pin_memory=True`, a pinned workspace or "
            "staging buffer) is the operating system refusing to lock host memory, as WSL does for large pinned "
            "buffers (vLLM itself turns pin_memory off when it detects WSL); IPC between processes (CUDA memory "
            "handles) is a container without a shared IPC namespace (`--ipc=host`).",
            "Where the frame does not say, rerun with CUDA_LAUNCH_BLOCKING=1 and paste the traceback with the host "
            "(WSL or Linux, container or not).",
        ),
    ),
    "invalid_config": CudaError(
        "cudaErrorInvalidConfiguration",
        "a kernel was launched with a grid, block or shared-memory size this GPU does not accept",
        (
            "The launching kernel library chose a configuration for this shape that the GPU refuses: its source "
            "file, when the error names one (`CUDA error (…/flashmla-src/csrc/…/mla_combine.cu:201)`), says which "
            "library; upgrade vLLM (it pins those libraries), or choose another attention backend or kernel for the "
            "model while it is fixed, and report the shape (batch, sequence lengths) that triggers it.",
        ),
    ),
}
_CAPTURE = ("capture", "capture_other")  # the errors --enforce-eager avoids: nothing is captured
_NO_PEER_KERNEL = "vLLM's own all-reduce kernel needs peer access between the GPUs; NCCL's does not"


def _check(facts: Facts) -> list[Finding]:
    events = [e for e in facts.events_of(LogEventKind.CUDA_RUNTIME_ERROR) if e.message in ERRORS]
    if not events:
        return []
    return [_finding(events[0], ERRORS[events[0].message or ""])]


def _finding(event: LogEvent, error: CudaError) -> Finding:
    changes = (
        [
            ConfigChange(
                flag="--enforce-eager",
                proposed="true",
                reason="no CUDA graphs are captured, so nothing runs inside a capture",
                cost="slower decode, most at small batches",
            )
        ]
        if event.message in _CAPTURE
        else [c.custom_all_reduce_off(_NO_PEER_KERNEL)]
        if event.message == "peer_access"
        else []
    )
    return RULE.finding(
        Severity.HIGH,
        f"CUDA failed ({error.name}): {error.meaning}",
        summary=f"CUDA's {error.name} (as torch, Triton or a kernel's own check reports it): {error.meaning}. "
        "CUDA's own meaning of the error decides where to look; the traceback's frame is only where the error "
        "surfaced.",
        evidence=[c.log_evidence(event, name="CUDA's error", value=error.name)],
        changes=changes,
        actions=_bound_action(event) + list(error.actions),
        confidence=0.6,
    )


def _bound_action(event: LogEvent) -> list[str]:
    """A Triton kernel's index check states the size of what it indexed: which of the model's tables has it."""
    if event.message != "assert" or event.index_bound is None:
        return []
    size = event.index_bound
    return [
        f"The kernel's check says the table it indexed has {size} entries: find which of the model's does "
        f"(max_position_embeddings, a speculative draft model's included, or vocab_size in config.json). A position "
        f"table of {size} is overrun by a prompt or --max-model-len beyond it (vllm#21986: a draft model's 2048 "
        f"under a longer target context), a vocabulary by token ids of another tokenizer."
    ]


RULE = Rule(
    code="OP-7.46",
    title="a CUDA runtime error, by what CUDA says it means",
    category=Category.RELIABILITY,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="torch's `CUDA error: <words>` (or `CUDA driver error: <words>`, a driver-API call's) for out of "
        "memory, device-side assert triggered, the launch timed out "
        "and was terminated, CUDA-capable device(s) is/are busy or unavailable, invalid device ordinal, operation not "
        "permitted when stream is capturing (and the rest of the capture family, 901-907, such as `operation not "
        "permitted on an event last recorded in a capturing stream`), system not yet initialized, peer access is not "
        "supported between these two devices, OS call failed or operation not supported on this OS, invalid "
        "configuration argument; ROCm's `HIP "
        "error: <words>` alike; cuBLAS' `CUBLAS_STATUS_ALLOC_FAILED` and "
        "`CUBLAS_STATUS_NOT_INITIALIZED`, cuDNN's `CUDNN_STATUS_NOT_INITIALIZED`; Triton's `Triton Error [CUDA]: out "
        "of memory`; the line a kernel prints when its own assertion fails before a device-side assert "
        "(`Indexing.cu:1289: indexSelectLargeIndex: block: [0,0,0], thread: [0,0,0] Assertion `srcIndex < "
        "srcSelectDimSize` failed.`, any kernel's file, block, thread and expression); PyTorch's `Search for "
        "`cudaErrorAssert' in https://docs.nvidia.com/…` after any of them, by the runtime's name for it.",
        why="Each CUDA error code says where to look (the CUDA Runtime API's cudaError enum); without it a person "
        "reads the traceback's frame, which is only where CUDA noticed.",
        example="`RuntimeError: CUDA error: invalid device ordinal` from a server started with "
        "--tensor-parallel-size 4 in a container given two GPUs.",
        fix="By error: a smaller --gpu-memory-utilization (cuBLAS failing to start, too); the tokenizer that matches "
        "the model; a GPU without a display; the compute mode; as many GPUs visible as TP × PP; --enforce-eager for "
        "a capture-unsafe op; the Fabric Manager running at the driver's version on an NVSwitch system.",
        limits="A kernel fault is HL-4's and torch's allocator running out OP-1.8's; the CUDA error's words alone "
        "do not say which request or kernel.",
        references=[CUDA_ERRORS_DOC, CUBLAS_DOC, FABRIC_MANAGER_DOC],
    ),
)

RULES: list[Rule] = [RULE]
