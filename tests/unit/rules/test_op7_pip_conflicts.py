"""OP-7.44: pip's own list of the requirements an install broke, read for vLLM's (and its plugins')."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_pip_conflicts
from rules.catalog.op7_pip_conflicts import RULE
from rules.evaluate import evaluate
from rules.facts import Facts
from tests.unit.rules.factories import top_finding

RESOLVER = (
    "ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. This "
    "behaviour is the source of the following dependency conflicts."
)
# pip's lines after `pip install vllm` in a container that ships its own PyTorch build (an NGC image's version)
NGC = [
    RESOLVER,
    "vllm 0.6.6 requires nvidia-ml-py>=12.560.30, which is not installed.",
    'vllm 0.6.6 requires xformers==0.0.28.post3; platform_system == "Linux" and platform_machine == "x86_64", which is '
    "not installed.",
    "vllm 0.6.6 requires torch==2.5.1, but you have torch 2.2.0a0+git8ac9b20 which is incompatible.",
]


def _findings(*lines: str):
    return RULE.evaluate(Facts(events=parse_lines(list(lines)).events))


def test_the_torch_conflict_leads_and_every_requirement_of_vllm_is_in_the_install_command():
    [finding] = _findings(*NGC)
    assert finding.title == (
        "pip left torch 2.2.0a0+git8ac9b20 where vllm 0.6.6 requires torch==2.5.1 (and 2 more broken requirement(s))"
    )
    assert "`pip install 'nvidia-ml-py>=12.560.30' 'xformers==0.0.28.post3' 'torch==2.5.1'`" in finding.actions[0]
    assert "use_existing_torch.py" in finding.actions[1]


def test_a_missing_requirement_alone_says_pip_did_not_install_it_and_others_conflicts_are_theirs():
    [finding] = _findings(RESOLVER, NGC[1])
    assert finding.title == "vllm 0.6.6 requires nvidia-ml-py>=12.560.30, which pip did not install"
    assert len(finding.actions) == 1
    other = "spacy 3.7.2 requires typer<0.10.0,>=0.3.0, but you have typer 0.15.2 which is incompatible."
    assert _findings(RESOLVER, other) == []


def test_pips_older_wording_and_a_plugin_read_the_same():
    older = "ERROR: vllm-ascend 0.7.3 has requirement torch==2.5.1, but you'll have torch 2.6.0 which is incompatible."
    [finding] = _findings(older)
    assert finding.title == "pip left torch 2.6.0 where vllm-ascend 0.7.3 requires torch==2.5.1"


# --- OP-7.55 pip found nothing to install --------------------------------------------------------------------------


def _not_found(*lines: str):
    return op7_pip_conflicts.RULE_NOT_FOUND.evaluate(Facts(events=parse_lines(list(lines)).events))


def test_no_versions_at_all_is_the_platform_or_python_or_an_unreachable_index():
    [finding] = _not_found(
        "ERROR: Could not find a version that satisfies the requirement vllm (from versions: none)",
        "ERROR: No matching distribution found for vllm",
    )
    assert finding.title == "pip found no installable vllm for this Python and platform"
    assert "pip debug --verbose" in finding.actions[0] and "Linux" in finding.actions[0]
    assert "proxy" in finding.actions[1]


def test_a_local_build_label_points_at_pytorchs_index():
    [finding] = _not_found("ERROR: No matching distribution found for torch==2.5.1+cu121")
    assert finding.title == (
        "pip found no torch==2.5.1+cu121: builds labelled +cu121 are on PyTorch's own index, never on PyPI"
    )
    assert "--index-url https://download.pytorch.org/whl/cu121" in finding.actions[0]


def test_a_version_the_index_lacks_names_the_newest_it_offered():
    [finding] = _not_found(
        "ERROR: Could not find a version that satisfies the requirement vllm==0.99.0 (from versions: 0.1.0, 0.2.0, "
        "0.6.3)",
        "ERROR: No matching distribution found for vllm==0.99.0",
    )
    assert finding.title == "pip found no vllm==0.99.0 on this index for this Python (its newest offered: 0.6.3)"
    assert "pip index versions vllm" in finding.actions[0]


def test_a_failed_source_build_names_why_pip_built_it_vllm_flash_attn_or_another():
    [vllm] = _not_found("ERROR: Failed building wheel for vllm")
    assert vllm.title.startswith("pip built vllm from its source and the build failed: no wheel of it fits")
    assert "pip debug --verbose" in vllm.actions[0]
    [flash] = _not_found("  ERROR: Failed building wheel for flash-attn")
    assert "--no-build-isolation" in flash.actions[0] and "vLLM does not need flash-attn" in flash.actions[1]
    [other] = _not_found(
        "ERROR: Could not build wheels for llama-cpp-python, which is required to install pyproject.toml-based projects"
    )
    assert other.title == "pip had to build llama-cpp-python from its source, and the build failed"


def test_ninjas_failed_compile_step_names_the_source_file_and_leads_over_pips_summary():
    # vllm#8889's title line (CMake's extension target), and the setuptools build of 0.2-0.3 inside `docker build`
    # (vllm#2411's `#4 401.4` prefix); the compiler's words come after it, so the finding sends the reader there
    [cmake] = _not_found(
        "FAILED: CMakeFiles/_C.dir/csrc/quantization/machete/generated/machete_mm_bf16u4_impl_part0.cu.o",
        "ERROR: Failed building wheel for vllm",
    )
    assert cmake.title.startswith(
        "vLLM's source build failed compiling quantization/machete/generated/machete_mm_bf16u4_impl_part0.cu: "
    )
    assert "MAX_JOBS=2" in cmake.actions[1] and "TORCH_CUDA_ARCH_LIST" in cmake.actions[2]
    [docker] = _not_found("#4 401.4       FAILED: /tmp/tmp9jpwzd7u.build-temp/csrc/activation_kernels.o")
    assert docker.title.startswith("vLLM's source build failed compiling activation_kernels: ")
    [flash] = _not_found("FAILED: [code=1] /build/temp.linux-x86_64-cpython-310/csrc/flash_attn/src/flash_fwd.o")
    assert flash.title.startswith("flash-attn's source build failed compiling flash_attn/src/flash_fwd: ")


def test_pips_box_around_a_failed_build_step_is_read_by_the_step():
    # vllm#3002 and vllm#7575 (`pip install vllm` on a Jetson: the sdist's setup script raised), PR #11696 (an editable
    # CPU build on macOS), verbatim; a wheel build names its package
    [getting] = _not_found("× Getting requirements to build wheel did not run successfully.")
    assert "stopped before compiling anything" in getting.title and "pip debug --verbose" in getting.actions[1]
    [code] = _not_found("  error: subprocess-exited-with-error")
    assert code.title.startswith("pip fell back to building a package from its source and the build failed")
    [editable] = _not_found("  × Building editable for vllm (pyproject.toml) did not run successfully.")
    assert editable.title.startswith("the source build of vllm (`pip install -e .`) failed")
    assert "no wheel" not in editable.title and "VLLM_TARGET_DEVICE=cpu" in editable.actions[1]
    [wheel] = _not_found(
        "  error: subprocess-exited-with-error",
        "  × Building wheel for vllm (pyproject.toml) did not run successfully.",
    )
    assert wheel.title.startswith("pip built vllm from its source and the build failed")


def test_ninjas_missing_input_is_a_path_the_build_was_configured_with_rocm_outside_opt_rocm_named():
    # vllm#8042 (ROCm 6.2.0 in /opt/rocm-6.2.0 on an HPC system) and vllm#8004, verbatim
    line = (
        "ninja: error: '/opt/rocm/lib/libamdhip64.so', needed by '/lustre/orion/csc569/scratch/prajwal/vllm/build/lib."
        "linux-x86_64-cpython-311/vllm/_core_C.abi3.so', missing and no known rule to make it"
    )
    [finding] = _not_found(line)
    assert finding.title == (
        "vLLM's source build stopped before compiling: it needs /opt/rocm/lib/libamdhip64.so, which does not exist "
        "(ROCm is not at /opt/rocm)"
    )
    assert "ROCM_PATH" in finding.actions[0] and "find / -name libamdhip64.so" in finding.actions[1]


def test_a_failed_link_or_phony_target_is_not_a_compile_step():
    assert _not_found("FAILED: build.ninja") == []


def test_vllms_build_finding_no_platform_is_a_torch_without_cuda_in_the_build():
    # vllm#15450 (`pip install -e .`) and huggingface/open-r1#510 (`uv pip install vllm==0.7.2` on aarch64) end in
    # vLLM's setup.py: get_vllm_version raises it when VLLM_TARGET_DEVICE is cuda and the build's torch has no CUDA
    lines = [
        '        File "<string>", line 667, in get_vllm_version',
        "      RuntimeError: Unknown runtime environment",
        "      [end of output]",
    ]
    [finding] = evaluate(Facts(events=parse_lines(lines).events)).findings
    assert finding.rule == "OP-7.55" and "found no platform to build for" in finding.title
    assert any("--no-build-isolation" in action for action in finding.actions)
    assert any("VLLM_TARGET_DEVICE=cpu" in action for action in finding.actions)


def test_vllms_cpu_build_without_the_instruction_set_it_needs():
    """vllm#4654's line, verbatim (BuildKit's timestamp and CMake's indentation kept): AVX512 only, which vLLM's
    CPU extension required up to 0.5.0; the later message lists what any release builds for."""
    [avx512] = _not_found("3.799   vLLM CPU backend requires AVX512 ISA support.")
    assert avx512.title == (
        "vLLM's CPU build needs AVX512, which the CPU it builds on lacks: AVX2 builds from vLLM 0.5.0.post1"
    )
    assert avx512.actions[0].startswith("Upgrade vLLM") and "/proc/cpuinfo" in avx512.actions[1]
    [later] = _not_found("  vLLM CPU backend requires AVX512 or AVX2 or Power9+ ISA support.")
    assert "needs AVX512 or AVX2 or Power9+" in later.title and "AVX-only Xeon" in later.actions[-1]


def test_cmake_finding_neither_cuda_nor_hip_is_the_pytorch_it_builds_against():
    """vllm#6762's line, verbatim (CMake's leading spaces taken off by its collector)."""
    [finding] = _not_found("Can't find CUDA or HIP installation.")
    assert finding.title.startswith("vLLM's CMake build found neither CUDA nor ROCm")
    assert "torch.version.hip" in finding.actions[0] and "--no-build-isolation" in finding.actions[1]


def test_a_build_steps_wrapper_sends_the_reader_above_it_and_exit_137_to_memory():
    """vllm#14033's BuildKit summary and vllm#6916's CMake call, verbatim; exit 137 is a step the kernel killed."""
    buildkit = (
        'ERROR: failed to solve: process "/bin/sh -c VLLM_TARGET_DEVICE=cpu python3 setup.py bdist_wheel &&     pip '
        'install dist/*.whl &&     rm -rf dist" did not complete successfully: exit code: 1'
    )
    cmake = (
        "482.2 subprocess.CalledProcessError: Command '['cmake', '--build', '.', '-j=1', '--target=_moe_C', "
        "'--target=_C', '--target=_punica_C']' returned non-zero exit status 1."
    )
    for line in (buildkit, cmake):
        [finding] = _not_found(line)
        assert finding.title == ("vLLM's build step failed (exit 1): its own error is in the lines before this summary")
        assert "MAX_JOBS=2" in finding.actions[1]
    [killed] = _not_found(
        'ERROR: failed to solve: process "/bin/sh -c make -j" did not complete successfully: exit code: 137'
    )
    assert killed.title.startswith("a build step was killed (exit 137)")


def test_pips_refusal_pasted_without_its_list_of_versions_is_still_read():
    """vllm#30065's line, verbatim: the reporter pasted pip's line without `(from versions: …)`."""
    [finding] = _not_found("ERROR: Could not find a version that satisfies the requirement vllm==0.12.0")
    assert finding.title == "pip found no vllm==0.12.0 on this index for this Python"


def test_uvs_platform_tag_for_an_intel_python_on_a_mac():
    """vllm-project/vllm-metal#379's line, verbatim but for uv's indentation: the interpreter's tag is x86_64."""
    line = (
        "╰─▶ Because torch{platform_machine == 'aarch64' or platform_machine == 's390x' or platform_machine == "
        "'x86_64'}==2.11.0+cpu has no wheels with a matching platform tag (e.g., `macosx_26_0_x86_64`) and you require"
    )
    [finding] = _not_found(line)
    assert "this Python is an x86_64 (Intel) build" in finding.title and "arm64 Python" in finding.actions[0]
    [linux] = _not_found("vllm==0.12.0 has no wheels with a matching platform tag (e.g., `manylinux_2_28_aarch64`)")
    assert linux.title.endswith("wheel for this interpreter's platform (manylinux_2_28_aarch64)")


def test_no_wheel_for_this_pythons_abi_asks_for_a_python_the_package_publishes_for():
    """mlc-ai/xgrammar#193's line, verbatim but for uv's indentation: vLLM main on Python 3.13, before xgrammar
    published cp313 wheels (the report's own diagnosis)."""
    line = (
        "and xgrammar{platform_machine == 'x86_64'}>=0.1.6 has no wheels with a matching Python ABI tag, we can "
        "conclude that xgrammar{platform_machine == 'x86_64'}>=0.1.6 cannot be used."
    )
    [finding] = _not_found(line)
    assert finding.title.startswith("the installer found no xgrammar wheel for this Python")
    assert "uv venv --python" in finding.actions[0]
    [bounded] = _not_found("torch>2.5 has no wheels with a matching Python ABI tag")  # a one-character operator
    assert bounded.title.startswith("the installer found no torch wheel")


def test_a_rocm_header_including_one_its_release_lacks_needs_a_newer_rocm():
    """vLLM PR #1313's line, verbatim but for the quote marker and indentation (ROCm 5.6, whose bfloat16 header
    includes one that ships from ROCm 5.7)."""
    line = "/opt/rocm-5.6.0/include/hip/hip_bf16.h:30:10: fatal error: 'hip/amd_detail/amd_hip_bf16.h' file not found"
    [finding] = _not_found(line)
    assert finding.title == (
        "the build includes hip/amd_detail/amd_hip_bf16.h, which ROCm 5.6.0 does not ship: it needs a newer ROCm"
    )


def test_uvs_resolver_finding_no_version_names_the_package_even_wrapped_inside_its_marker():
    # vllm#27851, verbatim: uv's explanation, wrapped inside the requirement's marker
    facts = Facts(events=parse_lines(["  ╰─▶ Because there is no version of xformers{platform_machine =="]).events)
    [finding] = op7_pip_conflicts.RULE_NOT_FOUND.evaluate(facts)
    assert finding.title == "uv's resolver found no version of xformers that fits the requirements and this platform"
    assert "--extra-index-url" in finding.actions[1]


def test_uvs_conflict_from_vllms_torch_pin_is_read_before_anything_installs():
    # vllm#11283, verbatim: uv's first line of its explanation, cut by the paste after "and"
    line = "  ╰─▶ Because vllm==0.6.5 depends on torch{platform_machine != 'aarch64'}==2.5.1 and"
    facts = Facts(events=parse_lines([line]).events)
    [finding] = op7_pip_conflicts.RULE.evaluate(facts)
    assert finding.title == (
        "uv found no solution: vllm 0.6.5 pins torch==2.5.1, and another requirement wants another torch"
    )
    assert "vllm-flash-attn is not installed beside it" in finding.actions[0]
    assert finding.evidence[0].name == "uv's conflict"


def test_a_vllm_wheel_for_another_python_or_os_names_what_it_installs_under():
    # vllm#1999, verbatim (Markdown kept): a cp310 manylinux wheel; a maintainer: Windows only through WSL
    [finding] = _not_found(
        "### ERROR: vllm-0.2.2+cu118-cp310-cp310-manylinux1_x86_64.whl is not a supported wheel on this platform.**"
    )
    assert finding.title == (
        "pip refused the wheel of vllm==0.2.2+cu118: it installs only under CPython 3.10 on Linux x86_64, which this "
        "interpreter is not"
    )
    assert "WSL 2" in finding.actions[0]
    # deepseek-ai/DeepSeek-OCR#156, verbatim: an abi3 wheel takes any CPython from the one it names
    [abi3] = _not_found(
        "ERROR: vllm-0.8.5+cu118-cp38-abi3-manylinux1_x86_64.whl is not a supported wheel on this platform."
    )
    assert "CPython 3.8 or newer on Linux x86_64" in abi3.title


def test_versions_skipped_for_their_requires_python_name_the_pythons_they_take():
    # phoronix-test-suite/test-profiles#337, as its collector copied it: vLLM 0.8 to 0.10 on Debian 13's Python 3.13
    [finding] = _not_found(
        "ERROR: Ignored the following versions that require a different python version: 0.10.0 Requires-Python "
        "<3.13,>=3.9; 0.10.1 Requires-Python <3.13,>=3.9; 0.10.1.1 Requires-Python <3.13,>=3.9"
    )
    assert finding.title == "pip skipped 3 release(s) whose Requires-Python excludes this Python (<3.13,>=3.9)"


def test_torchs_cpp_extension_giving_up_points_at_the_compiler_and_a_killed_one_at_max_jobs():
    # vllm#3180, verbatim: a maintainer read the `Killed` above it; MAX_JOBS=2 built
    [finding] = _not_found("  RuntimeError: Error compiling objects for extension")
    assert finding.title.startswith("a C++/CUDA extension's source build failed (torch's cpp_extension)")
    assert "MAX_JOBS=2" in finding.actions[1]


# vllm#23983, verbatim: pip's resolver giving up (its summary line)
CANNOT_INSTALL = "ERROR: Cannot install vllm because these package versions have conflicting dependencies."


def test_pips_conflict_of_other_packages_names_the_requirer_and_its_pin():
    top = top_finding(CANNOT_INSTALL, "    vllm 0.6.3 depends on torch==2.4.0", "    The user requested torch==2.5.1")
    assert top.rule == "OP-7.55"
    assert top.title == (
        "pip's resolver found no versions that meet every requirement: vllm 0.6.3 requires torch==2.4.0"
    )
    assert "The conflict is caused by:" in top.actions[0]


def test_pips_bare_summary_names_what_it_could_not_install():
    top = top_finding(CANNOT_INSTALL)
    assert top.rule == "OP-7.55" and top.title.endswith("no versions of vllm whose requirements fit together")


def test_a_requirements_files_long_list_is_shown_cut_and_names_no_package():
    # NineAbyss/S2R#2, verbatim (the thirty-first probe): pip names the requirements file's lines
    line = (
        "ERROR: Cannot install -r requirements.txt (line 1), -r requirements.txt (line 2), -r requirements.txt "
        "(line 21), -r requirements.txt (line 4) and torch==2.1.1 because these package versions have conflicting "
        "dependencies."
    )
    [event] = parse_lines([line]).events
    assert event.component is None
    top = top_finding(line)
    assert top.rule == "OP-7.55" and top.title.endswith(", … whose requirements fit together")


def test_uvs_hint_of_wheels_for_other_pythons_names_them_and_the_python_to_use():
    # vllm#43435, verbatim: `uv pip install vllm==0.21` on Python 3.14, cuda-tile (flashinfer's) without cp314 wheels
    top = top_finding(
        "      hint: You require CPython 3.14 (`cp314`), but we only found wheels for `cuda-tile` (v1.3.0) with the "
        "following Python ABI tags: `cp310`, `cp311`, `cp312`, `cp313`"
    )
    assert top.rule == "OP-7.55"
    assert top.title == "cuda-tile 1.3.0 has wheels only for CPython 3.10, 3.11, 3.12, 3.13, and this is CPython 3.14"
    assert "uv venv --python 3.13" in top.actions[0] and "--prerelease=allow" in top.actions[1]


def test_a_source_tree_without_git_metadata_is_a_build_without_a_version():
    # vllm PR #4738, verbatim: a container build of vLLM's repository after it moved to setuptools-scm
    top = top_finding("18.23 LookupError: setuptools-scm was unable to detect version for /workspace.")
    assert top.rule == "OP-7.55" and top.title.startswith("the source build found no version for /workspace")
    assert "SETUPTOOLS_SCM_PRETEND_VERSION" in top.actions[1]


def test_ninjas_summary_alone_points_at_the_failed_step_above_it():
    # SystemPanic/vllm-windows#38, verbatim: a source build's ninja summary; with its FAILED line, that one leads
    top = top_finding("ninja: build stopped: subcommand failed.")
    assert top.rule == "OP-7.55" and top.title.startswith("a compile step of a build failed, and ninja stopped it")
    with_step = top_finding(
        "FAILED: CMakeFiles/_C.dir/csrc/attention/attention_kernels.cu.o", "ninja: build stopped: subcommand failed."
    )
    assert with_step.title.startswith("vLLM's source build failed compiling attention/attention_kernels.cu")
