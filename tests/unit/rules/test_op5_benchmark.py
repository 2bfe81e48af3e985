"""OP-5.38: a serving benchmark's TTFT that is its own queue. The blocks are laid out as vllm/benchmarks/serve.py
(0.32) prints them: `{name}:` padded to 40 columns, then the value."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op5_benchmark
from rules.evaluate import evaluate
from rules.facts import Facts


def _block(**figures: str) -> list[str]:
    return [f"{name + ':':<40} {value:<10}" for name, value in figures.items()]


RUN = ["Traffic request rate: inf", "Burstiness factor: 1.0 (Poisson process)", "Maximum request concurrency: None"]
# vLLM PR #18566's own `vllm bench serve` at its defaults: 1000 ShareGPT prompts against Llama-3.1-8B-Instruct.
DEFAULTS = _block(
    **{
        "Successful requests": "1000",
        "Benchmark duration (s)": "30.85",
        "Total input tokens": "229711",
        "Request throughput (req/s)": "32.42",
        "Mean TTFT (ms)": "9626.13",
        "Median TTFT (ms)": "9459.70",
        "Mean TPOT (ms)": "77.86",
    }
)


def _findings(lines: list[str]):
    return op5_benchmark.RULE.evaluate(Facts(events=parse_lines(lines).events))


def test_a_run_at_the_default_load_says_its_ttft_is_the_queue_it_made():
    [finding] = _findings(RUN + ["=" * 18 + " Serving Benchmark Result " + "=" * 6, *DEFAULTS])
    assert finding.title == (
        "the benchmark's TTFT is time spent queued, not prefill: mean TTFT 9.6 s is 31% of its 31 s run: it sent all "
        "1,000 requests at once (request rate inf, the default, and no concurrency cap)"
    )
    assert "--request-rate R" in finding.actions[0] and "--max-concurrency C" in finding.actions[0]
    assert evaluate(Facts(events=parse_lines(RUN + DEFAULTS).events)).findings[0].rule == "OP-5.38"


def test_a_rate_above_what_the_server_finishes_is_named_with_both_numbers():
    lines = ["Traffic request rate: 12.0", "Maximum request concurrency: None", *DEFAULTS]
    lines = [line.replace("32.42", "5.80") for line in lines]
    [finding] = _findings(lines)
    assert finding.title.endswith("it sent 12 requests/s, and the server finished 5.8/s")


def test_the_result_block_alone_still_reads_the_queue_without_naming_the_load():
    [finding] = _findings(DEFAULTS)
    assert finding.title.endswith("requests were sent faster than the server took them in")
    assert finding.confidence < 0.8


def test_a_paced_run_with_a_ttft_of_its_prefill_is_not_a_queue():
    paced = _block(**{"Benchmark duration (s)": "300.12", "Mean TTFT (ms)": "182.40", "Mean TPOT (ms)": "21.5"})
    assert not _findings(["Traffic request rate: 4.0", *paced])


def test_a_long_ttft_pasted_without_its_run_is_a_likely_queue_and_a_short_one_nothing():
    # vllm#7567, verbatim: a benchmark_serving run on 1000 ShareGPT prompts, its mean TTFT alone in the report
    [finding] = _findings(["Mean TTFT (ms):                          31077.94  "])
    assert finding.title.startswith("the benchmark's mean TTFT of 31.1 s is most likely time spent queued")
    assert finding.confidence < 0.6 and "Benchmark duration (s)" in finding.actions[0]
    assert not _findings(["Mean TTFT (ms):                          310.94  "])
