"""OP-7.16: vLLM cannot import one of its own modules — an incomplete install, or a `vllm` folder that shadows it.

Why a rule of its own: `No module named 'vllm.X'` is Python's, not vLLM's, and no version of any other package
fixes it. Either the package installed lacks the module (a build that left a folder out, a half-finished upgrade,
two installs over each other), or Python imported another `vllm` first: a source checkout on the path, or the
working directory holding a `vllm/` folder. The traceback's frames say which: vLLM's files under site-packages are
an install; anywhere else, a checkout. Source: vllm-project/vllm-ascend#707 (`No module named
'vllm.benchmarks.serve'` from a checkout at /workspace/vllm; copying the missing folder in fixed it).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import VLLM_MODULE_MISSING, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# no vllm at all: the interpreter (a Ray worker's, a container's) has none to import
_NO_VLLM = re.compile(r"No module named (?:'vllm'|vllm(?![\w.']))")
# vLLM's compiled extensions, built from csrc/ by a source build or shipped in its wheels (`vllm._C`, `vllm._moe_C`,
# `vllm._rocm_C`, `vllm.vllm_flash_attn._vllm_fa2_C`, `vllm.cumem_allocator`): the Python tree alone has none.
COMPILED = re.compile(r"^vllm(?:\.\w+)*\.(?:_\w*C|cumem_allocator)$")
# `from vllm import _C` refused: the same missing extension in Python's other words.
_COMPILED_NAME = re.compile(r"cannot import name '(?P<name>_\w*C|cumem_allocator)' from '(?P<package>vllm(?:\.\w+)*)'")
# vLLM 0.4's _custom_ops.py imported its compiled ops as `vllm_ops` and `vllm_cache_ops` inside a try that only logs
# "Failed to import from vllm._C with …", so the first kernel call then fails on the name (vllm#4275, a CPU image).
_UNLOADED_OPS = re.compile(r"name '(?:vllm_ops|vllm_cache_ops)' is not defined")
# A vLLM plugin or fork by its package's name, in a checkout or installed (`…/vllm-omni/vllm_omni/…`).
_PLUGIN = re.compile(r"[/\\](?P<package>vllm_[a-z0-9_]+)[/\\]")


def _check_own_module(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.MODULE_NOT_FOUND):
        if event.message == "vllm":
            return [_no_vllm_finding(event)]
        if (event.message or "").startswith("vllm."):
            return [_own_module_finding(event, event.message or "")]
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR):
        if event.exception == "NameError" and _UNLOADED_OPS.search(event.message or ""):
            return [_compiled_finding(event, "vllm._C", logged_why=True)]
        if event.exception not in ("ModuleNotFoundError", "ImportError"):
            continue
        # a framework's in-process wrapper saying the same is OP-7.92's: its server client is the fix there
        if _NO_VLLM.search(event.message or "") and not facts.events_of(LogEventKind.VLLM_IN_PROCESS_MISSING):
            return [_no_vllm_finding(event)]
        found = VLLM_MODULE_MISSING.search(event.message or "")
        if found:
            return [_own_module_finding(event, found["module"])]
        named = _COMPILED_NAME.search(event.message or "")
        if named:
            return [_compiled_finding(event, f"{named['package']}.{named['name']}")]
    unbuilt = facts.events_of(LogEventKind.VLLM_VERSION_UNBUILT)
    return [_unbuilt_tree_finding(unbuilt[0])] if unbuilt else []


def _unbuilt_tree_finding(event: LogEvent) -> Finding:
    """vllm/_version.py is written when the package is built (setuptools-scm); a tree without it was never built, so
    its compiled kernels are most likely missing too (vllm#15592: `No module named 'vllm._C'` followed)."""
    where = event.component or ""
    root = where.rsplit("/vllm/", 1)[0] + "/vllm" if "/vllm/" in where else None
    return RULE_OWN_MODULE.finding(
        Severity.HIGH,
        "the vllm Python imported has no _version.py"
        + (f" ({root})" if root else "")
        + ": a source tree that was never built or installed, so its compiled kernels are most likely missing too",
        summary="Building vLLM's package writes vllm/_version.py (setuptools-scm); vllm/version.py warns `Failed to "
        "read commit hash` when it is missing and calls itself version dev. A wheel or a built checkout has it: "
        "this vllm is Python source on the path (a checkout, or the working directory), and the first import of "
        "its kernels (vllm._C) fails next.",
        evidence=[c.log_evidence(event, name="vLLM's version file missing", value=where or None)],
        actions=[
            "Check which vllm Python imports: `python -c 'import vllm; print(vllm.__file__)'`; run from outside a "
            "source checkout, or install vLLM's wheel (`pip install vllm` on Linux).",
            "To work on the checkout, build it: `VLLM_USE_PRECOMPILED=1 pip install -e .` (Python-only changes, the "
            "matching wheel's kernels) or `pip install -e .` (compiles them; CUDA toolkit needed).",
        ],
        confidence=0.75,
    )


def importer_of(path: str) -> str | None:
    """The package whose frame imports a vLLM module, when it is not vLLM: a plugin or fork (`vllm_omni`,
    `vllm_ascend`, in a checkout or installed) or any installed package."""
    plugin = _PLUGIN.search(path)
    package = plugin["package"] if plugin else c.installed_package(path)
    return package if package != "vllm" else None


def _own_module_finding(event: LogEvent, module: str) -> Finding:
    if COMPILED.match(module):
        return _compiled_finding(event, module)
    where = event.code_file or ""
    importer = importer_of(where)
    if importer is not None:
        return _importer_finding(event, module, importer)
    checkout = bool(where) and c.installed_package(where) != "vllm"
    root = where.split("/vllm/", 1)[0] + "/vllm" if checkout and "/vllm/" in where else None
    # with no frame, the importer is unknown and the catalog's dates say which release it expected; vLLM's own frame
    # importing its own module is one release, whose file is missing (an incomplete install)
    if not where and (event.known_in_release or event.known_releases):
        return _dated_module_finding(event, module)
    title = f"vLLM cannot import its own module {module}: "
    title += f"the vLLM imported is a source checkout ({root}) that lacks it" if root else "the installed vLLM lacks it"
    return RULE_OWN_MODULE.finding(
        Severity.CRITICAL,
        title,
        summary=f"Python found a `vllm` package without {module}. "
        + (
            f"The traceback runs in {root}, not in site-packages: a checkout on the path (or the working directory) "
            "is imported before any installed vLLM, and its tree is not the one the code expects."
            if root
            else "The install is incomplete: a build that left the folder out, an upgrade that did not finish, or "
            "two installs over each other."
        ),
        evidence=[c.log_evidence(event, name="missing vLLM module", value=module)],
        actions=[
            f"Run vLLM from a directory without a `vllm/` folder, or finish the checkout: `git status` in {root}, "
            "then `pip install -e .` from the complete tree (a folder copied in from the matching release also "
            "works)."
            if root
            else "Reinstall vLLM cleanly: `pip uninstall -y vllm` (until none is left), then `pip install "
            "vllm==<release>`.",
            "Check which vLLM Python imports: `python -c 'import vllm, sys; print(vllm.__file__)'`.",
        ],
        confidence=0.8,
    )


def _dated_module_finding(event: LogEvent, module: str) -> Finding:
    """One of vLLM's modules that only some releases have, pasted without a frame: most often the vLLM imported is
    another release than the code that imports it was written for (OpenPipe/ART PR #501: `vllm.utils.argparse_utils`
    on vLLM 0.11.0; pinning 0.13.0 fixed it), but a checkout on the path or an incomplete build hides the module too
    (vllm-project/vllm-ascend#725: a source tree in the working directory), so which vLLM Python imports is checked
    first."""
    added = event.known_in_release is not None
    first, _, last = (event.known_releases or "").partition("–")
    span = f"in vLLM {event.known_in_release} and later" if added else f"in vLLM {first}"
    span += f" to {last}" if not added and last != first else ""
    pin = f"vllm>={event.known_in_release}" if added else f"vllm=={last}.*"
    # a module that went away may also be one the installed release is too old for: only its end is a certainty
    relation = "an older release than" if added else "another release than"
    return RULE_OWN_MODULE.finding(
        Severity.CRITICAL,
        f"vLLM cannot import its own module {module}, which the catalog finds {span} only: the vLLM imported is "
        f"{relation} the code importing it expects, or not the install you think",
        summary=f"vLLM's messages place {module} {span} (as far as the message catalog reads vLLM's source, 0.4 "
        "on). A vLLM without it is most often another release than the one the importing code (a framework, a "
        "plugin, an entry point of another release) was written for; a source checkout on the path or a build that "
        "left files out hides it too.",
        evidence=[c.log_evidence(event, name="missing vLLM module", value=module)],
        actions=[
            "Check which vLLM Python imports: `python -c 'import vllm; print(vllm.__version__, vllm.__file__)'` (a "
            "path outside site-packages is a checkout on the path: run from another directory).",
            f"Then install a vLLM release that has it (`pip install '{pin}'`, or the release the importing code "
            "pins), or a release of that code written for the installed vLLM.",
        ],
        confidence=0.75,
    )


def _compiled_finding(event: LogEvent, module: str, logged_why: bool = False) -> Finding:
    """A compiled extension of vLLM's missing: the vllm imported is Python source whose kernels were never built.
    `logged_why`: the failure is the later call's, and vLLM logged the import's own error when it started."""
    why = (
        [
            "vLLM logged the import's own error when it started: `Failed to import from vllm._C with …`. An extension "
            "that exists but does not load (a missing library, an undefined symbol) is named there; read it first."
        ]
        if logged_why
        else []
    )
    return RULE_OWN_MODULE.finding(
        Severity.CRITICAL,
        f"the vllm Python imported has no compiled kernels ({module}): a source tree whose build never made them, or "
        "a vLLM built without them",
        summary=f"{module} is one of vLLM's compiled extensions (its C++ and CUDA kernels), which a source build "
        "compiles and vLLM's wheels ship; the Python files alone do not have it. The vllm imported lacks it: a "
        "source checkout on the path or as the working directory, an editable install whose kernels were never "
        "built or downloaded, or pip building the source distribution on a platform vLLM publishes no wheel for "
        "(Windows: vllm#15286).",
        evidence=[c.log_evidence(event, name="missing vLLM extension", value=module)],
        actions=[
            *why,
            "Check which vllm Python imports: `python -c 'import vllm; print(vllm.__file__)'`; run from outside a "
            "source checkout (its root holds a vllm/ folder without the kernels).",
            "Install vLLM's wheel (`pip install vllm` on Linux), or build the checkout: `VLLM_USE_PRECOMPILED=1 pip "
            "install -e .` downloads the kernels of the matching wheel for a Python-only change, `pip install -e .` "
            "compiles them (CUDA toolkit needed).",
        ],
        confidence=0.8,
    )


def _importer_finding(event: LogEvent, module: str, importer: str) -> Finding:
    """Another package importing a module the installed vLLM lacks: the two are not versions built together."""
    name = importer.replace("_", "-")
    return RULE_OWN_MODULE.finding(
        Severity.CRITICAL,
        f"{importer} imports vLLM's module {module}, which the installed vLLM lacks: {name} and vLLM are not the "
        "versions built together",
        summary=f"The traceback runs in {importer}, which imports {module} from vLLM; the installed vLLM has no such "
        "module, so it is a release that renamed or removed it (or one from before it existed). A plugin or fork "
        "of vLLM, and any framework that imports vLLM's internals, is written against one vLLM version.",
        evidence=[c.log_evidence(event, name="missing vLLM module", value=module)],
        actions=[
            f"Install the vLLM version {name} requires (`pip show {name}` lists it; its README or requirements pin "
            f"it), or a {name} release made for the installed vLLM (`pip show vllm` says which is installed).",
            "Check which vLLM Python imports: `python -c 'import vllm, sys; print(vllm.__version__, vllm.__file__)'`.",
        ],
        confidence=0.8,
    )


def _no_vllm_finding(event: LogEvent) -> Finding:
    """A Python that imports no vllm at all (`python -m vllm…`, or any import of it): not installed for that
    interpreter, or hidden (ipex-llm#11944: a volume mounted over the image's /llm; OpenRLHF#400: a Ray job whose
    workers' environment lacked what `pip list` showed on the driver)."""
    started = event.kind == LogEventKind.MODULE_NOT_FOUND
    return RULE_OWN_MODULE.finding(
        Severity.CRITICAL,
        f"the Python that started the server has no vllm package (python -m {event.component or 'vllm'})"
        if started
        else "the Python that imported vllm has none: not installed for that interpreter, or hidden from it",
        summary=(
            f"The Python that started the server found no `vllm` to import, so it could not even look for "
            f"{event.component or 'the entrypoint'}. "
            if started
            else "Python found no `vllm` package at all. "
        )
        + "Either vLLM is not installed for that interpreter (another Python or virtual environment than the one it "
        "was installed in, or a Ray worker's environment rather than the driver's), or, in a container, a volume "
        "mounted over the directory it is installed in hides it: a mount replaces everything under its target.",
        evidence=[c.log_evidence(event, name="missing module", value="vllm")],
        actions=[
            "In a container: mount models and caches somewhere the image keeps nothing (not over its working "
            "directory or its site-packages: ipex-llm#11944 mounted over /llm), and check the image's own command "
            "still starts (`docker run IMAGE --help`).",
            "Outside one: run the interpreter vLLM was installed for (`<venv>/bin/python -m …`, or `vllm serve`), "
            "and check with `python -c 'import vllm, sys; print(vllm.__file__, sys.executable)'`.",
            "Under Ray, workers import from the environment Ray gives them, not the driver's: install vLLM on every "
            "node's Python, or pass it in the job's runtime environment (`ray job submit --runtime-env-json "
            '\'{"pip": ["vllm==<version>"]}\'`; OpenRLHF#400).',
        ],
        confidence=0.7,
    )


RULE_OWN_MODULE = Rule(
    code="OP-7.16",
    title="vLLM cannot import one of its own modules",
    category=Category.STARTUP,
    check=_check_own_module,
    needs=("events",),
    page=RulePage(
        checks="Python's `No module named 'vllm.X'` (ModuleNotFoundError or ImportError); whether the traceback's last "
        "frame is under site-packages (an install) or elsewhere (a source checkout). A compiled extension "
        "(`vllm._C`, `vllm._moe_C`, `vllm.cumem_allocator`; also as `cannot import name '_C' from 'vllm'`) is a vllm "
        "without its kernels: a source tree never built, or a platform vLLM publishes no wheel for; "
        "vllm/version.py's `RuntimeWarning: Failed to read commit hash` (no vllm/_version.py, which a build writes) "
        "is such a tree before its kernels are imported.",
        why="No other package's version fixes a module vLLM itself lacks: the tree Python imported is incomplete or "
        "not the installed one.",
        example="`from vllm.benchmarks.serve import add_cli_args, main` / `ModuleNotFoundError: No module named "
        "'vllm.benchmarks.serve'` from /workspace/vllm (vllm-project/vllm-ascend#707).",
        fix="A clean install, or a complete checkout; never a `vllm/` folder in the working directory.",
        limits="Reads the module and the frame's path. Pasted without a frame, the module is dated by the releases "
        "whose source the message catalog places vLLM's messages in (a module that says nothing is not dated, and "
        "one that spoke late is dated late). A frame in another package (a plugin such as vllm_omni, a framework) is "
        "that package's version against vLLM's, not an incomplete vLLM.",
        references=[
            "https://github.com/vllm-project/vllm-ascend/issues/707",
            "https://github.com/vllm-project/vllm/issues/15286",
        ],
    ),
)

RULES: list[Rule] = [RULE_OWN_MODULE]
