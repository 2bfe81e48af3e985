"""OP-7.213: xformers refused the flash-attn package installed beside it.

Why a rule of its own: vLLM imports xformers (its attention layer and several vision encoders did, through 0.10 at
least), and xformers checks, on import, that a separately installed flash-attn is a release it was built against:
`ImportError: Requires Flash-Attention version >=2.7.1,<=2.8.2 but got 2.8.3.` (xformers/ops/fmha/flash.py). It is an
environment's pair of releases, not vLLM's: the flash-attn wheel is not one of vLLM's requirements (vLLM ships its
own FlashAttention build, vllm_flash_attn), so it came from another package or a manual install, and a torch upgrade
that pulls a newer flash-attn breaks it (OpenBMB/MiniCPM-V#974: vLLM 0.10.2's torch 2.8 with flash-attn 2.8.3 while
xformers took <= 2.8.2). xformers' own bypass, XFORMERS_IGNORE_FLASH_VERSION_CHECK=1, skips the check, not the
difference between the releases.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

RANGE_REFUSED = re.compile(
    r"Requires Flash-Attention version >=(?P<low>[\w.]+),<=(?P<high>[\w.]+) but got (?P<got>[\w.+]+?)\.?(?=\s|$|['\"])"
)


def _range_finding(_facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    low, high, got = found["low"], found["high"], found["got"]
    return RULE.finding(
        Severity.CRITICAL,
        f"xformers takes flash-attn {low} to {high} and {got} is installed: importing xformers fails",
        summary=f"xformers checks a separately installed flash-attn against the releases it was built for and "
        f"refuses {got}; vLLM imports xformers (its attention layer, vision encoders), so the engine stops at "
        "import. The flash-attn package is not one of vLLM's requirements (vLLM ships its own FlashAttention "
        "build): another package or a torch upgrade brought this release (OpenBMB/MiniCPM-V#974: torch 2.8 with "
        "flash-attn 2.8.3 beside an xformers that takes up to 2.8.2).",
        evidence=[c.log_evidence(event, name="xformers' check", value=f"flash-attn {got}, wants {low} to {high}")],
        actions=[
            f'Install a flash-attn xformers takes, built for the installed torch: `pip install "flash-attn>={low},'
            f'<={high}" --no-build-isolation`; or remove it (`pip uninstall flash-attn`) if nothing else in the '
            "environment needs it: xformers then uses PyTorch's own attention kernels.",
            "Or install the xformers release built for this torch (`pip install -U xformers`, matching the torch "
            "vLLM requires). XFORMERS_IGNORE_FLASH_VERSION_CHECK=1 only hides the check.",
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-7.213",
    title="xformers refused the flash-attn release installed beside it",
    category=Category.STARTUP,
    check=c.on_phrase(RANGE_REFUSED, _range_finding, kinds=c.RELAYED_TOO),
    needs=("events",),
    page=RulePage(
        checks="xformers' `Requires Flash-Attention version >=A,<=B but got C.`",
        why="xformers refuses a flash-attn release outside what it was built for, on import, and vLLM imports "
        "xformers; flash-attn is not vLLM's requirement, so another package or a torch upgrade installed it.",
        example="`ImportError: Requires Flash-Attention version >=2.7.1,<=2.8.2 but got 2.8.3.` from vLLM's "
        "attention layer importing xformers (OpenBMB/MiniCPM-V#974).",
        fix="flash-attn inside the range (or uninstalled), or the xformers built for the installed torch.",
        limits="Which package brought flash-attn is not in the line.",
        references=["https://github.com/OpenBMB/MiniCPM-V/issues/974"],
    ),
)

RULES: list[Rule] = [RULE]
