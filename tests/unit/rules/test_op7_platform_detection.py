"""OP-7.74: vLLM's platform detection at DEBUG, its failed GPU checks read when no platform was confirmed (vllm#24576's
lines, verbatim; vllm#20069's confirmed ROCm)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_platform_detection
from rules.evaluate import evaluate
from rules.facts import Facts

ROCM = "DEBUG 09-10 18:43:10 [__init__.py:120] ROCm platform is not available because: No module named 'amdsmi'"
CUDA = "DEBUG 09-10 18:43:10 [__init__.py:99] CUDA platform is not available because: NVML Shared Library Not Found"
TPU = "DEBUG 09-10 18:43:10 [__init__.py:52] TPU platform is not available because: No module named 'libtpu'"
NONE = "INFO 09-10 18:43:10 [__init__.py:220] No platform detected, vLLM is running on UnspecifiedPlatform"


def _findings(*lines: str):
    return op7_platform_detection.RULE_PLATFORM.evaluate(Facts(events=parse_lines(list(lines)).events))


def test_rocms_missing_amdsmi_alone_is_the_package_to_install():
    top = evaluate(Facts(events=parse_lines([ROCM]).events)).findings[0]
    assert top.rule == "OP-7.74" and "ROCm: No module named 'amdsmi'" in top.title
    assert "pip install /opt/rocm/share/amd_smi" in top.actions[0]


def test_with_no_platform_detected_each_failed_gpu_check_gets_its_own_fix_and_tpus_is_not_read():
    [finding] = _findings(TPU, CUDA, ROCM, NONE)
    assert "CUDA: NVML Shared Library Not Found; ROCm: No module named 'amdsmi'" in finding.title
    assert "TPU" not in finding.title and len(finding.actions) == 2 and "--gpus all" in finding.actions[0]


def test_a_confirmed_platform_makes_the_other_checks_failures_normal():
    confirmed = "DEBUG 06-25 10:03:17 [__init__.py:106] Confirmed ROCm platform is available."
    assert _findings(CUDA, confirmed) == []
    assert _findings(CUDA, "INFO 06-25 10:03:17 [__init__.py:243] Automatically detected platform rocm.") == []


def test_no_platform_detected_alone_says_no_gpu_is_visible_and_how_to_give_it():
    # llm-d/llm-d-deployer#273, verbatim: the pods' only line; the nvidia RuntimeClass was not the default
    line = "INFO 05-20 20:12:25 [__init__.py:252] No platform detected, vLLM is running on UnspecifiedPlatform"
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.74" and "no GPU is visible" in top.title
    assert "runtimeClassName: nvidia" in top.actions[0]
