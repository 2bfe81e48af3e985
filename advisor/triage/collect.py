"""Triage's inputs read: every collector the request names, assembled into one `Facts`, then decided.

Why apart from the decision (`run`, `valuation`, `forecast`): this is the side of triage that reaches
out (HTTP to the server or Prometheus, the log file, the model's config.json, a host profile), and the
rest is numbers in, findings out; tests of the decision hand it facts, tests of this hand it servers
and files. `run_triage` is the one place the two meet: collect, then `run.decide`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from advisor.catalog.vllm_messages import message_catalog
from advisor.collect import metrics as metrics_collector
from advisor.collect import prometheus as prometheus_collector
from advisor.collect.facts import (
    cpu_backend_note,
    effective_command,
    memory_from_log,
    memory_from_metrics,
    merge_memory,
    server_config,
    startup_compile_note,
)
from advisor.collect.logs import LogReadResult, read_log
from advisor.collect.probe import probe_endpoint
from advisor.collect.server_args import ServeCommand, parse_command
from advisor.errors import UserError
from advisor.memory.kv_change import launch_from_config
from advisor.memory.launch_check import launch_refusals
from advisor.triage.context import hardware_for, memory_from_advisor, model_facts, model_spec_for, resolve_deployment
from advisor.triage.result import Collected, TriageRequest, TriageResult
from advisor.triage.run import check_request, decide
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts, FactSource, ServerConfig
from rules.model import Rule


def run_triage(
    request: TriageRequest, rules: Iterable[Rule] | None = None, ramp: dict[str, Any] | None = None
) -> TriageResult:
    """Collect what the request names, then decide (`run.decide`); the entry for the CLI, scheduled runs
    and the tune loop. The request is checked before anything is read, so a contradictory command line
    fails in one line without a scrape. `ramp` is the ramp document the CLI read for `--ramp`."""
    check_request(request, ramp)
    return decide(request, collect(request), rules, ramp)


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
        note = log.describe()
        if log.dropped_stats_events:
            note += f"; dropped the {log.dropped_stats_events} oldest stats lines"
        if log.dropped_iteration_events:
            note += (
                f"; read the last {log.iteration_events} engine steps, not the {log.dropped_iteration_events} before"
            )
        facts.sources.append(FactSource(kind="log", location=log.source, note=note))
        _snapshot_from_quotes(facts, log)
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
    deployment, deployment_notes = resolve_deployment(request, facts)
    if typed is not None and not (request.logs or request.endpoint or request.prometheus or request.metrics_files):
        # The command alone: what vLLM would refuse. With a log or a live server, vLLM itself has spoken
        # (a model's rope scaling can lift its position limit past what the catalog knows).
        facts.events = [*facts.events, *_launch_refusals(request, facts, typed)]
    return Collected(
        facts=facts,
        command=command,
        command_rebuilt=rebuilt,
        deployment=deployment,
        notes=[*notes, *deployment_notes],
    )


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


def _snapshot_from_quotes(facts: Facts, log: LogReadResult) -> None:
    """The metric figures a person quoted in the text, as a snapshot, when no server or file gave one: a
    live scrape or a /metrics file is the whole reading, a quote only the figures someone picked."""
    samples = log.quoted_metrics.all()
    if facts.snapshot is not None or not samples:
        return
    facts.snapshot = metrics_collector.snapshot_from_samples(samples, f"{log.source} (quoted)", None)
    facts.sources.append(
        FactSource(kind="metrics", location=log.source, note=f"{len(samples)} figure(s) quoted in the text; no rates")
    )


def _window_note(interval_s: float | None) -> str:
    return f"two scrapes {interval_s:g} s apart" if interval_s else "one scrape (no rates)"


def _launch_refusals(request: TriageRequest, facts: Facts, command: ServeCommand) -> list[LogEvent]:
    """What vLLM would refuse in the user's own command (advisor/memory/launch_check.py), as the events its
    message would be in a log, unless the log already holds that message."""
    spec, _ = model_spec_for(request, facts)
    if spec is None:
        return []
    launch = launch_from_config(facts.config)
    chunked = command.value("--enable-chunked-prefill") != "false"
    seen = {e.catalog.template for e in facts.events if e.catalog is not None}
    events = []
    for message in launch_refusals(spec, launch, env=command.env, chunked_prefill=chunked):
        matches = message_catalog().match(message)
        if not matches or matches[0].entry["message"] in seen:
            continue
        ref = matches[0].ref().model_copy(update={"predicted": True})
        events.append(
            LogEvent(
                kind=LogEventKind.VLLM_MESSAGE,
                raw=message,
                source_file="--server-args",
                message=message,
                exception=ref.exception,
                catalog=ref,
                phase="config",
            )
        )
    return events
