"""The nineteenth probe's classes: OP-7.144 to OP-7.150 and the wordings widened for it, each read from the verbatim
line its thread quoted, with a near miss left alone."""

from __future__ import annotations

import pytest

from tests.unit.rules.factories import top_finding


def test_a_feature_only_package_names_the_flag_that_turned_it_on():
    rixl = top_finding("ModuleNotFoundError: No module named 'rixl'")  # vllm#41637, verbatim
    assert rixl.rule == "OP-7.144" and "NixlConnector" in rixl.title and "v0.20.1" in rixl.actions[0]
    build = top_finding("ModuleNotFoundError: No module named 'setuptools_scm'")  # vllm PR #12382, verbatim
    assert build.rule == "OP-7.144" and "requirements/build.txt" in build.actions[0]
    other = top_finding("ModuleNotFoundError: No module named 'torch'")
    assert other is None or other.rule != "OP-7.144"


def test_a_failed_compile_step_names_its_jobs_and_memory():
    line = (  # vllm#41373, verbatim (the paste wraps it)
        "      subprocess.CalledProcessError: Command '['cmake', '--build', '.', '-j=72', '--target=_moe_C', "
        "'--target=cumem_allocator', '--target=triton_kernels', '--target=_vllm_fa2_C',"
    )
    top = top_finding(line)
    assert top.rule == "OP-7.145" and "72 parallel jobs" in top.title and "MAX_JOBS=8" in top.actions[1]


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("        Failed to detect a default CUDA architecture.", "CMake's nvcc"),  # vllm#1391, verbatim
        ("        arch_bin wasn't set for some reason", "PyTorch's probe"),  # vllm#6683, verbatim
        (  # vllm#35642, verbatim
            "clang++: error: no such file or directory: '[WARNING] offload-arch failed with return code 1[stderr] "
            "-D__HIP_PLATFORM_AMD__=1'",
            "ROCm",
        ),
    ],
)
def test_an_architecture_probe_that_found_nothing_asks_for_the_list(line: str, said: str):
    top = top_finding(line)
    assert top.rule == "OP-7.146" and said in top.title
    assert ("PYTORCH_ROCM_ARCH" if said == "ROCm" else "TORCH_CUDA_ARCH_LIST") in top.actions[0]


def test_a_missing_header_names_what_carries_it():
    dnnl = top_finding(  # NixOS/nixpkgs PR #447722, verbatim
        "/build/source/csrc/cpu/dnnl_helper.cpp:4:10: fatal error: common/memory_desc.hpp: No such file or directory"
    )
    assert dnnl.rule == "OP-7.147" and "dnnl_helper.cpp" in dnnl.title and "oneDNN" in dnnl.title
    assert "FETCHCONTENT_SOURCE_DIR_ONEDNN" in dnnl.actions[0]
    clang = top_finding("csrc/ops.cu:3:10: fatal error: 'cuda_runtime.h' file not found")
    assert clang.rule == "OP-7.147" and "CUDA toolkit" in clang.title
    unknown = top_finding("csrc/x.cpp:1:10: fatal error: zstd.h: No such file or directory")
    assert unknown.rule == "OP-7.147" and "apt-file search zstd.h" in unknown.actions[0]
    triton = top_finding("/tmp/tmpab/cuda_utils.c:9:10: fatal error: Python.h: No such file or directory")
    assert triton.rule == "OP-7.15"  # Triton's launcher build keeps its own reading


def test_required_arguments_name_vllm_serves_model_and_subcommand():
    model = top_finding("vllm serve: error: the following arguments are required: model_tag")  # vllm PR #8618, verbatim
    assert model.rule == "OP-7.148" and model.actions[0].startswith("Put the model first")
    sub = top_finding("vllm: error: the following arguments are required: subparser")
    assert sub.rule == "OP-7.148" and "subcommand" in sub.title
    other = top_finding("train.py: error: the following arguments are required: --config")
    assert other.rule == "OP-7.148" and other.title.startswith("train.py stopped")


def test_an_env_rendezvous_without_torchrun_asks_for_torchrun():
    line = (  # vllm#7466, verbatim
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, "
        "but not set"
    )
    top = top_finding(line)
    assert top.rule == "OP-7.149" and "RANK" in top.title and "torchrun --nproc-per-node" in top.actions[0]


def test_a_processor_built_with_other_arguments_is_a_transformers_release_mismatch():
    said = (  # zai-org/GLM-V#8, verbatim: the error inside the reporter's sentence
        'i run vllm serve like this "vllm serve THUDM-GLM-4.1V-9B-Thinking --limit-mm-per-prompt \'{"image":32}\' '
        '--allowed-local-media-path /" but i got TypeError: Glm4vProcessor.__init__() got multiple values for '
        "argument 'tokenizer', vllm transformers are install like requirments.txt"
    )
    top = top_finding(said)
    assert top.rule == "OP-7.150" and "Glm4vProcessor" in top.title
    assert top_finding(
        "TypeError: FlashAttentionImpl.__init__() got an unexpected keyword argument 'q_lora_rank'"
    ).rule != ("OP-7.150")


def test_a_framework_version_check_with_a_trailing_space_is_still_read():
    line = (  # hiyouga/LlamaFactory#6047, verbatim: the thread's line ends in a space
        "ImportError: vllm>=0.4.3,<=0.6.2 is required for a normal functioning of this module, but found vllm==0.6.3. "
    )
    top = top_finding(line)
    assert top.rule == "OP-7.85" and "0.6.3" in top.title


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (  # vllm#50347, verbatim
            "RuntimeError: Triton Error [HIP]: Code: 700, Message: an illegal memory access was encountered",
            "ROCm: Triton Error [HIP]",
        ),
        (  # ROCm/aiter#1143, verbatim
            ":0:rocdevice.cpp            :3675: 2139490044663 us:  Callback: Queue 0x7ee7b4200000 aborting with error "
            ": HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest "
            "legal address. code: 0x29",
            "memory aperture violation",
        ),
    ],
)
def test_rocms_kernel_faults_in_triton_and_hsa_words_are_kernel_faults(line: str, said: str):
    top = top_finding(line)
    assert top.rule == "HL-4" and said in top.title


def test_a_device_assert_without_its_thread_is_a_device_assert_and_glibcs_is_not():
    line = (  # zai-org/GLM-OCR#112, verbatim
        'Assertion `ind >=0 && ind < ind_dim_size && "vectorized gather kernel index out of bounds"` failed.'
    )
    assert top_finding(line).rule == "OP-7.46"
    host = top_finding("python: x.c:12: main: Assertion `n > 0' failed.")
    assert host is None or host.rule != "OP-7.46"


def test_running_nvcc_that_is_not_there_is_a_jit_build_without_a_compiler():
    line = (  # flashinfer-ai/flashinfer#1781, verbatim
        "when using vllm 0.11.0rc2 + flashinfer 0.3.0 AOT wheels，FileNotFoundError: [Errno 2] No such file or "
        "directory: 'nvcc'"
    )
    assert top_finding(line).rule == "OP-7.13"


def test_setuptools_missing_is_tritons_undeclared_run_time_import():
    # vllm#17529, verbatim: vLLM's model inspection importing Triton in a uv environment without setuptools
    top = top_finding("ERROR 05-01 10:54:27 [registry.py:355] ModuleNotFoundError: No module named 'setuptools'")
    assert top.rule == "OP-7.144" and top.title.startswith("setuptools is not installed: Triton")
    assert "pip install setuptools" in top.actions[0] and "uv venv --seed" in top.actions[0]
