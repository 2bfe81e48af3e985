"""OP-7.138: Intel MKL's threading layer refuses the GNU OpenMP runtime already loaded in the process.

Why a rule of its own: mkl-service (conda's numpy and scipy are built on Intel MKL) checks at import that its
threading layer can live with the OpenMP runtime already in the process, and stops when it cannot: `Error:
mkl-service + Intel(R) MKL: MKL_THREADING_LAYER=INTEL is incompatible with libgomp-a34b3233.so.1 library.` PyTorch's
wheels bring GNU's libgomp, so importing torch before an MKL numpy (vLLM's model inspection subprocess does, in
vllm/model_executor/models/registry.py) meets it, and vLLM reports the inspection failed (vllm#9678, vLLM 0.6: it
appeared only when another package was imported first; the maintainer's answer was a different numpy). mkl-service's
own words name the ways out: the GNU threading layer, or forcing Intel's.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

MKL_CONFLICT = re.compile(
    r"mkl-service \+ Intel\(R\) MKL: MKL_THREADING_LAYER=(?P<layer>\w+) is incompatible with (?P<lib>\S+?) library"
)


def _mkl_threading_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE.finding(
        Severity.CRITICAL,
        f"Intel MKL's {match['layer']} threading layer refused the OpenMP runtime already loaded ({match['lib']}, "
        "PyTorch's): an MKL-built numpy imported after torch",
        summary="PyTorch's wheels load GNU's OpenMP runtime; an MKL-built numpy or scipy (conda's) imported "
        "after it finds its own threading layer incompatible and stops the process. vLLM imports torch first, "
        "in the server and in its model inspection subprocess, so the inspection fails.",
        evidence=[c.log_evidence(event, name="mkl-service's refusal", value=match.group(0))],
        changes=[
            ConfigChange(
                flag="MKL_THREADING_LAYER",
                current=match["layer"],
                proposed="GNU",
                reason="MKL then threads with the GNU OpenMP runtime PyTorch already loaded",
                kind="env",
            )
        ],
        actions=[
            "Or install numpy from PyPI (`pip install --force-reinstall numpy` in the server's environment: "
            "PyPI's numpy uses OpenBLAS, not MKL), as vLLM's maintainer advised in vllm#9678.",
            "MKL_SERVICE_FORCE_INTEL=1 also silences the check, keeping both runtimes in one process; prefer the "
            "GNU layer.",
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-7.138",
    title="Intel MKL's threading layer against PyTorch's OpenMP runtime",
    category=Category.STARTUP,
    check=c.on_phrase(MKL_CONFLICT, _mkl_threading_finding),
    needs=("events",),
    page=RulePage(
        checks="mkl-service's `Error: mkl-service + Intel(R) MKL: MKL_THREADING_LAYER=INTEL is incompatible with "
        "libgomp….so.1 library.`",
        why="An MKL-built numpy imported after torch stops the process; in vLLM's model inspection subprocess that "
        "reads as the model's architecture failing to load.",
        example="vLLM 0.6 failing to inspect a model only when another package was imported first (vllm#9678).",
        fix="MKL_THREADING_LAYER=GNU in the server's environment, or PyPI's numpy instead of an MKL build.",
        limits="Reads mkl-service's words only; the other OpenMP conflicts (two libgomp copies, libiomp5 with "
        "libgomp) are not this rule's.",
        references=["https://github.com/vllm-project/vllm/issues/9678"],
    ),
)

RULES: list[Rule] = [RULE]
