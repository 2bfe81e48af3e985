"""OP-7.45: a compiled binary needs a newer glibc or libstdc++ than the system it runs on has. OP-7.57: a system
library a package's binary links is not installed.

Why a rule of its own: a binary records the version of each C and C++ runtime symbol it was linked against, and the
dynamic loader refuses to load it where the system's library is older: `/lib/x86_64-linux-gnu/libc.so.6: version
`GLIBC_2.32' not found (required by …/vllm/_C.abi3.so)`, or for the C++ runtime `libstdc++.so.6: version
`GLIBCXX_3.4.30' not found`. It names the binary and the version asked for, and says nothing wrong with vLLM: the
wheel was built for a newer operating system than this one (glibc comes with the OS and is not upgraded on its own),
or, for libstdc++, the loader found an older copy first, most often a conda environment's own lib/ directory.

OP-7.57: two libraries of the system that vLLM's own dependencies link. OpenCV's GUI build (`opencv-python`) links
libGL and GLib's gthread, which a slim image lacks; vLLM requires the headless build (`opencv-python-headless`, vLLM
0.32's metadata), which links neither, and OpenCV's packages are meant to be installed one at a time (opencv-python's
README; opencv/opencv#25988), so the error means another package brought the GUI build beside vLLM's. vLLM's CPU
build links libnuma (`ldd vllm/_C.abi3.so`, 0.32). On Intel GPUs PyTorch's XPU build and IPEX link oneAPI's SYCL
runtime of the release they were built with (libsycl.so.7 for oneAPI 2024), which a newer oneAPI does not carry
(vllm#11734: oneAPI 2025 ships libsycl.so.8).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

_GLIBC = [
    "Check the system's version: `ldd --version`. glibc comes with the operating system: run on a newer one (or in "
    "vLLM's container image, whose OS is new enough for its own wheels) rather than upgrading glibc in place.",
    "Or install a build made for this system: a wheel of the package for an older manylinux tag, or the package "
    "built from source here.",
]
_LIBSTDCXX = [
    "See which libstdc++ the loader found first: `ldconfig -p | grep libstdc++` and LD_LIBRARY_PATH; a conda "
    "environment's lib/ directory often holds an older one (`strings <that libstdc++.so.6> | grep GLIBCXX` lists "
    "what it has).",
    "Give it a newer libstdc++: in conda, `conda install -c conda-forge libstdcxx-ng`; otherwise the system's newer "
    "copy first on LD_LIBRARY_PATH, or a newer OS image.",
]


def _check(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.SYSTEM_LIBRARY_TOO_OLD)
    return [_finding(events[0])] if events else []


def _finding(event: LogEvent) -> Finding:
    binary = (event.message or "").strip()
    owner = c.installed_package(binary)
    who = (
        f"{owner}'s compiled library ({binary.rsplit('/', 1)[-1]})"
        if owner
        else f"the binary {binary}"
        if binary
        else "a compiled library (the text does not name it)"
    )
    glibc = event.component == "glibc"
    return RULE.finding(
        Severity.CRITICAL,
        f"{who} needs {event.component} {event.version}, newer than the one the loader found",
        summary="The dynamic loader refused to load a binary linked against a newer "
        + (
            "C library than this system's: the package was built for a newer operating system."
            if glibc
            else "C++ runtime than the one found first: an older libstdc++ (a conda environment's, or an old OS's)."
        )
        + " Nothing in vLLM's flags changes this.",
        evidence=[c.log_evidence(event, name=f"{event.component} too old", value=event.version)],
        actions=_GLIBC if glibc else _LIBSTDCXX,
        confidence=0.9,
    )


RULE = Rule(
    code="OP-7.45",
    title="a compiled binary needs a newer glibc or libstdc++",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="The dynamic loader's `version `GLIBC_X.Y' not found (required by <binary>)` (and `GLIBCXX_…`, "
        "`CXXABI_…` for the C++ runtime).",
        why="A binary built on a newer system records newer C and C++ runtime symbol versions; an older system's "
        "loader refuses it before any of vLLM runs.",
        example="`ImportError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.32' not found (required by "
        "…/site-packages/vllm/_C.abi3.so)` on an older distribution.",
        fix="A newer OS (or vLLM's image), or a build for this one; for libstdc++, a newer copy first (conda-forge's "
        "libstdcxx-ng in a conda environment).",
        limits="Names the binary's package from its site-packages path; does not know the system's own version "
        "(`ldd --version` tells).",
        references=["https://github.com/pypa/manylinux"],
    ),
)

# --- OP-7.57 a system library a package's binary links -------------------------------------------------------------

_OPENCV_GUI = (
    "OpenCV's GUI build (opencv-python, imported as cv2)",
    [
        "`pip list | grep -i opencv`: vLLM requires `opencv-python-headless`; another package brought `opencv-python` "
        "(or `opencv-contrib-python`) beside it, and its cv2 links the desktop's libraries. Uninstall the GUI one(s) "
        "and reinstall the headless one (`pip uninstall -y opencv-python opencv-contrib-python && pip install "
        "--force-reinstall opencv-python-headless`): OpenCV's packages are meant one at a time.",
        "Or give the image the libraries: `apt-get install libgl1 libglib2.0-0` (Debian, Ubuntu).",
    ],
)
SYSTEM_LIBRARIES: dict[str, tuple[str, list[str]]] = {
    "libGL.so.1": _OPENCV_GUI,
    "libgthread-2.0.so.0": _OPENCV_GUI,
    "libnuma.so.1": (
        "vLLM's CPU build (its compiled ops)",
        [
            "Install the NUMA library in the image: `apt-get install libnuma1` (Debian, Ubuntu; `numactl-libs` on "
            "RHEL-like hosts)."
        ],
    ),
    "libatb.so": (
        "torch_npu's ATB operators on Ascend NPUs (vllm-ascend)",
        [
            "libatb.so comes with Ascend's NNAL (Neural Network Acceleration Library), which vllm-ascend's "
            "installation page lists beside CANN at the same version: install NNAL of the CANN release in use "
            "(CANN's prebuilt images carry it), and source its environment script where vLLM starts (`source "
            "/usr/local/Ascend/nnal/atb/set_env.sh` in the default location), as CANN's own set_env.sh is sourced."
        ],
    ),
    "ascend_transport.so": (
        "Mooncake's transfer engine on Ascend NPUs (vLLM's Mooncake KV connector)",
        [
            "Mooncake's Ascend build installs ascend_transport.so under /usr/local/lib, which the loader may not "
            "search: `export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/lib` where vLLM starts (vllm-ascend#6949: the "
            "reporter's fix), or `ldconfig` after installing Mooncake; `ls /usr/local/lib/ascend_transport.so` "
            "checks it is there, else Mooncake was built without its Ascend transport."
        ],
    ),
}


# FFmpeg's libraries by the major of their soname, per FFmpeg release (libavutil.so.58 is FFmpeg 6): what torchcodec's
# loader lists as it tries FFmpeg 8 down to 4 (huggingface/lerobot#3976: 8 → libavutil.so.60; ace-step/ACE-Step-1.5#685:
# 5 → libavutil.so.57)
_FFMPEG = re.compile(r"^lib(?:avutil|avcodec|avformat|avdevice|avfilter|swresample|swscale)\.so\.(?P<major>\d+)$")
_FFMPEG_OF_LIBAVUTIL = {56: 4, 57: 5, 58: 6, 59: 7, 60: 8}
_FFMPEG_ACTIONS = [
    "Install FFmpeg's shared libraries where the server runs: `apt-get install ffmpeg` (Ubuntu 22.04 ships FFmpeg 4, "
    "24.04 FFmpeg 6, Debian 12 FFmpeg 5) or `conda install -c conda-forge 'ffmpeg<9'`; torchcodec loads any major from "
    "4 to 8, so the one named is only the first it tried, not one it requires.",
    "`ldconfig -p | grep libavutil` shows what the loader finds; an FFmpeg under /usr/local or a conda prefix needs "
    "its lib/ directory on LD_LIBRARY_PATH (or `ldconfig`).",
]


# oneAPI's SYCL runtime by the major of its soname: oneAPI 2024 ships libsycl.so.7 and 2025 libsycl.so.8 (vllm#11734:
# torch-xpu and IPEX pinned in requirements-xpu.txt were built against oneAPI 2024, and oneAPI 2025 does not carry .7)
_SYCL = re.compile(r"^libsycl\.so\.(?P<major>\d+)$")
_ONEAPI_OF_SYCL = {7: "2024", 8: "2025"}


def _sycl_owner(major: int) -> tuple[str, str, list[str]]:
    release = _ONEAPI_OF_SYCL.get(major)
    shown = f"libsycl.so.{major} (oneAPI {release}'s SYCL runtime)" if release else f"libsycl.so.{major} (oneAPI's)"
    return (
        shown,
        "PyTorch's XPU build or Intel Extension for PyTorch, built against that oneAPI release,",
        [
            "Give the process the oneAPI release the installed torch and IPEX were built with"
            + (f" ({release}.x)" if release else "")
            + ", and load it before starting: `source /opt/intel/oneapi/setvars.sh` (vllm#11734: oneAPI 2025 ships "
            "libsycl.so.8, and the torch and IPEX vLLM pinned needed 2024's libsycl.so.7).",
            "Or install torch and IPEX releases built for the oneAPI you have (the maintainers pointed to a newer "
            "pair made for oneAPI 2025), or run vLLM's XPU container image, which ships a matching oneAPI.",
        ],
    )


def _library_owner(library: str) -> tuple[str, str, list[str]] | None:
    """The library as a title names it, who links it, and how to give it: the table's, or FFmpeg's or oneAPI's by
    its soname."""
    if library in SYSTEM_LIBRARIES:
        return library, *SYSTEM_LIBRARIES[library]
    if (sycl := _SYCL.match(library)) is not None:
        return _sycl_owner(int(sycl["major"]))
    if library == "libtorchcodec":
        return "FFmpeg of a major torchcodec supports (4 to 8)", "torchcodec's compiled core", _FFMPEG_ACTIONS
    ffmpeg = _FFMPEG.match(library)
    if ffmpeg is None:
        return None
    release = _FFMPEG_OF_LIBAVUTIL.get(int(ffmpeg["major"])) if library.startswith("libavutil") else None
    shown = f"{library} (FFmpeg {release})" if release else f"{library} (FFmpeg's)"
    return shown, "a package built against the system's FFmpeg (torchcodec's core)", _FFMPEG_ACTIONS


def _check_system_library(facts: Facts) -> list[Finding]:
    found = next(
        (
            (event, owner)
            for event in facts.events_of(LogEventKind.SYSTEM_LIBRARY_MISSING)
            if (owner := _library_owner(event.component or "")) is not None
        ),
        None,
    )
    if found is None:
        return []
    event, (shown, who, actions) = found
    return [
        RULE_SYSTEM_LIBRARY.finding(
            Severity.CRITICAL,
            f"the system has no {shown}: {who} links it",
            summary=f"The loader refused a compiled module because the system library {shown} is not installed, or "
            "not where the loader looks: "
            f"{who} needs it. Nothing in vLLM's flags changes this; the image or the installed packages do.",
            evidence=[c.log_evidence(event, name="system library missing", value=event.component)],
            actions=actions,
            confidence=0.85,
        )
    ]


RULE_SYSTEM_LIBRARY = Rule(
    code="OP-7.57",
    title="a system library a package's binary links is not installed",
    category=Category.STARTUP,
    check=_check_system_library,
    needs=("events",),
    page=RulePage(
        checks="The loader's `libGL.so.1`, `libgthread-2.0.so.0`, `libnuma.so.1`, oneAPI's `libsycl.so.N` or one of "
        "FFmpeg's libraries (`libavutil.so.58` …): cannot open shared object file`; torchcodec's `Could not load "
        "libtorchcodec`.",
        why="vLLM requires OpenCV's headless build, which links no desktop library; libGL or gthread missing means "
        "the GUI build came in beside it. vLLM's CPU build links libnuma.",
        example="`ImportError: libGL.so.1: cannot open shared object file: No such file or directory` importing cv2 "
        "for a video input, in an image where another package installed opencv-python.",
        fix="One OpenCV package, the headless one (or libgl1 and libglib2.0-0 in the image); libnuma1 for the CPU "
        "build.",
        limits="Names the package by the library; the traceback's frames say which import reached it.",
        references=[
            "https://pypi.org/project/opencv-python/",
            "https://github.com/opencv/opencv/issues/25988",
            "https://github.com/vllm-project/vllm/issues/11734",
        ],
    ),
)

RULES: list[Rule] = [RULE, RULE_SYSTEM_LIBRARY]
