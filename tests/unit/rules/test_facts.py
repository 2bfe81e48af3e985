"""The Facts contract the collectors fill: optional parts, sources of config values, ramp JSON keys."""

import pytest

from rules.events import FIELDS_BY_KIND, LogEvent, LogEventKind
from rules.facts import ConfigSource, Facts, LoadTestFacts, ServerConfig, flag_name
from tests.unit.rules.factories import event

RAMP_JSON = {  # the keys of issue #7's ramp result
    "steps": [
        {
            "offered": 2.0,
            "achieved_rate": 2.0,
            "requests": 120,
            "errors": 0,
            "ttft_s": {"p50": 0.2, "p90": 0.3, "p95": 0.35, "p99": 0.5},
            "itl_s": {"p50": 0.02, "p90": 0.03, "p95": 0.03, "p99": 0.04},
            "tpot_s": {"p50": 0.02},
            "e2e_s": {"p50": 4.0, "p99": 6.0},
            "output_tokens_per_s": 400.0,
            "goodput_rps": 2.0,
            "valid": True,
            "invalid_reason": None,
            "server": {"num_requests_running": 8},
        },
        {"offered": 4.0, "requests": 100, "errors": 5, "valid": False, "invalid_reason": "errors above 1 %"},
    ],
    "knee": 2.0,
    "safe_operating_point": {"offered": 1.8, "reason": "90 % of the knee"},
}


def test_an_empty_facts_is_valid_every_part_is_optional():
    facts = Facts()
    assert facts.snapshot is None and facts.events == [] and facts.config is None


def test_ramp_json_with_issue_7_keys_loads_and_a_bare_knee_becomes_offered():
    ramp = LoadTestFacts.model_validate(RAMP_JSON)
    assert ramp.knee_offered() == 2.0
    assert [s.offered for s in ramp.valid_steps] == [2.0]
    assert ramp.steps[1].error_rate == pytest.approx(0.05)
    assert ramp.steps[0].itl_s.p99 == 0.04


def test_flag_names_are_spelled_as_vllm_serve_spells_them():
    assert flag_name("max_model_len") == "--max-model-len"
    assert flag_name("--gpu-memory-utilization") == "--gpu-memory-utilization"


def test_config_tells_explicit_flags_from_defaults():
    config = ServerConfig(
        max_num_seqs=256,
        block_size=16,
        sources={"--max-num-seqs": ConfigSource.DEFAULT, "--block-size": ConfigSource.ARGS},
    )
    assert config.is_explicit("block_size")
    assert not config.is_explicit("--max-num-seqs")


def test_every_event_kind_documents_fields_that_exist_on_log_event():
    assert set(FIELDS_BY_KIND) == set(LogEventKind)
    for kind, fields in FIELDS_BY_KIND.items():
        for name in fields:
            assert name in LogEvent.model_fields, f"{kind}: {name}"


def test_events_of_keeps_log_order_and_last_event_is_the_latest():
    facts = Facts(
        events=[
            event(LogEventKind.STATS_LINE, 1, running=1),
            event(LogEventKind.VERSION, 2, version="0.33.0"),
            event(LogEventKind.STATS_LINE, 3, running=5),
        ]
    )
    assert [e.line_no for e in facts.events_of(LogEventKind.STATS_LINE)] == [1, 3]
    assert facts.last_event(LogEventKind.STATS_LINE).running == 5


def test_facts_round_trip_through_json():
    facts = Facts(
        events=[event(LogEventKind.KV_CACHE_SIZE, kv_cache_tokens=162704)],
        loadtest=LoadTestFacts.model_validate(RAMP_JSON),
    )
    assert Facts.model_validate_json(facts.model_dump_json()) == facts


def test_loadtest_ramp_result_with_errors_by_kind_and_server_signals_loads():
    from loadtest.results import ServerSignals

    step = {
        "offered": 4.0,
        "offered_unit": "rps",
        "requests": 200,
        "errors": {"http_503": 3, "timeout": 1},
        "server": ServerSignals(samples=10, running_mean=31.5, kv_cache_usage_max=0.9).model_dump(),
        "knee_extra_field_is_ignored": True,
    }
    loaded = LoadTestFacts.model_validate(
        {
            "steps": [step, {"offered": 8.0, "server": None}],
            "knee": {"step": 1, "offered": 8.0, "metric": "itl_p99", "reason": "r"},
        }
    )
    assert loaded.steps[0].errors == 4 and loaded.steps[0].errors_by_kind == {"http_503": 3, "timeout": 1}
    assert loaded.steps[0].server_value("running_mean") == 31.5
    assert loaded.steps[1].server == {} and loaded.knee_offered() == 8.0


def test_the_reports_ramp_fixture_loads_as_loadtest_facts():
    import json
    from pathlib import Path

    document = json.loads((Path(__file__).parents[2] / "fixtures" / "reports" / "ramp.json").read_text())
    loaded = LoadTestFacts.model_validate(document)
    assert loaded.steps and loaded.knee_offered() == document["knee"]["offered"]
