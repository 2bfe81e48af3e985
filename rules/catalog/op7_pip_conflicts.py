"""OP-7.44: pip left packages at versions vLLM's release does not accept (its own list of the conflicts).
OP-7.55: pip found nothing it could install for a requirement, or had to build one from source and failed.

Why a rule of its own: pip installs what it is asked and only afterwards lists what no longer fits, under `ERROR:
pip's dependency resolver does not currently take into account all the packages that are installed`: one line per
requirement broken, `vllm 0.6.3 requires torch==2.4.0, but you have torch 2.5.1 which is incompatible.` or `…,
which is not installed.` (pip/_internal/commands/install.py). The install still "succeeds", so the server fails
later, in other words: vLLM pins its PyTorch exactly, and its compiled ops do not load beside another (an undefined
symbol: OP-7.6); other packages fail where vLLM calls them (OP-7.8). An image that ships its own PyTorch build
(NVIDIA's NGC containers: `torch 2.2.0a0+git8ac9b20`) meets vLLM's pin the same way; vLLM's installation guide builds
vLLM against an existing PyTorch with `python use_existing_torch.py` and `--no-build-isolation`.

OP-7.55: pip's resolver says which versions the index offered (`Could not find a version that satisfies the
requirement vllm==0.6.3 (from versions: none)`, then `No matching distribution found for vllm==0.6.3`), and that list
tells the three causes apart. `none`: the index holds no file this Python and platform can install (vLLM publishes
wheels for Linux only, for the Python versions each release lists; an unreachable index or proxy reads the same,
after pip's retries). A pin with a local label (`torch==2.5.1+cu121`): PEP 440's local versions are not published on
PyPI, and PyTorch serves its CUDA and CPU builds from its own index (download.pytorch.org/whl/<variant>). Otherwise
the version asked is not among those offered for this Python: a typo, a release not yet out, or a Python too new
for it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rules.catalog import common as c
from rules.events import PIP_CONFLICT, UV_RESOLVER, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

_TORCH_FAMILY = ("torch", "torchvision", "torchaudio")


def distribution_name(text: str) -> str:
    """A distribution's name as pip compares them: lower case, `_` and `.` as `-`."""
    head = text.split("[", 1)[0]
    for stop in "=<>!~ (":
        head = head.split(stop, 1)[0]
    return head.strip().lower().replace("_", "-").replace(".", "-")


def names_vllm(text: str) -> bool:
    """Whether a requirement or a requirer is vLLM or one of its plugins (`vllm>=0.7`, `vllm_ascend 0.9.1`)."""
    name = distribution_name(text)
    return name == "vllm" or name.startswith("vllm-")


def _is_vllms(event: LogEvent) -> bool:
    return names_vllm(event.component or "")


def _check(facts: Facts) -> list[Finding]:
    conflicts = [e for e in facts.events_of(LogEventKind.PACKAGE_CONFLICT) if _is_vllms(e)]
    if not conflicts:
        return []
    torch = [e for e in conflicts if distribution_name(e.message or "") in _TORCH_FAMILY]
    return [_finding(conflicts, torch)]


def _broken(event: LogEvent) -> str:
    package = distribution_name(event.message or "")
    if event.versions_offered == UV_RESOLVER:
        return (
            f"uv found no solution: {event.component} {event.version} pins {event.message}, and another requirement "
            f"wants another {package}"
        )
    if event.installed is None:
        return f"{event.component} {event.version} requires {event.message}, which pip did not install"
    return f"pip left {package} {event.installed} where {event.component} {event.version} requires {event.message}"


def _finding(conflicts: list[LogEvent], torch: list[LogEvent]) -> Finding:
    first = (torch or conflicts)[0]
    more = len(conflicts) - 1
    requirements = " ".join(f"'{e.message}'" for e in conflicts if e.component == first.component)
    actions = [
        f"Install what {first.component} {first.version} requires: `pip install {requirements}`; or, surer, "
        f"{first.component} alone in a fresh virtual environment (`pip install {first.component}=={first.version}`), "
        "so pip resolves everything together.",
    ]
    by_uv = first.versions_offered == UV_RESOLVER
    if by_uv:
        actions.insert(
            0,
            "Find the requirement that wants another torch (the rest of uv's explanation names it) and drop it or "
            "align it: packages with compiled kernels (xformers, flashinfer, vllm-flash-attn) are built for one "
            "torch each, and vLLM carries its flash-attention inside itself since vllm PR #8245, so vllm-flash-attn "
            "is not installed beside it (vllm#11283).",
        )
    if torch:
        actions.append(
            "Install nothing that moves torch after vLLM (a separate `pip install torch`, a requirements file with "
            "another torch, an `--upgrade` that pulls a newer one). In an image with its own PyTorch build (NVIDIA's "
            "NGC containers), build vLLM against it instead: `python use_existing_torch.py`, then `pip install "
            "--no-build-isolation -e .` in vLLM's source, as its installation guide describes."
        )
    return RULE.finding(
        Severity.HIGH,
        _broken(first) + (f" (and {more} more broken requirement(s))" if more else ""),
        summary=(
            "uv's resolver stopped before installing anything: the requirements asked for cannot hold together. "
            if by_uv
            else "pip finished the install and then listed the requirements it broke: this environment is not the "
            f"one {first.component} {first.version} was built and tested with. "
        )
        + (
            "vLLM pins its PyTorch exactly: beside another, its compiled ops fail to load (an undefined symbol) or "
            "crash."
            if torch
            else "A package at another version fails where vLLM calls it (a missing function or argument)."
        ),
        evidence=[
            c.log_evidence(
                e, name="uv's conflict" if e.versions_offered == UV_RESOLVER else "pip's conflict", value=e.message
            )
            for e in (torch or conflicts)[:3]
        ],
        actions=actions,
        confidence=0.8,
    )


RULE = Rule(
    code="OP-7.44",
    title="pip left packages at versions vLLM does not accept",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="pip's conflict lines after an install, `<vllm or vllm-*> <version> requires <requirement>, but you "
        "have <package> <version> which is incompatible.` and `…, which is not installed.` (and pip's older `has "
        "requirement …, but you'll have …`), and uv's `Because vllm==X depends on torch{…}==Y and …`.",
        why="pip warns and carries on; the server then fails in other words (an undefined symbol, a missing "
        "function). A conflict with PyTorch is the one vLLM cannot survive: it pins torch exactly.",
        example="`vllm 0.6.6 requires torch==2.5.1, but you have torch 2.2.0a0+git8ac9b20 which is incompatible.` "
        "after `pip install vllm` in an NGC PyTorch container.",
        fix="Install what vLLM requires (or vLLM alone in a fresh environment); nothing that moves torch afterwards; "
        "in an image with its own PyTorch, vLLM built against it (`use_existing_torch.py`).",
        limits="Reads conflicts of vLLM and its plugins (vllm-*) only; another package's conflicts are its own.",
        references=[
            "https://docs.vllm.ai/en/latest/getting_started/installation/gpu.html",
            "https://pip.pypa.io/en/stable/topics/dependency-resolution/",
        ],
    ),
)

# --- OP-7.55 pip found nothing to install --------------------------------------------------------------------------

_LOCAL_LABEL = ("+cu", "+cpu", "+rocm", "+xpu")
_PLATFORM = (
    "`python -V` and `uname -m` on the machine that installs, and `pip debug --verbose` for the wheel tags it accepts: "
    "vLLM's wheels are for Linux (x86_64 and aarch64) and the Python versions each release lists on PyPI; on macOS or "
    "Windows run vLLM's container image, or build from source for its CPU backend."
)
# the command that shows which CPU architecture the interpreter was built for, and so which wheels fit it
_ARCHITECTURE = "`python -c 'import platform; print(platform.machine())'`"
_INDEX = (
    "If pip printed connection retries before this, it never reached the index: a proxy (HTTPS_PROXY, pip's "
    "--proxy) or a mirror (--index-url) is the question, not the package."
)


def _check_not_found(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.PIP_NO_DISTRIBUTION)
    if not events:
        return _check_build_failed(facts)
    event = _most_telling(events)
    requirement = event.message or "the requirement"
    title, actions = _not_found_reading(event, requirement)
    return [
        RULE_NOT_FOUND.finding(
            Severity.HIGH,
            title,
            summary="The installer's resolver (pip's or uv's) found no file it could install for the requirement and "
            "stopped: nothing was "
            "installed, so the image or environment holds the versions it had before (or none).",
            evidence=[c.log_evidence(event, name="pip found no distribution", value=requirement)],
            actions=actions,
            confidence=0.8,
        )
    ]


def _not_found_reading(event: LogEvent, requirement: str) -> tuple[str, list[str]]:
    """The title and actions for what the installer was offered: a kind its words tell (a prefix of
    versions_offered), else a locally labelled build, else none at all for this platform, else not this version."""
    offered = event.versions_offered
    for prefix, reading in _OFFERED_READINGS:
        if offered is not None and offered.startswith(prefix):
            return reading(event, requirement, offered.removeprefix(prefix))
    label = next((word for word in _LOCAL_LABEL if word in requirement), None)
    if label is not None:
        variant = requirement.split("+", 1)[1].split()[0].rstrip(")")
        return (
            f"pip found no {requirement}: builds labelled +{variant} are on PyTorch's own index, never on PyPI",
            [
                f"Install it from PyTorch's index for that build: `pip install '{requirement}' --index-url "
                f"https://download.pytorch.org/whl/{variant}` (or `--extra-index-url` beside PyPI), or drop the label "
                "and take PyPI's build.",
                "For vLLM, install vLLM itself and let it bring the torch it pins; a separately labelled torch "
                "replaces that pin.",
            ],
        )
    if offered is not None and offered.lower() == "none":
        return (
            f"pip found no installable {event.component or requirement} for this Python and platform",
            [_PLATFORM, _INDEX],
        )
    latest = f" (its newest offered: {offered.rsplit(',', 1)[-1].strip()})" if offered else ""
    return (
        f"pip found no {requirement} on this index for this Python{latest}",
        [
            f"`pip index versions {event.component or requirement}` lists what the index has for this Python; a "
            "version missing from it is a typo, a release not yet out, or one without wheels for this Python or "
            "this platform (a newer Python than the release supports; an OS or CPU architecture it publishes no "
            f"wheel for: {_ARCHITECTURE}); a pre-release needs `--pre`.",
            _INDEX,
        ],
    )


def _uv_found_no_version(event: LogEvent, requirement: str) -> tuple[str, list[str]]:
    """uv's resolver: no version of the package fits (its reasons follow)."""
    return (
        f"uv's resolver found no version of {requirement} that fits the requirements and this platform",
        [
            f"uv's lines under this one say which requirement and marker excluded each version; `uv pip install "
            f"{event.component or requirement} --dry-run` alone shows what the index offers.",
            "A pin with a local label (`+cu128`, a nightly's `+<hash>`) is on the index of whoever built it "
            "(PyTorch's, vLLM's nightly wheels), never on PyPI: pass that index (`--extra-index-url`), or install "
            "the release instead of the build.",
            _INDEX,
        ],
    )


def _most_telling(events: list[LogEvent]) -> LogEvent:
    """The event that says most: one naming what was offered or who required it, before pip's bare `Cannot install …
    because these package versions have conflicting dependencies`, before one that names neither."""
    named = [e for e in events if e.versions_offered is not None]
    return next((e for e in named if e.versions_offered != PIP_CONFLICT), named[0] if named else events[0])


# How much of pip's list a title shows: a requirements file's entries (`-r requirements.txt (line 1), …`) run long
_LISTED_SHOWN = 80


def _conflicting_requirements(requirement: str, requirer: str) -> tuple[str, list[str]]:
    """pip's ResolutionImpossible: no set of versions meets every requirement at once. Its list under `The conflict
    is caused by:` names each requirer and what it asked (pip/_internal/resolution/resolvelib/factory.py)."""
    shown = requirement if len(requirement) <= _LISTED_SHOWN else requirement[:_LISTED_SHOWN].rsplit(", ", 1)[0] + ", …"
    title = (
        f"pip's resolver found no versions that meet every requirement: {requirer} requires {shown}"
        if requirer
        else f"pip's resolver found no versions of {shown} whose requirements fit together"
    )
    return title, [
        "The lines under `The conflict is caused by:` name every requirer and what it asks; `The user requested …` "
        "lines are the pins given on the command line or in a requirements file: loosen or drop the one that "
        "conflicts with vLLM's (`pip show vllm` lists its requirements; a release pins its torch exactly).",
        "Install vLLM into an environment of its own (a virtual environment or its container image) and let it "
        "bring the versions it pins, rather than beside packages that pin others.",
        _INDEX,
    ]


def _no_wheel_for_the_platform(package: str, tag: str) -> tuple[str, list[str]]:
    """uv's `has no wheels with a matching platform tag (e.g., `<tag>`)`: the tag is the interpreter's platform. An
    x86_64 tag on macOS is an Intel Python, which on an Apple silicon Mac runs under Rosetta (vllm-metal#379's
    maintainer); PyTorch publishes no macOS x86_64 wheels after its 2.2 release."""
    if tag.startswith("macosx") and tag.endswith("x86_64"):
        return (
            f"the installer found no {package} wheel for {tag}: this Python is an x86_64 (Intel) build, which on an "
            "Apple silicon Mac runs under Rosetta",
            [
                f"{_ARCHITECTURE} prints x86_64 for such a Python: install an arm64 Python (python.org's universal "
                "installer, `uv python install`, or Homebrew under /opt/homebrew) and create the environment with it.",
                "PyTorch publishes no macOS x86_64 wheels after 2.2, so vLLM on a Mac needs an arm64 Python.",
            ],
        )
    return (
        f"the installer found no {package} wheel for this interpreter's platform ({tag})",
        [
            _PLATFORM,
            f"{_ARCHITECTURE} shows the architecture the interpreter was built for; a wheel exists only for the "
            "platforms the package publishes.",
        ],
    )


def _wheel_not_for_this_platform(requirement: str, tags: str) -> tuple[str, list[str]]:
    """A wheel's file name carries the tags it installs under (`cp310-cp310-manylinux1_x86_64`: CPython 3.10, Linux
    x86_64; vLLM's later `cp38-abi3` wheels take any CPython from 3.8): pip refuses it where the interpreter's tags are
    others, which for vLLM is most often a Python of another version or an OS vLLM publishes no wheel for."""
    python, abi, platform = tags.split("-", 2)
    version = re.fullmatch(r"cp(\d)(\d+)", python)
    needs = [f"CPython {version[1]}.{version[2]}" + (" or newer" if abi == "abi3" else "") if version else python]
    system = next((words for prefix, words in _PLATFORM_WORDS if platform.startswith(prefix)), platform)
    machine = _MACHINE.search(platform)
    needs.append(f"{system} {machine.group(0)}" if machine else system)
    wanted = " on ".join(needs)
    return (
        f"pip refused the wheel of {requirement}: it installs only under {wanted}, which this interpreter is not",
        [
            f"`python -V` and {_ARCHITECTURE} on the machine that installs: the wheel needs {wanted}. vLLM's wheels "
            "are for Linux only: on Windows run vLLM in WSL 2 or its container image (vllm#1999, its maintainers), on "
            "macOS its container or a source build of its CPU backend.",
            "Or let pip choose: `pip install vllm` (or `vllm==<release>`) picks the file made for this Python and "
            "platform, where one exists.",
        ],
    )


# A wheel's platform tag in words, by its start, and the CPU architecture at its end
_PLATFORM_WORDS = (
    ("manylinux", "Linux"),
    ("musllinux", "musl Linux"),
    ("linux", "Linux"),
    ("win", "Windows"),
    ("macosx", "macOS"),
)
_MACHINE = re.compile(r"(?:x86_64|aarch64|arm64|amd64|ppc64le|s390x|i686|universal2)$")
# One skipped version's Requires-Python in pip's note: `0.10.1.1 Requires-Python <3.13,>=3.9`
_REQUIRES_PYTHON = re.compile(r"[\w.+]+ Requires-Python (?P<spec>[^;]+)")


def _wheels_for_other_pythons(package: str, version: str | None, python: str, tags: str) -> tuple[str, list[str]]:
    """uv's hint: the package publishes wheels for some CPython ABIs (`cp310` … `cp313`) and not this Python's, which
    a newer Python than the release knows meets first (vllm#43435: cuda-tile 1.3.0 had no cp314 wheels)."""
    versions = [f"{t[2]}.{t[3:]}" for t in re.findall(r"cp\d{2,3}", tags)]
    pythons = ", ".join(versions) or tags
    named = f"{package} {version}" if version else package
    return (
        f"{named} has wheels only for CPython {pythons}, and this is CPython {python}",
        [
            f"Create the environment with a Python those wheels take ({pythons}): `uv venv --python "
            f"{versions[-1] if versions else '<version>'}`; a Python newer than a package's release waits for its "
            "next one.",
            "Or allow a pre-release of the package that has this Python's wheels, where one exists "
            "(`--prerelease=allow`; vllm#43435's reporter installed that way).",
        ],
    )


def _no_wheel_for_this_python(package: str, tag: str) -> tuple[str, list[str]]:
    """uv's `has no wheels with a matching Python ABI tag`: every version the requirement allows publishes wheels for
    other Pythons only, and no source build was allowed or possible, which a Python newer than the package's releases
    meets first (mlc-ai/xgrammar#193: vLLM's xgrammar>=0.1.6 had no Python 3.13 wheels, so vLLM could not be installed
    on 3.13 until one was published)."""
    this = f" ({tag})" if tag else ""
    return (
        f"the installer found no {package} wheel for this Python{this}: the versions allowed publish wheels for other "
        "Pythons only",
        [
            f"`python -V` shows the Python uv resolved for; create the environment with a Python that {package} "
            "publishes wheels for (its PyPI page lists each file's cp tag): `uv venv --python 3.12`. A Python newer "
            "than a package's latest release waits for its next one.",
            "Each vLLM release's Requires-Python (its PyPI page) says which Pythons vLLM itself supports; its "
            "dependencies can lag behind a Python it lists.",
        ],
    )


def _versions_for_other_pythons(listed: str) -> tuple[str, list[str]]:
    """pip's note of versions skipped for their Requires-Python: each names the Pythons it takes; the distinct
    ranges (the first three) are what a Python must meet for those releases, or a newer release must take."""
    found = [m["spec"].strip() for m in _REQUIRES_PYTHON.finditer(listed)]
    specs = sorted(set(found))
    shown = "; ".join(specs[:3]) + ("; …" if len(specs) > 3 else "")
    return (
        f"pip skipped {len(found) or 'the'} release(s) whose Requires-Python excludes this Python ({shown})",
        [
            f"Install with a Python those releases take ({shown}): `python -V` shows the one pip runs under; a "
            "virtual environment or container with that Python (uv: `uv venv --python <version>`) leaves the system's "
            "alone.",
            "Or ask for a newer release that lists this Python (each vLLM release's Requires-Python is on its PyPI "
            "page): a pin to an older release is what excluded it.",
        ],
    )


# What the installer was offered, by the prefix its wording gave versions_offered, and how each is read (the event,
# the requirement, the rest of versions_offered)
_OFFERED_READINGS: tuple[tuple[str, Callable[[LogEvent, str, str], tuple[str, list[str]]]], ...] = (
    (PIP_CONFLICT, lambda event, requirement, requirer: _conflicting_requirements(requirement, requirer)),
    (UV_RESOLVER, lambda event, requirement, _: _uv_found_no_version(event, requirement)),
    ("platform:", lambda event, requirement, tag: _no_wheel_for_the_platform(event.component or requirement, tag)),
    ("wheel:", lambda event, requirement, tags: _wheel_not_for_this_platform(requirement, tags)),
    (
        "abi:",
        lambda event, requirement, rest: _wheels_for_other_pythons(
            event.component or requirement, event.version, *rest.partition(":")[::2]
        ),
    ),
    ("python:", lambda event, requirement, listed: _versions_for_other_pythons(listed)),
    ("pyabi:", lambda event, requirement, tag: _no_wheel_for_this_python(event.component or requirement, tag)),
)


RULE_NOT_FOUND = Rule(
    code="OP-7.55",
    title="pip found nothing it could install for a requirement, or failed to build it",
    category=Category.STARTUP,
    check=_check_not_found,
    needs=("events",),
    page=RulePage(
        checks="pip's `Could not find a version that satisfies the requirement R (from versions: …)`, uv's `Because "
        "there is no version of R` and `No matching "
        "distribution found for R`; `Failed building wheel for X` (a source build that failed: vLLM's, flash-attn's, "
        "another's), pip's box around the step that failed (`× Getting requirements to build wheel did not run "
        "successfully.`, `× Building editable for vllm (pyproject.toml) …`, `error: subprocess-exited-with-error`), "
        "ninja's `FAILED: <object>` for one compile step of it, or its `missing and no known rule to make it` for an "
        "input the build was configured with; vLLM's setup.py stopping with "
        "`RuntimeError: Unknown runtime environment` (no CUDA or ROCm in the PyTorch it builds against, or a "
        "VLLM_TARGET_DEVICE it does not know).",
        why="The versions pip was offered tell the causes apart: none for this Python and platform, a local build "
        "label PyPI does not carry, or a version the index does not have.",
        example="`ERROR: No matching distribution found for torch==2.5.1+cu121` from PyPI: the +cu121 build is on "
        "download.pytorch.org/whl/cu121.",
        fix="A platform and Python vLLM publishes wheels for (or its image); PyTorch's index for a labelled build; a "
        "version the index has (`pip index versions`).",
        limits="An unreachable index also reads as `from versions: none`; pip's retries before it say so.",
        references=[
            "https://peps.python.org/pep-0440/#local-version-identifiers",
            "https://pip.pypa.io/en/stable/cli/pip_index/",
            "https://docs.vllm.ai/en/latest/getting_started/installation/gpu.html",
            "https://github.com/vllm-project/vllm/issues/15450",
            "https://github.com/huggingface/open-r1/issues/510",
        ],
    ),
)


def _check_build_failed(facts: Facts) -> list[Finding]:
    """Called by `_check_not_found` only when pip found no distribution at all: that answer leads when both show."""
    no_device = facts.events_of(LogEventKind.VLLM_BUILD_NO_DEVICE)
    if no_device:
        return [_no_device(no_device[0])]
    events = facts.events_of(LogEventKind.PIP_BUILD_FAILED)
    if not events:
        return []
    # the build's own lines, most specific first: an input missing, a compile step, a ROCm header, a wrapper's summary
    for prefix, reading in (
        ("MISSING: ", _build_input_missing),
        ("FAILED: ", _compile_step_failed),
        ("ROCM_HEADER: ", _rocm_header_missing),
        ("STEP ", _build_step_failed),
        ("EXTENSION", _extension_build_failed),
        ("NO_SCM_VERSION: ", _no_scm_version),
        ("NINJA_STOPPED", _ninja_stopped),
    ):
        marked = next((e for e in events if (e.message or "").startswith(prefix)), None)
        if marked is not None:
            return [reading(marked)]
    event = next((e for e in events if e.component), events[0])  # the line that names the package, when one does
    if event.message == "editable":
        return [_editable_failed(event)]
    if event.component is None:
        return [_unnamed_build_failed(event)]
    return [_package_build_failed(event)]


def _no_scm_version(event: LogEvent) -> Finding:
    """setuptools-scm reads a source tree's version from its git metadata, which vLLM's setup.py asks it for (vllm PR
    #4738); a tree copied without `.git` (a Docker build context that leaves it out, a GitHub tarball) has none.
    SETUPTOOLS_SCM_PRETEND_VERSION is setuptools-scm's own way to state it."""
    root = (event.message or "").removeprefix("NO_SCM_VERSION: ") or "the source tree"
    return RULE_NOT_FOUND.finding(
        Severity.HIGH,
        f"the source build found no version for {root}: setuptools-scm reads it from git, and the tree has no git "
        "metadata",
        summary="vLLM's setup.py takes its version from setuptools-scm, which reads the git history of the tree "
        "being built; a copy without its `.git` directory (a container build whose context leaves it out, an archive "
        "of the sources) gives it nothing, and the build stops before compiling.",
        evidence=[c.log_evidence(event, name="source tree without a version", value=root)],
        actions=[
            "Build from a git clone with its `.git` (in a Dockerfile, copy or bind-mount `.git` into the build "
            "context: a `.dockerignore` that lists it removes it).",
            "Or state the version: `SETUPTOOLS_SCM_PRETEND_VERSION=<the release the tree is, e.g. 0.6.4>` in the "
            "build's environment (setuptools-scm's own override).",
        ],
        confidence=0.8,
    )


def _package_build_failed(event: LogEvent) -> Finding:
    """pip named the package whose source build failed: vLLM's, flash-attn's or another's, each with its own fix."""
    package = event.component or "a package"
    name = distribution_name(package)
    if name == "vllm" or name.startswith("vllm-"):
        title = (
            f"pip built {package} from its source and the build failed: no wheel of it fits this Python and platform"
        )
        actions = [
            _PLATFORM,
            "A source build of vLLM needs the CUDA toolkit (nvcc) matching PyTorch's CUDA, a C++ compiler and time "
            "(tens of minutes); if that is what you want, vLLM's installation guide gives the steps.",
        ]
    elif name == "flash-attn":
        title = f"pip built {package} from its source and the build failed: it compiles CUDA kernels against torch"
        actions = [
            "flash-attn builds against the torch installed, so build it with `pip install flash-attn "
            "--no-build-isolation`, with nvcc (CUDA_HOME) and ninja present; or install a prebuilt wheel for your "
            "torch, CUDA and Python from its releases page.",
            "vLLM does not need flash-attn (it ships its own kernels); only a model's own code or another package asks "
            "for it.",
        ]
    else:
        title = f"pip had to build {package} from its source, and the build failed"
        actions = [
            "The compiler's error above pip's summary names what was missing (a compiler, headers, CUDA's nvcc); or "
            "install a version that has a wheel for this Python and platform (`pip index versions` and PyPI's files "
            "list).",
        ]
    return RULE_NOT_FOUND.finding(
        Severity.HIGH,
        title,
        summary="pip found no wheel that fits and fell back to the source distribution, whose build failed; nothing "
        "was installed.",
        evidence=[c.log_evidence(event, name="pip's build", value=package)],
        actions=actions,
        confidence=0.75,
    )


def _editable_failed(event: LogEvent) -> Finding:
    """`pip install -e .`: a source build the user chose, so no wheel is missing; the build's own error is above."""
    package = event.component or "the package"
    vllm = distribution_name(package) == "vllm"
    return RULE_NOT_FOUND.finding(
        Severity.HIGH,
        f"the source build of {package} (`pip install -e .`) failed: its own error is in the lines above pip's summary",
        summary="pip ran the project's build backend to install it editable and the build stopped; pip's box only "
        "says that it did. The error is in the build's output above it: the compiler's `error:` lines, CMake's "
        "`CMake Error`, or a Python traceback from setup.py.",
        evidence=[c.log_evidence(event, name="pip's build", value=f"Building editable for {package}")],
        actions=[
            "Read the build's output above `did not run successfully` (the first `error:` or `CMake Error` line "
            "names the cause), or run it again with `pip install -e . -v` to see all of it.",
            *(
                [
                    "vLLM builds against the PyTorch already installed only with `python use_existing_torch.py` then "
                    "`pip install -e . --no-build-isolation`; a CPU-only machine, or macOS, builds the CPU backend "
                    "with VLLM_TARGET_DEVICE=cpu and its own requirements file (vLLM's installation guide).",
                    "A compiler killed for memory (`Killed`): `MAX_JOBS=2`.",
                ]
                if vllm
                else []
            ),
        ],
        confidence=0.6,
    )


def _unnamed_build_failed(event: LogEvent) -> Finding:
    """pip's build box or its error code without the package's name: a source build it started failed."""
    getting = (event.message or "").startswith(("Getting requirements", "Preparing"))
    return RULE_NOT_FOUND.finding(
        Severity.HIGH,
        "pip fell back to building a package from its source and the build "
        + ("stopped before compiling anything: its setup script raised" if getting else "failed")
        + "; the lines above pip's summary say why",
        summary="pip builds from the source distribution when no wheel fits this Python and platform; "
        + (
            "asking the package's build script for its build requirements already failed: the script raised "
            "before compiling anything (vLLM's setup.py does so without a PyTorch with CUDA for its target, and "
            "pip's isolated build brings its own PyTorch from the index; or on a platform it has no build for)."
            if getting
            else "the build subprocess exited with an error (`subprocess-exited-with-error` is pip's code for it)."
        ),
        evidence=[c.log_evidence(event, name="pip's build", value=event.message)],
        actions=[
            "Read the lines above pip's box: the package's own error (a Python traceback from setup.py, a "
            "compiler's `error:`) is the cause; `pip install -v` shows all of it.",
            _PLATFORM,
        ],
        confidence=0.55,
    )


def _whose_build(event: LogEvent, otherwise: str) -> str:
    """The project a ninja line's build belongs to, as the collector named it from its paths, said as an owner."""
    return {"vllm": "vLLM's", "flash-attn": "flash-attn's"}.get(event.component or "", otherwise)


def _build_input_missing(event: LogEvent) -> Finding:
    """ninja's `missing and no known rule to make it`: the build was configured with a path that is not there."""
    path = (event.message or "").removeprefix("MISSING: ")
    rocm = path.startswith("/opt/rocm/")
    whose = _whose_build(event, "the")
    actions = [
        f"`ls -l {path}`: the build was configured to use that file; find where it really is (`find / -name "
        f"{path.rsplit('/', 1)[-1]} 2>/dev/null`) and point the build there, or install what provides it.",
    ]
    if rocm:
        actions.insert(
            0,
            "ROCm installed elsewhere (a versioned /opt/rocm-6.2.0, a module system on a cluster): the build's CMake "
            "files look for ROCm at /opt/rocm unless ROCM_PATH names it, so export ROCM_PATH (and ROCM_HOME) to the "
            "install before building, or make /opt/rocm lead to it (`ln -s /opt/rocm-<version> /opt/rocm`, in a "
            "container where the host gives no root); or build in vLLM's ROCm image, where /opt/rocm is the install.",
        )
    return RULE_NOT_FOUND.finding(
        Severity.HIGH,
        f"{whose} source build stopped before compiling: it needs {path}, which does not exist"
        + (" (ROCm is not at /opt/rocm)" if rocm else ""),
        summary="ninja refuses to start a build whose inputs are missing and that has no rule to make them: the "
        "build was configured (by CMake, from PyTorch's and the toolkit's own CMake files) with a path this "
        "machine does not have.",
        evidence=[c.log_evidence(event, name="ninja's missing input", value=path)],
        actions=actions,
        confidence=0.6,
    )


def _extension_build_failed(event: LogEvent) -> Finding:
    """torch's cpp_extension gave up on a setup.py's compile: its ninja output above says which step and why."""
    return RULE_NOT_FOUND.finding(
        Severity.HIGH,
        "a C++/CUDA extension's source build failed (torch's cpp_extension): the compiler's own error is in the "
        "lines above",
        summary="torch's cpp_extension runs ninja over the extension's sources and raises this after any step fails; "
        "the failing step and the compiler's words are printed before it. A `Killed` among them is the compiler "
        "killed for memory: each parallel nvcc job takes a few GiB.",
        evidence=[c.log_evidence(event, name="torch's cpp_extension", value="Error compiling objects for extension")],
        actions=[
            "Look above for `FAILED:` and the compiler's `error:` lines, or `Killed`.",
            "`Killed` (or the machine swapping): build with fewer parallel jobs, `MAX_JOBS=2` (vllm#3180: a "
            "maintainer's advice, and the reporter's build then worked).",
            "Or build nothing: a released wheel or image for this platform and CUDA.",
        ],
        confidence=0.6,
    )


def _compile_step_failed(event: LogEvent) -> Finding:
    """ninja's `FAILED: <object>`: which source file failed is known, why is in the compiler's lines after it."""
    target = (event.message or "").removeprefix("FAILED: ")
    source = target.split("/csrc/", 1)[-1] if "/csrc/" in target else target.rsplit("/", 1)[-1]
    source = source.removesuffix(".o").removesuffix(".obj")
    whose = _whose_build(event, "a package's")
    return RULE_NOT_FOUND.finding(
        Severity.HIGH,
        f"{whose} source build failed compiling {source}: the compiler's error is in the lines ninja printed after "
        "this one",
        summary="ninja names the object whose compile step failed, then prints that step's command and the "
        "compiler's own output; the cause is there. A source build of vLLM's CUDA kernels fails most often three "
        "ways: the compiler killed for memory (many parallel nvcc jobs, a few GiB each), a CUDA toolkit older than "
        "an architecture in the build's list (`Unsupported gpu architecture 'compute_…'`), or a host compiler nvcc "
        "does not support.",
        evidence=[c.log_evidence(event, name="ninja's failed step", value=target)],
        actions=[
            "Read the compiler's lines after `FAILED:` (nvcc's or gcc's `error:`, or `Killed`); they name the cause.",
            "`Killed`, or the machine swapping: fewer parallel jobs, `MAX_JOBS=2` (and `NVCC_THREADS=1`), which "
            "vLLM's build reads.",
            '`Unsupported gpu architecture`: build only for your GPU (`TORCH_CUDA_ARCH_LIST="8.0"` for an A100, '
            "its compute capability) or with a newer CUDA toolkit; `unsupported GNU version`: a gcc that toolkit "
            "supports.",
            "Or build nothing: vLLM's published wheel or image for your platform (Linux x86_64 and aarch64); a "
            "machine without a GPU builds the CPU backend with VLLM_TARGET_DEVICE=cpu.",
        ],
        confidence=0.6,
    )


def _ninja_stopped(event: LogEvent) -> Finding:
    """ninja's `build stopped: subcommand failed`, its summary after the step it names with `FAILED:` (read first when
    the paste holds it): vLLM's source build, an extension's, or a JIT build at run time (FlashInfer's kernels)."""
    return RULE_NOT_FOUND.finding(
        Severity.HIGH,
        "a compile step of a build failed, and ninja stopped it: the failing step and the compiler's error are in the "
        "lines above",
        summary="ninja runs a build's compile steps and stops at the first that fails; this is its summary. Above it, "
        "`FAILED: <object>` names the source file, and the compiler's own output (nvcc's or gcc's `error:`, or "
        "`Killed` for memory) names the cause. It is vLLM's source build, another extension's, or a kernel compiled "
        "at run time (FlashInfer's JIT).",
        evidence=[c.log_evidence(event, name="ninja stopped", value="subcommand failed")],
        actions=[
            "Copy the lines from `FAILED:` to this one: the compiler's first `error:` (or `Killed`) is the cause.",
            "`Killed`: fewer parallel jobs, `MAX_JOBS=2` (and `NVCC_THREADS=1`), which vLLM's build reads; a kernel "
            "that does not compile for the GPU or toolkit: vLLM's published wheel or image instead of a source build.",
        ],
        confidence=0.55,
    )


def _build_step_failed(event: LogEvent) -> Finding:
    """A build step's wrapper failed (BuildKit's `failed to solve`, setuptools' `cmake --build`): its exit status says
    whether the kernel killed it; the step's own error is in the lines before."""
    status = (event.message or "").removeprefix("STEP ")
    killed = status in ("137", "-9")  # 128 + SIGKILL, as a shell reports it; -9 as Python's subprocess does
    whose = _whose_build(event, "a")
    title = (
        f"{whose} build step was killed (exit {status}): most often the machine ran out of memory compiling"
        if killed
        else f"{whose} build step failed (exit {status}): its own error is in the lines before this summary"
    )
    return RULE_NOT_FOUND.finding(
        Severity.HIGH,
        title,
        summary="This line is the wrapper's summary (Docker BuildKit's for a RUN step, setuptools' for the CMake "
        "build of vLLM's extensions), not the failure: the compiler's or the script's own error is printed above it. "
        "A source build of vLLM's kernels runs many compiler jobs at once, a few GiB each, and the kernel kills one "
        "when memory runs out (exit 137); a toolkit, compiler or instruction set the build does not support stops it "
        "with an error of its own.",
        evidence=[c.log_evidence(event, name="the failed build step", value=f"exit status {status}")],
        actions=[
            "Read the step's output above the summary (`docker build --progress=plain` prints all of it): an "
            "`error:` from nvcc or gcc, a CMake Error, or `Killed`.",
            "Memory: fewer parallel jobs, `MAX_JOBS=2` (and `NVCC_THREADS=1`), which vLLM's build reads (pass it as "
            "`--build-arg max_jobs=2` to vLLM's Dockerfile), or more memory for the build (Docker Desktop's limit).",
            "Or build nothing: vLLM's published wheel or container image for your platform; a CPU image only for the "
            "instruction set of the machine that builds it.",
        ],
        confidence=0.55 if not killed else 0.65,
    )


def _rocm_header_missing(event: LogEvent) -> Finding:
    """A ROCm header includes one the installed ROCm does not have: the build needs a newer ROCm (vLLM PR #1313: the
    bfloat16 header exists from ROCm 5.7; vLLM's ROCm guide of 0.4 lists ROCm 5.7 or 6.0)."""
    header, _, version = (event.message or "").removeprefix("ROCM_HEADER: ").partition("|")
    installed = f"ROCm {version}" if version else "the ROCm installed"
    return RULE_NOT_FOUND.finding(
        Severity.HIGH,
        f"the build includes {header}, which {installed} does not ship: it needs a newer ROCm",
        summary="The compiler stopped inside ROCm's own headers: one of them includes a file this ROCm release does "
        "not have, so the code being built (vLLM's kernels, or PyTorch's headers it includes) was written for a "
        "newer ROCm than the one under /opt/rocm.",
        evidence=[c.log_evidence(event, name="the missing header", value=header)],
        actions=[
            "Build with the ROCm the vLLM release lists in its ROCm installation guide (vLLM's ROCm builds began at "
            "ROCm 5.7; its image's base names the version), and a PyTorch built for that same ROCm.",
            "`ls /opt/rocm*/` shows which ROCm releases are installed; ROCM_PATH (or /opt/rocm's link) chooses the one "
            "the build uses.",
        ],
        confidence=0.65,
    )


def _no_device(event: LogEvent) -> Finding:
    """vLLM's build knew no platform to build for: its target says CUDA, its PyTorch has none (setup.py, or CMake's
    `Can't find CUDA or HIP installation`); or, for the CPU, the build host's CPU has no instruction set it supports."""
    if event.component == "cpu":
        return _cpu_isa(event)
    if event.component == "cmake":
        return _cmake_no_gpu(event)
    return RULE_NOT_FOUND.finding(
        Severity.HIGH,
        "vLLM's build found no platform to build for (Unknown runtime environment): the PyTorch it builds against has "
        "no CUDA or ROCm, or VLLM_TARGET_DEVICE names a target it does not know",
        summary="vLLM's setup.py names the build from its target: CUDA when VLLM_TARGET_DEVICE is cuda (its default) "
        "and the PyTorch it imports was built with CUDA, ROCm likewise, or the CPU, TPU or XPU target the variable "
        "names; with none of them it stops with this error before compiling anything. pip builds in an isolated "
        "environment with a PyTorch of its own choosing from the index, which has no CUDA on some platforms (aarch64 "
        "before PyPI carried CUDA builds for it, Windows, macOS); a VLLM_TARGET_DEVICE that setup.py does not know "
        "ends the same way.",
        evidence=[c.log_evidence(event, name="vLLM's build", value=event.message)],
        actions=[
            "Install vLLM's wheel instead of building (`pip install vllm` where it publishes wheels: Linux x86_64 and "
            "aarch64), or its container image.",
            "To build for a GPU: install the CUDA PyTorch first, then build against it without isolation, as vLLM's "
            "installation guide does (`python use_existing_torch.py`, then `pip install -e . --no-build-isolation`).",
            "To build for the CPU: set VLLM_TARGET_DEVICE=cpu; a value setup.py does not know (a plugin's platform "
            "name) must be unset or set to one it does for the build.",
        ],
        confidence=0.8,
    )


def _cmake_no_gpu(event: LogEvent) -> Finding:
    """vLLM's CMakeLists.txt: the PyTorch it configures against found neither CUDA nor HIP."""
    return RULE_NOT_FOUND.finding(
        Severity.HIGH,
        "vLLM's CMake build found neither CUDA nor ROCm: the PyTorch it builds against is not a GPU build, or that "
        "build's toolkit is not where PyTorch's CMake looks",
        summary="vLLM's CMakeLists.txt takes the GPU language from the PyTorch it configures against: CUDA when that "
        "PyTorch is a CUDA build and its CMake finds nvcc, HIP when it is a ROCm build and finds ROCm; with neither "
        "it stops. A CPU-only PyTorch (pip's isolated build environment brings one on some platforms), a ROCm "
        'PyTorch beside another ROCm (`Could NOT find HIP: Found unsuitable version "0.0.0"` above it, vllm#6762) '
        "or a CUDA toolkit outside CUDA_HOME end the same way.",
        evidence=[c.log_evidence(event, name="vLLM's build", value=event.message)],
        actions=[
            '`python -c "import torch; print(torch.__version__, torch.version.cuda, torch.version.hip)"` in the '
            "build's Python: one of the two must be set, for the toolkit installed (`nvcc --version`, "
            "/opt/rocm/.info/version).",
            "Build against that PyTorch without isolation, as vLLM's installation guide does (`python "
            "use_existing_torch.py`, then `pip install -e . --no-build-isolation`), with CUDA_HOME (or ROCM_PATH) "
            "naming the toolkit; for the CPU, VLLM_TARGET_DEVICE=cpu.",
            "Or install vLLM's wheel or container image instead of building it.",
        ],
        confidence=0.7,
    )


def _cpu_isa(event: LogEvent) -> Finding:
    """cmake/cpu_extension.cmake: the build host's CPU has none of the instruction sets vLLM has CPU kernels for."""
    isas = re.sub(r"^vLLM CPU backend requires | (?:ISA )?support\.?$", "", event.message or "")
    avx512_only = isas.strip().upper() == "AVX512"
    actions = [
        "`grep -o -w 'avx512f\\|avx2' /proc/cpuinfo | sort -u` on the machine that builds: vLLM's CMake reads that "
        "machine's CPU flags, so a container build makes an image for the builder's CPU, not the server's.",
    ]
    if avx512_only:
        actions.insert(
            0,
            "Upgrade vLLM: its CPU backend required AVX512 up to 0.5.0 and builds for AVX2 from 0.5.0.post1 (vLLM PR "
            "#5452; the releases' cmake/cpu_extension.cmake).",
        )
    else:
        actions.append(
            "A CPU without any of them (an AVX-only Xeon, vllm#13662) cannot run vLLM's CPU backend: use a newer "
            "machine, or another engine (llama.cpp) for it."
        )
    return RULE_NOT_FOUND.finding(
        Severity.HIGH,
        f"vLLM's CPU build needs {isas.strip()}, which the CPU it builds on lacks"
        + (": AVX2 builds from vLLM 0.5.0.post1" if avx512_only else ""),
        summary="vLLM's CPU extension is compiled with the vector instructions of the machine that builds it; its "
        "CMake stops when that CPU has none it has kernels for.",
        evidence=[c.log_evidence(event, name="vLLM's CPU build", value=event.message)],
        actions=actions,
        confidence=0.8,
    )


RULES: list[Rule] = [RULE, RULE_NOT_FOUND]
