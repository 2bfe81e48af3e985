"""OP-7.207: the Apple-silicon ports of vLLM call mlx-lm as an older mlx-lm defined it.

Why a rule of its own: vllm-mlx and vllm-metal run models through mlx-lm, whose cache and batching classes changed
under them in 2026. mlx-lm 0.30.6 removed `MambaCache` (hybrid models' state now lives in `ArraysCache`, which takes a
`size`): vllm-mlx PR #40 met the import failing, vllm-mlx PR #160 its fallback building `ArraysCache()` without the
size, and vllm-metal pinned mlx-lm below 0.30.6 (vllm-metal#100, PR #106). mlx-lm 0.31 stopped taking
`prompt_progress_callback` in `BatchGenerator.__init__` (vllm-mlx#293, fixed in PR #294). vllm-mlx prints these as
`Engine loop error: ArraysCache.__init__() missing 1 required positional argument: 'size'`, which names neither
package's release, and repeats it for every request.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# mlx-lm's own class names in a call the installed mlx-lm refuses (the call's words may be cut after `()`), or the
# import of the class 0.30.6 removed
MLX_LM_DRIFT = re.compile(
    r"\b(?P<cls>ArraysCache|BatchGenerator)\.__init__\(\)(?:\s+(?P<refusal>got an unexpected keyword argument '\w+'"
    r"|missing \d+ required positional arguments?: [^\n]*))?\s*$"
    r"|cannot import name '(?P<removed>MambaCache)' from 'mlx_lm[\w.]*'"
)
# What changed in mlx-lm under each class, and the thread that says so
CHANGED: dict[str, str] = {
    "ArraysCache": "mlx-lm 0.30.6 removed MambaCache; hybrid models' state is an ArraysCache, which takes a size "
    "(vllm-mlx PR #160)",
    "MambaCache": "mlx-lm 0.30.6 removed MambaCache (vllm-mlx PR #40; vllm-metal pinned mlx-lm<0.30.6 in PR #106)",
    "BatchGenerator": "mlx-lm changes BatchGenerator's constructor between releases: 0.31 stopped taking "
    "prompt_progress_callback (vllm-mlx#293, fixed in vllm-mlx PR #294)",
}


def _drift_finding(_facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    cls = found["cls"] or found["removed"]
    if found["removed"]:
        said = f"the installed mlx-lm has no {cls}"
    else:
        said = f"the installed mlx-lm's {cls}.__init__() refused the port's call" + (
            f" ({found['refusal']})" if found["refusal"] else ""
        )
    return RULE.finding(
        Severity.CRITICAL,
        f"{said}: the MLX port of vLLM was written for an older mlx-lm",
        summary=f"vllm-mlx and vllm-metal run models through mlx-lm, and call its classes as the release they were "
        f"written for defined them. {CHANGED[cls]}. Every request (or the start) fails the same way until the port "
        "and mlx-lm are releases that go together; the model and the request are not the cause.",
        evidence=[c.log_evidence(event, name="mlx-lm class", value=cls)],
        actions=[
            "Upgrade the port (`pip install -U vllm-mlx`, or vllm-metal's install script), whose later releases "
            "follow mlx-lm's change.",
            'Or install the mlx-lm its release was written for (`pip install "mlx-lm<0.30.6"` for MambaCache and '
            'ArraysCache, `"mlx-lm<0.31"` for BatchGenerator); `pip show mlx-lm` says which is installed.',
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-7.207",
    title="an MLX port of vLLM calls mlx-lm as an older release defined it",
    category=Category.STARTUP,
    check=c.on_phrase(MLX_LM_DRIFT, _drift_finding, kinds=c.RELAYED_TOO),
    needs=("events",),
    page=RulePage(
        checks="`ArraysCache.__init__()` or `BatchGenerator.__init__()` refused (a missing `size`, an unexpected "
        "keyword), and `cannot import name 'MambaCache' from 'mlx_lm…'`.",
        why="vllm-mlx and vllm-metal call mlx-lm's cache and batching classes, which mlx-lm 0.30.6 and 0.31 changed.",
        example="`Engine loop error: ArraysCache.__init__() missing 1 required positional argument: 'size'` "
        "(vllm-mlx PR #160: mlx-lm 0.30.6 removed MambaCache).",
        fix="The port's release that follows mlx-lm, or the mlx-lm it was written for.",
        limits="Only these mlx-lm classes are read; other mlx-lm errors stay with the generic package readings.",
        references=[
            "https://github.com/waybarrios/vllm-mlx/pull/160",
            "https://github.com/waybarrios/vllm-mlx/issues/293",
            "https://github.com/vllm-project/vllm-metal/issues/100",
        ],
    ),
)

RULES: list[Rule] = [RULE]
