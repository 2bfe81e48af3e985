"""OP-7.74: vLLM's platform detection found no GPU platform, and its debug lines say which check failed and why.

Why a rule of its own: at start vLLM asks each platform plugin whether its device is there (vllm/platforms/
__init__.py, 0.7 on) and, at VLLM_LOGGING_LEVEL=DEBUG, logs every check that failed with its reason: `ROCm platform
is not available because: No module named 'amdsmi'`, `CUDA platform is not available because: NVML Shared Library
Not Found`. With no platform confirmed vLLM runs on UnspecifiedPlatform and fails later (`Failed to infer device
type`, VC-1). The reasons are what to fix: ROCm's check imports the amdsmi Python package, which ROCm ships at
/opt/rocm/share/amd_smi but a base image may not install (vLLM PR #11602's review: `cd /opt/rocm/share/amd_smi && pip
install .`; under WSL2 amdsmi sees no GPU, and vLLM PR #38434, merged 2026-03-28, falls back to torch there); CUDA's
calls NVML, which the NVIDIA driver provides and a container started without GPUs does not hold. A failed check is
normal for every platform the host does not have, so nothing is read when the text confirms one.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

GPU_PLATFORMS = ("CUDA", "ROCm")  # what vLLM's GPU builds run on; TPU, XPU, HPU and Neuron checks fail on most hosts


def _check_platform_detection(facts: Facts) -> list[Finding]:
    if any(e.component for e in facts.events_of(LogEventKind.PLATFORM_DETECTED)):
        return []  # a platform was confirmed: the other checks' failures are the host lacking those devices
    failed = {
        e.component: e for e in facts.events_of(LogEventKind.PLATFORM_UNAVAILABLE) if e.component in GPU_PLATFORMS
    }
    if not failed:
        verdict = facts.events_of(LogEventKind.PLATFORM_DETECTED)  # "No platform detected …" alone: no reasons
        return [_none_detected(verdict[0])] if verdict else []
    checks = "; ".join(f"{platform}: {event.message}" for platform, event in failed.items())
    return [
        RULE_PLATFORM.finding(
            Severity.HIGH,
            f"vLLM's platform detection found no GPU platform ({checks})",
            summary="vLLM asks each platform plugin whether its device is present; each check below failed, so "
            "vLLM runs on UnspecifiedPlatform and fails when it needs the device (`Failed to infer device type`). "
            "On a host with the GPU, the reason its vendor's check gives is what to fix.",
            evidence=[
                c.log_evidence(event, name=f"{platform} check", value=event.message)
                for platform, event in failed.items()
            ],
            actions=[_action(platform, event) for platform, event in failed.items()],
            confidence=0.75,
        )
    ]


def _none_detected(event: LogEvent) -> Finding:
    """vLLM's verdict without its checks' reasons (they are logged at DEBUG): no device was visible to the process.
    In a cluster most often the container runtime did not give it the GPUs (llm-d/llm-d-deployer#273: the pods did
    not run with the nvidia RuntimeClass, which was not the cluster's default)."""
    return RULE_PLATFORM.finding(
        Severity.HIGH,
        "vLLM detected no platform (UnspecifiedPlatform): no GPU is visible to the process",
        summary="vLLM's platform detection found no device it supports and runs on UnspecifiedPlatform, which fails "
        "at the first device call. The checks' own reasons are logged at DEBUG only. On a GPU host the process "
        "was not given the GPU: a container started without it (Docker without `--gpus`, a pod without the NVIDIA "
        "runtime class or an nvidia.com/gpu limit), a driver missing, or an image built for another device.",
        evidence=[c.log_evidence(event, name="platform verdict", value="UnspecifiedPlatform")],
        actions=[
            "Inside the container, `nvidia-smi` (or `rocm-smi`) must list the GPU. On Kubernetes, the pod needs an "
            "nvidia.com/gpu limit and, where the NVIDIA runtime is not the cluster's default, `runtimeClassName: "
            "nvidia`; with Docker, `--gpus all` and the NVIDIA Container Toolkit.",
            "Start once with VLLM_LOGGING_LEVEL=DEBUG: each platform's check then logs why it failed.",
        ],
        confidence=0.7,
    )


def _action(platform: str, event: LogEvent) -> str:
    reason = event.message or ""
    if platform == "ROCm" and "amdsmi" in reason:
        return (
            "On an AMD GPU host: vLLM finds ROCm through the amdsmi Python package, which ROCm ships but this "
            "environment has not installed: `pip install /opt/rocm/share/amd_smi` (or `cd /opt/rocm/share/amd_smi && "
            "pip install .`) with ROCm's own version; under WSL2 amdsmi sees no GPU, and a vLLM after PR #38434 "
            "(merged 2026-03-28) falls back to torch there."
        )
    if platform == "CUDA" and "NVML" in reason:
        return (
            "On an NVIDIA GPU host: NVML (libnvidia-ml.so, part of the driver) is not where vLLM runs: install the "
            "driver, or start the container with its GPUs (`docker run --gpus all` with the NVIDIA Container Toolkit, "
            "a pod with an nvidia.com/gpu limit); `nvidia-smi` inside it must work."
        )
    return f"On a {platform} host: fix what its check reports ({reason}), then start the server again."


RULE_PLATFORM = Rule(
    code="OP-7.74",
    title="vLLM detected no GPU platform: its failed checks' reasons",
    category=Category.STARTUP,
    check=_check_platform_detection,
    needs=("events",),
    page=RulePage(
        checks="vLLM's debug lines `CUDA platform is not available because: …` and `ROCm platform is not available "
        "because: …` when no line confirms a platform (`Confirmed … platform is available.`, `Automatically detected "
        "platform …`).",
        why="With no platform confirmed vLLM runs on UnspecifiedPlatform and fails at its first device call; the "
        "vendor's check says what is missing.",
        example="`DEBUG 09-10 18:43:10 [__init__.py:120] ROCm platform is not available because: No module named "
        "'amdsmi'` on ROCm 6.4.2 (vllm#24576).",
        fix="ROCm: install amdsmi from /opt/rocm/share/amd_smi; CUDA: the driver's NVML where vLLM runs (the "
        "container's GPUs).",
        limits="Which vendor's GPU the host has is not in these lines: every failed GPU check is listed with its own "
        "fix. TPU, XPU, HPU and Neuron checks are not read (they fail on every host without those devices).",
        references=[
            "https://github.com/vllm-project/vllm/issues/24576",
            "https://github.com/vllm-project/vllm/pull/11602",
            "https://github.com/vllm-project/vllm/pull/38434",
        ],
    ),
)

RULES: list[Rule] = [RULE_PLATFORM]
