"""OP-7.45: the dynamic loader's refusal of a binary built against a newer glibc or libstdc++."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog.op7_system_libs import RULE, RULE_SYSTEM_LIBRARY
from rules.evaluate import evaluate
from rules.facts import Facts
from tests.unit.rules.factories import top_finding

GLIBC = (
    "ImportError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.32' not found (required by "
    "/usr/local/lib/python3.10/dist-packages/vllm/_C.abi3.so)"
)
CONDA = (
    "ImportError: /opt/conda/lib/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by "
    "/opt/conda/lib/python3.10/site-packages/flashinfer/data/libflashinfer.so)"
)


def _findings(line: str):
    return RULE.evaluate(Facts(events=parse_lines([line]).events))


def test_glibc_names_vllms_binary_and_asks_for_a_newer_os_not_an_upgrade_in_place():
    [finding] = _findings(GLIBC)
    assert (
        finding.title
        == "vllm's compiled library (_C.abi3.so) needs glibc GLIBC_2.32, newer than the one the loader found"
    )
    assert "ldd --version" in finding.actions[0] and "rather than upgrading glibc in place" in finding.actions[0]


def test_libstdcxx_in_a_conda_environment_points_at_the_copy_found_first():
    [finding] = _findings(CONDA)
    assert finding.title.startswith("flashinfer's compiled library (libflashinfer.so) needs libstdc++ GLIBCXX_3.4.30")
    assert "conda-forge libstdcxx-ng" in finding.actions[1]


def test_the_importerror_that_stops_before_the_binary_still_names_the_runtime_it_needs():
    # llm-d/llm-d-kv-cache#445, verbatim: an extension built with GCC 12 in an image whose libstdc++ is GCC 11's
    [finding] = _findings("ImportError: /lib64/libstdc++.so.6: version `GLIBCXX_3.4.30' not found")
    assert finding.title.startswith("a compiled library (the text does not name it) needs libstdc++ GLIBCXX_3.4.30")


# --- OP-7.57 a system library a package's binary links -------------------------------------------------------------


def test_libgl_missing_is_opencvs_gui_build_beside_vllms_headless_one():
    line = "ImportError: libGL.so.1: cannot open shared object file: No such file or directory"
    [finding] = RULE_SYSTEM_LIBRARY.evaluate(Facts(events=parse_lines([line]).events))
    assert finding.title == "the system has no libGL.so.1: OpenCV's GUI build (opencv-python, imported as cv2) links it"
    assert "opencv-python-headless" in finding.actions[0] and "libgl1" in finding.actions[1]
    numa = "ImportError: libnuma.so.1: cannot open shared object file: No such file or directory"
    [finding] = RULE_SYSTEM_LIBRARY.evaluate(Facts(events=parse_lines([numa]).events))
    assert "libnuma1" in finding.actions[0]
    other = "ImportError: libfoo.so.3: cannot open shared object file: No such file or directory"
    assert RULE_SYSTEM_LIBRARY.evaluate(Facts(events=parse_lines([other]).events)) == []


def test_mooncakes_ascend_transport_not_on_the_loaders_path_proposes_usr_local_lib():
    # vllm-project/vllm-ascend#6949, verbatim: the reporter's fix was LD_LIBRARY_PATH with /usr/local/lib
    line = "ImportError: ascend_transport.so: cannot open shared object file: No such file or directory"
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.57" and "Mooncake" in top.title
    assert "LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/lib" in top.actions[0]


def test_ascends_libatb_is_nnals_with_its_environment_script():
    # vllm-project/vllm-ascend#10525, verbatim (no cause confirmed there): vllm-ascend's installation page lists NNAL
    # beside CANN as what provides libatb.so
    line = (
        "ERROR 06-16 02:47:10 [multiproc_executor.py:870] OSError: libatb.so: cannot open shared object file: No such "
        "file or directory"
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.57" and "libatb.so" in top.title
    assert "NNAL" in top.actions[0] and "nnal/atb/set_env.sh" in top.actions[0]


def test_an_ffmpeg_library_names_its_release_and_any_ffmpeg_torchcodec_takes():
    # vllm#48395, verbatim: vLLM 0.25.0 built on a Jetson AGX Orin (JetPack 6.2.2), torchcodec loading its core
    top = top_finding("OSError: libavutil.so.58: cannot open shared object file: No such file or directory")
    assert top.rule == "OP-7.57" and top.title.startswith("the system has no libavutil.so.58 (FFmpeg 6)")
    assert "apt-get install ffmpeg" in top.actions[0] and "any major from 4 to 8" in top.actions[0]
    # torchcodec's summary after its tries (meta-pytorch/torchcodec#1131's wording)
    summary = top_finding("RuntimeError: Could not load libtorchcodec. Likely causes:")
    assert summary.rule == "OP-7.57" and "FFmpeg of a major torchcodec supports (4 to 8)" in summary.title
    # a library of FFmpeg without libavutil's table still reads as FFmpeg's
    codec = top_finding("OSError: libavcodec.so.61: cannot open shared object file: No such file or directory")
    assert codec.rule == "OP-7.57" and "libavcodec.so.61 (FFmpeg's)" in codec.title


def test_oneapis_sycl_runtime_names_the_oneapi_release_the_xpu_build_was_made_with():
    # vllm#11734, verbatim: vLLM's XPU backend built with oneAPI 2025 (libsycl.so.8) under a torch and IPEX made for
    # oneAPI 2024; the maintainers named that mismatch
    top = top_finding("ImportError: libsycl.so.7: cannot open shared object file: No such file or directory")
    assert top.rule == "OP-7.57" and top.title.startswith("the system has no libsycl.so.7 (oneAPI 2024's SYCL runtime)")
    assert "setvars.sh" in top.actions[0] and "(2024.x)" in top.actions[0]
