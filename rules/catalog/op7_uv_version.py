"""OP-7.107: uv refuses `--torch-backend`, the flag vLLM's install guide passes it: the uv installed is older.

Why a rule of its own: vLLM's installation guide installs with `uv pip install vllm --torch-backend=auto`, which lets
uv pick the PyTorch index for the machine's CUDA driver (its quickstart from 0.9.0;
docs/getting_started/installation/gpu.cuda.inc.md in v0.21.0). uv added `--torch-backend` to `uv pip` as a preview in
its 0.6 series (0.6.10's release notes already extend it) and took the preview label off in 0.7.14
(astral-sh/uv #14119).
An older uv, as a base image or a provisioning script brings it, stops at its command line with clap's `error:
unexpected argument '--torch-backend' found`, so vLLM is never installed (skypilot-org/skypilot PR #6507: a
SkyServe replica's setup of vLLM failing so).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_uv_flag(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.UV_FLAG_UNKNOWN)
    if not events:
        return []
    return [
        RULE_UV_FLAG.finding(
            Severity.HIGH,
            "uv refused --torch-backend: the uv installed predates the flag vLLM's install guide uses, so vLLM was "
            "not installed",
            summary="`uv pip install vllm --torch-backend=auto` needs a uv that has the flag: it came as a preview "
            "in uv's 0.6 series and is stable from 0.7.14. This uv's command line does not know it and stopped "
            "before installing anything.",
            evidence=[c.log_evidence(events[0], name="uv's refusal", value=events[0].message)],
            actions=[
                "Upgrade uv first (`uv self update`, or `pip install -U uv` where pip installed it; `uv --version` "
                "shows 0.7.14 or later), then rerun the install.",
                "Or install without the flag, naming PyTorch's index for the driver's CUDA yourself: `uv pip install "
                "vllm --extra-index-url https://download.pytorch.org/whl/cu<XY>` (or plain pip).",
            ],
            confidence=0.85,
        )
    ]


RULE_UV_FLAG = Rule(
    code="OP-7.107",
    title="uv too old for --torch-backend",
    category=Category.STARTUP,
    check=_check_uv_flag,
    needs=("events",),
    page=RulePage(
        checks="uv's `error: unexpected argument '--torch-backend' found`.",
        why="vLLM's install guide passes --torch-backend=auto to uv; uv has it from its 0.6 series (stable in 0.7.14).",
        example="skypilot-org/skypilot PR #6507: a SkyServe replica's `uv pip install --torch-backend` refused.",
        fix="Upgrade uv (`uv self update`), or install with PyTorch's index named instead.",
        limits="The uv version is not in the error; `uv --version` shows it.",
        references=[
            "https://github.com/skypilot-org/skypilot/pull/6507",
            "https://github.com/astral-sh/uv/pull/14119",
        ],
    ),
)

RULES: list[Rule] = [RULE_UV_FLAG]
