"""OP-7.45: a compiled binary needs a newer glibc or libstdc++ than the system it runs on has.

Why a rule of its own: a binary records the version of each C and C++ runtime symbol it was linked against, and the
dynamic loader refuses to load it where the system's library is older: `/lib/x86_64-linux-gnu/libc.so.6: version
`GLIBC_2.32' not found (required by …/vllm/_C.abi3.so)`, or for the C++ runtime `libstdc++.so.6: version
`GLIBCXX_3.4.30' not found`. It names the binary and the version asked for, and says nothing wrong with vLLM: the
wheel was built for a newer operating system than this one (glibc comes with the OS and is not upgraded on its own),
or, for libstdc++, the loader found an older copy first, most often a conda environment's own lib/ directory.
"""

from __future__ import annotations

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
    who = f"{owner}'s compiled library ({binary.rsplit('/', 1)[-1]})" if owner else f"the binary {binary}"
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

RULES: list[Rule] = [RULE]
