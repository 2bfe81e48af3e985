"""The ramp controller: preflight, run the Locust process, print progress, compute the result.

Why a controller outside Locust: Locust's gevent monkey-patching must not leak into servops
(or into a test session), so Locust runs in `python -m loadtest.locust_main` and this module
talks to it over a pipe of JSON lines. The controller also samples the server's /metrics in
a thread, decides when a step is complete (every load process closed it), prints one line
per step on stderr, and stops the run early when every request of a step failed or its
median TTFT passed `--max-ttft`.

Everything is bounded: the child gets a hard deadline (plan length + grace), after which it
is terminated, then killed; a stalled pipe cannot block past that deadline.

Interrupted (Ctrl-C, or SIGTERM from `timeout` or a container stop), the ramp keeps what it
measured: the child sends the records of the step in progress, the finished steps are computed
as usual, the step in progress over the part of its window that ran (marked invalid: requests
still in flight were cancelled), and `RampInterrupted` carries that result to the caller.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import math
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from loadtest.config import WORKER_CONNECT_TIMEOUT_S, RampConfig, RampSchedule
from loadtest.errors import LoadTestError, RampInterrupted
from loadtest.http_stream import Endpoint
from loadtest.knee import find_knee, safe_operating_point
from loadtest.plan import RampPlan, auth_headers
from loadtest.prefill_probe import REPEATS, run_prefill_probe
from loadtest.records import RequestRecord
from loadtest.results import PrefillProbe, RampResult, StepResult
from loadtest.server_signals import MetricsSampler, summarise
from loadtest.slo import SLO, parse_slos
from loadtest.stats import (
    METRIC_DEFINITIONS,
    fill_tokens_with_tokenizer,
    load_tokenizer,
    step_stats,
)
from loadtest.workload import Workload

CHILD_GRACE_S = 90.0
# Seconds an interrupted ramp waits for the child's last records before it stops the child anyway.
INTERRUPT_GRACE_S = 5.0
# An interrupted step is kept when at least this much of its measured window ran.
MIN_PARTIAL_WINDOW_S = 1.0
Progress = Callable[[str], None]


__all__ = ["RampConfig", "preflight", "run_ramp"]  # RampConfig lives in loadtest.config; imported here too


@dataclass(frozen=True)
class ChildRun:
    """What one run of the Locust process gave: every record, the plan as it started (the start time
    and the number of load processes it chose), the steps every process closed (with their CPU figures)
    and why it stopped early, if it did; `interrupted_at`, the moment a Ctrl-C or SIGTERM stopped it."""

    records: list[RequestRecord]
    plan: RampPlan
    closed: dict[int, list[float]]
    stopped_early: str | None
    interrupted_at: float | None = None


def preflight(config: RampConfig) -> str:
    """Check the endpoint answers and return the model name (the first id of GET /v1/models)."""
    try:
        endpoint = Endpoint.parse(config.endpoint)
    except ValueError as exc:
        raise LoadTestError(
            f"--endpoint {config.endpoint!r}: not an http(s) URL; pass e.g. http://127.0.0.1:8000"
        ) from exc
    url = endpoint.url("/v1/models")
    headers = auth_headers(config.api_key, config.authorization)
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as resp:
            body = resp.read(4 * 1024 * 1024)
    except http.client.HTTPException as exc:  # BadStatusLine & co: something that is not HTTP answers
        raise LoadTestError(
            f"--endpoint {config.endpoint}: {url} did not answer HTTP ({type(exc).__name__}); "
            "check the port is the OpenAI server's, not another service's"
        ) from None
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            raise LoadTestError(
                f"--endpoint {config.endpoint}: GET /v1/models answered HTTP {exc.code}; "
                f"pass the server's key with --api-key"
            ) from exc
        if config.model:
            return config.model
        raise LoadTestError(
            f"--endpoint {config.endpoint}: GET /v1/models answered HTTP {exc.code}; pass --model NAME"
        ) from exc
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise LoadTestError(
            f"--endpoint {config.endpoint}: cannot reach {url} ({reason}); start the server or fix the URL"
        ) from exc
    try:
        listing = json.loads(body or b"{}")
    except ValueError:  # an HTML page or a proxy's banner: reachable, but not an OpenAI server
        if config.model:
            return config.model
        raise LoadTestError(
            f"--endpoint {config.endpoint}: GET {url} answered, but not with JSON "
            f"({body[:40]!r}…); point --endpoint at the OpenAI-compatible server"
        ) from None
    if config.model:
        return config.model
    models = listing.get("data") if isinstance(listing, dict) else None
    if not models or not isinstance(models[0], dict) or not models[0].get("id"):
        raise LoadTestError(f"--endpoint {config.endpoint}: /v1/models lists no model; pass --model NAME")
    return str(models[0]["id"])


def run_ramp(
    config: RampConfig,
    progress: Progress = lambda line: None,
    on_start: Callable[[RampPlan], None] | None = None,
) -> RampResult:
    """Run the whole ramp and return its result; raises LoadTestError for user-fixable trouble.

    `on_start` gets the plan once the load generator has fixed its start time: a caller that must act
    inside a step (the tune loop's triage under load) times itself by the plan's clock, not by the
    progress lines, which a step prints only after its last request has come back."""
    slos = parse_slos(config.slo)
    tokenizer = load_tokenizer(config.tokenizer) if config.tokenizer else None
    model = preflight(config)
    if config.workload.kind == "file":
        Workload(config.workload)  # fail now, with a clear message, not inside the child
    plan = _plan(config, model)
    sampler = MetricsSampler(config.metrics_url or Endpoint.parse(config.endpoint).url("/metrics"))
    has_metrics = sampler.probe()
    if has_metrics:
        sampler.start()
    with tempfile.TemporaryDirectory(prefix="servops-ramp-") as tmp:
        plan_path = Path(tmp) / "plan.json"
        plan_path.write_text(plan.model_dump_json())
        try:
            with _sigterm_as_interrupt():
                run = _drive_child(config, plan, plan_path, Path(tmp), slos, progress, on_start)
        finally:
            if has_metrics:
                sampler.stop()
    probe = _prefill_probe(config, model, progress) if config.prefill_probe and not run.interrupted_at else None
    fill_tokens_with_tokenizer(run.records, tokenizer)
    if config.records_path:
        _write_records(config.records_path, run.records, progress)
    result = _result(config, run, model, slos, sampler if has_metrics else None, probe)
    if run.interrupted_at is not None:
        raise RampInterrupted(result)
    return result


def _plan(config: RampConfig, model: str) -> RampPlan:
    """The schedule every load process follows, for the model the endpoint serves."""
    schedule = {name: getattr(config, name) for name in RampSchedule.model_fields}
    return RampPlan(
        **schedule,
        endpoint=config.endpoint,
        model=model,
        workers=max(1, config.workers if not config.master else config.expect_workers),  # 0 local workers: 1 process
        api_key=config.api_key,
        authorization=config.authorization,
    )


def _result(
    config: RampConfig,
    run: ChildRun,
    model: str,
    slos: list[SLO],
    signals: MetricsSampler | None,
    probe: PrefillProbe | None,
) -> RampResult:
    """Every step's statistics (an interrupted ramp's unclosed ones too), the knee and safe point, and the
    configuration echoed with what the run settled: the model, the start and the load processes."""
    steps = [_final_step(config, run.plan, k, run.records, slos, run.closed[k], signals) for k in sorted(run.closed)]
    if run.interrupted_at is not None:
        steps += _unclosed_steps(config, run, slos, signals)
    knee = find_knee(steps, factor=config.knee_factor)
    safe = safe_operating_point(steps, knee, bool(slos))
    echo = config.model_dump()
    echo["model"] = model
    echo["start_ts"] = run.plan.start_ts
    echo["load_processes"] = run.plan.workers
    return RampResult(
        config=echo,
        steps=steps,
        knee=knee,
        safe_operating_point=safe,
        stopped_early=run.stopped_early,
        summary=_summary(steps, knee, safe, run.stopped_early),
        metric_definitions=METRIC_DEFINITIONS,
        prefill_probe=probe,
    )


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (`timeout`, `docker stop`, a CI job cancelled) ends the ramp like Ctrl-C, so what was
    measured is kept; only where a handler can be set (the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame) -> None:  # noqa: ARG001
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _unclosed_steps(config: RampConfig, run: ChildRun, slos, signals: MetricsSampler | None) -> list[StepResult]:
    """The steps an interruption left unclosed: a step whose window had ended is computed as usual
    (its requests still in flight count as cancelled); the step in progress over the part of its
    window that ran, marked invalid, since the requests it cancelled were the slowest."""
    plan, stopped = run.plan, float(run.interrupted_at or 0.0)
    steps = []
    for step in range(plan.steps):
        start, end = plan.window(step)
        if step in run.closed or stopped - start < MIN_PARTIAL_WINDOW_S:
            continue
        result = _final_step(config, plan, step, run.records, slos, [], signals, until_ts=stopped)
        if stopped < end:
            reason = (
                f"interrupted {stopped - start:.0f} s into its {end - start:.0f} s window; "
                "its requests in flight were cancelled"
            )
            result = result.model_copy(update={"valid": False, "invalid_reason": reason})
        steps.append(result)
    return steps


def _prefill_probe(config: RampConfig, model: str, progress: Progress) -> PrefillProbe | None:
    """The lone-prefill timings (loadtest.prefill_probe) on the server the ramp left idle; a failed
    probe is reported and left out, never the ramp it follows."""
    lengths = ", ".join(map(str, config.prefill_probe))
    progress(f"prefill probe: {REPEATS} lone requests of {lengths} words each, max_tokens 1")
    try:
        probe = run_prefill_probe(
            config.endpoint,
            model,
            config.prefill_probe,
            api_key=config.api_key,
            authorization=config.authorization,
            seed=config.workload.seed,
        )
    except LoadTestError as exc:
        progress(f"prefill probe left out: {exc}")
        return None
    progress("prefill probe: " + ", ".join(f"{tokens} tokens {ttft * 1000:.0f} ms" for tokens, ttft in probe.medians()))
    return probe


def _drive_child(
    config: RampConfig,
    plan: RampPlan,
    plan_path: Path,
    tmp: Path,
    slos,
    progress: Progress,
    on_start: Callable[[RampPlan], None] | None = None,
) -> ChildRun:
    """Run the Locust process for `plan` (already written to `plan_path`) and collect what it sends.

    `plan` is not changed: the start time and process count the child reports go into a copy,
    which the result carries.
    """
    stderr_path = tmp / "locust.stderr"
    protocol = _ChildMessages(config, plan, slos, progress, on_start)
    lines: queue.Queue[str | None] = queue.Queue()
    with open(stderr_path, "w") as stderr_file:
        child = subprocess.Popen(
            _child_command(config, plan_path),
            stdout=subprocess.PIPE,
            stderr=stderr_file,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        reader = threading.Thread(target=_pump, args=(child.stdout, lines), daemon=True)
        reader.start()
        connect_s = WORKER_CONNECT_TIMEOUT_S if (config.master or config.workers) else 0.0
        deadline = time.time() + plan.steps * plan.step_s + plan.cooldown_s + CHILD_GRACE_S + connect_s
        try:
            _read_until(lines, protocol, deadline)
        except KeyboardInterrupt:
            protocol.interrupted(time.time())
            progress("ramp: interrupted; collecting what was measured (press Ctrl-C again to abandon it)")
            with contextlib.suppress(ProcessLookupError):
                child.send_signal(signal.SIGINT)  # the child sends its last records and leaves
            _read_until(lines, protocol, time.time() + INTERRUPT_GRACE_S)
        finally:
            _stop_child(child, finish_s=20.0 if protocol.all_done() else 0.0)
            reader.join(timeout=5)
    return protocol.finish(stderr_path)


def _read_until(lines: queue.Queue, protocol: _ChildMessages, deadline: float) -> None:
    """Hand the child's lines to `protocol` until it is done, stops the ramp, the child exits or
    `deadline` passes."""
    while time.time() < deadline and not protocol.all_done():
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        if line is None:
            return  # child exited
        if protocol.read(line):
            return


def _child_command(config: RampConfig, plan_path: Path) -> list[str]:
    """`python -m loadtest.locust_main` as a local run, or as the master of distributed workers."""
    role = "master" if config.master else "local"
    cmd = [sys.executable, "-m", "loadtest.locust_main", role, "--plan", str(plan_path)]
    if config.master:
        cmd += [
            "--workers",
            str(config.expect_workers),
            "--master-bind-host",
            config.master_bind_host,
            "--master-port",
            str(config.master_port),
        ]
    elif config.workers:
        cmd += ["--workers", str(config.workers)]
    return cmd


class _ChildMessages:
    """The child's JSON lines read in order: `started`, per-step record batches from each load process
    (a step closes when every process has sent it, and its statistics are printed), `done`, or `error`."""

    def __init__(
        self,
        config: RampConfig,
        plan: RampPlan,
        slos,
        progress: Progress,
        on_start: Callable[[RampPlan], None] | None = None,
    ) -> None:
        self.config, self.plan, self.slos, self.progress = config, plan, slos, progress
        self.on_start = on_start
        self.records: list[RequestRecord] = []
        self.cpu: dict[int, list[float]] = {}
        self.closed_by: dict[int, set[int]] = {}
        self.closed: dict[int, list[float]] = {}
        self.done_workers: set[int] = set()
        self.stopped_early: str | None = None
        self.started = False
        self.interrupted_at: float | None = None

    def all_done(self) -> bool:
        return len(self.done_workers) >= self.plan.workers

    def interrupted(self, ts: float) -> None:
        """The controller was interrupted at `ts` (the child's own moment replaces it when earlier)."""
        self.interrupted_at = ts

    def read(self, line: str) -> bool:
        """Take one line of the child's stdout; True when the ramp must stop early."""
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            return False  # not ours (the protocol owns the child's stdout, but be safe)
        kind = message.get("type")
        if kind == "error":
            raise LoadTestError(message.get("message", "load generator failed"))
        if kind == "started":
            self._started(message)
            return False
        self.records.extend(RequestRecord.model_validate(r) for r in message.get("records", []))
        if kind == "interrupted":
            self.interrupted_at = min(float(message["ts"]), self.interrupted_at or math.inf)
            return True
        if kind == "done":
            self.done_workers.add(int(message["worker"]))
            return False
        return self._step_sent(int(message["step"]), int(message["worker"]), message.get("cpu_percent"))

    def _started(self, message: dict) -> None:
        self.started = True
        plan = self.plan = self.plan.model_copy(
            update={"start_ts": float(message["start_ts"]), "workers": int(message.get("workers", self.plan.workers))}
        )
        self.progress(
            f"ramp: {plan.steps} steps of {plan.step_s:g} s over {plan.mode} "
            f"{', '.join(f'{x:g}' for x in plan.levels)} with {plan.workers} load process(es)"
        )
        if self.on_start is not None:
            self.on_start(plan)

    def _step_sent(self, step: int, worker: int, cpu_percent: float | None) -> bool:
        """One load process sent step `step`; when all have, the step closes. True to stop early."""
        if cpu_percent is not None:
            self.cpu.setdefault(step, []).append(float(cpu_percent))
        self.closed_by.setdefault(step, set()).add(worker)
        if len(self.closed_by[step]) < self.plan.workers or step in self.closed:
            return False
        self.closed[step] = self.cpu.get(step, [])
        config = self.config
        result = step_stats(
            self.plan,
            step,
            self.records,
            self.slos,
            self.closed[step],
            config.max_client_cpu_percent,
            config.max_send_lateness_s,
        )
        self.progress(_progress_line(result, self.plan.steps))
        self.stopped_early = _early_stop_reason(result, config)
        if self.stopped_early:
            self.progress(f"ramp: stopping early: {self.stopped_early}")
            return True
        return False

    def finish(self, stderr_path: Path) -> ChildRun:
        """The run as collected; a LoadTestError naming the child's last words if it never started."""
        plan = self.plan
        if not self.started and self.interrupted_at is not None:
            raise KeyboardInterrupt  # nothing was measured: a plain interruption
        if not self.started:
            tail = stderr_path.read_text(errors="replace").strip().splitlines()[-3:]
            raise LoadTestError(
                f"the Locust load generator did not start ({' / '.join(tail) or 'no output'}); "
                f"run `python -m loadtest.locust_main local --plan FILE` to see why"
            )
        stopped_early = self.stopped_early
        if self.interrupted_at is not None:
            step = plan.step_at(self.interrupted_at)
            where = f"during step {step + 1} of {plan.steps}" if step is not None else "after the last step's window"
            stopped_early = f"interrupted {where}"
        elif not stopped_early and len(self.closed) < plan.steps:
            tail = stderr_path.read_text(errors="replace").strip().splitlines()[-2:]
            stopped_early = f"load generator ended after {len(self.closed)} of {plan.steps} steps" + (
                f" ({' / '.join(tail)})" if tail else ""
            )
        return ChildRun(
            records=self.records,
            plan=plan,
            closed=self.closed,
            stopped_early=stopped_early,
            interrupted_at=self.interrupted_at,
        )


def _write_records(path: str, records: list[RequestRecord], progress: Progress) -> None:
    """Write the records; if `path` broke during the run, keep them in the temp folder and say where
    (the ramp's result still follows: a finished measurement is never dropped)."""
    lines = [record.model_dump_json() + "\n" for record in sorted(records, key=lambda r: (r.step, r.index))]
    try:
        with open(path, "w", encoding="utf-8") as out:
            out.writelines(lines)
    except OSError as exc:
        handle, rescue = tempfile.mkstemp(prefix="servops-records-", suffix=".jsonl")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.writelines(lines)
        progress(f"--records {path}: cannot write ({exc.strerror}); the records were saved to {rescue} instead")


def _pump(stream, lines: queue.Queue) -> None:
    for line in stream:
        if line.strip():
            lines.put(line)
    lines.put(None)


def _stop_child(child: subprocess.Popen, finish_s: float = 0.0) -> None:
    """Let a finished child exit by itself (it tells its workers to quit), else SIGTERM, then SIGKILL."""
    if finish_s > 0:
        try:
            child.wait(timeout=finish_s)
        except subprocess.TimeoutExpired:
            pass
    if child.poll() is None:
        child.terminate()
        try:
            child.wait(timeout=15)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(timeout=15)


def _final_step(
    config: RampConfig,
    plan: RampPlan,
    step: int,
    records,
    slos,
    cpu_percents: list[float],
    sampler: MetricsSampler | None,
    until_ts: float | None = None,
) -> StepResult:
    """One step's statistics and, with a sampler, its server signals over the same window (ended early at
    `until_ts` by an interruption)."""
    result = step_stats(
        plan,
        step,
        records,
        slos,
        cpu_percents,
        config.max_client_cpu_percent,
        config.max_send_lateness_s,
        until_ts=until_ts,
    )
    if sampler is not None:
        result.server = summarise(sampler.samples, result.window_start_ts, result.window_end_ts)
    return result


def _early_stop_reason(step: StepResult, config: RampConfig) -> str | None:
    if step.requests and step.ok_requests == 0:
        kinds = ", ".join(f"{k}: {v}" for k, v in step.errors.items())
        return f"every request of step {step.step} failed ({kinds})"
    if step.ttft_s.p50 is not None and step.ttft_s.p50 > config.max_ttft_s:
        return f"median TTFT {step.ttft_s.p50:.1f} s at step {step.step} exceeds --max-ttft {config.max_ttft_s:g} s"
    return None


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1e3:.1f}"


def _progress_line(s: StepResult, total: int) -> str:
    unit = "rps" if s.offered_unit == "rps" else "streams"
    errors = sum(s.errors.values())
    state = "valid" if s.valid else f"INVALID: {s.invalid_reason}"
    return (
        f"step {s.step + 1}/{total} offered {s.offered:g} {unit}: achieved {s.achieved_rate:.2f} rps, "
        f"{s.requests} req, {errors} err, TTFT p50/p99 {_ms(s.ttft_s.p50)}/{_ms(s.ttft_s.p99)} ms, "
        f"ITL p50/p99 {_ms(s.itl_s.p50)}/{_ms(s.itl_s.p99)} ms, {s.output_tokens_per_s:.0f} tok/s, "
        f"goodput {s.goodput_rps:.2f} rps [{state}]"
    )


def _summary(steps, knee, safe, stopped_early) -> str:
    parts = [f"{len(steps)} steps measured"]
    errors = sum(sum(s.errors.values()) for s in steps)
    requests = sum(s.requests for s in steps)
    parts.append(f"{errors} of {requests} requests failed")
    parts.append(f"knee at offered {knee.offered:g} ({knee.metric})" if knee else "no knee found")
    parts.append(f"safe operating point {safe.offered:g}" if safe else "no safe operating point")
    if stopped_early:
        parts.append(f"stopped early: {stopped_early}")
    return "; ".join(parts)
