"""What vLLM's offline `LLM` class prints while it works: the progress bar of `LLM.generate` (and `encode`, `embed`,
`score`), `Processed prompts: 33%|███▍ | 769/2343 [00:07<00:12, 124.65it/s]`, which later releases end with `, est.
speed input: 3431.00 toks/s, output: 1062.00 toks/s` (vllm/entrypoints/common/offline.py, 0.32).

Why read: a batch job has no stats line and no /metrics, so its progress bar is the only measurement a person pastes
in a complaint about an offline run. tqdm redraws the bar in place with a carriage return; a log file keeps every
redraw, which the reader splits into lines, so a paste holds the bar's history: prompts done against its own clock.
"""

from __future__ import annotations

import re

from advisor.collect.log_patterns.pattern import Fields, Pattern, to_float, wording
from rules.events import LogEventKind as K


def _seconds(clock: str) -> float:
    """tqdm's `MM:SS` or `H:MM:SS` as seconds."""
    seconds = 0.0
    for part in clock.split(":"):
        seconds = seconds * 60 + float(part)
    return seconds


def _progress(match: re.Match[str]) -> Fields:
    rate = to_float(match["rate"]) if match["rate"] != "?" else None
    if rate is not None and match["unit"] == "s/it":
        rate = 1 / rate if rate else None  # tqdm turns a rate below one prompt a second into seconds per prompt
    return {
        "prompts_done": int(match["done"]),
        "prompts_total": int(match["total"]),
        "elapsed_s": _seconds(match["elapsed"]),
        "requests_per_s": rate,
        "prompt_throughput_tps": to_float(match["input"]),
        "generation_throughput_tps": to_float(match["output"]),
    }


PATTERNS: tuple[Pattern, ...] = (
    wording(
        ("Processed prompts:",),
        K.OFFLINE_PROGRESS,
        r"Processed prompts:\s*\d+%\|[^|]*\|\s*(?P<done>\d+)/(?P<total>\d+)\s*"
        r"\[(?P<elapsed>\d+(?::\d+)+)<[^,\]]*,\s*(?P<rate>[\d.]+|\?)\s*(?P<unit>it/s|s/it)"
        r"(?:,\s*est\. speed input:\s*(?P<input>[\d.]+) toks/s,\s*output:\s*(?P<output>[\d.]+) toks/s)?",
        _progress,
    ),
)
