"""OP-7.67: a name imported from vLLM that the `vllm` Python found does not have.

Why a rule of its own: `ImportError: cannot import name 'X' from 'vllm…' (<where>)` is Python's, and its last words
say which `vllm` Python found, which decides the cause:

- `(unknown location)`: a namespace package. Python found a directory named `vllm` without an `__init__.py` on
  its path (the working directory, the script's folder, PYTHONPATH: most often a source checkout's root seen from
  its parent) and no regular `vllm` package on the path, so nothing vLLM's `__init__.py` defines exists. vLLM is
  then either not installed for this interpreter, or installed in editable mode (`pip install -e .`), whose import
  hook Python asks only after the path (vllm#594 and vllm#4554 after `pip install -e .`; vllm-ascend#5497, whose
  collect_env ran beside a folder named vllm);
- a file that is no package's `__init__.py` (`/home/me/vllm.py`): a file of the user's own, named vllm.py, found
  before the package;
- vLLM's own module (`…/site-packages/vllm/utils/__init__.py`): that module of the installed release lacks the
  name. vLLM moves names between modules from release to release (`FlexibleArgumentParser` left `vllm.utils` for
  `vllm.utils.argparse_utils` by 0.12: KeplerC/robo2VLM#3; `SamplerOutput` was importable from `vllm.sequence` in
  0.5.4, not in 0.6.1: OpenBMB/MiniCPM#236), so the code importing it was written for another release than the one
  installed; when that code is vLLM's own file, the installation mixes two releases.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.catalog.op7_install import COMPILED, importer_of
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

_NAME = re.compile(
    r"cannot import name '(?P<name>\w+)' from (?P<partial>partially initialized module )?'(?P<module>vllm(?:\.\w+)*)'"
    r"(?: (?:\(most likely due to a circular import\) )?\((?P<where>[^)]*)\)|\s*$|(?=[^\x00-\x7f]))"
)  # or the line ends in the reporter's own words in another script (`… from 'vllm.utils'报错`, VITA-MLLM/VITA#113)
# Names vLLM's top-level package has defined in every release: one missing is not vLLM's package at all.
_ALWAYS_TOP_LEVEL = ("__version__", "LLM", "SamplingParams")
# Python's own words (quoted names) for a module without one of them; vLLM's lazy __getattr__ (0.32) words its own
# refusal without quotes: `module vllm has no attribute X`.
_NO_ATTRIBUTE = re.compile(r"module 'vllm' has no attribute '(?P<name>" + "|".join(_ALWAYS_TOP_LEVEL) + ")'")
# Python's words for a name a module of vLLM's lacks when code reads it as an attribute (`vllm.inputs.data` after
# vLLM 0.19 moved that module, ray-project/ray#64275; `vllm.envs.is_set`, which older releases lack per Xinference's
# maintainer, xorbitsai/inference#3903): the same question as the import's, asked without `from`.
_MODULE_ATTRIBUTE = re.compile(r"module '(?P<module>vllm(?:\.\w+)+)' has no attribute '(?P<name>\w+)'")
# A compiled extension anywhere in the dotted name (`vllm._C.ops`): what it lacks is OP-7.16's question.
_COMPILED_PART = re.compile(r"\.(?:_\w*C|cumem_allocator)(?:\.|$)")
_WHICH = 'python -c "import vllm; print(vllm.__spec__.origin, list(vllm.__path__))"'


def _check_vllm_name(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR):
        finding = _read(event)
        if finding is not None:
            return [finding]
    return []


def _read(event: LogEvent) -> Finding | None:
    message = event.message or ""
    absent = _NO_ATTRIBUTE.search(message) if event.exception == "AttributeError" else None
    if absent is not None:
        return _namespace(event, absent["name"], "vllm", where_known=False)
    circular = "partially initialized module" in message or "circular import" in message
    read = _MODULE_ATTRIBUTE.search(message) if event.exception == "AttributeError" and not circular else None
    if read is not None and not _COMPILED_PART.search(f"{read['module']}.{read['name']}"):
        return _other_release(event, read["name"], read["module"], uses="reads")
    found = _NAME.search(message) if event.exception == "ImportError" else None
    if found is None:
        return None
    name, module, where = found["name"], found["module"], (found["where"] or "").strip()
    if COMPILED.match(f"{module}.{name}"):
        return None  # a compiled extension the vllm imported lacks: OP-7.16's
    if not where and module == "vllm" and name in _ALWAYS_TOP_LEVEL:  # pasted without Python's location
        return _namespace(event, name, module, where_known=False)
    if where == "unknown location":
        return _namespace(event, name, module)
    normalised = where.replace("\\", "/")
    if "/vllm/" not in normalised and normalised.endswith("vllm.py"):
        return _own_file(event, name, where)
    # a circular import inside vLLM's own files is another question
    return None if found["partial"] else _other_release(event, name, module)


def _namespace(event: LogEvent, name: str, module: str, where_known: bool = True) -> Finding:
    """`where_known`: Python said `unknown location`; without it (`module 'vllm' has no attribute '__version__'`), a
    file of one's own named vllm.py is as likely."""
    title = f"Python imported a folder named vllm, not the vLLM package: {name} is not in {module} (unknown location)"
    if not where_known:
        title = f"the vllm Python imported is not the vLLM package (it has no {name}): a folder named vllm or a file "
        title += "named vllm.py comes first on the path"
    return RULE_VLLM_NAME.finding(
        Severity.CRITICAL,
        title,
        summary=(
            "'unknown location' is Python's word for a namespace package: "
            if where_known
            else f"vLLM's package defines {name} in every release, so what Python imported as vllm is something "
            "else: a file of your own named vllm.py, or a namespace package, "
        )
        + "a directory named `vllm` without an `__init__.py` on the import path (the working directory, the "
        "script's folder, PYTHONPATH; a source checkout's root seen from its parent, most often), with no regular "
        "vllm package on the path. Nothing vLLM defines exists in it. vLLM is then either not installed for this "
        "interpreter, or installed in editable mode, whose import hook Python asks only after the path.",
        evidence=[c.log_evidence(event, name="root_exception", value=event.message)],
        actions=[
            f"See what Python imports: `{_WHICH}` prints None and the folder"
            + ("." if where_known else " (or the vllm.py file: rename it)."),
            "Run from a directory without a folder named vllm (or rename that folder); a source checkout is used "
            "from inside its root, or installed.",
            "Install vLLM for this interpreter (`python -m pip install vllm`, in the environment that runs the "
            "code); with an editable install that still fails, a non-editable one (`pip install .`).",
        ],
        confidence=0.85,
    )


def _own_file(event: LogEvent, name: str, where: str) -> Finding:
    return RULE_VLLM_NAME.finding(
        Severity.CRITICAL,
        f"a file named vllm.py ({where}) is imported instead of the vLLM package, so {name} is not found",
        summary="Python imports the first `vllm` on its path; a script or module of your own named vllm.py in the "
        "working directory or the script's folder comes before the installed package.",
        evidence=[c.log_evidence(event, name="root_exception", value=event.message)],
        actions=[f"Rename {where} (and delete its __pycache__), then run again.", f"Check with `{_WHICH}`."],
        confidence=0.9,
    )


def _other_release(event: LogEvent, name: str, module: str, uses: str = "imports") -> Finding:
    """`uses`: how the code reached the name, `imports` (ImportError) or `reads` (an attribute of the module)."""
    importer = importer_of(event.code_file or "")
    own = importer is None and c.installed_package(event.code_file) == "vllm"
    if own:
        title = f"vLLM's own code {uses} {name} from {module}, which the installed vLLM does not have: the "
        title += "installation mixes two vLLM releases"
    elif importer is not None:
        title = f"{importer} {uses} {name} from {module}, which the installed vLLM does not have: {importer} was "
        title += "written for another vLLM release"
    else:
        title = f"{name} is not in the installed vLLM's {module}: the code {uses[:-1]}ing it was written for another "
        title += "vLLM release"
    place = "top-level package" if module == "vllm" else module
    return RULE_VLLM_NAME.finding(
        Severity.CRITICAL,
        title,
        summary=f"The installed vLLM's {place} has no {name}. vLLM moves names between its modules from release to "
        "release (FlexibleArgumentParser left vllm.utils for vllm.utils.argparse_utils by 0.12), so code written "
        "against one release fails to import from another"
        + (
            ": here the importing file is vLLM's own, so its files come from two releases."
            if own
            else ". Plugins, forks, frameworks and scripts that import vLLM's internals are each written against one "
            "vLLM release."
        ),
        evidence=[c.log_evidence(event, name="root_exception", value=event.message)],
        actions=_reinstall() if own else _pair(importer),
        confidence=0.75,
    )


def _pair(importer: str | None) -> list[str]:
    who = importer.replace("_", "-") if importer else "the code"
    return [
        f"Install the vLLM release {who} was written for (its requirements, README or changelog name it; `pip show "
        "vllm` says which is installed), or a version of it made for the installed vLLM.",
        "For code of your own: import the name from where the installed release defines it now (grep the folder "
        '`python -c "import vllm; print(vllm.__file__)"` names for its definition).',
    ]


def _reinstall() -> list[str]:
    return [
        "Reinstall vLLM cleanly: `pip uninstall -y vllm` until none is left, then `pip install vllm==<release>`; a "
        "source checkout: one commit, then `pip install -e .` again.",
        f"Check which vLLM is imported: `{_WHICH}`.",
    ]


RULE_VLLM_NAME = Rule(
    code="OP-7.67",
    title="a name imported from vLLM that the vllm Python found does not have",
    category=Category.STARTUP,
    check=_check_vllm_name,
    needs=("events",),
    page=RulePage(
        checks="Python's `ImportError: cannot import name 'X' from 'vllm…' (<where>)`, read by its last words: "
        "`unknown location` (a namespace package), a file named vllm.py outside any package (`partially initialized "
        "module 'vllm'` included: a script named vllm.py importing from vllm), or vLLM's own module (with the "
        "importing frame's package, when the traceback shows it); `module 'vllm' has no attribute "
        "'__version__'` (or 'LLM', 'SamplingParams'), which vLLM's package always has; and `module 'vllm.X' has no "
        "attribute 'Y'`, a name of a vLLM module read as an attribute.",
        why="Which `vllm` Python found decides the cause: a folder named vllm on the path, a file of your own named "
        "vllm.py, or a release whose module lacks the name the importing code was written for.",
        example="`ImportError: cannot import name 'LLM' from 'vllm' (unknown location)` after `pip install -e .` "
        "(vllm#594, vllm#4554); `cannot import name 'FlexibleArgumentParser' from 'vllm.utils'` in code written "
        "for an older release (KeplerC/robo2VLM#3).",
        fix="Run away from a folder named vllm, or install vLLM for the interpreter; rename a vllm.py of your own; "
        "install the vLLM release the importing code was written for.",
        limits="Without the traceback's frames the importing code is unknown, and is named as such; a missing module "
        "(`No module named 'vllm.X'`) is OP-7.16's.",
        references=[
            "https://github.com/vllm-project/vllm/issues/594",
            "https://github.com/vllm-project/vllm/issues/4554",
            "https://github.com/vllm-project/vllm-ascend/issues/5497",
            "https://github.com/KeplerC/robo2VLM/issues/3",
            "https://github.com/OpenBMB/MiniCPM/issues/236",
            "https://github.com/xorbitsai/inference/issues/3903",
        ],
    ),
)

RULES: list[Rule] = [RULE_VLLM_NAME]
