"""OP-7.126: xFormers' compiled kernels do not load: the xformers wheel was built for another PyTorch than the one
installed.

Why a rule of its own: xFormers checks at import that its compiled extension matches the running PyTorch and CUDA,
and otherwise warns `WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:` followed by
`PyTorch 2.6.0+cu124 with CUDA 1204 (you have 2.5.1+cu121)` (xformers/_cpp_lib.py). Each xformers wheel is built
against exactly one PyTorch, and vLLM's releases pin both (V0, and V1 on GPUs older than FlashAttention's, attend
through xFormers), so the warning means a pip step installed an xformers for another torch: in vllm#13116 (vLLM 0.7.2,
torch 2.5.1+cu121, V100) an xformers built for PyTorch 2.6.0 sat beside the torch vLLM pinned.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_xformers_build(facts: Facts) -> list[Finding]:
    seen = facts.events_of(LogEventKind.XFORMERS_BUILD_MISMATCH)
    if not seen:
        return []
    built = next((e for e in seen if e.message), None)
    pair = f" (built for PyTorch {built.message}; installed {built.version})" if built and built.version else ""
    event = built or seen[0]
    return [
        RULE.finding(
            Severity.HIGH,
            f"xFormers' compiled kernels do not load: the xformers wheel was built for another PyTorch than the "
            f"installed one{pair}",
            summary="Each xformers wheel is built against one PyTorch and CUDA; vLLM pins both, and attends through "
            "xFormers in V0 and on GPUs without FlashAttention, so a mismatched xformers fails at the first "
            "attention call or leaves vLLM without the backend it picked.",
            evidence=[c.log_evidence(event, name="xFormers' build", value=event.message or event.raw)],
            actions=[
                "Install the xformers vLLM's release pins with its torch: `pip install vllm==<your version>` in a "
                "fresh environment (or `pip install --force-reinstall vllm==<version>`) rather than upgrading "
                "xformers or torch alone; `python -m xformers.info` then shows it loads.",
                "If another package wants a newer torch, install the vLLM release built for that torch instead of "
                "mixing the two.",
            ],
            confidence=0.8,
        )
    ]


RULE = Rule(
    code="OP-7.126",
    title="xformers built for another PyTorch",
    category=Category.STARTUP,
    check=_check_xformers_build,
    needs=("events",),
    page=RulePage(
        checks="xFormers' `xFormers can't load C++/CUDA extensions. xFormers was built for:` and the `PyTorch X with "
        "CUDA N (you have Y)` line under it.",
        why="An xformers wheel loads only with the PyTorch it was built for; vLLM pins the pair.",
        example="vLLM 0.7.2 with torch 2.5.1+cu121 and an xformers built for PyTorch 2.6.0 (vllm#13116).",
        fix="The xformers and torch vLLM's release pins, installed together with it.",
        limits="The first line alone does not say which PyTorch the wheel wants; the line under it does.",
        references=["https://github.com/vllm-project/vllm/issues/13116"],
    ),
)

RULES: list[Rule] = [RULE]
