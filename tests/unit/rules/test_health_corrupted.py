"""HL-8: requests that finished with NaN in their logits, from vLLM's own count (its stats line's `Corrupted: N reqs`
and `vllm:corrupted_requests_total`, 0.11.1+ with VLLM_COMPUTE_NANS_IN_LOGITS=1; v1/metrics/loggers.py)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import health_corrupted
from rules.evaluate import evaluate
from rules.facts import Facts, ServerConfig
from tests.unit.rules.factories import config, live, top_finding

STATS = (
    "(APIServer pid=4100) INFO 07-01 10:00:{s} [loggers.py:335] Engine 000: Avg prompt throughput: 512.3 tokens/s, "
    "Avg generation throughput: 1024.7 tokens/s, Running: 42 reqs, Waiting: 0 reqs, GPU KV cache usage: 63.5%, "
    "Prefix cache hit rate: 41.3%, Corrupted: {n} reqs"
)


def _log(*counts: int) -> Facts:
    return Facts(events=parse_lines([STATS.format(s=10 + i, n=n) for i, n in enumerate(counts)]).events)


def test_the_stats_lines_count_is_summed_and_a_float16_model_is_moved_to_bfloat16():
    facts = _log(0, 2, 1)
    facts.config = ServerConfig(dtype="float16")
    [finding] = health_corrupted.RULE_CORRUPTED.evaluate(facts)
    assert finding.title.startswith("3 request(s) finished with NaN in their logits")
    assert [(c.flag, c.current, c.proposed) for c in finding.changes] == [("--dtype", "float16", "bfloat16")]
    assert finding.evidence[0].raw.endswith("Corrupted: 1 reqs")  # the last line that counted any
    assert any(action.startswith("After the fix, restart the server") for action in finding.actions)


def test_without_a_known_dtype_it_says_what_to_bisect_and_proposes_nothing():
    [finding] = health_corrupted.RULE_CORRUPTED.evaluate(_log(1))
    assert finding.changes == [] and finding.actions[0].startswith("Find what the corrupted requests share")


def test_the_counters_increase_over_the_window_is_read_first_and_zero_is_no_finding():
    rising = live(extra_counters={"vllm:corrupted_requests_total": (4.0, 9.0)})
    [finding] = health_corrupted.RULE_CORRUPTED.evaluate(rising)
    assert finding.title.startswith("5 request(s)") and finding.evidence[0].name == (
        "increase(vllm:corrupted_requests_total)"
    )
    flat = live(extra_counters={"vllm:corrupted_requests_total": (4.0, 4.0)})
    assert health_corrupted.RULE_CORRUPTED.evaluate(flat) == []
    assert health_corrupted.RULE_CORRUPTED.evaluate(_log(0, 0)) == []


def test_vllms_own_raise_on_nan_logits_says_the_same_causes():
    # vllm/v1/worker/utils.py (0.28+): raised only with VLLM_RAISE_ON_LOGIT_NANS=1
    line = "(EngineCore_DP0 pid=1) ERROR 12-01 10:00:00 [core.py:918] RuntimeError: NaNs detected in logits: {'c-0': 3}"
    [top, *_] = evaluate(Facts(events=parse_lines([line]).events)).findings
    assert top.rule == "VC-1" and "NaNs detected in logits" in top.title
    assert top.actions[0].startswith("A model trained in bfloat16 served in float16 overflows into NaN")


def test_an_answer_of_bangs_only_is_token_zero_from_nan_logits():
    # allenai/olmo-cookbook#60, verbatim: OLMo loaded in float16 by default answered so; bfloat16 or float32 fixed it
    top = top_finding("vLLM output: !!!!!!!!!!!!!!!!")
    assert top.rule == "HL-10" and top.changes == [] and "--dtype bfloat16" in top.actions[0]
    served = top_finding('"content": "!!!!!!!!!!!!!!!!!!!!"', config=config(dtype="float16"))
    assert served.rule == "HL-10" and [(c.flag, c.proposed) for c in served.changes] == [("--dtype", "bfloat16")]
    assert top_finding("Wow!!!!!!!!!") is None  # a person's own exclamation is no answer
