"""OP-7.32: the container cannot use its host: no GPU runtime, no GPU visible or no driver library, GPUs lost, no driver
loaded, a GPU the host lacks, another CPU architecture.

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
The toolkit's own hook (nvidia-container-cli, libnvidia-container) speaks before the container exists: `nvml error:
driver not loaded` is a host whose NVIDIA kernel module is not running (nvidia-smi there says it `couldn't
communicate with the NVIDIA driver`; a kernel upgraded without the module built for it, most often,
NVIDIA/nvidia-docker#1393), `load library failed: libnvidia-ml.so.1` a host without a driver the daemon can see,
`device error: <id>: unknown device` a GPU index or UUID the host does not have. On Kubernetes, containerd's `no
runtime for "nvidia" is configured` is a node whose container runtime the toolkit never configured.
Docker asked for `--runtime=nvidia` (or a compose file's `runtime: nvidia`) without the toolkit registered in its
daemon.json answers `unknown or invalid runtime name: nvidia` (NVIDIA/nvidia-container-toolkit#150; a rootless daemon
reads its own daemon.json). nvidia-smi's `No devices were found` is a driver loaded that brought up no GPU: the kernel
log's `RmInitAdapter failed` names the GPU it could not initialise (NVIDIA/open-gpu-kernel-modules#789, #862: GSP
firmware, a GPU newer than the driver, a workstation BIOS without Above 4G Decoding and Resizable BAR), and a
container after its host rebooted can see none until the host has created the device files
(NVIDIA/nvidia-container-toolkit#32).
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
    "docker_no_nvidia_runtime": (
        'Docker has no runtime named "nvidia": `--runtime=nvidia` needs the NVIDIA Container Toolkit registered in '
        "the daemon's configuration",
        "The container asks for the runtime nvidia (`docker run --runtime=nvidia`, a compose service's `runtime: "
        "nvidia`, or daemon.json's default-runtime) and the Docker daemon that answered has none of that name: the "
        "NVIDIA Container Toolkit is not installed, was never registered with this daemon, or the daemon was not "
        "restarted since; a rootless Docker reads its own daemon.json (~/.config/docker), not /etc/docker's. vLLM "
        "never started.",
        [
            "Install the NVIDIA Container Toolkit on the host, then `sudo nvidia-ctk runtime configure "
            "--runtime=docker` (it adds the nvidia runtime to /etc/docker/daemon.json) and `sudo systemctl restart "
            "docker`; `docker info | grep -i runtimes` must list nvidia. For a rootless daemon: `nvidia-ctk runtime "
            "configure --runtime=docker --config=$HOME/.config/docker/daemon.json` and `systemctl --user restart "
            "docker`.",
            "Or drop `--runtime=nvidia` and ask for GPUs with `--gpus all` (compose: a device reservation with "
            "capabilities [gpu]), which current Docker serves through the toolkit without a named runtime.",
        ],
    ),
    "no_devices": (
        "the NVIDIA driver is loaded but initialised no GPU (nvidia-smi: No devices were found)",
        "The driver's kernel module runs, and NVML counts no GPU it could bring up, so nothing on this host (or in "
        "its containers) can use one. The kernel log names the GPU and why: `RmInitAdapter failed` is the driver "
        "failing to initialise it (its GSP firmware not booting, a GPU newer than the driver knows, on workstation "
        "boards a BIOS without Above 4G Decoding and Resizable BAR), an Xid 79 a GPU that fell off the bus. Inside a "
        "container after the host rebooted, the host may not have created the GPUs' device files yet.",
        [
            "On the host: `sudo dmesg | grep -i -E 'NVRM|xid'` says which GPU failed and how; `lspci | grep -i "
            "nvidia` whether the host still sees it at all.",
            "RmInitAdapter failed: install a driver release that supports the GPU (a new GPU needs a new driver), "
            "check the BIOS settings above on a workstation, then reboot; a GPU that fell off the bus needs a reset "
            "(`nvidia-smi -r`) or a reboot, and its vendor if it happens again.",
            "In a container after a host reboot: run `nvidia-smi` on the host once (or enable nvidia-persistenced) "
            "and recreate the container.",
        ],
    ),
    "no_gpu_visible": (
        "the process sees no GPU: the container or pod was started without one, or CUDA_VISIBLE_DEVICES hides them",
        "PyTorch found no CUDA device (or no NVIDIA driver) inside the process, so vLLM cannot start its engine "
        "there. A container gets GPUs only when asked (`docker run --gpus all`, a pod's nvidia.com/gpu limit served "
        "by NVIDIA's device plugin); CUDA_VISIBLE_DEVICES set empty, or to an index the container does not have, "
        "hides them too, and Ray sets it empty for an actor or task that asked for no GPU (num_gpus=0).",
        [
            "Start the container with GPUs: `docker run --gpus all …` (compose: a device reservation with "
            "capabilities [gpu]); in Kubernetes an nvidia.com/gpu limit equal to tensor-parallel-size × "
            "pipeline-parallel-size, with NVIDIA's device plugin or GPU operator on the node.",
            "Check what the process sees: `nvidia-smi` and "
            "`python -c 'import torch; print(torch.cuda.device_count())'` inside the container, and "
            "`echo $CUDA_VISIBLE_DEVICES` (unset it, or list indexes the container has).",
        ],
    ),
    "no_hip_gpu_visible": (
        "the process sees no AMD GPU: the container was started without /dev/kfd and /dev/dri, or a visibility "
        "variable hides them",
        "PyTorch built for ROCm found no HIP device inside the process (torch's `No HIP GPUs are available`), so vLLM "
        "cannot start its engine there. ROCm reaches a GPU through the kernel driver's /dev/kfd and the GPU's "
        "/dev/dri render node: a container gets them only when passed (`--device`, or the amd.com/gpu resource "
        "served by AMD's device plugin), a user outside the video and render groups cannot open them, and "
        "HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES set empty, or to an index the host does "
        "not have, hide them.",
        [
            "Start the container with the GPUs' devices: `docker run --device=/dev/kfd --device=/dev/dri "
            "--group-add video --group-add render …` (ROCm's Docker guide; `--gpus all` is NVIDIA's and passes "
            "nothing here); in Kubernetes an amd.com/gpu limit equal to tensor-parallel-size × "
            "pipeline-parallel-size, with AMD's GPU device plugin or GPU operator on the node.",
            "Check what the process sees: `rocm-smi` (or `amd-smi list`) and "
            "`python -c 'import torch; print(torch.version.hip, torch.cuda.device_count())'` inside the container, "
            "`ls -l /dev/kfd /dev/dri` and `id` (the user must be in the groups that own them), and unset "
            "HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES or list indexes the host has.",
        ],
    ),
    "no_xpu_gpu_visible": (
        "the process sees no Intel GPU: PyTorch's XPU build counted zero devices",
        "PyTorch built for Intel GPUs found no XPU device (torch's `XPU device count is zero!`), so vLLM finds no "
        "platform (`Failed to infer device type` follows). Intel's GPUs are reached through the kernel's /dev/dri "
        "render nodes and the SYCL runtime's Level Zero adapter: a container gets the nodes only when passed, a user "
        "outside the render group cannot open them, and a SYCL runtime whose libraries are not on the loader's path "
        "enumerates nothing (vllm#48625: vLLM's docker/Dockerfile.xpu at 0.25.1 left /opt/venv/lib, where the "
        "intel-sycl-rt and Unified Runtime adapter libraries live, off LD_LIBRARY_PATH).",
        [
            "Start the container with the GPUs' render nodes: `docker run --device /dev/dri --group-add render …` "
            "(in Kubernetes, Intel's GPU device plugin's gpu.intel.com/i915 or xe resource).",
            "Check what the process sees: `sycl-ls` (or `python -c 'import torch; print(torch.xpu.device_count())'`) "
            "inside it, `ls -l /dev/dri` and `id`; when the devices are there and SYCL lists none, put the SYCL "
            "runtime's libraries on the loader's path (`export LD_LIBRARY_PATH=/opt/venv/lib:$LD_LIBRARY_PATH` in "
            "vllm#48625's image) and unset ONEAPI_DEVICE_SELECTOR / ZE_AFFINITY_MASK if they hide the GPUs.",
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
    "driver_not_loaded": (
        "the host's NVIDIA kernel module is not loaded: no process or container there can use its GPUs",
        "The NVIDIA driver's kernel module is not running on the host, so NVML (which nvidia-smi and the NVIDIA "
        "Container Toolkit's hook both ask first) cannot reach any GPU, and no container with GPUs starts. In the "
        "reports behind this reading the host had booted a new kernel for which no NVIDIA module was built or "
        "installed (an unattended kernel upgrade, DKMS failing to build it); a driver installed without a reboot, and "
        "Secure Boot refusing an unsigned module, leave it unloaded the same way.",
        [
            "On the host: `nvidia-smi` must list the GPUs; `lsmod | grep nvidia` shows whether the module is loaded "
            "and `sudo modprobe nvidia` (then `dmesg | grep -i nvidia`) says why it will not load.",
            "After a kernel upgrade, install the NVIDIA module for the running kernel (`uname -r`: `sudo dkms "
            "autoinstall`, or the distribution's prebuilt module package for that kernel) or boot the previous "
            "kernel; with Secure Boot on, the module must be signed with an enrolled key (MOK).",
            "In Kubernetes, cordon the node (`kubectl cordon <node>`) until `nvidia-smi` works there again, so the "
            "server is scheduled elsewhere.",
        ],
    ),
    "no_nvml_library": (
        "the NVIDIA Container Toolkit cannot load the host's driver library (libnvidia-ml.so.1): no driver the "
        "container runtime can see",
        "Before the container starts, the toolkit's hook (nvidia-container-cli) loads NVML, which the NVIDIA driver "
        "installs on the host, to set up the container's GPUs. It found none: the host has no NVIDIA driver "
        "installed, or the Docker daemon runs where the host's libraries are out of its sight (a Docker installed as "
        "a snap, which runs confined). vLLM never started.",
        [
            "On the host: install the NVIDIA driver; `nvidia-smi` must work and `ldconfig -p | grep libnvidia-ml` must "
            "list the library before any container can have GPUs.",
            "If the driver works on the host, check which Docker daemon answers (`docker info`, `snap list`): a snap "
            "install cannot reach the host's driver libraries; install Docker from its own packages.",
        ],
    ),
    "unknown_device": (
        "the container asks for GPU {device}, which the host's driver does not list",
        "The container runtime was told to give the container a GPU by index or UUID (`--gpus '\"device=…\"'`, "
        "NVIDIA_VISIBLE_DEVICES, a compose device reservation's device_ids) that the host's NVIDIA driver does not "
        "have: a host with fewer GPUs than the configuration names, a UUID copied from another machine, or a GPU "
        "that has dropped out since (the kernel log shows an Xid for it). vLLM never started.",
        [
            "On the host, `nvidia-smi -L` lists the GPUs' indexes and UUIDs: ask for those (or `--gpus all`, or a "
            "count), and keep tensor-parallel-size × pipeline-parallel-size within what the container gets.",
            "If a GPU that was listed before is missing now, read the host's kernel log (`sudo dmesg | grep -i xid`): "
            "a GPU that fell off the bus needs a reset or a reboot of the host.",
        ],
    ),
    "no_nvidia_runtime": (
        'the node\'s container runtime has no "nvidia" runtime: the NVIDIA Container Toolkit is not configured for '
        "the containerd the kubelet uses",
        "The pod asks for the RuntimeClass nvidia (its runtimeClassName; NVIDIA's GPU operator sets it), and the "
        "node's containerd (or CRI-O) has no handler of that name, so the pod's sandbox is never created and vLLM "
        "never runs. The toolkit is not installed on the node, configured another containerd than the one the "
        "kubelet talks to (k3s, k0s and MicroK8s run their own, with their own configuration), or the runtime was "
        "not restarted after it was configured.",
        [
            "On the node: `sudo nvidia-ctk runtime configure --runtime=containerd` (pointed at the distribution's own "
            "containerd configuration where it has one), then restart containerd (or the distribution's service); "
            "`kubectl get runtimeclass nvidia -o yaml` names the handler the pod asks for.",
            "With NVIDIA's GPU operator, read its toolkit's log: `kubectl logs -n gpu-operator "
            "ds/nvidia-container-toolkit-daemonset`; it must configure and restart the node's containerd.",
        ],
    ),
    "cdi_unresolvable": (
        "the container runtime has no CDI specification for the GPU {device} it was asked to inject: the container "
        "never started",
        "With the Container Device Interface (the NVIDIA toolkit's CDI mode, or NVIDIA's GPU operator handing "
        "devices to the kubelet by CDI names such as nvidia.com/gpu=0), the runtime injects each GPU from a "
        "specification file in /etc/cdi or /var/run/cdi. No file there names this device (kind and vendor "
        "included: management.nvidia.com/gpu is not nvidia.com/gpu), so the runtime refused to create the "
        "container (gpustack/gpustack#4130: the fix was generating the specification of that vendor).",
        [
            "On the node, generate the specification for the names asked: `sudo nvidia-ctk cdi generate --output "
            "/var/run/cdi/nvidia.yaml` for nvidia.com/gpu, with `--vendor management.nvidia.com --output "
            "/var/run/cdi/management.nvidia.com-gpu.yaml` for management.nvidia.com/gpu; `nvidia-ctk cdi list` shows "
            "the names that resolve. Then recreate the pod or container.",
            "Regenerate it after a driver upgrade (the specification names the driver's files); with the GPU "
            "operator, its toolkit daemonset does this: read its log if the file is missing.",
        ],
    ),
    "exec_format": (
        "the image is built for another CPU architecture than the host's (exec format error)",
        "The kernel could not run the image's first program: its binaries are for another architecture (an x86-64 "
        "image on an Arm host such as GH200 or DGX Spark, or an arm64 image on x86-64).",
        [
            "Use the image built for the host's architecture (`uname -m` on the host; `docker manifest inspect IMAGE` "
            "lists the platforms an image has; `--platform linux/arm64` or `linux/amd64` picks one), or build vLLM's "
            "image on the host. vLLM's arm64 CPU images are published in a repository of their own (vllm#30076).",
        ],
    ),
}


def _check(facts: Facts) -> list[Finding]:
    mismatches = facts.events_of(LogEventKind.CONTAINER_HOST_MISMATCH)
    events = [e for e in mismatches if e.component in _REASONS]
    platforms = next((e.device for e in mismatches if e.component == "platform_warning"), None)
    return [_finding(events[0], platforms)] if events else []


def _finding(event: LogEvent, platforms: str | None = None) -> Finding:
    title, summary, actions = _REASONS[event.component or ""]
    if event.component == "no_devices" and event.device:  # the kernel's words name the GPU that failed
        title = "the NVIDIA driver could not initialise GPU {device} (RmInitAdapter failed): nothing can use it"
    if event.component == "exec_format" and platforms:  # the engine's warning named both architectures
        title = title.replace(" (exec format error)", f" (the image is {platforms}; exec format error)")
    return RULE.finding(
        Severity.CRITICAL,
        title.format(device=event.device or "?"),
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
        "are available` / `Found no NVIDIA driver on your system` (and its ROCm build's `No HIP GPUs are available`, "
        "answered with ROCm's devices; its XPU build's `XPU device count is zero!`, with Intel's), the loader's "
        "`libcuda.so.1: cannot open shared "
        "object file`, `Failed to initialize NVML: Unknown Error`, torch's `CUDA unknown error - this may be due to an "
        "incorrectly set up environment` and `CUDA driver initialization failed`, CUDA's `no CUDA-capable device is "
        "detected`, `exec format error`; the NVIDIA Container Toolkit's `nvidia-container-cli: initialization "
        "error: nvml error: driver not loaded`, `load library failed: libnvidia-ml.so.1`, `device error: <id>: "
        "unknown device`, nvidia-smi's `couldn't communicate with the NVIDIA driver` and `No devices were found` (with "
        "the kernel's `RmInitAdapter failed`), containerd's `no runtime for \"nvidia\" is configured`, and Docker's "
        "`unknown or invalid runtime name: nvidia` (`Unknown runtime specified nvidia` in old releases).",
        why="Each leaves vLLM unable to start, in words that are not vLLM's, and each is fixed on the host or in "
        "how the container is started, never by a vLLM flag.",
        example="`docker run --gpus all vllm/vllm-openai …` on a host without the NVIDIA Container Toolkit.",
        fix="The NVIDIA Container Toolkit configured for Docker; the container started with GPUs; a recreated "
        "container after NVML lost them; a reboot after a driver upgrade, or nvidia_uvm reloaded after a suspend; the "
        "NVIDIA module built for the running kernel; a driver the container runtime can see; GPU ids the host has; the "
        "toolkit configured for the node's containerd, or registered in Docker's daemon.json for `--runtime=nvidia`; "
        "a driver that supports the GPU, or a reset, for one the driver could not bring up; "
        "the image of the host's architecture.",
        limits="Tells the twelve apart by their words only; a GPU that is present but broken is HL-1's and OP-7's "
        "CUDA rules' to name.",
        references=[
            "https://github.com/NVIDIA/nvidia-docker/issues/1034",
            "https://github.com/NVIDIA/nvidia-container-toolkit/issues/48",
            "https://github.com/NVIDIA/nvidia-docker/issues/1393",
            "https://github.com/NVIDIA/nvidia-container-toolkit/issues/150",
            "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/789",
            "https://github.com/pytorch/pytorch/issues/49081",
            "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html",
        ],
    ),
)

RULES: list[Rule] = [RULE]
