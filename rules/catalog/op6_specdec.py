"""OP-6: speculative decoding — does it pay for itself at this acceptance rate and this load?

Acceptance rate = rate(spec_decode_num_accepted_tokens)/rate(spec_decode_num_draft_tokens)
(V1 counters, registered only with --speculative-config), or the `SpecDecoding metrics` log
line. Speculation helps memory-bound, low-QPS decoding; at high load the GPU is compute-bound
and rejected drafts are pure waste.
"""

from __future__ import annotations

import json

from rules import signals
from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.literals import mapping_of
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt

LOW_ACCEPTANCE = 0.5
# A draft position accepting less than this share of its drafts costs more than it returns: a draft pass
# and a verification slot for each, kept once in ten.
USEFUL_POSITION = 0.1
BUSY_RUNNING = 32
CANDIDATE_MAX_RUNNING = 4  # speculation helps most at this concurrency or below
ACCEPTED = "vllm:spec_decode_num_accepted_tokens_total"
DRAFTED = "vllm:spec_decode_num_draft_tokens_total"
REFS = ["https://docs.vllm.ai/en/latest/features/spec_decode.html"]


def acceptance(facts: Facts) -> signals.Signal | None:
    if facts.window is not None:
        ratio = facts.window.total.ratio(ACCEPTED, DRAFTED)
        if ratio is not None:
            return signals.Signal(
                ratio,
                Evidence(
                    source=signals.window_source(facts),
                    name="draft acceptance rate",
                    value=round(ratio, 3),
                    description="rate(accepted)/rate(drafted)",
                ),
            )
    event = facts.last_event(LogEventKind.SPEC_DECODE_METRICS)
    if event is not None and event.acceptance_rate is not None:
        return signals.Signal(
            event.acceptance_rate, c.log_evidence(event, "draft acceptance rate", event.acceptance_rate)
        )
    return None


def speculating(facts: Facts) -> bool:
    if facts.config and facts.config.speculative_config:
        return True
    if facts.events_of(LogEventKind.SPEC_DECODE_METRICS):
        return True
    return bool(facts.snapshot and facts.snapshot.has(DRAFTED))


def _parse_spec(text: str | None) -> dict | None:
    """--speculative-config as JSON (the flag) or a Python dict repr (the `non-default args` log line)."""
    return mapping_of(text) if text else None


def _useful_positions(facts: Facts) -> tuple[int, int] | None:
    """(positions worth drafting, positions drafted) from the per-position acceptance vLLM logs: the leading
    positions that accept at least `USEFUL_POSITION` of their drafts. A position past those is a draft forward
    pass and a verification slot spent on a token that is almost never kept."""
    event = facts.last_event(LogEventKind.SPEC_DECODE_METRICS)
    rates = event.position_acceptance if event is not None else []
    if len(rates) < 2:
        return None
    useful = next((i for i, rate in enumerate(rates) if rate < USEFUL_POSITION), len(rates))
    return (useful, len(rates)) if useful < len(rates) else None


def _fewer_tokens(facts: Facts, reason: str) -> ConfigChange:
    current = facts.config.speculative_config if facts.config else None
    proposed = "none (remove --speculative-config)"
    spec = _parse_spec(current)
    tokens = spec.get("num_speculative_tokens") if isinstance(spec, dict) else None
    positions = _useful_positions(facts)
    if positions is not None and positions[0] >= 1:
        useful, drafted = positions
        reason = (
            f"draft positions {useful + 1}-{drafted} accept under {USEFUL_POSITION:.0%} of their drafts (vLLM's "
            f"per-position acceptance): {useful} speculative tokens keep what is accepted at less cost"
        )
        if isinstance(spec, dict):
            spec["num_speculative_tokens"] = useful
            proposed = json.dumps(spec, separators=(",", ":"))
        else:  # the config is not known: name the key to change, not a config that drops its method and model
            proposed = f'the same config with "num_speculative_tokens": {useful} (it drafts {drafted} now)'
    elif isinstance(tokens, int) and tokens > 1:
        spec["num_speculative_tokens"] = max(1, tokens // 2)
        proposed = json.dumps(spec, separators=(",", ":"))
    return ConfigChange(
        flag="--speculative-config",
        current=current,
        proposed=proposed,
        reason=reason,
        cost="less speed-up when drafts are accepted",
    )


def _check_low_acceptance(facts: Facts) -> list[Finding]:
    rate = acceptance(facts)
    if rate is None or rate.value >= LOW_ACCEPTANCE:
        return []
    return [
        RULE_ACCEPTANCE.finding(
            Severity.MEDIUM,
            f"draft acceptance rate {rate.value:.0%} < {LOW_ACCEPTANCE:.0%}",
            evidence=[rate.evidence.model_copy(update={"threshold": LOW_ACCEPTANCE, "comparison": "<"})],
            changes=[
                _fewer_tokens(facts, "later draft positions are mostly rejected; fewer drafts waste less compute")
            ],
            confidence=0.7,
            summary="Most drafted tokens are thrown away: speculation costs more than it saves.",
            actions=["Try a draft model closer to the target (same family, or EAGLE/MTP heads)."],
        )
    ]


RULE_ACCEPTANCE = Rule(
    code="OP-6.1",
    title="low draft acceptance rate",
    category=Category.SPEC_DECODE,
    check=_check_low_acceptance,
    needs=("window", "events"),
    page=RulePage(
        checks="Acceptance rate over the window (spec_decode counters) or from the `SpecDecoding metrics` line, "
        f"below {c.percent(LOW_ACCEPTANCE)}.",
        why="Each rejected draft token cost a forward pass of the draft and a verification slot.",
        example="Avg Draft acceptance rate: 31.2% with num_speculative_tokens 5 -> 2.",
        fix="Where vLLM logs the per-position acceptance: num_speculative_tokens down to the leading positions "
        f"that accept at least {USEFUL_POSITION:.0%}; else halve it, or remove --speculative-config; use a "
        "better-matched draft.",
        limits=f"The {c.percent(LOW_ACCEPTANCE)} line is a rule of thumb; the break-even depends on draft cost.",
        references=REFS,
    ),
)


def _check_busy(facts: Facts) -> list[Finding]:
    if not speculating(facts):
        return []
    run, queue = signals.running(facts), signals.waiting(facts)
    if run is None or (run.value < BUSY_RUNNING and not (queue and queue.value >= 1)):
        return []
    evidence = [
        run.evidence.model_copy(
            update={"threshold": BUSY_RUNNING, "comparison": ">=" if run.value >= BUSY_RUNNING else "<"}
        )
    ]
    if queue is not None:
        evidence.append(queue.evidence)
    change = ConfigChange(
        flag="--speculative-config",
        current=facts.config.speculative_config if facts.config else None,
        proposed="none (remove --speculative-config)",
        reason="at high load decode is compute-bound; drafts take compute from real tokens",
        cost="higher ITL at low load",
    )
    return [
        RULE_BUSY.finding(
            Severity.MEDIUM,
            f"speculative decoding with {fmt(run.value)} requests running"
            + (f" and {fmt(queue.value)} waiting" if queue and queue.value >= 1 else ""),
            evidence=evidence,
            changes=[change],
            confidence=0.55,
            summary="Speculation pays at low QPS; under load it competes with real tokens.",
            actions=["Measure both ways with a ramp (servops ramp) before deciding."],
        )
    ]


RULE_BUSY = Rule(
    code="OP-6.2",
    title="speculative decoding under high load",
    category=Category.SPEC_DECODE,
    check=_check_busy,
    needs=("window", "snapshot", "events"),
    page=RulePage(
        checks=f"Speculation is on (flag, metrics or log) while {BUSY_RUNNING}+ requests run or requests wait.",
        why="Speculation trades spare compute for latency; at high load there is no spare compute.",
        example="--speculative-config with 120 running and 14 waiting.",
        fix="Remove --speculative-config on throughput-bound replicas; keep it for latency-sensitive, low-QPS ones.",
        limits="Heuristic; confirm with a ramp on and off.",
        references=REFS,
    ),
)


def _check_candidate(facts: Facts) -> list[Finding]:
    if speculating(facts):
        return []
    itl, run = signals.quantile(facts, c.ITL, "p50"), signals.running(facts)
    slo = c.itl_slo(facts)
    if itl is None or run is None or run.value > CANDIDATE_MAX_RUNNING or itl.value <= slo:
        return []
    return [
        RULE_CANDIDATE.finding(
            Severity.INFO,
            f"ITL p50 {fmt(itl.value, 3)} s > {fmt(slo, 3)} s at {fmt(run.value)} running: a "
            "speculative-decoding candidate",
            evidence=[itl.evidence, run.evidence],
            confidence=0.4,
            summary="Low concurrency and slow decode is where speculation helps most.",
            actions=["Try --speculative-config with an EAGLE/MTP head or n-gram drafts and compare with a ramp."],
        )
    ]


RULE_CANDIDATE = Rule(
    code="OP-6.3",
    title="speculative decoding could lower ITL",
    category=Category.SPEC_DECODE,
    check=_check_candidate,
    needs=("window",),
    page=RulePage(
        checks=f"No speculation, ITL p50 above target with at most {CANDIDATE_MAX_RUNNING} requests running.",
        why="Memory-bound decode at low concurrency is where speculative decoding helps most.",
        example="ITL p50 0.09 s with 2 running on a 70B model.",
        fix="Try --speculative-config (EAGLE/MTP/n-gram) and compare ITL with a ramp.",
        limits="Informational.",
        references=REFS,
    ),
)


RULES: list[Rule] = [RULE_ACCEPTANCE, RULE_BUSY, RULE_CANDIDATE]
