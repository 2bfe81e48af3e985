"""OP-7.32: the container cannot use its host: no GPU runtime, no GPU visible or no driver library, GPUs lost, another
CPU architecture.

Why a rule of its own: vLLM in a container reaches the GPUs only through the NVIDIA Container Toolkit, and each way
that fails has its own words, Docker's, PyTorch's, NVML's or the kernel's, never vLLM's. Docker without the
toolkit's runtime refuses `--gpus` with `could not select device driver "" with capabilities: [[gpu]]` (the toolkit
installed and `nvidia-ctk runtime configure --runtime=docker` fix it; NVIDIA/nvidia-docker#1034, #1591, and Docker
installed as a snap, #1642). A container started without GPUs (no `--gpus`, a pod with no nvidia.com/gpu limit, an
empty or wrong CUDA_VISIBLE_DEVICES) has PyTorch say `No CUDA GPUs are available` or `Found no NVIDIA driver on
your system`, and one started without the NVIDIA runtime lacks the driver's `libcuda.so.1`, which the toolkit
mounts from the host (the driver installs it; a CUDA toolkit holds only a stub to link against, and no pip wheel
has it). A running container whose host reloads systemd's units loses its GPU devices and NVML answers `Failed to
initialize NVML: Unknown Error` until the container is recreated (NVIDIA/nvidia-container-toolkit#48).
CUDA failing to initialise with `CUDA unknown error` (torch's warning, c10/cuda/CUDAFunctions.cpp) is the host's
kernel modules, in or out of a container: a driver upgraded without a reboot, nvidia_uvm lost after a suspend
(pytorch/pytorch#49081, #88639).
An image built for another CPU architecture (an x86-64 image on an Arm host such as GH200 or DGX Spark, or the other
way) fails at its first exec with `exec format error`.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# What each reason means, and what to do: (title, summary, actions).
_REASONS: dict[str, tuple[str, str, list[str]]] = {
    "docker_runtime": (
        "Docker has no GPU runtime: `--gpus` needs the NVIDIA Container Toolkit on the host",
        "Docker refused to start the container with GPUs because no runtime it knows provides them: the NVIDIA "
        "Container Toolkit is not installed, or Docker was not configured to use it (or is a snap install, which "
        "does not see it). vLLM never started.",
        [
            "Install the NVIDIA Container Toolkit on the host, run "
            "`sudo nvidia-ctk runtime configure --runtime=docker` and `sudo systemctl restart docker`; "
            "`docker run --rm --gpus all ubuntu nvidia-smi` must list the GPUs.",
            "A Docker installed as a snap does not use the toolkit: install Docker from its own packages.",
        ],
    ),
    "no_gpu_visible": (
        "the process sees no GPU: the container or pod was started without one, or CUDA_VISIBLE_DEVICES hides them",
        "PyTorch found no CUDA device (or no NVIDIA driver) inside the process, so vLLM cannot start its engine "
        "there. A container gets GPUs only when asked (`docker run --gpus all`, a pod's nvidia.com/gpu limit served "
        "by NVIDIA's device plugin); CUDA_VISIBLE_DEVICES set empty, or to an index the container does not have, "
        "hides them too.",
        [
            "Start the container with GPUs: `docker run --gpus all …` (compose: a device reservation with "
            "capabilities [gpu]); in Kubernetes an nvidia.com/gpu limit equal to tensor-parallel-size × "
            "pipeline-parallel-size, with NVIDIA's device plugin or GPU operator on the node.",
            "Check what the process sees: `nvidia-smi` and "
            "`python -c 'import torch; print(torch.cuda.device_count())'` inside the container, and "
            "`echo $CUDA_VISIBLE_DEVICES` (unset it, or list indexes the container has).",
        ],
    ),
    "no_driver_library": (
        "the NVIDIA driver's library libcuda.so.1 is not where the process runs: no GPU driver reaches it",
        "libcuda.so.1 belongs to the NVIDIA driver, not to CUDA's toolkit or to any pip package: on a host the "
        "driver installs it, and in a container the NVIDIA Container Toolkit mounts the host's copy only when the "
        "container is started with GPUs. Without it, nothing built on CUDA can load (vLLM's compiled ops, Triton, "
        "torch's CUDA calls).",
        [
            "In a container: start it with GPUs (`docker run --gpus all …`, or `--runtime=nvidia`; a pod with an "
            "nvidia.com/gpu limit on a node with NVIDIA's device plugin or GPU operator); `ldconfig -p | grep "
            "libcuda` inside it must list the library.",
            "On the host: install the NVIDIA driver (`nvidia-smi` must work there first); a CUDA toolkit (its "
            "lib64/stubs copy is for linking only) or pip's nvidia-* wheels do not provide libcuda.so.1.",
        ],
    ),
    "nvml_lost": (
        "the container lost its GPUs while running (NVML: Unknown Error): recreate it",
        "NVML cannot reach the GPUs from inside a container that could at its start: on hosts where systemd manages "
        "the containers' cgroups, a `systemctl daemon-reload` (a package update runs one) drops the GPU device rules "
        "the container was given. The GPUs are fine on the host; this container cannot use them again.",
        [
            "Delete and recreate the container (a pod: delete it); a restart inside it is not enough.",
            "Prevent it on the host as NVIDIA's notice describes: the /dev/char symlinks for the NVIDIA devices "
            "(`sudo nvidia-ctk system create-dev-char-symlinks --create-all`), or the toolkit's CDI mode.",
        ],
    ),
    "cuda_unknown": (
        "CUDA could not start on the host's GPUs: the NVIDIA kernel modules are not in a usable state",
        "CUDA's runtime failed to initialise (an unknown error, or the driver's initialisation failing), so PyTorch "
        "counts no GPU (its words: 'Setting the available devices to be zero'); vLLM chose its CUDA platform through "
        "NVML, which still sees the GPUs, and fails later. The hint in the words (CUDA_VISIBLE_DEVICES changed after "
        "start) is a guess; in PyTorch's "
        "threads the host was the cause: a driver upgraded without a reboot, the nvidia_uvm module lost after a "
        "suspend, no /dev/nvidia-uvm device.",
        [
            "On the host: after a driver upgrade, reboot (pytorch/pytorch#49081: the reporter's reboot fixed it); "
            "`nvidia-smi` and `python -c 'import torch; print(torch.cuda.device_count())'` must agree on the GPUs.",
            "After a suspend and resume, reload the unified-memory module: `sudo modprobe -r nvidia_uvm && sudo "
            "modprobe nvidia_uvm`; `ls /dev/nvidia-uvm*` must list its devices (`sudo nvidia-modprobe -c 0 -u` "
            "creates them).",
            "In a container the host's state is the cause: fix it there, then recreate the container.",
        ],
    ),
    "exec_format": (
        "the image is built for another CPU architecture than the host's (exec format error)",
        "The kernel could not run the image's first program: its binaries are for another architecture (an x86-64 "
        "image on an Arm host such as GH200 or DGX Spark, or an arm64 image on x86-64).",
        [
            "Use the image built for the host's architecture (`uname -m` on the host; `docker manifest inspect IMAGE` "
            "lists the platforms an image has; `--platform linux/arm64` or `linux/amd64` picks one), or build vLLM's "
            "image on the host.",
        ],
    ),
}


def _check(facts: Facts) -> list[Finding]:
    events = [e for e in facts.events_of(LogEventKind.CONTAINER_HOST_MISMATCH) if e.component in _REASONS]
    return [_finding(events[0])] if events else []


def _finding(event: LogEvent) -> Finding:
    title, summary, actions = _REASONS[event.component or ""]
    return RULE.finding(
        Severity.CRITICAL,
        title,
        summary=summary,
        evidence=[c.log_evidence(event, name="the host refused", value=event.message)],
        actions=actions,
        confidence=0.85,
    )


RULE = Rule(
    code="OP-7.32",
    title="the container cannot use its host's GPUs or architecture",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="Docker's `could not select device driver \"\" with capabilities: [[gpu]]`, PyTorch's `No CUDA GPUs "
        "are available` / `Found no NVIDIA driver on your system`, the loader's `libcuda.so.1: cannot open shared "
        "object file`, `Failed to initialize NVML: Unknown Error`, torch's `CUDA unknown error - this may be due to an "
        "incorrectly set up environment` and `CUDA driver initialization failed`, CUDA's `no CUDA-capable device is "
        "detected`, `exec format error`.",
        why="Each leaves vLLM unable to start, in words that are not vLLM's, and each is fixed on the host or in "
        "how the container is started, never by a vLLM flag.",
        example="`docker run --gpus all vllm/vllm-openai …` on a host without the NVIDIA Container Toolkit.",
        fix="The NVIDIA Container Toolkit configured for Docker; the container started with GPUs; a recreated "
        "container after NVML lost them; a reboot after a driver upgrade, or nvidia_uvm reloaded after a suspend; the "
        "image of the host's architecture.",
        limits="Tells the six apart by their words only; a GPU that is present but broken is HL-1's and OP-7's "
        "CUDA rules' to name.",
        references=[
            "https://github.com/NVIDIA/nvidia-docker/issues/1034",
            "https://github.com/NVIDIA/nvidia-container-toolkit/issues/48",
            "https://github.com/pytorch/pytorch/issues/49081",
            "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html",
        ],
    ),
)

RULES: list[Rule] = [RULE]
