"""OP-7.172: bitsandbytes' compiled library did not load, so its functions are called on None.

Why a rule of its own: bitsandbytes loads its CUDA library when it is imported (bitsandbytes/cextension.py) and,
when that fails, logs `Could not load bitsandbytes native library: <reason>` and goes on with `lib` set to None; the
first quantize call then fails far from the cause, as Python's `AttributeError: 'NoneType' object has no attribute
'cquantize_blockwise_fp16_nf4'` (the C function it looked up). vLLM calls those functions when it loads or quantizes
a bitsandbytes model (`--quantization bitsandbytes`), so the words reach vLLM's users too (vllm#11610, vLLM 0.6.6 with
bitsandbytes 0.45.0). The cause is the bitsandbytes install, not vLLM or the model: bitsandbytes#1467 shows the load
failing on `libcusparse.so.11: cannot open shared object file` (a bitsandbytes built for a CUDA the installed torch
does not ship), and bitsandbytes#1210's reporters fixed the same AttributeError by installing another bitsandbytes
release.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# bitsandbytes' C functions called on the library it failed to load, or its own words when the load failed
BNB_LIBRARY_MISSING = re.compile(
    r"'NoneType' object has no attribute '(?P<function>c(?:quantize|dequantize|adam|gemm|igemm|get_managed_ptr"
    r"|prefetch|fill|matmul)\w*)'"
    r"|Could not load bitsandbytes native library: (?P<reason>.+)"
)


def _bnb_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    reason = (match["reason"] or "").strip()
    evidence = c.log_evidence(event, name="bitsandbytes", value=match["function"] or reason)
    evidence.description = (
        f"bitsandbytes' C function {match['function']}, looked up on the library it did not load"
        if match["function"]
        else "bitsandbytes' own reason for not loading its library"
    )
    look = (
        []
        if reason
        else [
            "Look above for bitsandbytes' own line, `Could not load bitsandbytes native library: <reason>`, or run "
            "`python -m bitsandbytes` in the server's environment: the reason names what is missing (a CUDA library "
            "such as libcusparse.so.11 for a CUDA the installed torch does not ship)."
        ]
    )
    return RULE_BNB_LIBRARY.finding(
        Severity.CRITICAL,
        f"bitsandbytes' compiled library did not load ({reason}): its binary does not fit this machine"
        if reason
        else "bitsandbytes' compiled library did not load: the installed bitsandbytes has no binary for this CUDA, "
        "or the CUDA libraries it needs are missing",
        summary="bitsandbytes loads its CUDA library when it is imported and, when that fails, goes on without it; "
        "the first quantize call then finds None where the library should be. vLLM and the model are not at "
        "fault: the bitsandbytes install does not match the torch and CUDA beside it.",
        evidence=[evidence],
        actions=[
            *look,
            "Reinstall bitsandbytes as a release built for the installed torch's CUDA (`python -c 'import torch; "
            "print(torch.__version__, torch.version.cuda)'`): bitsandbytes#1210's reporters fixed the same error by "
            "moving to another release; vLLM's bitsandbytes loader names the least release it takes.",
            "Check that the process sees a GPU (`python -c 'import torch; print(torch.cuda.is_available())'`): "
            "without one bitsandbytes has only its CPU build to load.",
        ],
        confidence=0.9,  # above OP-7.14's reading of the library the reason names: the words say whose load it was
    )


def _check_bnb_library(facts: Facts) -> list[Finding]:
    """The phrase in an unplaced error or line, or in the raw line of a missing CUDA library bitsandbytes named as its
    reason (OP-7.14 reads the library; the line says whose load it was)."""
    found = c.first_match(facts, BNB_LIBRARY_MISSING)
    if found is None:
        found = next(
            (
                (event, match)
                for event in facts.events_of(LogEventKind.CUDA_LIBRARY_MISSING)
                if (match := BNB_LIBRARY_MISSING.search(event.raw or "")) is not None
            ),
            None,
        )
    return [_bnb_finding(facts, *found)] if found is not None else []


RULE_BNB_LIBRARY = Rule(
    code="OP-7.172",
    title="bitsandbytes' compiled library did not load",
    category=Category.STARTUP,
    check=_check_bnb_library,
    needs=("events",),
    page=RulePage(
        checks="Python's `'NoneType' object has no attribute 'cquantize_blockwise_fp16_nf4'` (or another of "
        "bitsandbytes' C functions), and bitsandbytes' `Could not load bitsandbytes native library: <reason>`.",
        why="bitsandbytes goes on without its library when the load fails, and fails at the first quantize call; "
        "a bitsandbytes model in vLLM never loads.",
        example="`AttributeError: 'NoneType' object has no attribute 'cquantize_blockwise_fp16_nf4'` (vllm#11610: "
        "vLLM 0.6.6 with bitsandbytes 0.45.0; bitsandbytes#1467: libcusparse.so.11 missing).",
        fix="Reinstall bitsandbytes for the installed torch's CUDA; `python -m bitsandbytes` names what is missing.",
        limits="The AttributeError alone does not say why the library did not load; bitsandbytes' own line above "
        "it does.",
        references=[
            "https://github.com/vllm-project/vllm/issues/11610",
            "https://github.com/bitsandbytes-foundation/bitsandbytes/issues/1467",
            "https://github.com/bitsandbytes-foundation/bitsandbytes/issues/1210",
        ],
    ),
)

RULES: list[Rule] = [RULE_BNB_LIBRARY]
