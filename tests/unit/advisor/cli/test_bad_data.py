"""Bad data is not taken as fact: NaN/±Inf samples, duplicate series, corrupt result files.

A /metrics text is parsed as a collector would (advisor.collect.metrics.parse_exposition); the
signals rules read (rules.signals) must come back as "no data" for a non-finite value, never
as `running inf`; a series given twice is refused like Prometheus refuses such a scrape; and
`servops report` refuses a triage or ramp file whose findings/steps are missing or mangled.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor.collect.metrics import MetricsError, parse_exposition
from rules import signals
from rules.evaluate import evaluate
from rules.facts import Facts

FIXTURES = Path(__file__).parents[3] / "fixtures" / "reports"


def _exposition(value: str, name: str = "vllm:num_requests_running", kind: str = "gauge") -> str:
    return (
        f'# TYPE {name} {kind}\n{name}{{model_name="m"}} {value}\n'
        '# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name="m"} 0\n'
    )


@pytest.mark.parametrize("value", ["NaN", "+Inf", "-Inf", "inf"])
@pytest.mark.parametrize(
    "name, kind, signal",
    [
        ("vllm:num_requests_running", "gauge", signals.running),
        ("vllm:kv_cache_usage_perc", "gauge", signals.kv_usage),
        ("vllm:num_preemptions_total", "counter", signals.preemption_rate),
    ],
)
def test_non_finite_sample_is_no_signal(value, name, kind, signal):
    snapshot = parse_exposition(_exposition(value, name, kind), "test")
    facts = Facts(snapshot=snapshot)
    assert signal(facts) is None
    evaluation = evaluate(facts)
    assert not evaluation.errors  # no rule crashed on it
    assert all(
        "inf" not in finding.title.lower() and "nan" not in finding.title.lower() for finding in evaluation.findings
    )


def test_non_finite_histogram_parts_are_dropped():
    text = (
        "# TYPE vllm:e2e_request_latency_seconds histogram\n"
        'vllm:e2e_request_latency_seconds_bucket{le="1.0"} NaN\n'
        'vllm:e2e_request_latency_seconds_bucket{le="+Inf"} 4\n'
        "vllm:e2e_request_latency_seconds_count 4\nvllm:e2e_request_latency_seconds_sum +Inf\n"
    )
    (series,) = parse_exposition(text, "test").histograms["vllm:e2e_request_latency_seconds"]
    assert series.buckets == [(float("inf"), 4.0)] and series.count == 4.0 and not series.sum


@pytest.mark.parametrize(
    "text",
    [
        _exposition("3") + 'vllm:num_requests_running{model_name="m"} 5\n',
        _exposition("3") + 'vllm:num_requests_running{model_name="m"} 3\n',
        "# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total 1\nvllm:num_preemptions_total 900\n",
    ],
)
def test_duplicate_series_is_refused_naming_it(text):
    with pytest.raises(MetricsError) as caught:
        parse_exposition(text, "--metrics m.txt")
    assert str(caught.value).startswith("--metrics m.txt: series vllm:")
    assert "appears twice" in str(caught.value)


def test_same_name_with_different_labels_is_two_series():
    text = _exposition("3") + 'vllm:num_requests_running{model_name="other"} 5\n'
    assert len(parse_exposition(text, "test").gauges["vllm:num_requests_running"]) == 2


def _triage(**changes) -> dict:
    document = json.loads((FIXTURES / "triage.json").read_text())
    document.update(changes)
    return {key: value for key, value in document.items() if value is not ...}


CORRUPT = {
    "findings missing": (_triage(findings=...), "'findings' is missing"),
    "findings a string": (_triage(findings="none"), "'findings' is not a list"),
    "findings of numbers": (_triage(findings=[1, 2]), "'findings' holds something other than objects"),
    "finding without rule": (_triage(findings=[{"severity": "high", "title": "x"}]), "findings[0] lacks"),
    "ramp without steps": ({"kind": "ramp", "servops_version": "0", "created_at": "x"}, "'steps' is missing"),
}


def _ramp(**step_changes) -> dict:
    document = json.loads((FIXTURES / "recorded-ramp-tiny.json").read_text())
    document["steps"][0].update(step_changes)
    return document


def _finding(**changes) -> dict:
    document = json.loads((FIXTURES / "recorded-triage-tiny.json").read_text())
    document["findings"][0].update(changes)
    return document


# Documents of the right JSON but the wrong shape: each is refused by the model that writes its kind,
# in one line naming the field (advisor.cli.result_files._check_shape), never rendered into a traceback.
WRONG_SHAPE = {
    "negative latency": (_ramp(ttft_s={"p50": -0.2, "count": 3}), "steps[0].ttft_s.p50: input should be greater"),
    "zero window": (_ramp(window_s=0), "steps[0].window_s: input should be greater than 0"),
    "a string for a number": (_ramp(requests="many"), "steps[0].requests: input should be a valid integer"),
    "an object for a list": (_ramp(errors=[1]), "steps[0].errors: input should be a valid dictionary"),
    "a string for an object": (_finding(evidence="high"), "findings[0].evidence: input should be a valid list"),
    "an unknown severity": (_finding(severity="urgent"), "findings[0].severity: input should be"),
    "an integer beyond any count": (_ramp(output_tokens=2**60), "steps[0].output_tokens: input should be less"),
}


@pytest.mark.parametrize("case", [*CORRUPT, *WRONG_SHAPE])
def test_report_refuses_a_corrupt_or_wrongly_shaped_result_naming_what(servops, tmp_path, case):
    document, problem = {**CORRUPT, **WRONG_SHAPE}[case]
    path = tmp_path / "corrupt.json"
    path.write_text(json.dumps(document))
    outcome = servops("report", str(path), "-o", str(tmp_path / "r.html"))
    outcome.assert_one_line_error("report", str(path), problem)
    assert not (tmp_path / "r.html").exists()


def test_a_ramp_given_to_predict_must_be_complete(servops, tmp_path):
    document = _ramp()
    del document["steps"][0]["window_s"]
    path = tmp_path / "ramp.json"
    path.write_text(json.dumps(document))
    outcome = servops("predict", "--ramp", str(path))
    outcome.assert_one_line_error("predict", str(path), "steps[0].window_s: field required")


def test_a_report_leaves_gaps_for_fields_an_older_servops_did_not_write(servops, tmp_path):
    document = _ramp()
    for key in ("itl_request_mean_s", "streamed_tokens_per_s", "client"):
        document["steps"][0].pop(key, None)
    path = tmp_path / "older.json"
    path.write_text(json.dumps(document))
    assert servops("report", str(path), "-o", str(tmp_path / "r.html")).code == 0
    assert (tmp_path / "r.html").is_file()


@pytest.mark.parametrize("content", [b"\xff\xfe\x00binary", b'{"kind": "triage", "findings": [', b""])
def test_report_refuses_unreadable_bytes(servops, tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    servops("report", str(path), "-o", str(tmp_path / "r.html")).assert_one_line_error("report", str(path))


@pytest.mark.parametrize(
    "name, content",
    [
        ("config.json", b"\xff\xfe\x00\x01binary"),
        ("model.safetensors", b"\x05\x00"),
        (
            "model.safetensors",
            b"\x10\x00\x00\x00\x00\x00\x00\x00\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0",
        ),
    ],
)
def test_binary_model_files_are_one_line(servops, tmp_path, name, content):
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    if name != "config.json":
        (model_dir / "config.json").write_text(
            json.dumps(
                {
                    "architectures": ["LlamaForCausalLM"],
                    "model_type": "llama",
                    "hidden_size": 64,
                    "num_hidden_layers": 2,
                    "num_attention_heads": 4,
                    "num_key_value_heads": 4,
                    "intermediate_size": 128,
                    "vocab_size": 256,
                    "max_position_embeddings": 512,
                    "torch_dtype": "float16",
                }
            )
        )
    (model_dir / name).write_bytes(content)
    target = model_dir if name != "config.json" else model_dir / name
    outcome = servops("advise", "--model", str(target), "--gpu", "L4")
    outcome.assert_one_line_error("advise", "--model")
