"""OP-7.13 and OP-7.14: the CUDA toolchain under vLLM, from the words of FlashInfer's JIT and the loader."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_toolchain
from rules.evaluate import evaluate
from rules.facts import Facts

NO_NVCC = "RuntimeError: Could not find nvcc and default cuda_home='/usr/local/cuda' doesn't exist"


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_no_compiler_at_engine_start_turns_the_flashinfer_sampler_off_or_points_cuda_home_at_nvcc():
    # davanstrien/uv-scripts-for-ai#9 (the sampler off), odysseus-dev/odysseus#228 (CUDA_HOME at pip's nvcc)
    top = evaluate(_facts([NO_NVCC])).findings[0]
    assert top.rule == "OP-7.13" and "found no CUDA compiler (nvcc)" in top.title
    [off] = top.changes
    assert (off.flag, off.proposed, off.kind) == ("VLLM_USE_FLASHINFER_SAMPLER", "0", "env")
    assert off.command_line() == "VLLM_USE_FLASHINFER_SAMPLER=0"
    assert [(a.flag, a.kind) for a in top.alternatives] == [("CUDA_HOME", "env")]
    assert top.confidence == 0.85


def test_a_failed_ninja_build_in_the_start_up_traceback_is_the_same_family_with_less_certainty():
    # kserve/kserve#4565: EngineCore failed to start, torch's cpp_extension building a kernel
    lines = [
        "ERROR 07-02 07:04:46 [core.py:500] EngineCore failed to start.",
        'ERROR 07-02 07:04:46 [core.py:500]   File "/x/torch/utils/cpp_extension.py", line 2506, in _run_ninja_build',
    ]
    top = evaluate(_facts(lines)).findings[0]
    assert top.rule == "OP-7.13" and "failed to build" in top.title and top.confidence == 0.7


def test_a_cuda_12_runtime_missing_beside_a_pytorch_for_cuda_11_8_is_a_version_mismatch():
    # vllm#7112: collect_env's output under vLLM's warning
    lines = [
        "WARNING 08-03 23:03:20 _custom_ops.py:15] Failed to import from vllm._C with ImportError('libcudart.so.12: "
        "cannot open shared object file: No such file or directory')",
        "PyTorch version: 2.4.0+cu118",
        "CUDA used to build PyTorch: 11.8",
    ]
    [finding] = op7_toolchain.RULE_CUDA_LIBRARY.evaluate(_facts(lines))
    assert finding.title == (
        "libcudart.so.12 (CUDA 12) not found by the loader: PyTorch here is built for CUDA 11.8, a CUDA version "
        "mismatch"
    )
    assert finding.changes[0].flag == "LD_LIBRARY_PATH" and finding.changes[0].kind == "env"
    [alone] = op7_toolchain.RULE_CUDA_LIBRARY.evaluate(_facts([lines[0]]))
    assert alone.title == "libcudart.so.12 (CUDA 12) not found by the loader"


def test_the_better_fix_is_pytorch_for_that_cuda_which_brings_its_runtime_from_pypi():
    # vllm#1718: vLLM 0.2.2's wheel for CUDA 12.1 over a torch for CUDA 11.8 (torch 2.1.0 on PyPI requires
    # nvidia-cuda-runtime-cu12)
    lines = [
        "from vllm import cuda_utils",
        "ImportError: libcudart.so.12: cannot open shared object file: No such file",
    ]
    [finding] = op7_toolchain.RULE_CUDA_LIBRARY.evaluate(_facts(lines))
    better = finding.actions[0]
    assert better.startswith("Better, builds for one CUDA version: upgrade PyTorch to the release vLLM requires")
    assert "nvidia-*-cu12 packages" in better and "vLLM's wheel for the CUDA that PyTorch uses" in better


def test_a_library_versioned_on_its_own_is_not_read_as_a_cuda_release():
    """libcudnn.so.9 is cuDNN 9 (for CUDA 12), libnccl.so.2 NCCL 2: no CUDA 9 or CUDA 2 to compare with torch's."""
    lines = [
        "OSError: libcudnn.so.9: cannot open shared object file: No such file or directory",
        "CUDA used to build PyTorch: 12.4",
    ]
    [cudnn] = op7_toolchain.RULE_CUDA_LIBRARY.evaluate(_facts(lines))
    assert cudnn.title == "libcudnn.so.9 (cuDNN 9) not found by the loader"
    assert "nvidia-cudnn-cu12" in cudnn.actions[0] and "site-packages/nvidia/cudnn/lib" in cudnn.changes[0].proposed
    nccl = "ImportError: libnccl.so.2: cannot open shared object file: No such file or directory"
    [finding] = op7_toolchain.RULE_CUDA_LIBRARY.evaluate(_facts([nccl]))
    assert finding.title == "libnccl.so.2 (NCCL 2) not found by the loader"
    split = "OSError: libcudnn_ops_infer.so.8: cannot open shared object file: No such file or directory"
    assert op7_toolchain.RULE_CUDA_LIBRARY.evaluate(_facts([split]))[0].title.endswith(
        "(cuDNN 8) not found by the loader"
    )


def test_the_drivers_own_library_is_not_a_toolkit_version():
    lines = ["OSError: libcuda.so.1: cannot open shared object file: No such file or directory"]
    assert op7_toolchain.RULE_CUDA_LIBRARY.evaluate(_facts(lines)) == []


def test_tritons_launcher_without_python_headers_or_a_compiler_names_what_to_install():
    # vllm#27890: gcc on Triton's cuda_utils.c at vLLM's start; Triton's own words when no compiler is found
    headers = evaluate(_facts(["/tmp/tmpn61co871/cuda_utils.c:9:10: fatal error: Python.h: No such file or directory"]))
    top = headers.findings[0]
    assert top.rule == "OP-7.15" and top.title == (
        "Triton could not build its C launcher: no Python headers (Python.h) where vLLM runs"
    )
    assert "python3.X-dev" in top.actions[0]
    compiler = "RuntimeError: Failed to find C compiler. Please specify via CC environment variable or set triton.knobs"
    [finding] = op7_toolchain.RULE_TRITON_BUILD.evaluate(_facts([compiler]))
    assert finding.title == "Triton could not build its C launcher: no C compiler where vLLM runs"
    source_build = "/x/torch/csrc/python_headers.h:12:10: fatal error: Python.h: No such file or directory"
    assert op7_toolchain.RULE_TRITON_BUILD.evaluate(_facts([source_build])) == []


def test_tritons_launcher_linked_without_libcuda_tells_the_missing_link_from_the_missing_driver_library():
    [link] = op7_toolchain.RULE_TRITON_BUILD.evaluate(
        _facts(["/usr/bin/ld: cannot find -lcuda: No such file or directory"])
    )
    assert link.title == "Triton could not link its C launcher: no libcuda.so beside the driver's libcuda.so.1"
    assert "ln -s libcuda.so.1 libcuda.so" in link.actions[0] and "TRITON_LIBCUDA_PATH" in link.actions[0]
    [driver] = op7_toolchain.RULE_TRITON_BUILD.evaluate(_facts(["AssertionError: libcuda.so cannot found!"]))
    assert driver.title == "Triton found no NVIDIA driver library (libcuda.so.1) to link its C launcher against"
    assert "sudo ldconfig" in driver.actions[0]


COMMAND = (  # vllm#17455 (vLLM 0.7.3 under Singularity), verbatim up to where its paste was cut
    "CalledProcessError: Command '['/usr/local/gcc/bin/gcc', '/tmp/tmp8vajoenb/main.c', '-O3', '-shared', '-fPIC', "
    "'-o', '/tmp/tmp8vajoenb/cuda_utils.cpython-310-x86_64-linux-gnu.so', '-lcuda', "
    "'-L/mnt/petrelfs/pijiahao/anaconda3/envs/cuda118_vllm/lib/python3.10/site-packages/triton/backends/nvidia/lib'"
)


def test_tritons_failed_build_command_alone_names_the_compiler_and_where_its_reason_is():
    [finding] = op7_toolchain.RULE_TRITON_BUILD.evaluate(_facts([COMMAND]))
    assert finding.title.startswith("Triton could not build its C launcher: /usr/local/gcc/bin/gcc failed on it")
    assert finding.actions[0].startswith("Read the compiler's lines above the CalledProcessError")
    # with the compiler's own line before it, that line's cause is the answer
    [linked] = op7_toolchain.RULE_TRITON_BUILD.evaluate(
        _facts(["/usr/bin/ld: cannot find -lcuda: No such file or directory", COMMAND])
    )
    assert linked.title.startswith("Triton could not link its C launcher: no libcuda.so")


def test_triton_2s_build_command_with_its_include_folders_before_shared_is_the_same_build():
    # vllm#3909, verbatim: Triton 2.x's command puts its -I folders between -O3 and -shared
    line = (
        "subprocess.CalledProcessError: Command '['/usr/bin/gcc', '/tmp/tmp91qfilw7/main.c', '-O3', "
        "'-I/home/server9/venv_vllm/lib/python3.10/site-packages/triton/common/../third_party/cuda/include', "
        "'-I/usr/include/python3.10', '-I/tmp/tmp91qfilw7', '-shared', '-fPIC', '-lcuda', '-o', "
        "'/tmp/tmp91qfilw7/cuda_utils.cpython-310-x86_64-linux-gnu.so', '-L/lib/x86_64-linux-gnu', "
        "'-L/lib/x86_64-linux-gnu']' returned non-zero exit status 1."
    )
    [finding] = op7_toolchain.RULE_TRITON_BUILD.evaluate(_facts([line]))
    assert finding.title.startswith("Triton could not build its C launcher: /usr/bin/gcc failed on it")


def test_a_kernels_architecture_guard_names_the_architecture_and_upgrades_first():
    # eugr/spark-vllm-docker#143: DGX Spark (GB10, sm121) in FP8 warm-up
    facts = _facts(["This kernel only supports sm120.", "cudaErrorLaunchFailure: unspecified launch failure"])
    [finding] = op7_toolchain.RULE_ARCH_GUARD.evaluate(facts)
    assert finding.title == "a vLLM kernel built for sm120 only ran on a GPU of another architecture, and trapped"
    assert "sm121" in finding.summary and "FP8 GEMMs" in finding.summary
    assert finding.actions[0].startswith("Upgrade vLLM to a build whose kernels admit this GPU's architecture")
    [hopper] = op7_toolchain.RULE_ARCH_GUARD.evaluate(_facts(["This kernel only supports sm90"]))
    assert "Hopper" in hopper.summary and "sm121" not in hopper.summary


def test_flashinfers_jit_without_ninja_in_a_frameworks_words_or_as_a_missing_command_is_the_same():
    """unsloth#4541 (fourth probe): a framework's words for FlashInfer's JIT finding no ninja; the bare form is the
    subprocess running `ninja` from a virtual environment whose bin is not on PATH (FlashInfer PR #3386)."""
    for line in (
        "RuntimeError: FlashInfer failed to JIT-compile: ninja (build tool) not found.",
        "FileNotFoundError: [Errno 2] No such file or directory: 'ninja'",
    ):
        [finding] = op7_toolchain.RULE_JIT.evaluate(_facts([line]))
        assert "found no ninja" in finding.title, line
        assert "on PATH" in finding.actions[0], line


def test_torchs_jit_without_ninja_asks_for_ninja_first():
    [finding] = op7_toolchain.RULE_JIT.evaluate(
        _facts(["RuntimeError: Ninja is required to load C++ extensions (pip install ninja to get it)"])
    )
    assert "found no ninja" in finding.title
    assert finding.actions[0].startswith("Install ninja where vLLM runs (`pip install ninja`")


def test_nvccs_summary_for_a_named_jit_kernel_is_that_kernels_build_not_the_samplers():
    """modelscope/ms-swift#8349's line, verbatim (FlashInfer 0.6.4's GDN prefill kernel for sm90): turning the
    FlashInfer sampler off would not stop this build, so no such change is proposed."""
    line = (
        '7 errors detected in the compilation of "/root/.cache/flashinfer/0.6.4/90a/generated/gdn_prefill_sm90/'
        'gdn_prefill_kernel_bf16_g0b0a1i0.cu".'
    )
    top = evaluate(_facts([line])).top
    assert top.rule == "OP-7.13" and top.title.startswith("FlashInfer's JIT build of its gdn_prefill_sm90 kernel")
    assert top.changes == [] and "nvcc --version" in top.actions[1]
    # a compile of the user's own file is nobody's JIT build
    assert not op7_toolchain.RULE_JIT.evaluate(_facts(['1 error detected in the compilation of "/home/me/k.cu".']))


def test_tritons_request_for_a_libcuda_so_symlink_is_the_missing_unversioned_link():
    # vllm#4455, verbatim: Triton 2.x found only /lib64/libcuda.so.1
    line = (
        "ERROR 04-29 17:19:20 worker_base.py:157] Possible files are located at ['/lib64/libcuda.so.1']."
        "Please create a symlink of libcuda.so to any of the file."
    )
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-7.15" and "no libcuda.so beside" in top.title
