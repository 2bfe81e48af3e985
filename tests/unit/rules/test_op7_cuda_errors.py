"""OP-7.46: CUDA's runtime errors by what CUDA's documentation says each means; kernel faults stay HL-4's."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.catalog.op7_cuda_errors import RULE
from rules.evaluate import evaluate
from rules.facts import Facts

ASYNC = "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be"


def _findings(*lines: str):
    return RULE.evaluate(Facts(events=parse_lines(list(lines)).events))


@pytest.mark.parametrize(
    ("line", "name", "action"),
    [
        ("RuntimeError: CUDA error: out of memory", "cudaErrorMemoryAllocation", "--gpu-memory-utilization"),
        (
            "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
            "cudaErrorMemoryAllocation",
            "cuBLAS' workspace",
        ),
        (
            "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
            "CUBLAS_STATUS_NOT_INITIALIZED",
            "no memory left",
        ),
        ("RuntimeError: Triton Error [CUDA]: out of memory", "cudaErrorMemoryAllocation", "--gpu-memory-utilization"),
        ("RuntimeError: CUDA error: device-side assert triggered", "cudaErrorAssert", "CUDA_LAUNCH_BLOCKING=1"),
        ("RuntimeError: CUDA error: system not yet initialized", "cudaErrorSystemNotReady", "nvidia-fabricmanager"),
        ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED", "CUDNN_STATUS_NOT_INITIALIZED", "no memory left"),
        (
            "../aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [0,0,0], thread: [0,0,0] "
            "Assertion `srcIndex < srcSelectDimSize` failed.",
            "cudaErrorAssert",
            "embedding lookup",
        ),
        (  # any kernel's assertion line as CUDA prints it (file.cu:line: function: block, thread, the expression)
            "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:93: operator(): block: [12,0,0], thread: [64,0,0] "
            'Assertion `-sizes[i] <= index && index < sizes[i] && "index out of bounds"` failed.',
            "cudaErrorAssert",
            "CUDA_LAUNCH_BLOCKING=1",
        ),
        ("RuntimeError: CUDA error: the launch timed out and was terminated", "cudaErrorLaunchTimeout", "display"),
        (
            "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable",
            "cudaErrorDevicesUnavailable",
            "nvidia-smi -q -d COMPUTE",
        ),
        ("RuntimeError: CUDA error: invalid device ordinal", "cudaErrorInvalidDevice", "CUDA_VISIBLE_DEVICES"),
        # PyTorch's words for the driver API's error of the same number (c10/cuda/driver_api.h)
        ("RuntimeError: CUDA driver error: invalid device ordinal", "cudaErrorInvalidDevice", "CUDA_VISIBLE_DEVICES"),
        (
            "RuntimeError: CUDA error: operation not permitted when stream is capturing",
            "cudaErrorStreamCaptureUnsupported",
            "--enforce-eager",
        ),
    ],
)
def test_each_cuda_error_is_named_with_where_to_look(line, name, action):
    [finding] = _findings(line, ASYNC)
    assert finding.title.startswith(f"CUDA failed ({name})")
    assert action in finding.actions[0]


def test_a_capture_error_proposes_eager_mode_and_a_kernel_fault_stays_hl4s():
    [finding] = _findings("RuntimeError: CUDA error: operation not permitted when stream is capturing")
    assert [change.flag for change in finding.changes] == ["--enforce-eager"]
    fault = "torch.AcceleratorError: CUDA error: unspecified launch failure"
    assert _findings(fault) == []
    assert evaluate(Facts(events=parse_lines([fault]).events)).findings[0].rule == "HL-4"


def test_tritons_words_for_a_cuda_error_are_read_as_cudas():
    # vllm PR #36634: MTP speculative decoding at graph capture on 0.17.1-rc; Triton's launcher words the driver's error
    [finding] = _findings(
        "(EngineCore_DP0 pid=1418231) ERROR 03-10 14:43:46 [core.py:1100] RuntimeError: Triton Error [CUDA]: "
        "operation not permitted when stream is capturing"
    )
    assert finding.title.startswith("CUDA failed (cudaErrorStreamCaptureUnsupported)")
    assert [change.flag for change in finding.changes] == ["--enforce-eager"]


def test_the_rest_of_the_capture_family_is_a_broken_capture_and_eager_mode_avoids_it():
    # vllm#41622, verbatim (ROCm, LoRA over several GPUs, at graph capture): PyTorch's NCCL watchdog queried an event
    # recorded in the capturing stream (cudaErrorCapturedEvent; HIP's hipErrorCapturedEvent has the same words)
    watchdog = (
        "[rank4]:[E504 03:41:43.749268130 ProcessGroupNCCL.cpp:2119] [PG ID 2 PG GUID 3 Rank 4] Process group watchdog "
        "thread terminated with exception: CUDA error: operation not permitted on an event last recorded in a "
        "capturing stream"
    )
    for line in (watchdog, "RuntimeError: HIP error: operation failed due to a previous error during capture"):
        [finding] = _findings(line)
        assert finding.title.startswith("CUDA failed (cudaErrorStreamCapture*/cudaErrorCapturedEvent)")
        assert [change.flag for change in finding.changes] == ["--enforce-eager"]
        assert "watchdog" in finding.actions[0]


def test_triton_reporting_a_kernel_fault_is_the_same_fault():
    # Triton's launcher words a CUDA driver error as "Triton Error [CUDA]: " and cuGetErrorString's text
    line = "(EngineCore_DP0 pid=1234) RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered"
    assert _findings(line) == []
    [top, *_] = evaluate(Facts(events=parse_lines([line]).events)).findings
    assert top.rule == "HL-4" and top.title.startswith(
        "a CUDA kernel faulted (an illegal memory access was encountered)"
    )


def test_peer_access_refused_turns_vllms_own_all_reduce_off():
    # ai-dynamo/dynamo#1229: a Dynamo vLLM worker (vllm 0.8.4, tensor parallel) in its Rust logger's words
    line = (
        "2025-05-28T03:35:37.857Z ERROR engine.run_mp_engine: CUDA error: peer access is not supported between "
        "these two devices"
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert (top.rule, top.title.split(":")[0]) == ("OP-7.46", "CUDA failed (cudaErrorPeerAccessUnsupported)")
    assert top.changes[0].flag == "--disable-custom-all-reduce" and "NCCL_P2P_DISABLE=1" in top.actions[1]


@pytest.mark.parametrize(
    ("line", "name", "words"),
    [
        # vllm#43473: FlashInfer's pinned workspace buffer, two image requests at once
        (
            "torch.AcceleratorError: CUDA error: OS call failed or operation not supported on this OS",
            "cudaErrorOperatingSystem",
            "pin_memory",
        ),
        # vllm#27043: FlashMLA's combine kernel under DP 8 + EP on B200, its own check naming its file
        (
            "CUDA error (/home/wentao/vllm-source/cmake-build-release/_deps/flashmla-src/csrc/smxx/mla_combine.cu:"
            "201): invalid configuration argument",
            "cudaErrorInvalidConfiguration",
            "source file",
        ),
    ],
)
def test_an_os_call_and_a_launch_configuration_are_read_by_cudas_meaning(line: str, name: str, words: str):
    [finding] = _findings(line)
    assert finding.title.startswith(f"CUDA failed ({name})") and words in finding.actions[0]


def test_a_triton_kernels_index_check_names_the_size_of_the_table_it_overran():
    # vllm#21986, verbatim: torch.compile's Triton kernel under EAGLE, a draft model of 2048 positions
    line = (
        "/root/.cache/vllm/torch_compile_cache/6a2e0f978f/rank_0_0/inductor_cache/bm/"
        "cbmyyoelcvytx6fwgno32vdhljvglspjh6ltrcpur2q44wg6a42j.py:37: unknown: block: [9,0,0], thread: [81,0,0] "
        "Assertion `index out of bounds: 0 <= tl.broadcast_to(tmp10, [XBLOCK]) < 2048` failed."
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.46" and "cudaErrorAssert" in top.title
    assert "2048 entries" in top.actions[0] and "max_position_embeddings" in top.actions[0]


def test_nccls_own_cuda_check_inside_graph_capture_is_the_capture_failure():
    # vllm#4432, verbatim: NCCL's all-reduce inside vLLM's CUDA-graph capture, with NCCL's host:pid prefix
    line = (
        "ts-1580615599d3449d98cf56a265c10977-worker-6:56890:56890 [0] enqueue.cc:267 NCCL WARN Cuda failure "
        "'dependency created on uncaptured work in another stream'"
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.46" and "broke the CUDA graph vLLM was capturing" in top.title
    assert top.changes[0].flag == "--enforce-eager"


def test_pytorchs_search_for_line_names_the_error_by_its_runtime_code():
    # vllm#31709, verbatim: the only whole line of a device-side assert its reporter's log kept
    line = (
        "^[[1;36m(EngineCore_DP0 pid=43065)^[[0;0m ERROR 01-04 04:31:09 [core.py:844] Search for `cudaErrorAssert' in "
        "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.^M"
    )
    top = _findings(line)[0]
    assert top.rule == "OP-7.46" and "(cudaErrorAssert)" in top.title
    launch = "Search for `cudaErrorLaunchTimeout' in https://docs.nvidia.com/cuda/cuda-runtime-api/index.html for more"
    assert "(cudaErrorLaunchTimeout)" in _findings(launch)[0].title
    unknown = "Search for `cudaErrorNotPermitted' in https://docs.nvidia.com/cuda/cuda-runtime-api/index.html for more"
    assert not RULE.evaluate(Facts(events=parse_lines([unknown]).events))


def test_a_cuda_error_named_by_its_code_in_a_persons_summary_is_that_error():
    # xencon/aixcl#681, verbatim: CUDA graph capture failing under WSL2; the linked fix added --enforce-eager
    line = "- **Primary Error**: `cudaErrorStreamCaptureUnsupported` - operation not permitted when stream is capturing"
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "OP-7.46" and "(cudaErrorStreamCaptureUnsupported)" in top.title
    assert [(c.flag, c.proposed) for c in top.changes] == [("--enforce-eager", "true")]
    # the name inside another word, in code, or mentioned in a sentence is not the error
    for mention in (
        "see no_cudaErrorAssertX here",
        "if (err == cudaErrorMemoryAllocation) { fallback(); }",
        "The fix handles cudaErrorMemoryAllocation gracefully by retrying",
    ):
        assert _findings(mention) == [], mention
