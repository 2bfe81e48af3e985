"""OP-7.32: a container that cannot use its host, in Docker's, PyTorch's, NVML's and the kernel's words."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.evaluate import evaluate
from rules.facts import Facts

NO_GPU = "the process sees no GPU: the container or pod was started without one, or CUDA_VISIBLE_DEVICES hides them"


@pytest.mark.parametrize(
    ("line", "title", "first_action"),
    [
        (
            'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',
            "Docker has no GPU runtime: `--gpus` needs the NVIDIA Container Toolkit on the host",
            "sudo nvidia-ctk runtime configure --runtime=docker",
        ),
        ("RuntimeError: No CUDA GPUs are available", NO_GPU, "docker run --gpus all"),
        ("RuntimeError: CUDA error: no CUDA-capable device is detected", NO_GPU, "docker run --gpus all"),
        # OpenRLHF#233: vLLM 0.3.2's own words in a Ray actor that saw no GPU
        ("RuntimeError: No supported device detected.", NO_GPU, "docker run --gpus all"),
        (  # vllm#34573's title line (torch built for ROCm 7.0)
            "RuntimeError: No HIP GPUs are available",
            "the process sees no AMD GPU: the container was started without /dev/kfd and /dev/dri, or a visibility "
            "variable hides them",
            "--device=/dev/kfd --device=/dev/dri",
        ),
        (  # lemonade-sdk/vllm-rocm#13: an LXD container's user could open /dev/kfd but not the /dev/dri render node
            "AmdSmiLibraryException: Error code: 14 | AMDSMI_STATUS_FILE_ERROR",
            "the process sees no AMD GPU: the container was started without /dev/kfd and /dev/dri, or a visibility "
            "variable hides them",
            "--device=/dev/kfd --device=/dev/dri",
        ),
        (
            "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
            "installed a driver from http://www.nvidia.com/Download/index.aspx",
            NO_GPU,
            "nvidia.com/gpu limit",
        ),
        (
            "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory",
            "the NVIDIA driver's library libcuda.so.1 is not where the process runs: no GPU driver reaches it",
            "docker run --gpus all",
        ),
        (
            "Failed to initialize NVML: Unknown Error",
            "the container lost its GPUs while running (NVML: Unknown Error): recreate it",
            "Delete and recreate the container",
        ),
        (
            "UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up "
            "environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available "
            "devices to be zero.",
            "CUDA could not start on the host's GPUs: the NVIDIA kernel modules are not in a usable state",
            "after a driver upgrade, reboot",
        ),
        (
            "RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.",
            "CUDA could not start on the host's GPUs: the NVIDIA kernel modules are not in a usable state",
            "after a driver upgrade, reboot",
        ),
        (
            "standard_init_linux.go:228: exec user process caused: exec format error",
            "the image is built for another CPU architecture than the host's (exec format error)",
            "docker manifest inspect IMAGE",
        ),
        (
            "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.",
            "the host's NVIDIA kernel module is not loaded: no process or container there can use its GPUs",
            "lsmod | grep nvidia",
        ),
        (
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
            "NVIDIA driver is installed and running.",
            "the host's NVIDIA kernel module is not loaded: no process or container there can use its GPUs",
            "sudo modprobe nvidia",
        ),
        (
            "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared "
            "object file: no such file or directory: unknown.",
            "the NVIDIA Container Toolkit cannot load the host's driver library (libnvidia-ml.so.1): no driver the "
            "container runtime can see",
            "install the NVIDIA driver",
        ),
        (
            "nvidia-container-cli: device error: 4: unknown device: unknown.",
            "the container asks for GPU 4, which the host's driver does not list",
            "nvidia-smi -L",
        ),
        (
            "Warning  FailedCreatePodSandBox  2m  kubelet  Failed to create pod sandbox: rpc error: code = Unknown "
            'desc = failed to get sandbox runtime: no runtime for "nvidia" is configured',
            'the node\'s container runtime has no "nvidia" runtime: the NVIDIA Container Toolkit is not configured '
            "for the containerd the kubelet uses",
            "nvidia-ctk runtime configure --runtime=containerd",
        ),
        (
            "docker: Error response from daemon: unknown or invalid runtime name: nvidia.",
            'Docker has no runtime named "nvidia": `--runtime=nvidia` needs the NVIDIA Container Toolkit registered '
            "in the daemon's configuration",
            "nvidia-ctk runtime configure --runtime=docker",
        ),
        (
            "docker: Error response from daemon: Unknown runtime specified nvidia.",
            'Docker has no runtime named "nvidia": `--runtime=nvidia` needs the NVIDIA Container Toolkit registered '
            "in the daemon's configuration",
            "nvidia-ctk runtime configure --runtime=docker",
        ),
        (
            "No devices were found",
            "the NVIDIA driver is loaded but initialised no GPU (nvidia-smi: No devices were found)",
            "sudo dmesg | grep -i -E 'NVRM|xid'",
        ),
        (
            "[  903.610907] NVRM: GPU 0000:98:00.0: RmInitAdapter failed! (0x62:0x65:1792)",
            "the NVIDIA driver could not initialise GPU 0000:98:00.0 (RmInitAdapter failed): nothing can use it",
            "sudo dmesg | grep -i -E 'NVRM|xid'",
        ),
    ],
    ids=[
        "no-docker-gpu-runtime",
        "no-cuda-gpus",
        "no-cuda-capable-device",
        "vllm-no-supported-device",
        "no-hip-gpus",
        "amdsmi-file-error",
        "no-driver",
        "no-libcuda",
        "nvml-lost",
        "cuda-unknown-error",
        "cuda-driver-init-failed",
        "exec-format",
        "toolkit-driver-not-loaded",
        "nvidia-smi-no-driver",
        "toolkit-no-nvml-library",
        "toolkit-unknown-device",
        "containerd-no-nvidia-runtime",
        "docker-unknown-runtime-nvidia",
        "docker-old-unknown-runtime-nvidia",
        "nvidia-smi-no-devices",
        "kernel-rm-init-adapter-failed",
    ],
)
def test_each_way_a_container_cannot_use_its_host_is_named_with_its_fix(line, title, first_action):
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.32" and top.title == title
    assert first_action in top.actions[0] and not top.changes  # fixed on the host, never by a vLLM flag


def test_dockers_whole_refusal_is_read_by_the_toolkits_line_inside_it():
    """Docker prints the toolkit hook's failure inside its own long error, split over two lines: the hook's line
    says what is wrong on the host."""
    paste = [
        "docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI "
        "runtime create failed: runc create failed: unable to start container process: error during container init: "
        "error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'",
        "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.",
    ]
    top = evaluate(Facts(events=parse_lines(paste).events)).findings[0]
    assert top.rule == "OP-7.32" and top.title.startswith("the host's NVIDIA kernel module is not loaded")
    assert top.evidence[0].raw.startswith("nvidia-container-cli: initialization error")


def test_no_devices_is_nvidia_smis_whole_line_only_and_an_xid_beside_it_says_more():
    # prose that says the same words is not nvidia-smi's answer
    assert not [e for e in parse_lines(["I ran it and no devices were found on the bus"]).events if e.component]
    paste = [
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=12345, name=python3, GPU has fallen off the bus.",
        "No devices were found",
    ]
    top = evaluate(Facts(events=parse_lines(paste).events)).findings[0]
    assert top.rule == "OP-7.33"


@pytest.mark.parametrize(
    "line",
    [
        # vllm#30076: Podman's log shipper JSON for v0.12.0's amd64 CPU image on an aarch64 host
        '{"msg":"exec container process `/opt/venv/bin/vllm`: Exec format error","level":"error",'
        '"time":"2025-12-04T15:15:35.826445Z"}',
        "exec /usr/bin/python3: exec format error",  # runc's, as Docker prints it
        "OSError: [Errno 8] Exec format error: '/opt/venv/bin/vllm'",
    ],
)
def test_each_runtimes_exec_format_error_is_an_image_of_another_architecture(line: str):
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.32" and top.title.startswith("the image is built for another CPU architecture")


def test_the_engines_platform_warning_names_both_architectures_and_alone_is_no_finding():
    warning = "WARNING: image platform (linux/amd64) does not match the expected platform (linux/arm64)"
    top = evaluate(Facts(events=parse_lines([warning, "exec /usr/bin/python3: exec format error"]).events)).top
    assert "(the image is linux/amd64, the host linux/arm64; exec format error)" in top.title
    assert all(f.rule != "OP-7.32" for f in evaluate(Facts(events=parse_lines([warning]).events)).findings)


def test_a_launcher_that_finds_no_vllm_file_is_a_missing_program():
    # gpustack/gpustack#363: GPUStack 0.3.0's image had no vLLM in it
    line = "Failed to run the vllm server: [Errno 2] No such file or directory: '/usr/local/bin/vllm'"
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.61" and "names vllm" in top.title and "launcher found no such file" in top.title


def test_an_unresolvable_cdi_device_is_a_specification_to_generate_for_its_vendor():
    # gpustack/gpustack#4130: the kubelet's event; `nvidia-ctk cdi generate --vendor management.nvidia.com` fixed it
    line = (
        "  Warning  Failed   7s    kubelet  Error: failed to create containerd task: failed to create shim task: OCI "
        "runtime create failed: could not apply required modification to OCI specification: error modifying OCI spec: "
        "failed to inject CDI devices: unresolvable CDI devices management.nvidia.com/gpu=0: unknown"
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "OP-7.32" and "management.nvidia.com/gpu=0" in top.title
    assert "nvidia-ctk cdi generate" in top.actions[0] and "--vendor management.nvidia.com" in top.actions[0]
