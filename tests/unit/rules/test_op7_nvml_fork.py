"""OP-7.220: NVML's Not Supported in vLLM's process (WSL's NVML and forked processes)."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# vllm PR #32749's excerpt of vllm#32559 (WSL, examples/offline_inference/basic/basic.py), verbatim
NVML_NOT_SUPPORTED = (
    "(EngineCore_DP0 pid=29657) ERROR 01-17 21:03:52 [core.py:935] vllm.third_party.pynvml.NVMLError_NotSupported: "
    "Not Supported"
)


def test_nvmls_not_supported_in_vllms_process_says_to_spawn():
    top = top_finding("(vllm) $ python examples/offline_inference/basic/basic.py", "...", NVML_NOT_SUPPORTED, "...")
    assert top.rule == "OP-7.220" and "WSL" in top.title
    assert "VLLM_WORKER_MULTIPROC_METHOD=spawn" in top.actions[0] and "vllm>=0.15.0" in top.actions[0]


def test_the_error_from_nvidia_ml_py_is_read_alike():
    # constructed: the same class under nvidia-ml-py's module name (vLLM before it vendored pynvml)
    top = top_finding("pynvml.nvml.NVMLError_NotSupported: Not Supported")
    assert top.rule == "OP-7.220"
