"""OP-5.23 from the step lines a real vLLM 0.32 (CPU) printed with --enable-logging-iteration-details.

The two recordings (tests/fixtures/vllm_cpu/iteration_details_{4096,256}.log, README there) ran the same load:
four streams decoding short answers while three distinct 2.8k-token prompts arrived, at a budget of 4,096 tokens
(each prompt prefilled whole in one step) and of 256 (in 252-token chunks). The first is the stall the rule
names; the second is the measurement its predicted chunk steps are checked against.
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import pytest

from advisor.collect import logs
from advisor.collect.logs import parse_lines
from advisor.triage.collect import collect
from advisor.triage.result import TriageRequest
from rules.catalog import op5_prefill_stall as stall
from rules.events import LogEventKind as K
from rules.facts import Facts
from tests.unit.rules.factories import config, event

RECORDED = Path(__file__).resolve().parents[2] / "fixtures" / "vllm_cpu"
# vLLM's own format (v1/metrics/loggers.py:199, 0.32), taken apart by position, not by the reader's pattern
STEP = re.compile(
    r"Iteration\((\d+)\): (\d+) context requests, (\d+) context tokens, (\d+) generation requests, (\d+) generation "
    r"tokens, iteration elapsed time: ([\d.]+) ms, CPU KV cache usage: ([\d.]+)%"
)


def _lines(budget: int) -> list[str]:
    return (RECORDED / f"iteration_details_{budget}.log").read_text().splitlines()


def _facts(budget: int) -> Facts:
    """What triage collects from the whole log: its flags, and vLLM's CPU defaults (--max-num-seqs 128)."""
    return collect(TriageRequest(logs=str(RECORDED / f"iteration_details_{budget}.log"))).facts


@pytest.mark.parametrize("budget", [4096, 256])
def test_every_step_line_is_read_with_the_numbers_it_prints(budget):
    printed = [STEP.search(line).groups() for line in _lines(budget) if "Iteration(" in line]
    read = [e for e in parse_lines(_lines(budget)).events if e.kind == K.ITERATION_LINE]
    assert len(read) == len(printed) > 1000
    for step, numbers in zip(read, printed, strict=True):
        fields = (step.iteration, step.context_requests, step.context_tokens, step.generation_requests)
        assert tuple(str(n) for n in (*fields, step.generation_tokens)) == numbers[:5]
        assert step.step_ms == float(numbers[5]) and step.kv_usage == pytest.approx(float(numbers[6]) / 100)
        assert step.engine == "000" and step.dummy is False


def test_a_step_line_is_no_stats_line():
    """Its counts are one step's, not an interval's: no rule taking rates from stats lines may read it."""
    assert not [e for e in parse_lines(_lines(4096)).events if e.kind == K.STATS_LINE and e.running is None]
    dummy = "Engine 001: Iteration(7): 0 context requests, 0 context tokens, 0 generation requests, 0 generation "
    [step] = parse_lines([dummy + "tokens, iteration elapsed time: 0.00 ms (dummy), GPU KV cache usage: 0.0%"]).events
    assert (step.kind, step.dummy, step.engine) == (K.ITERATION_LINE, True, "001")


def test_a_whole_prompt_beside_decodes_is_the_stall_and_the_budget_is_sized_from_its_cost():
    [finding] = stall.RULE_PREFILL_STALL.evaluate(_facts(4096))
    assert finding.rule == "OP-5.23"
    worst = max(
        (e for e in parse_lines(_lines(4096)).events if e.kind == K.ITERATION_LINE and e.generation_requests),
        key=lambda e: e.step_ms,
    )
    assert finding.title.startswith(f"streams waited {worst.step_ms:,.0f} ms for a token while")
    assert worst.context_tokens > 2800 and worst.step_ms > 100 * 28  # a whole prompt: seconds against 28 ms
    [change] = finding.changes
    # the cost of a token on this CPU puts the 100 ms target below any budget vLLM takes: --max-num-seqs, 128 here
    assert (change.flag, change.current, change.proposed) == ("--max-num-batched-tokens", "4096", "128")
    assert "stays above the 100 ms inter-token target" in change.reason


def test_the_chunk_steps_predicted_from_the_whole_prompts_are_what_vllm_measured_in_chunks():
    """Predicted from the 4,096 recording for 252-token chunks (a 256 budget beside 4 decodes), measured in the
    256 recording: the mean within 10 %, every chunk step inside the predicted spread."""
    events = parse_lines(_lines(4096)).events
    steps = [e for e in events if e.kind == K.ITERATION_LINE and e.generation_requests]
    base = statistics.median(e.step_ms for e in steps if not e.context_tokens)
    mixed = [e for e in steps if e.context_tokens]
    whole = max(e.context_tokens for e in mixed)
    mean, least, most = stall.chunk_steps_ms(base, stall.prompt_token_costs(base, mixed), 252, whole)
    measured = [
        e.step_ms
        for e in parse_lines(_lines(256)).events
        if e.kind == K.ITERATION_LINE and e.context_tokens == 252 and e.generation_requests == 4
    ]
    assert len(measured) == 33  # three prompts of 2,806 tokens, eleven full chunks each
    assert statistics.mean(measured) == pytest.approx(mean, rel=0.10)
    assert least <= min(measured) and max(measured) <= most


def _step(line: int, context: int, ms: float, decoding: int = 4, dummy: bool = False):
    return event(
        K.ITERATION_LINE,
        line,
        context_tokens=context,
        context_requests=1 if context else 0,
        generation_requests=decoding,
        generation_tokens=decoding,
        step_ms=ms,
        dummy=dummy,
    )


DECODES = [_step(n, 0, 20.0 + n % 3) for n in range(20)]


def test_chunks_that_barely_slow_a_step_or_too_few_decode_steps_are_not_a_stall():
    quick = [*DECODES, _step(30, 512, 90.0)]  # 4x a decode step, and far under half a second
    few = [*DECODES[:5], _step(30, 8192, 2000.0)]
    alone = [*DECODES, _step(30, 8192, 2000.0, decoding=0)]  # nobody decoded beside it: no stream waited
    padding = [*DECODES, _step(30, 0, 2000.0, decoding=0, dummy=True)]
    for events in (quick, few, alone, padding):
        assert stall.RULE_PREFILL_STALL.evaluate(Facts(events=events)) == []


def test_a_gpu_whose_chunk_meets_the_target_at_a_smaller_power_of_two_gets_that_budget():
    """8,188 prompt tokens in 620 ms beside 21 ms decodes: 0.073 ms a token, so 1,024 tokens (1,020 of prompt beside
    4 decodes) keep a chunk step near 96 ms, under the 100 ms target; nothing says it stays above it."""
    facts = Facts(events=[*DECODES, _step(30, 8188, 620.0)], config=config(max_num_batched_tokens=8192))
    [finding] = stall.RULE_PREFILL_STALL.evaluate(facts)
    [change] = finding.changes
    assert (change.current, change.proposed) == ("8192", "1024")
    assert "stays above" not in change.reason
    assert "predicts 96 ms a step on average" in change.reason


def test_a_day_of_step_lines_is_read_in_bounded_memory(monkeypatch):
    monkeypatch.setattr(logs, "NEWEST_KEPT", {**logs.NEWEST_KEPT, K.ITERATION_LINE: 100})
    read = parse_lines(_lines(4096))
    kept = [e for e in read.events if e.kind == K.ITERATION_LINE]
    assert 100 <= len(kept) < 200 and len(kept) == read.iteration_events
    assert read.dropped_iteration_events + len(kept) == sum("Iteration(" in line for line in _lines(4096))
    assert kept[-1].iteration == max(e.iteration for e in kept)  # the newest steps are the ones kept
