"""Evaluation: ranking, per-flag conflict resolution, healthy servers, partial facts, determinism."""

from rules.evaluate import evaluate, rank, resolve
from rules.events import LogEventKind
from rules.facts import ConfigSource, Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from tests.unit.rules.factories import config, event, healthy, live

PAGE = RulePage(checks="c", why="w", example="e", fix="f", limits="l")


def _finding(
    rule: str, severity: Severity, confidence: float = 0.8, evidence: int = 1, changes: list[ConfigChange] | None = None
) -> Finding:
    return Finding(
        rule=rule,
        severity=severity,
        category=Category.LATENCY,
        title=rule,
        confidence=confidence,
        evidence=[Evidence(source="metrics", name=f"m{i}", value=1.0) for i in range(evidence)],
        changes=changes or [],
    )


def _change(flag: str, proposed: str) -> ConfigChange:
    return ConfigChange(flag=flag, proposed=proposed, reason="test")


def test_severity_outranks_confidence():
    ranked = rank([_finding("A", Severity.MEDIUM, 0.99), _finding("B", Severity.HIGH, 0.3)])
    assert [f.rule for f in ranked] == ["B", "A"]


def test_confidence_breaks_ties_within_a_severity():
    ranked = rank([_finding("A", Severity.HIGH, 0.5), _finding("B", Severity.HIGH, 0.9)])
    assert [f.rule for f in ranked] == ["B", "A"]


def test_evidence_strength_breaks_ties_of_severity_and_confidence():
    ranked = rank([_finding("A", Severity.HIGH, 0.8, evidence=1), _finding("B", Severity.HIGH, 0.8, evidence=3)])
    assert [f.rule for f in ranked] == ["B", "A"]


def test_measured_evidence_weighs_more_than_configured():
    assert Evidence(source="metrics", name="x").weight > Evidence(source="config", name="x").weight


def test_conflicting_changes_keep_the_higher_ranked_and_record_the_dropped_one():
    winner = _finding("OP-1.3", Severity.CRITICAL, changes=[_change("--gpu-memory-utilization", "0.65")])
    loser = _finding("AP-1", Severity.LOW, changes=[_change("--gpu-memory-utilization", "0.92")])
    findings, resolutions = resolve(rank([loser, winner]))
    kept = {f.rule: f for f in findings}
    assert [c.proposed for c in kept["OP-1.3"].changes] == ["0.65"]
    assert kept["AP-1"].changes == []
    dropped = kept["AP-1"].superseded[0]
    assert (dropped.change.proposed, dropped.kept_rule, dropped.kept_proposed) == ("0.92", "OP-1.3", "0.65")
    assert len(resolutions) == 1 and not resolutions[0].duplicate


def test_the_same_change_from_two_rules_is_emitted_once_and_marked_duplicate():
    first = _finding("OP-1.2", Severity.CRITICAL, changes=[_change("--tensor-parallel-size", "2")])
    second = _finding("OP-2.1", Severity.MEDIUM, changes=[_change("--tensor-parallel-size", "2")])
    findings, resolutions = resolve(rank([second, first]))
    emitted = [c for f in findings for c in f.changes if c.flag == "--tensor-parallel-size"]
    assert len(emitted) == 1 and resolutions[0].duplicate


def test_changes_to_different_flags_do_not_conflict():
    findings, resolutions = resolve(
        [
            _finding("A", Severity.HIGH, changes=[_change("--max-num-seqs", "64")]),
            _finding("B", Severity.HIGH, changes=[_change("--block-size", "16")]),
        ]
    )
    assert resolutions == [] and all(f.changes for f in findings)


def test_evaluate_applies_resolution_to_real_rules():
    # A free-memory failure (OP-1.3 lowers util to 0.65) with util 0.99 configured (AP-1 wants 0.92).
    facts = Facts(
        config=config(gpu_memory_utilization=0.99),
        events=[
            event(
                LogEventKind.FREE_MEMORY_BELOW_REQUESTED,
                free_gib=31.44,
                total_gib=47.38,
                gpu_memory_utilization=0.99,
                requested_gib=46.9,
            )
        ],
    )
    result = evaluate(facts)
    util_changes = [
        (f.rule, c.proposed) for f in result.findings for c in f.changes if c.flag == "--gpu-memory-utilization"
    ]
    assert util_changes == [("OP-1.3", "0.65")]
    assert result.by_rule("AP-1")[0].superseded[0].change.proposed == "0.92"


def test_a_healthy_server_yields_no_findings():
    result = evaluate(healthy())
    assert result.errors == []
    assert result.findings == [], [f.title for f in result.findings]


def test_a_busy_but_healthy_window_has_no_high_or_critical_finding():
    facts = live(running=60, waiting=0, kv=0.8, ttft={0.4: 200}, itl={0.04: 9000})
    result = evaluate(facts)
    assert all(f.severity not in (Severity.CRITICAL, Severity.HIGH) for f in result.findings)


def test_rules_whose_inputs_are_absent_are_skipped_not_passed():
    result = evaluate(Facts(config=config(enforce_eager=True)))
    assert "AP-5" in result.rules_run and "OP-5.1" in result.rules_skipped
    assert [f.rule for f in result.findings] == ["AP-5"]


def test_partial_facts_log_only_still_yield_the_startup_finding():
    facts = Facts(events=[event(LogEventKind.NO_CACHE_BLOCKS)])
    assert evaluate(facts).top.rule == "OP-1.2"


def test_a_rule_that_raises_is_reported_and_does_not_stop_the_others():
    def broken(facts):
        raise KeyError("boom")

    bad = Rule(code="XX-1", title="broken", category=Category.HEALTH, page=PAGE, check=broken)
    good = Rule(
        code="XX-2",
        title="ok",
        category=Category.HEALTH,
        page=PAGE,
        check=lambda facts: [bad.finding(Severity.LOW, "fine").model_copy(update={"rule": "XX-2"})],
    )
    result = evaluate(Facts(), [bad, good])
    assert [e.rule for e in result.errors] == ["XX-1"]
    assert [f.rule for f in result.findings] == ["XX-2"]


def test_evaluation_is_deterministic():
    facts = live(running=60, waiting=14, kv=0.99, preemptions_added=12, ttft={6.0: 20})
    facts.config = config(ConfigSource.DEFAULT, max_num_seqs=256)
    assert evaluate(facts).model_dump_json() == evaluate(facts).model_dump_json()


def test_every_rule_survives_events_without_fields_and_zero_figures():
    from rules.events import LogEvent
    from rules.facts import EndpointFacts, Hardware, LoadTestFacts, MemoryFacts, ModelFacts, Workload

    facts = Facts(
        events=[LogEvent(kind=kind) for kind in LogEventKind],
        config=config(
            max_num_seqs=0,
            max_num_batched_tokens=0,
            block_size=0,
            tensor_parallel_size=0,
            max_model_len=0,
            gpu_memory_utilization=0.0,
        ),
        memory=MemoryFacts(kv_cache_tokens=0, total_gib=0, weights_gib=0),
        workload=Workload(p95_input_tokens=0, p95_output_tokens=0, client_concurrency=0, target_concurrency=0),
        hardware=Hardware(usable_gib=0, gpu_count=0),
        model=ModelFacts(),
        loadtest=LoadTestFacts(),
        endpoint=EndpointFacts(),
    )
    assert evaluate(facts).errors == []


def _rule(code: str, line: str, fallback: str = "", severity: Severity = Severity.HIGH) -> Rule:
    """A rule whose one finding cites the log line `line` (file:line)."""

    def check(facts: Facts) -> list[Finding]:
        cited = Evidence(source="log", name="error", value="x", location=line)
        return [Finding(rule=code, severity=severity, category=Category.STARTUP, title=code, evidence=[cited])]

    return Rule(code=code, title=code, category=Category.STARTUP, page=PAGE, check=check, fallback=fallback)


def test_a_fallback_finding_is_dropped_when_another_rule_cites_its_line_and_kept_otherwise():
    explained = evaluate(Facts(), [_rule("OP-1", "log:12"), _rule("VC-2", "log:12", fallback="line")])
    assert [f.rule for f in explained.findings] == ["OP-1"]
    alone = evaluate(Facts(), [_rule("OP-1", "log:3"), _rule("VC-2", "log:12", fallback="line")])
    assert sorted(f.rule for f in alone.findings) == ["OP-1", "VC-2"]


def test_a_fallback_for_the_whole_failure_yields_to_any_finding_as_severe_and_stays_beside_milder_ones():
    unexplained = _rule("OP-1.9", "log:40", fallback="failure", severity=Severity.CRITICAL)
    explained = evaluate(Facts(), [_rule("OP-7.28", "log:2", severity=Severity.CRITICAL), unexplained])
    assert [f.rule for f in explained.findings] == ["OP-7.28"]
    beside = evaluate(Facts(), [_rule("AP-3", "log:2", severity=Severity.LOW), unexplained])
    assert [f.rule for f in beside.findings] == ["OP-1.9", "AP-3"]
