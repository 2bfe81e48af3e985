"""HL-5: requests wait, none runs, and the KV cache is empty: the scheduler admits nothing.

Why a rule of its own: a full server queues with its KV cache near 100 % (OP-5.2), and a hung engine
stops with requests running (HL-1). Waiting requests beside an *empty* KV cache and nothing running is the
scheduler refusing the request at the head of the queue. In vLLM that has been a request the KV pool cannot
hold although --max-model-len allows it (vllm#39734: the scheduler waits forever instead of rejecting it),
and sliding-window models (Gemma 3 and 4) budgeting blocks for the whole sequence at admission, so long
prompts that fit the pool were never admitted (vllm#39914, fixed by vllm#40946, which caps the admission
budget at the pool sized at startup; the reporters confirmed it on 0.22.1, and 0.32 carries it in
`max_admission_blocks_per_request`, vllm/v1/kv_cache_interface.py).
"""

from __future__ import annotations

from rules import signals
from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity
from rules.signals import fmt

ADMISSION_FIX_RELEASE = (0, 22)  # the first minor release the confirming reporters ran with vllm#40946
REFS = [
    "https://github.com/vllm-project/vllm/issues/39914",
    "https://github.com/vllm-project/vllm/issues/39734",
    "https://github.com/vllm-project/vllm/pull/40946",
]


def _check_admission(facts: Facts) -> list[Finding]:
    waiting, running, kv = signals.waiting(facts), signals.running(facts), signals.kv_usage(facts)
    if waiting is None or running is None or kv is None:
        return []
    if not _admits_nothing(waiting.value, running.value, kv.value):
        return []
    confirmed = _confirmed(facts)
    if confirmed is False:
        return []  # the stats line before the last one shows work: a request that just arrived
    version = c.vllm_version(facts)
    actions = []
    if version is None or version < ADMISSION_FIX_RELEASE:
        actions.append(
            "Upgrade vLLM to 0.22.1 or later: a sliding-window model's admission budget is then capped at the KV "
            "pool sized at startup (vllm#40946), so a long prompt that fits the pool is admitted."
        )
    actions += [
        "Find the request at the head of the queue: if its prompt needs more KV blocks than the pool holds, vLLM "
        "waits on it instead of refusing it; lower --max-model-len to what the KV cache holds (the startup line "
        "'GPU KV cache size: N tokens') so every request vLLM accepts can run.",
        "If no engine step happens at all (no stats line moves), the engine is hung instead: HL-1.",
    ]
    return [
        RULE_ADMISSION.finding(
            Severity.CRITICAL if confirmed else Severity.HIGH,
            f"{fmt(waiting.value)} request(s) waiting, none running, KV cache empty: the scheduler admits nothing",
            summary="A full server queues with its KV cache near 100 %; here the cache is empty and nothing runs, so "
            "the scheduler is refusing the request at the head of the waiting queue, and every request behind it "
            "waits too.",
            evidence=[waiting.evidence, running.evidence, kv.evidence],
            changes=_fit_the_pool(facts),
            actions=actions,
            confidence=0.8 if confirmed else 0.5,
        )
    ]


def _admits_nothing(waiting: float, running: float, kv: float) -> bool:
    return waiting >= 1 and running == 0 and kv == 0


def _confirmed(facts: Facts) -> bool | None:
    """Whether more than one reading shows it: a window (its end, after a span of no generation), or the last
    two stats lines; False when the window or the stats line before the last shows work; None for a single reading.
    Why the window's work counts: a server with --max-num-seqs 1 shows 0 running between two requests, and a scrape
    taken in that gap (the demo's, once in CI) is no stuck queue when tokens were generated over the window."""
    if facts.window is not None:
        return not signals.moved(signals.work_rates(facts))
    stats = [e for e in facts.events_of(LogEventKind.STATS_LINE) if e.waiting is not None and e.running is not None]
    if facts.snapshot is not None or len(stats) < 2:
        return None
    before = stats[-2]
    return _admits_nothing(before.waiting or 0, before.running or 0, before.kv_usage or 0.0)


def _fit_the_pool(facts: Facts) -> list[ConfigChange]:
    """--max-model-len down to the KV pool, when both are known and the limit is larger."""
    limit = facts.config.max_model_len if facts.config else None
    pool = facts.memory.kv_cache_tokens if facts.memory else None
    if not limit or not pool or pool >= limit:
        return []
    return [
        ConfigChange(
            flag="--max-model-len",
            current=str(limit),
            proposed=str(pool),
            reason=f"the KV pool holds {pool:,} tokens: a request longer than that can never be admitted",
            cost="longer requests are refused (HTTP 400) instead of waiting forever",
        )
    ]


RULE_ADMISSION = Rule(
    code="HL-5",
    title="requests wait but none is admitted (KV cache empty)",
    category=Category.HEALTH,
    check=_check_admission,
    needs=("snapshot", "window", "events"),
    page=RulePage(
        checks="Requests waiting (at least 1), none running, and KV cache usage exactly 0: from a window, a "
        "scrape, the latest stats line, or figures quoted in the text.",
        why="A server that queues because it is full shows a full KV cache; an empty one with requests waiting "
        "is a scheduler that will not admit the head of the queue, and nothing behind it runs.",
        example="vllm:num_requests_running == 0 while vllm:num_requests_waiting climbs, vllm:kv_cache_usage_perc "
        "== 0 (Gemma 4 with sliding-window layers on 0.19.1, vllm#39914).",
        fix="Upgrade to 0.22.1 or later (sliding-window admission capped at the pool, vllm#40946); lower "
        "--max-model-len to the KV pool so every accepted request fits.",
        limits="One reading is one moment: a request that arrived just before it waits for the next step. A "
        "single scrape, stats line or quote is reported as high with confidence 0.5; a window or two stats "
        "lines in a row make it critical; a stats line before the last that shows work clears it.",
        references=REFS,
    ),
)

RULES: list[Rule] = [RULE_ADMISSION]
