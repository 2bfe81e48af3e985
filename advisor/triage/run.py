"""Triage: collect → Facts → rules.evaluate → predicted effects → one `TriageResult`.

This is the on-call path: given whatever the engineer has at hand — a live endpoint, a
Prometheus server in front of many replicas, saved /metrics dumps, a log file, the launch
command — build the facts those inputs support, let the rules rank what is wrong, and
attach to every proposed flag change what the memory model predicts it will do. Missing
inputs shrink the answer instead of failing it; unusable inputs fail with one line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from advisor import __version__
from advisor.collect import metrics as metrics_collector
from advisor.collect import prometheus as prometheus_collector
from advisor.collect.facts import (
    BUNDLED_ENGINE_MARK,
    cpu_backend_note,
    effective_command,
    memory_from_log,
    memory_from_metrics,
    merge_memory,
    server_config,
    startup_compile_note,
)
from advisor.collect.logs import read_log
from advisor.collect.probe import probe_endpoint
from advisor.collect.server_args import ServeCommand, parse_command
from advisor.errors import UserError
from advisor.perf.limits import engine_kind
from advisor.perf.pool import DeviceShare
from advisor.predict import Deployment, MeasuredPool, predict_findings
from advisor.replicas import REPLICAS_FLAG, replicas_are_servers
from advisor.run_diff import RunDiff
from advisor.tp_choice import choose_tensor_parallel
from advisor.triage_context import (
    hardware_for,
    measured_pool,
    memory_from_advisor,
    model_facts,
    resolve_deployment,
)
from loadtest.slo import SLO
from rules import signals
from rules.catalog import get_rule
from rules.catalog.common import gpu_count
from rules.evaluate import Evaluation, Resolution, RuleError, evaluate
from rules.facts import Facts, FactSource, LoadTestFacts, ServerConfig, Workload
from rules.model import ConfigChange, Finding, Rule


class RejectedChange(BaseModel):
    """A change a rule proposed, or the value of its flag the model's search came closest with (a gain
    at the percentiles' nominal ranks that a half-rank shift undoes), predicted not to help."""

    rule: str
    change: ConfigChange
    reason: str
    predicted: dict[str, Any] | None = Field(default=None, description="the predicted ramp with the change")
    command: str | None = Field(default=None, description="`servops predict` that gives the predicted figures again")


class TriageRequest(BaseModel):
    """Everything `servops triage` was given; echoed in the result as `inputs`."""

    endpoint: str | None = None
    prometheus: str | None = None
    selector: str = ""
    window_s: float = prometheus_collector.DEFAULT_WINDOW_S
    metrics_files: list[str] = Field(default_factory=list)
    metrics_interval_s: float | None = None
    logs: str | None = None
    server_args: str | None = None
    model: str | None = None
    gpu: str | None = None
    gpus: int | None = None
    gpu_memory_gib: float | None = None
    timeout_s: float = metrics_collector.DEFAULT_TIMEOUT_S
    workload: Workload | None = None
    ramp: str | None = Field(default=None, description="a ramp result of this server: latency predictions per change")
    save_window: str | None = Field(
        default=None, description="where to write the live window as the one-step ramp the model calibrated on"
    )
    host_profile: str | None = Field(
        default=None, description="`servops probe` of the serving host: the CPU floors' bandwidth and FLOPS"
    )
    headers: dict[str, str] = Field(default_factory=dict, exclude=True, repr=False)  # secrets: never echoed

    def has_input(self) -> bool:
        return bool(self.endpoint or self.prometheus or self.metrics_files or self.logs or self.server_args)


class TriageResult(BaseModel):
    """The JSON document `servops triage --json` writes and `servops report` renders."""

    kind: str = "triage"
    servops_version: str = __version__
    created_at: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    inputs: TriageRequest
    sources: list[FactSource] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    resolutions: list[Resolution] = Field(default_factory=list)
    current_command: str | None = None
    proposed_command: str | None = None
    rules_run: list[str] = Field(default_factory=list)
    rules_skipped: list[str] = Field(default_factory=list)
    rule_errors: list[RuleError] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    rule_pages: dict[str, str] = Field(default_factory=dict, description="rule code → its page, for fired rules")
    rejected_changes: list[RejectedChange] = Field(
        default_factory=list, description="changes rules proposed that the performance model predicts not to help"
    )
    changes_since_last: RunDiff | None = None  # scheduled runs only
    facts: Facts | None = Field(default=None, description="what the rules saw (left out of the JSON by --no-facts)")

    @property
    def top(self) -> Finding | None:
        return self.findings[0] if self.findings else None


class Collected(BaseModel):
    """Facts plus what is not a fact: the command to edit, and notes for the user."""

    facts: Facts
    command: ServeCommand | None = None
    command_rebuilt: bool = False  # from the log/metrics, not typed by the user
    notes: list[str] = Field(default_factory=list)


def run_triage(request: TriageRequest, rules: Iterable[Rule] | None = None) -> TriageResult:
    """Collect, evaluate, predict; the one entry point for the CLI and scheduled runs.

    `rules` defaults to the whole catalog; tests may narrow it to the rules they specify.
    """
    if not request.has_input():
        raise UserError(
            "nothing to triage; pass --endpoint URL, --prometheus URL, --metrics FILE, --logs FILE or --server-args"
        )
    if request.metrics_files and (request.endpoint or request.prometheus):
        raise UserError(
            "--metrics files and a live --endpoint/--prometheus were both given; "
            "pass saved files or a live source, not both"
        )
    if request.ramp and request.save_window:
        raise UserError(
            f"--save-window {request.save_window} with --ramp {request.ramp}: the predictions are calibrated "
            f"on the ramp, not on a window; drop --save-window"
        )
    ramp = _load_ramp(request.ramp) if request.ramp else None
    collected = collect(request)
    if ramp is not None and collected.facts.loadtest is None:
        collected.facts.loadtest = LoadTestFacts.model_validate(ramp)
    evaluation: Evaluation = evaluate(collected.facts, rules)
    deployment, notes = resolve_deployment(request, collected.facts)
    rejected: list[RejectedChange] = []
    if ramp is not None:  # latency first: it may choose other values, whose memory effect follows
        rejected, forecast_notes = _forecast(
            evaluation.findings,
            ramp,
            Path(request.ramp).name,
            request,
            collected,
            engine=_engine_of(collected.facts),
            ramp_path=request.ramp,
            in_flight=_in_flight(collected.facts),
            deployment=deployment,
            gpus=gpu_count(collected.facts),
        )
        notes = [*notes, *forecast_notes]
    elif (live := _forecast_from_window(evaluation.findings, request, collected, deployment)) is not None:
        rejected, live_notes = live
        notes = [*notes, *live_notes]
    else:
        if request.save_window:
            from advisor.perf.live import WINDOW_UNUSABLE  # noqa: PLC0415 (numpy and the replay: only when asked)

            notes = [*notes, f"the window was not saved to {request.save_window}: {WINDOW_UNUSABLE}"]
        if deployment is not None:
            notes = [*notes, *_forecast_from_prior(evaluation.findings, request, collected, deployment)]
    choose_tensor_parallel(evaluation.findings, deployment, gpu_count(collected.facts))
    predict_findings(evaluation.findings, deployment, _measured_pool(collected.facts, deployment))
    result = TriageResult(
        inputs=request,
        sources=collected.facts.sources,
        findings=evaluation.findings,
        resolutions=evaluation.resolutions,
        rules_run=evaluation.rules_run,
        rules_skipped=evaluation.rules_skipped,
        rule_errors=evaluation.errors,
        notes=[*collected.notes, *notes, *_floor_notes(collected.facts)],
        rule_pages=_pages(evaluation.findings),
        rejected_changes=rejected,
        facts=collected.facts,
    )
    if collected.command is not None:
        result.current_command = collected.command.render()
        changes = {c.flag: c.proposed for f in evaluation.findings for c in f.changes}
        if replicas_are_servers(engine_kind(collected.command, _engine_of(collected.facts))):
            changes.pop(REPLICAS_FLAG, None)  # servers like this one, not a flag
        if changes:
            result.proposed_command = collected.command.with_changes(changes).render()
            if collected.command_rebuilt:
                result.notes.append(
                    "current command rebuilt from the log/metrics (flags left at defaults are "
                    "not shown); pass --server-args to edit your own"
                )
    return result


def collect(request: TriageRequest) -> Collected:
    """Run every collector the request names and assemble one `Facts`."""
    facts = Facts()
    notes: list[str] = []
    _collect_metrics(request, facts)
    if request.endpoint:
        facts.endpoint = probe_endpoint(request.endpoint, request.timeout_s, request.headers)
        facts.sources.append(FactSource(kind="probe", location=request.endpoint))
    if request.logs:
        log = read_log(request.logs)
        facts.events = log.events
        note = f"{len(log.events)} events from {log.lines_read} lines"
        if log.dropped_stats_events:
            note += f"; dropped the {log.dropped_stats_events} oldest stats lines"
        facts.sources.append(FactSource(kind="log", location=log.source, note=note))
    typed = parse_command(request.server_args) if request.server_args else None
    merged = effective_command(typed, facts.events, facts.snapshot)
    facts.config = server_config(merged, facts.events, facts.snapshot)
    if facts.endpoint is not None and facts.endpoint.version:  # GET /version answers even when logs are absent
        facts.config = facts.config or ServerConfig()
        facts.config.vllm_version = facts.config.vllm_version or facts.endpoint.version
    command = typed if typed is not None else merged  # the user's own command, when given, is what we edit
    if request.server_args:
        facts.sources.append(FactSource(kind="config", location="--server-args"))
    facts.memory = merge_memory(memory_from_log(facts.events), memory_from_metrics(facts.snapshot))
    facts.hardware = hardware_for(request, facts)
    facts.model = model_facts(request, facts)
    facts.memory = merge_memory(facts.memory, memory_from_advisor(request, facts))
    facts.workload = request.workload
    notes += [note for note in (cpu_backend_note(facts.config), startup_compile_note(facts.events)) if note]
    rebuilt = command is not None and typed is None
    if rebuilt and not command.program:
        command.program = ["vllm", "serve"]
    return Collected(facts=facts, command=command, command_rebuilt=rebuilt, notes=notes)


def _collect_metrics(request: TriageRequest, facts: Facts) -> None:
    if request.prometheus:
        snapshot, window = prometheus_collector.collect(
            request.prometheus, request.selector, request.window_s, request.timeout_s, request.headers
        )
        facts.snapshot, facts.window = snapshot, window
        facts.sources.append(
            FactSource(
                kind="prometheus",
                location=request.prometheus,
                note=f"selector {request.selector or '{}'}; window {request.window_s:g} s; "
                f"{len(window.per_instance)} instance(s)",
            )
        )
        return
    if request.endpoint:
        if request.metrics_interval_s:
            interval_s = request.metrics_interval_s
            before, after = metrics_collector.scrape_pair(
                request.endpoint, interval_s, request.timeout_s, request.headers
            )
            # live scrapes carry their own clock: the real gap includes a slow server's answer time
            facts.snapshot, facts.window = after, metrics_collector.window_between(before, after)
        else:
            facts.snapshot = metrics_collector.scrape(request.endpoint, request.timeout_s, request.headers)
        facts.sources.append(
            FactSource(
                kind="metrics",
                location=metrics_collector.metrics_url(request.endpoint),
                note=_window_note(request.metrics_interval_s),
            )
        )
        return
    if request.metrics_files:
        if len(request.metrics_files) > 2:
            raise UserError(
                f"--metrics given {len(request.metrics_files)} times; pass one file, or two with --metrics-interval"
            )
        snapshots = [metrics_collector.load_file(path) for path in request.metrics_files]
        facts.snapshot = snapshots[-1]
        interval_s = request.metrics_interval_s if len(snapshots) == 2 else None
        if len(snapshots) == 2:
            facts.window = metrics_collector.window_between(snapshots[0], snapshots[1], interval_s)
        for path in request.metrics_files:
            facts.sources.append(FactSource(kind="metrics", location=path, note=_window_note(interval_s)))


def _pages(findings: list[Finding]) -> dict[str, str]:
    """Each fired rule's page (what it checks, why, the fix, limits) so a report can show it."""
    pages: dict[str, str] = {}
    for finding in findings:
        if finding.rule not in pages:
            try:
                pages[finding.rule] = get_rule(finding.rule).explain()
            except LookupError:
                continue
    return pages


def _window_note(interval_s: float | None) -> str:
    return f"two scrapes {interval_s:g} s apart" if interval_s else "one scrape (no rates)"


def _floor_notes(facts) -> list[str]:
    """The physical floors behind the findings, stated whenever model and hardware are known.

    Computed by rules/catalog/floors.py."""
    from rules.catalog import floors

    decode, prefill = floors.decode_floor(facts), floors.prefill_floor(facts)
    notes = []
    if decode is not None:
        notes.append(
            f"physical floor of a decode step at {decode.batch:g} running: {decode.describe()} "
            f"(context from {decode.context_source})"
        )
    if prefill is not None:
        notes.append(
            f"physical floor of prefilling the mean {prefill.prompt_tokens:.0f}-token prompt: {prefill.describe()}"
        )
    return notes


def _engine_of(facts) -> str | None:
    """Whose defaults fill the flags the log left out: the bundled engine announces itself in its
    version (`0.33.0+servops.…`), vLLM's CPU backend in its engine config; else the command decides."""
    config = facts.config
    if config is not None and config.vllm_version and BUNDLED_ENGINE_MARK in config.vllm_version:
        return "bundled"
    if config is not None and config.device == "cpu":
        return "vllm-cpu"
    return None


def _in_flight(facts: Facts) -> float | None:
    """The load to size replicas for: the larger of the requests the server holds now (running +
    waiting, as /metrics or the stats line showed them) and the clients' stated concurrency
    (--concurrency), since a gateway may hold back part of what the clients send (OP-5.6); None
    when neither is known."""
    known = []
    running = signals.running(facts)
    if running is not None:
        waiting = signals.waiting(facts)
        known.append(running.value + (waiting.value if waiting is not None else 0.0))
    if facts.workload and facts.workload.client_concurrency:
        known.append(float(facts.workload.client_concurrency))
    return max(known) if known else None


def _slos(workload: Workload | None) -> list[SLO]:
    """The user's --ttft-slo / --itl-slo as p99 bounds for the predicted safe operating point."""
    slos = []
    if workload and workload.ttft_slo_s:
        slos.append(SLO(metric="ttft", percentile="p99", bound_s=workload.ttft_slo_s))
    if workload and workload.itl_slo_s:
        slos.append(SLO(metric="itl", percentile="p99", bound_s=workload.itl_slo_s))
    return slos


def _load_ramp(path: str) -> dict:
    from advisor.report_files import (
        load_result,  # the report renderer's reader: only with --ramp
    )

    document = load_result(Path(path))
    if document.get("kind") != "ramp":
        raise UserError(
            f"--ramp {path}: kind {document.get('kind')!r} is not a ramp result; give the JSON "
            f"`servops ramp --json` wrote"
        )
    return document


def _forecast_from_window(
    findings: list[Finding], request: TriageRequest, collected: Collected, deployment: Deployment | None
) -> tuple[list[RejectedChange], list[str]] | None:
    """No ramp, but a metrics window: the model calibrates on the window as one measured load step
    (advisor/perf/live.py) and chooses and predicts the changes as it does from a ramp; None when the
    window cannot stand for a load step (the prior, or nothing, then).

    With `--save-window FILE` the window is written there as a ramp document, so each prediction
    carries the `servops predict --ramp FILE …` command that gives its figures again: a window is
    gone once the server moves on, and a prediction nobody can rerun cannot be checked."""
    from advisor.perf.live import live_ramp  # noqa: PLC0415 (numpy and the replay: only with a window)
    from advisor.report_files import write_json  # noqa: PLC0415 (the report renderer's writer: only with a window)

    window = live_ramp(collected.facts)
    if window is None:
        return None
    ramp, said = window
    if request.save_window:
        write_json(Path(request.save_window), json.dumps(ramp, indent=1))
    rejected, notes = _forecast(
        findings,
        ramp,
        Path(request.save_window).name if request.save_window else "the live window",
        request,
        collected,
        engine=_engine_of(collected.facts),
        ramp_path=request.save_window,
        in_flight=_in_flight(collected.facts),
        deployment=deployment,
        gpus=gpu_count(collected.facts),
    )
    saved = (
        f"the window is saved as a ramp in {request.save_window}"
        if request.save_window
        else "pass --save-window FILE to keep it as a ramp and get the `servops predict` command behind each figure"
    )
    return rejected, [f"latency predictions: calibrated on {said}; {saved}", *notes]


def _forecast(findings: list[Finding], ramp: dict, source: str, request: TriageRequest, collected: Collected, **kw):
    """forecast_findings on this server's command, measured KV pool and the user's SLOs."""
    from advisor.triage_forecast import forecast_findings  # noqa: PLC0415 (numpy and the replay: only when asked)

    memory = collected.facts.memory
    return forecast_findings(
        findings,
        ramp,
        source,
        collected.command or ServeCommand(),
        memory.kv_cache_tokens if memory else None,
        _slos(request.workload),
        device_share=_device_share(collected.facts, kw.get("deployment")),
        **kw,
    )


def _measured_pool(facts: Facts, deployment: Deployment | None) -> MeasuredPool | None:
    """The pool the server reported, its GiB the deployment's refined figure when the startup log pinned
    it finer than it printed (advisor/triage_context.py `_logged_pool_gib`): one figure for the memory
    effects and the --gpu-memory-utilization latency forecast alike."""
    pool = measured_pool(facts)
    if pool is not None and deployment is not None and deployment.measured_kv_pool_gib is not None:
        pool.pool_gib = deployment.measured_kv_pool_gib
    return pool


def _device_share(facts: Facts, deployment: Deployment | None) -> DeviceShare | None:
    """The reported pool per GPU and the GPU's size, when the server reported both (not on vLLM's CPU
    backend, whose space is given, not a share): what models a --gpu-memory-utilization change."""
    pool = _measured_pool(facts, deployment)
    if pool is None or not pool.pool_gib or not pool.device_gib:
        return None
    return DeviceShare(pool_gib=pool.pool_gib, device_gib=pool.device_gib)


def _forecast_from_prior(
    findings: list[Finding], request: TriageRequest, collected: Collected, deployment
) -> list[str]:
    """No ramp: latency predictions from the roofline prior over the workload hints, when they give lengths."""
    workload = request.workload
    if not workload or not workload.p50_input_tokens or not workload.p50_output_tokens:
        return []
    from advisor.perf.limits import engine_kind  # noqa: PLC0415 (with the prior, below)
    from advisor.perf.prior import (
        roofline_cost,  # numpy and the replay: only with request lengths
    )
    from advisor.perf.whatif import synthetic_ramp

    launch = deployment.launch
    engine = engine_kind(collected.command or ServeCommand(), _engine_of(collected.facts))
    cost = roofline_cost(
        deployment.model,
        deployment.gpu,
        tensor_parallel=launch.tensor_parallel_size,
        quantization=launch.quantization,
        engine=engine,
        pipeline_parallel=launch.pipeline_parallel_size,
    )
    if cost is None:
        return []
    top = max(2, int(workload.client_concurrency or 64))
    levels = [float(2**k) for k in range(12) if 2**k < top] + [float(top)]
    prompt, output = int(workload.p50_input_tokens), int(workload.p50_output_tokens)
    # Steps long enough for a few request lifetimes at the top load, and no longer (replay time).
    lifetime = prompt * cost.prefill_token_s + output * (cost.base_s + top * cost.decode_seq_s)
    ramp = synthetic_ramp(levels, prompt, output, step_s=min(600.0, max(5.0, 4 * lifetime)))
    _, notes = _forecast(findings, ramp, "workload hints", request, collected, cost=cost, deployment=deployment)
    return notes
