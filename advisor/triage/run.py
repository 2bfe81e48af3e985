"""Triage's decision: collected facts → rules.evaluate → valued findings → one `TriageResult`.

This is the on-call path: given whatever the engineer has at hand (a live endpoint, a Prometheus server
in front of many replicas, saved /metrics dumps, a log file, the launch command), `triage/collect.py`
builds the facts those inputs support; here the rules rank what is wrong and every proposed flag change
gets what the performance and memory models predict it will do. Missing inputs shrink the answer instead
of failing it; unusable inputs fail with one line.

Pure, like `rules/` (tests/unit/advisor/triage/test_purity.py): no server, file or clock is read here, so a
test hands it facts and gets the same findings every time.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from advisor.collect.facts import (
    BUNDLED_ENGINE_MARK,
)
from advisor.collect.server_args import ServeCommand
from advisor.errors import UserError
from advisor.memory.kv_change import Deployment, MeasuredPool
from advisor.perf.limits import engine_kind
from advisor.perf.live import WINDOW_UNUSABLE, live_ramp
from advisor.perf.pool import DeviceShare
from advisor.perf.prior import roofline_cost
from advisor.perf.replicas import REPLICAS_FLAG, replicas_are_servers
from advisor.perf.whatif import ServerContext, synthetic_ramp
from advisor.triage.forecast import ForecastRequest, forecast_findings
from advisor.triage.result import Collected, TriageRequest, TriageResult
from advisor.triage.valuation import Valuation, value_findings
from loadtest.slo import SLO
from rules import signals
from rules.catalog import floors, get_rule
from rules.catalog.common import gpu_count, total_gib
from rules.evaluate import Evaluation, evaluate
from rules.facts import Facts, LoadTestFacts, Workload
from rules.model import Finding, Rule


def decide(
    request: TriageRequest,
    collected: Collected,
    rules: Iterable[Rule] | None = None,
    ramp: dict[str, Any] | None = None,
) -> TriageResult:
    """Evaluate and value what was collected; `triage.collect.run_triage` collects and calls this.

    The algorithm, in order:
    1. evaluate: the rules (`rules/`, pure) turn the facts into ranked findings, each with the flag
       changes it proposes, conflicting changes to one flag resolved;
    2. value (advisor/triage/valuation.py): a copy of the findings passes the performance model (the
       ramp, else the live window, else the roofline prior), the TP choice and the memory model, in
       that declared order; a change predicted not to help is listed as rejected;
    3. assemble: the result document, with the current command and the one with every change applied.
    Triage reads and writes no result file: the CLI reads the ramp (`ramp`) and saves the live
    window the model calibrated on (`TriageResult.window_ramp`). `rules` defaults to the whole
    catalog; tests may narrow it to the rules they specify.
    """
    check_request(request, ramp)
    collected = _with_ramp(collected, ramp)
    facts = collected.facts
    evaluation: Evaluation = evaluate(facts, rules)
    deployment = collected.deployment
    latency = _LatencyPass(request, collected, deployment, ramp)
    valuation = value_findings(
        evaluation.findings,
        latency,
        deployment,
        gpu_count(facts),
        _measured_pool(facts, deployment),
    )
    result = TriageResult(
        inputs=request,
        sources=facts.sources,
        findings=valuation.findings,
        resolutions=evaluation.resolutions,
        rules_run=evaluation.rules_run,
        rules_skipped=evaluation.rules_skipped,
        rule_errors=evaluation.errors,
        notes=[*collected.notes, *valuation.notes, *_floor_notes(facts)],
        rule_pages=_pages(valuation.findings),
        rejected_changes=valuation.rejected,
        facts=facts,
        window_ramp=latency.window_ramp,
    )
    if collected.command is not None:
        _add_commands(result, collected.command, collected.command_rebuilt, facts)
    return result


def _with_ramp(collected: Collected, ramp: dict[str, Any] | None) -> Collected:
    """The collected facts with the ramp the CLI read as their load test, unless they hold one already."""
    if ramp is None or collected.facts.loadtest is not None:
        return collected
    facts = collected.facts.model_copy(update={"loadtest": LoadTestFacts.model_validate(ramp)})
    return collected.model_copy(update={"facts": facts})


def _add_commands(result: TriageResult, command: ServeCommand, rebuilt: bool, facts: Facts) -> None:
    """The current command and, when the findings change flags or environment variables, the one with every
    change applied: what the on-call engineer copies. Host settings (container, driver) are no part of it;
    `rebuilt` says the current command was put together from the log or metrics, not given."""
    result.current_command = command.render()
    proposed = [c for f in result.findings for c in f.changes]
    changes = {c.flag: c.proposed for c in proposed if c.kind == "flag"}
    env = {c.flag: c.proposed for c in proposed if c.kind == "env"}
    if replicas_are_servers(engine_kind(command, _engine_of(facts))):
        changes.pop(REPLICAS_FLAG, None)  # servers like this one, not a flag
    if not (changes or env):
        return
    result.proposed_command = command.with_changes(changes, env).render()
    if rebuilt:
        result.notes.append(
            "current command rebuilt from the log/metrics (flags left at defaults are "
            "not shown); pass --server-args to edit your own"
        )


class _LatencyPass:
    """The performance model's pass of the valuation, from what this triage has: calibrated on the ramp
    (--ramp), else on the metrics window as one load step, else the roofline prior over the workload hints;
    `window_ramp` keeps the window it calibrated on, for the CLI to save (--save-window)."""

    def __init__(
        self, request: TriageRequest, collected: Collected, deployment: Deployment | None, ramp: dict[str, Any] | None
    ) -> None:
        self.request, self.collected, self.deployment, self.ramp = request, collected, deployment, ramp
        self.window_ramp: dict[str, Any] | None = None

    def __call__(self, findings: list[Finding]) -> Valuation:
        request, collected, deployment = self.request, self.collected, self.deployment
        if self.ramp is not None:
            return _forecast(
                findings,
                self.ramp,
                _file_name(request.ramp),
                request,
                collected,
                engine=_engine_of(collected.facts),
                ramp_path=request.ramp,
                in_flight=_in_flight(collected.facts),
                deployment=deployment,
                gpus=gpu_count(collected.facts),
            )
        live = _forecast_from_window(findings, request, collected, deployment)
        if live is not None:
            valued, self.window_ramp = live
            return valued
        notes = []
        if request.save_window:
            notes.append(f"the window was not saved to {request.save_window}: {WINDOW_UNUSABLE}")
        prior = _forecast_from_prior(findings, request, collected, deployment) if deployment is not None else None
        if prior is None:
            return Valuation(findings=findings, notes=notes)
        # The prior's ±50 % only annotates (forecast.TRUSTED_RELATIVE_ERROR): it rejects nothing a rule proposed.
        return Valuation(prior.findings, [], [*notes, *prior.notes])


def check_request(request: TriageRequest, ramp: dict[str, Any] | None) -> None:
    """Inputs that cannot be triaged together, each one line naming the flags and the fix."""
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
    if request.ramp and ramp is None:
        raise UserError(f"--ramp {request.ramp}: the ramp document was not read; the CLI reads it before triage")


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


def _floor_notes(facts) -> list[str]:
    """The physical floors behind the findings, stated whenever model and hardware are known.

    Computed by rules/catalog/floors.py."""
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


def _forecast_from_window(
    findings: list[Finding], request: TriageRequest, collected: Collected, deployment: Deployment | None
) -> tuple[Valuation, dict[str, Any]] | None:
    """No ramp, but a metrics window: the model calibrates on the window as one measured load step
    (advisor/perf/live.py) and chooses and predicts the changes as it does from a ramp; None when the
    window cannot stand for a load step (the prior, or nothing, then).

    With `--save-window FILE` the window is written there as a ramp document, so each prediction
    carries the `servops predict --ramp FILE …` command that gives its figures again: a window is
    gone once the server moves on, and a prediction nobody can rerun cannot be checked."""
    window = live_ramp(collected.facts)
    if window is None:
        return None
    ramp, said = window
    valued = _forecast(
        findings,
        ramp,
        _file_name(request.save_window) if request.save_window else "the live window",
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
    notes = [f"latency predictions: calibrated on {said}; {saved}", *valued.notes]
    return Valuation(valued.findings, valued.rejected, notes), ramp


def _forecast(
    findings: list[Finding],
    ramp: dict[str, Any],
    source: str,
    request: TriageRequest,
    collected: Collected,
    *,
    deployment: Deployment | None,
    engine: str | None = None,
    **options: Any,
) -> Valuation:
    """forecast_findings on this server's command, measured KV pool and the user's SLOs. `options`: the rest
    of ForecastRequest (cost, ramp_path, in_flight, gpus)."""
    memory = collected.facts.memory
    server = ServerContext(
        command=collected.command or ServeCommand(),
        engine=engine,
        kv_cache_tokens=memory.kv_cache_tokens if memory else None,
        device_share=_device_share(collected.facts, deployment),
        deployment=deployment,
    )
    try:
        forecast = ForecastRequest.for_document(ramp, source, server, _slos(request.workload), **options)
    except UserError as exc:
        return Valuation(findings=findings, notes=[f"no latency predictions: {exc}"])
    return forecast_findings(findings, forecast)


def _measured_pool(facts: Facts, deployment: Deployment | None) -> MeasuredPool | None:
    """The pool the server reported, its GiB the deployment's refined figure when the startup log pinned
    it finer than it printed (advisor/triage/context.py `_logged_pool_gib`): one figure for the memory
    effects and the --gpu-memory-utilization latency forecast alike."""
    pool = _reported_pool(facts)
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
    findings: list[Finding], request: TriageRequest, collected: Collected, deployment: Deployment
) -> Valuation | None:
    """No ramp: latency predictions from the roofline prior over the workload hints, when they give lengths."""
    workload = request.workload
    if not workload or not workload.p50_input_tokens or not workload.p50_output_tokens:
        return None
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
        return None
    top = max(2, int(workload.client_concurrency or 64))
    levels = [float(2**k) for k in range(12) if 2**k < top] + [float(top)]
    prompt, output = int(workload.p50_input_tokens), int(workload.p50_output_tokens)
    # Steps long enough for a few request lifetimes at the top load, and no longer (replay time).
    lifetime = prompt * cost.prefill_token_s + output * (cost.base_s + top * cost.decode_seq_s)
    ramp = synthetic_ramp(levels, prompt, output, step_s=min(600.0, max(5.0, 4 * lifetime)))
    return _forecast(findings, ramp, "workload hints", request, collected, cost=cost, deployment=deployment)


def _reported_pool(facts: Facts) -> MeasuredPool | None:
    """The KV pool in tokens as the server reported it (log sizing lines or cache_config_info)."""
    memory = facts.memory
    if memory is None or memory.source == "advisor" or not memory.kv_cache_tokens:
        return None
    config = facts.config
    dtype = (config.dtype or "") if config else ""
    return MeasuredPool(
        kv_cache_tokens=memory.kv_cache_tokens,
        max_model_len=config.max_model_len if config else None,
        max_num_seqs=config.max_num_seqs if config else None,
        kv_dtype_bytes=4.0 if dtype in ("float32", "float") else 2.0,
        pool_gib=memory.available_kv_gib,
        device_gib=None if config is not None and config.device == "cpu" else total_gib(facts),
    )


def _file_name(path: str) -> str:
    """The last part of a path the user gave, as the label of the predictions calibrated on it; a string
    operation, since the decision opens no file (the CLI read it)."""
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
