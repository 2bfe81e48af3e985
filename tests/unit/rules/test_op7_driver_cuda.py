"""OP-7.43: the NVIDIA driver older than the CUDA release the PyTorch build needs, in torch's and CUDA's words."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog.op7_driver_cuda import RULE
from rules.facts import Facts

# torch's warning at its first CUDA call (as a notebook or a server's stderr shows it), and collect_env's line
TORCH_WARNING = (
    "/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:180: UserWarning: CUDA initialization: The NVIDIA "
    "driver on your system is too old (found version 12040). Please update your GPU driver by downloading and "
    "installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: "
    "https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver. "
    "(Triggered internally at /pytorch/c10/cuda/CUDAFunctions.cpp:119.)"
)
COLLECT_ENV = "CUDA used to build PyTorch: 13.0"
INSUFFICIENT = "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"


def _findings(*lines: str):
    return RULE.evaluate(Facts(events=parse_lines(list(lines)).events))


def test_torchs_number_is_the_drivers_cuda_and_the_builds_cuda_sets_the_driver_floor():
    [finding] = _findings(COLLECT_ENV, TORCH_WARNING)
    assert finding.title == (
        "the NVIDIA driver supports CUDA 12.4 at most, older than the CUDA 13.0 this PyTorch was built for: no GPU is "
        "usable"
    )
    assert "(CUDA 13.x builds need driver 580 or later)" in finding.actions[0]
    assert "(12.4 or older)" in finding.actions[1] and "GeForce" in finding.actions[2]


def test_cudas_own_words_name_no_version_and_the_floors_of_both_releases():
    [finding] = _findings(INSUFFICIENT)
    assert (
        finding.title == "the NVIDIA driver is older than the CUDA release this PyTorch was built for: no GPU is usable"
    )
    assert "CUDA 12.x builds need driver 525 or later, CUDA 13.x 580" in finding.actions[0]


def test_an_old_drivers_number_reads_as_its_release():
    assert "supports CUDA 11.4 at most" in _findings(TORCH_WARNING.replace("12040", "11040"))[0].title


def test_the_container_runtimes_check_names_the_images_cuda_and_the_switch_that_skips_it():
    line = (
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a "
        "newer version, or use an earlier cuda container: unknown"
    )
    [finding] = _findings(line)
    assert finding.title.startswith("the NVIDIA driver is older than CUDA 12.8, which the image declares")
    assert "CUDA Version (nvidia-smi's header) is 12.8 or later" in finding.actions[0]
    assert "NVIDIA_DISABLE_REQUIRE=1" in finding.actions[3] and "driver of 525 or later" in finding.actions[3]


def test_tritons_invalid_kernel_image_is_its_ptxas_newer_than_the_drivers_cuda():
    # vllm#5713 (a host on CUDA 11.8; moving it to 12.2 fixed it), pytorch/pytorch#119054 (TRITON_PTXAS_PATH)
    [finding] = _findings("RuntimeError: Triton Error [CUDA]: device kernel image is invalid")
    assert finding.title.startswith("a Triton kernel was compiled for a newer CUDA than the driver supports")
    [change] = finding.changes
    assert (change.flag, change.kind) == ("TRITON_PTXAS_PATH", "env")
    assert "vllm#5713" in finding.actions[0]


def test_torchs_line_cut_before_the_version_is_still_the_old_driver():
    """vllm#1772's line as its reporter typed it (cut before `(found version …)`): the driver, its release unknown."""
    [finding] = RULE.evaluate(
        Facts(events=parse_lines(["RuntimeError: The NVIDIA driver on your system is too old"]).events)
    )
    assert finding.title.startswith("the NVIDIA driver is older than the CUDA release")


def test_ptx_from_a_newer_toolkit_asks_for_a_driver_of_that_cuda_or_an_older_toolkit():
    # vllm PR #40760's comment: DeepSeek-V4's kernels on DP/EP workers
    [finding] = _findings(
        "(Worker_DP0_EP0 pid=5238) ERROR 04-24 10:12:57 [multiproc_executor.py:879] torch.AcceleratorError: CUDA "
        "error: the provided PTX was compiled with an unsupported toolchain."
    )
    assert finding.title.startswith("a kernel's PTX was compiled by a newer CUDA toolkit than the NVIDIA driver")
    assert finding.actions[0].startswith("Upgrade the host's NVIDIA driver") and "toolkit" in finding.actions[1]


def test_error_804_is_the_images_forward_compatibility_libraries_on_a_gpu_without_support():
    # vllm#5283: the v0.4.3 image under Ray on driver 535 (v0.4.2 ran)
    [finding] = _findings(
        "vllm-openai_1  | (RayWorkerWrapper pid=3487) ERROR 06-05 16:30:08 worker_base.py:148] RuntimeError: "
        "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() "
        "that might have already set an error? Error 804: forward compatibility was attempted on non supported HW"
    )
    assert finding.title.startswith("the NVIDIA driver is older than")
    assert finding.actions[0].startswith("Error 804 is CUDA's forward-compatibility libraries")
