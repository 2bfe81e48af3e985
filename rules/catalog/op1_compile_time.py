"""OP-1.14: torch.compile takes most of a start-up.

Why a rule of its own: vLLM's V1 engine compiles the model with torch.compile before it serves and says how long
all of it took (`torch.compile takes 2222.52 s in total`, vllm/compilation/monitor.py). The compiled artifacts are
cached under VLLM_CACHE_ROOT (~/.cache/vllm/torch_compile_cache by default) and reused when the model and its
compilation settings are the same, so a long compile that recurs at every start is a cache that does not survive
the restart (a container without that directory on a volume) or a key that changes. Where the compile cannot be
cut, it can be skipped at the price of speed. In vllm#34399 Nemotron 3 under Ray Data compiled for over half an
hour; the maintainers asked for `vllm bench startup` and no cause was confirmed.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity
from rules.signals import fmt

LONG_COMPILE_S = 300.0  # five minutes of compilation at each start is worth a finding


def _check_compile_time(facts: Facts) -> list[Finding]:
    events = [e for e in facts.events_of(LogEventKind.COMPILE_TOTAL) if (e.init_seconds or 0) >= LONG_COMPILE_S]
    if not events:
        return []
    event = max(events, key=lambda e: e.init_seconds or 0)
    seconds = event.init_seconds or 0
    eager = c.eager_mode(
        "no torch.compile and no CUDA graphs: the start skips the compile entirely",
        cost="slower decode (eager kernels, launches instead of graph replays)",
    )
    return [
        RULE.finding(
            Severity.MEDIUM,
            f"torch.compile took {fmt(seconds)} s ({seconds / 60:.0f} min) of the start-up",
            summary="vLLM compiles the model before it serves and caches the result under VLLM_CACHE_ROOT: a first "
            "start compiles, later starts with the same settings load it. If this repeats at each start, the cache "
            "is not kept or its key changes.",
            evidence=[
                c.log_evidence(event, "torch.compile seconds", round(seconds, 2), LONG_COMPILE_S, ">=", "s"),
            ],
            alternatives=[] if facts.config is not None and facts.config.enforce_eager else [eager],
            actions=[
                "Keep the compile cache across restarts: put VLLM_CACHE_ROOT (default ~/.cache/vllm) on a volume the "
                "pod or container keeps, and start with the same model, flags and vLLM version, so the next start "
                "loads the artifacts instead of compiling (the log then says it loaded the compiled graphs).",
                "`vllm bench startup` (in releases that have it) measures the start with and without a warm cache, "
                "as vllm#34399's maintainers asked.",
            ],
            confidence=0.75,
        )
    ]


RULE = Rule(
    code="OP-1.14",
    title="torch.compile takes most of the start-up",
    category=Category.STARTUP,
    check=_check_compile_time,
    needs=("events",),
    page=RulePage(
        checks=f"V1's `torch.compile takes N s in total`, from {LONG_COMPILE_S:.0f} s.",
        why="The compile cache is meant to make later starts fast; a long compile at each start means it is lost or "
        "its key changes.",
        example="Nemotron 3 under Ray Data: `torch.compile takes 2222.52 s in total` (vllm#34399).",
        fix="VLLM_CACHE_ROOT on a kept volume with unchanged settings; --enforce-eager to skip compiling at the cost "
        "of speed.",
        limits="One start's figure cannot tell a cold cache from a lost one; the next start's log can.",
        references=["https://github.com/vllm-project/vllm/issues/34399"],
    ),
)

RULES: list[Rule] = [RULE]
