"""OP-7.194: building vLLM from source stopped when setuptools could not find a compiled extension to copy.

Why a rule of its own: vLLM's setup.py has CMake compile its extensions (`_C.abi3.so`, `_moe_C.abi3.so`, …) and then
copies each from the build folder by that name; `error: can't copy 'build/lib…/vllm/_C.abi3.so': doesn't exist or not
a regular file` means the file is not there under the name expected. Either the compile failed earlier (its error is
above this line, often far above) or CMake wrote it under another name: CMake 3.26.0 drops the `abi3` suffix, a bug
of that release (vllm#18748, vLLM's maintainer, who pointed to vllm PR #19019 as the fix), which CMake 3.26.1 and
later do not have.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

COMPILE_FAILED = "the compile failed earlier"


def _missing_finding(facts: Facts, event: LogEvent, _match: object) -> Finding:
    path = event.message or "the extension"
    name = path.rsplit("/", 1)[-1]
    abi3 = ".abi3." in name  # CMake 3.26.0's bug drops this suffix; a name without it has another cause
    earlier = f"{COMPILE_FAILED}, and its error is above this line"
    return RULE_BUILD_EXTENSION.finding(
        Severity.CRITICAL,
        f"building vLLM from source: {name} was not where setuptools copies it from ("
        + (f"{COMPILE_FAILED}, or CMake 3.26.0 named it without its abi3 suffix)" if abi3 else f"{earlier})"),
        summary="vLLM's setup.py has CMake compile its kernels into extensions and then copies each by its expected "
        f"name; {path} is not there. "
        + (
            "CMake 3.26.0 writes the file without the `abi3` suffix (vllm#18748, vLLM's maintainer); otherwise "
            f"{earlier}."
            if abi3
            else f"Most often {earlier}."
        ),
        evidence=[c.log_evidence(event, name="extension not built", value=path)],
        actions=(
            [
                "Check `cmake --version`: with 3.26.0, install a later CMake (`pip install 'cmake>=3.26.1'`) and build "
                "again from a clean tree (`rm -rf build`)."
            ]
            if abi3
            else []
        )
        + [
            "Find the first compile error above this line (`grep -n -m1 'error:'` on the build log): it is the "
            "cause, and this copy only its consequence.",
            "If no kernel of your own is needed, a released vLLM wheel needs no build at all.",
        ],
        confidence=0.75 if abi3 else 0.6,
    )


RULE_BUILD_EXTENSION = Rule(
    code="OP-7.194",
    title="a source build of vLLM missed a compiled extension at its copy step",
    category=Category.STARTUP,
    check=c.on_kind(LogEventKind.BUILD_EXTENSION_MISSING, _missing_finding),
    needs=("events",),
    page=RulePage(
        checks="setuptools' `error: can't copy '…/vllm/<extension>.so': doesn't exist or not a regular file`.",
        why="The extension was not compiled under the name setup.py copies: an earlier compile error, or CMake 3.26.0.",
        example="`error: can't copy 'build/lib.linux-x86_64-cpython-310/vllm/_C.abi3.so': doesn't exist or not a "
        "regular file` (vllm#18748: CMake 3.26.0; 3.26.1 or later builds it).",
        fix="CMake 3.26.1 or later and a clean build; else the first compile error above.",
        limits="Which of the two it is needs the CMake version or the lines above.",
        references=["https://github.com/vllm-project/vllm/issues/18748"],
    ),
)

RULES: list[Rule] = [RULE_BUILD_EXTENSION]
