"""OP-7.183: vLLM's CPU extension built on macOS cannot load: Apple clang 17's OpenMP symbol is missing at run time.

Why a rule of its own: on Apple silicon vLLM's CPU backend is built from source, and its compiled extension calls the
OpenMP runtime. Built with Apple clang 17 it calls `__kmpc_dispatch_deinit`, which the OpenMP runtime it loads does
not provide, so `import vllm._C` fails with the macOS loader's words: `ImportError("dlopen(…/vllm/_C.abi3.so, 0x0002):
symbol not found in flat namespace '___kmpc_dispatch_deinit'")` (the loader adds an underscore). vllm PR #16049, merged
into vLLM's macOS installation docs after vllm#15941, names the cause and the fix: remove the Command Line Tools and
install those of Xcode 16.1, whose clang reports version 15 or 16, then rebuild. It reads like a wheel built for
another PyTorch (OP-7.6), which it is not.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

KMPC_MISSING = re.compile(r"symbol not found in flat namespace '_*kmpc_dispatch_deinit'")


def _openmp_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE_MACOS_OPENMP.finding(
        Severity.CRITICAL,
        "vLLM's CPU extension was built with Apple clang 17, whose OpenMP call the runtime it loads lacks "
        "(__kmpc_dispatch_deinit): rebuild with the Command Line Tools of Xcode 16.1",
        summary="On macOS vLLM's CPU backend is compiled from source; Apple clang 17 emits a call to "
        "__kmpc_dispatch_deinit that the OpenMP runtime loaded at import does not provide, so vllm._C fails to "
        "load. Nothing is wrong with PyTorch or vLLM's Python code.",
        evidence=[c.log_evidence(event, name="the missing OpenMP symbol", value=match.group(0))],
        actions=[
            "Check the compiler: `clang --version` prints 17 for the tools that break it. Remove the Command Line "
            "Tools (`sudo rm -rf /Library/Developer/CommandLineTools`) and install those of Xcode 16.1 from Apple's "
            "developer downloads, so clang reports 15 or 16 (vLLM's macOS installation docs, vllm PR #16049).",
            "Then rebuild vLLM's CPU backend from a clean tree (`pip install -e .` after removing build/ and the "
            "old vllm/_C.abi3.so).",
        ],
        confidence=0.85,
    )


RULE_MACOS_OPENMP = Rule(
    code="OP-7.183",
    title="vLLM's CPU extension built with Apple clang 17 misses an OpenMP symbol",
    category=Category.STARTUP,
    check=c.on_phrase(KMPC_MISSING, _openmp_finding),
    needs=("events",),
    page=RulePage(
        checks="macOS's `symbol not found in flat namespace '___kmpc_dispatch_deinit'` importing vllm/_C.abi3.so.",
        why="vLLM built from source on a Mac does not import, in the loader's words about a symbol.",
        example='`ImportError("dlopen(/Users/…/vllm/_C.abi3.so, 0x0002): symbol not found in flat namespace '
        "'___kmpc_dispatch_deinit'\")` (vllm#15941; vllm PR #16049 documents the fix).",
        fix="The Command Line Tools of Xcode 16.1 (clang 15 or 16), then a clean rebuild.",
        limits="Names the compiler the docs name; a later Apple clang may carry a matching runtime.",
        references=["https://github.com/vllm-project/vllm/pull/16049"],
    ),
)

RULES: list[Rule] = [RULE_MACOS_OPENMP]
