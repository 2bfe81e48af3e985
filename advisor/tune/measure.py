"""One measurement of one server configuration: launch → ramp (triage under load) → stop.

Why one shared step for `servops demo` and `servops tune`: both ask the same question of a
configuration ("how does it hold up, and what would triage change?") and must answer it
the same way for a before/after comparison to be fair: same workload, same ramp, triage
taken while the top load step is running (an idle server has no queue to diagnose).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from advisor.collect.server_args import ServeCommand
from advisor.servers.process import EngineProcess, display_command, launch_env
from advisor.triage.collect import run_triage
from advisor.triage.result import TriageRequest
from loadtest.knee import DEFAULT_FACTOR, find_knee, safe_operating_point
from loadtest.plan import RampPlan
from loadtest.results import RampResult
from loadtest.runner import RampConfig, run_ramp
from loadtest.slo import parse_slos
from loadtest.workload import LengthSpec, WorkloadSpec
from rules.facts import Workload

__all__ = ["Measurement", "RampSettings", "measure", "server_api_key", "top_change"]

Progress = Callable[[str], None]
# Both of triage's scrapes must fall in the last step's measured part: the second is taken this long before
# the step ends at the latest (a loaded server answers /metrics slowly); a gap is shortened to fit, never
# below _MIN_SCRAPE_GAP_S (rates over a fraction of a second are noise).
_SCRAPE_ROOM_S = 1.0
_MIN_SCRAPE_GAP_S = 1.0


class RampSettings(BaseModel):
    """The load both sides of a comparison get (defaults sized for a 2-core CPU and SmolLM2)."""

    concurrency: list[int] = Field(default_factory=lambda: [1, 2, 4], min_length=2)
    step_s: float = Field(default=25.0, gt=0)
    warmup_s: float = Field(default=5.0, ge=0)
    cooldown_s: float = Field(default=15.0, ge=0)
    input_len: int = Field(default=24, ge=1)
    output_len: int = Field(default=12, ge=1)
    slo: str | None = "ttft_p99=3s"
    request_timeout_s: float = Field(default=90.0, gt=0)
    triage_interval_s: float = Field(default=4.0, gt=0, description="seconds between the two /metrics scrapes")
    startup_timeout_s: float = Field(default=600.0, gt=0)
    extend_to_knee: bool = Field(
        default=True,
        description="when the ramp finds no knee, ramp on at 2x and 4x the "
        "top level (up to max_concurrency): a safe point at the top tested step "
        "measures nothing",
    )
    max_concurrency: int = Field(default=64, ge=1)


class Measurement(BaseModel):
    """What one configuration did: its command, ramp result, the triage taken under load."""

    label: str
    command: str
    ramp: dict[str, Any]
    triage: dict[str, Any] | None = None
    triage_error: str | None = None
    log_path: str
    startup_s: float
    ramp_s: float


def measure(
    command: ServeCommand,
    settings: RampSettings,
    out_dir: Path,
    label: str,
    progress: Progress,
    with_triage: bool = True,
) -> Measurement:
    """Launch `command`, ramp it (triaging during the last step), stop it; always stops it."""
    shown = display_command(command)
    log_path = out_dir / f"engine-{label}.log"
    progress(f"[{label}] starting: {shown}")
    started = time.monotonic()
    with EngineProcess(
        command,
        log_path,
        startup_timeout_s=settings.startup_timeout_s,
        progress=lambda line: progress(f"[{label}] {line}"),
    ) as engine:
        startup_s = time.monotonic() - started
        triage_box: dict[str, Any] = {}
        api_key = server_api_key(command)
        trigger = _TriageTrigger(engine.base_url, log_path, shown, settings, triage_box, progress, label, api_key)

        ramp_started = time.monotonic()
        ramp = run_ramp(
            _ramp_config(engine.base_url, settings, api_key=api_key),
            progress=lambda line: progress(f"[{label}] {line}"),
            on_start=trigger.schedule if with_triage else None,
        )
        if with_triage:
            trigger.finish()
            with_triage = False
        ramp = _extend_to_knee(ramp, engine.base_url, settings, label, progress, api_key)
        ramp_s = time.monotonic() - ramp_started
    progress(f"[{label}] engine stopped; {ramp.summary}")
    return Measurement(
        label=label,
        command=shown,
        ramp=ramp.model_dump(mode="json"),
        triage=triage_box.get("result"),
        triage_error=triage_box.get("error"),
        log_path=str(log_path),
        startup_s=round(startup_s, 1),
        ramp_s=round(ramp_s, 1),
    )


def top_change(
    triage: dict[str, Any] | None, skip: set[tuple[str, str]] = frozenset(), allow_unsafe: bool = False
) -> dict[str, Any] | None:
    """The highest-ranked finding's flag changes (applied together), minus pairs in `skip`.

    Changes marked `safety: unsafe` (they can reject requests or change outputs, e.g. a
    shorter --max-model-len) are left out unless `allow_unsafe`: like ruff's unsafe fixes,
    a loop that applies changes on its own applies only safe ones by default.
    Returns {"rule", "title", "changes": [{flag, current, proposed, reason}]} or None.
    """
    for finding in (triage or {}).get("findings") or []:
        changes = [
            c
            for c in finding.get("changes") or []
            if (c.get("flag"), str(c.get("proposed"))) not in skip
            and (allow_unsafe or c.get("safety", "safe") != "unsafe")
        ]
        if changes:
            return {"rule": finding.get("rule"), "title": finding.get("title"), "changes": changes}
    return None


def server_api_key(command: ServeCommand) -> str | None:
    """The key a server started from `command` wants on /v1: its `--api-key`, else `VLLM_API_KEY`
    from the environment it is launched in (vLLM's order; servops' own environment is inherited).

    Why: a loop that starts a keyed server and ramps it without the key measures 401s, and a
    measurement of nothing but refusals would be compared as if it were the server's."""
    return command.value("--api-key") or launch_env(command).get("VLLM_API_KEY") or None


def _extend_to_knee(
    ramp: RampResult,
    base_url: str,
    settings: RampSettings,
    label: str,
    progress: Progress,
    api_key: str | None = None,
) -> RampResult:
    """Ramp on at 2x and 4x the top level, up to max_concurrency, while the ramp has not bounded
    the server: no knee found, or the safe operating point is the top step tested.

    Why the second condition: with SLOs, a server meeting them at every tested step has its safe
    point at the top step whatever its knee; a change that raises capacity then measures
    "safe point 4 -> 4", and neither the gain nor the prediction of it can be checked."""
    while settings.extend_to_knee and _unbounded(ramp) and not ramp.stopped_early:
        top = int(max(s.offered for s in ramp.steps))
        levels = [x for x in (top * 2, top * 4) if x <= settings.max_concurrency]
        if not levels:
            break
        why = "no knee" if ramp.knee is None else "every SLO met"
        progress(f"[{label}] {why} up to {top} streams: ramping on at {', '.join(map(str, levels))}")
        more = run_ramp(
            _ramp_config(base_url, settings, levels, api_key), progress=lambda line: progress(f"[{label}] {line}")
        )
        steps = [*ramp.steps, *(s.model_copy(update={"step": len(ramp.steps) + s.step}) for s in more.steps)]
        knee = find_knee(steps, factor=ramp.config.get("knee_factor", DEFAULT_FACTOR))
        config = {**ramp.config, "levels": [s.offered for s in steps], "extended_at_step": len(ramp.steps)}
        ramp = ramp.model_copy(
            update={
                "steps": steps,
                "knee": knee,
                "config": config,
                "stopped_early": more.stopped_early,
                "safe_operating_point": safe_operating_point(steps, knee, bool(parse_slos(settings.slo))),
                "summary": more.summary,
            }
        )
    return ramp


def _unbounded(ramp: RampResult) -> bool:
    """No knee yet, or the safe operating point sits on the highest step tested."""
    top = max(s.offered for s in ramp.steps)
    safe = ramp.safe_operating_point
    return ramp.knee is None or (safe is not None and safe.offered >= top)


def _ramp_config(
    base_url: str, settings: RampSettings, levels: list[int] | None = None, api_key: str | None = None
) -> RampConfig:
    return RampConfig(
        endpoint=base_url,
        mode="concurrency",
        levels=[float(c) for c in (levels or settings.concurrency)],
        step_s=settings.step_s,
        warmup_s=settings.warmup_s,
        cooldown_s=settings.cooldown_s,
        workload=WorkloadSpec(
            input_len=LengthSpec(mean=settings.input_len), output_len=LengthSpec(mean=settings.output_len)
        ),
        slo=settings.slo,
        request_timeout_s=settings.request_timeout_s,
        api_key=api_key,
    )


class _TriageTrigger:
    """Runs triage in a thread during the ramp's last step, so both of its scrapes see the server loaded.

    Why the ramp plan's clock and not its progress lines: a step's line is printed once its last request
    has come back, which on a busy 2-core machine can be seconds into the next step; a triage timed from
    that line took its scrapes after the last step had ended, on a drained server (the demo's CI at 6d7b6be
    saw no queue at all behind --max-num-seqs 1)."""

    def __init__(
        self,
        base_url: str,
        log_path: Path,
        command: str,
        settings: RampSettings,
        box: dict[str, Any],
        progress: Progress,
        label: str,
        api_key: str | None = None,
    ) -> None:
        self.request = TriageRequest(
            endpoint=base_url,
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
            logs=str(log_path),
            server_args=command,
            metrics_interval_s=min(settings.triage_interval_s, settings.step_s / 3),
            timeout_s=10.0,
            workload=Workload(
                p50_input_tokens=settings.input_len,
                p95_input_tokens=settings.input_len,
                p50_output_tokens=settings.output_len,
                p95_output_tokens=settings.output_len,
                client_concurrency=max(settings.concurrency),
                ttft_slo_s=_ttft_slo(settings.slo),
            ),
        )
        self.box, self.progress, self.label = box, progress, label
        self.thread: threading.Thread | None = None
        self.ramp_over = threading.Event()

    def schedule(self, plan: RampPlan) -> None:
        """Start the triage thread for the last step's measured part, past its warm-up: new closed-loop
        streams are still being spawned then, and a scrape at the step boundary sees a half-empty server."""
        begin, end = plan.window(plan.steps - 1)
        self.progress(
            f"[{self.label}] triage: scraping /metrics twice and reading the log during the last step "
            f"(after its {plan.warmup_s:g} s warm-up)"
        )
        self.thread = threading.Thread(target=self._run_within, args=(begin, end), daemon=True)
        self.thread.start()

    def _run_within(self, begin: float, end: float) -> None:
        """Wait for `begin`, then triage with the scrape gap shortened to end `_SCRAPE_ROOM_S` before `end`.
        A ramp that stopped early never reaches its last step: triage what is left at once."""
        if self.ramp_over.wait(max(0.0, begin - time.time())):
            self._run()
            return
        room_s = end - time.time() - _SCRAPE_ROOM_S
        gap_s = min(self.request.metrics_interval_s or 0.0, max(_MIN_SCRAPE_GAP_S, room_s))
        self._run(self.request.model_copy(update={"metrics_interval_s": round(gap_s, 2)}))

    def finish(self) -> None:
        self.ramp_over.set()
        if self.thread is None:  # the load generator never started: triage what is left
            self._run()
        else:
            self.thread.join(timeout=120)
            if self.thread.is_alive():
                self.box["error"] = "triage did not finish within 120 s"
        if "result" in self.box:
            findings = self.box["result"].get("findings") or []
            top = findings[0]["title"] if findings else "no findings"
            self.progress(f"[{self.label}] triage: {len(findings)} finding(s); top: {top}")
        elif "error" in self.box:
            self.progress(f"[{self.label}] triage failed: {self.box['error']}")

    def _run(self, request: TriageRequest | None = None) -> None:
        try:
            result = run_triage(request or self.request)
            self.box["result"] = result.model_dump(mode="json", exclude={"facts"})
        except Exception as exc:  # recorded in the result; the measurement itself still stands
            self.box["error"] = f"{type(exc).__name__}: {exc}"


def _ttft_slo(slo: str | None) -> float | None:
    match = re.search(r"ttft_p99=([\d.]+)(ms|s)", slo or "")
    if not match:
        return None
    value = float(match.group(1))
    return value / 1000.0 if match.group(2) == "ms" else value
