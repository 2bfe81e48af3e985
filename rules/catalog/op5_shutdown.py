"""OP-5.41: vLLM was told to stop (SIGTERM or SIGINT), and what it did with the requests it was serving.

Why a rule of its own: a server that stops on a signal did not crash, and its log says so in vLLM's own words (0.32,
vllm/v1/engine/core.py): `[shutdown] EngineCore: trigger received signal=SIGTERM`, then `start mode=abort
timeout=0s` and `aborting in-flight requests count=N`, or `start mode=drain timeout=Ts` and `draining in-flight
requests count=N timeout=Ts`. The mode is --shutdown-timeout's: 0 by default (vllm/config/vllm.py: "Shutdown grace
period for in-flight requests"), which aborts every request the server holds the moment a `docker stop`, a pod's
deletion, a rolling update or systemd's stop arrives, so each rollout fails its in-flight requests. Kubernetes sends
SIGTERM, waits the pod's terminationGracePeriodSeconds (30 s by default) and then kills (its pod lifecycle
documentation), so a drain must end inside that period.
A fallback: a finding at least as severe (the probe that killed it, the OOM killer, the engine's own error) says
more and takes its place.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity
from rules.vllm_defaults import SHUTDOWN_TIMEOUT_S

K8S_GRACE_S = 30  # Kubernetes' default terminationGracePeriodSeconds
DRAIN_S = 25  # a proposed --shutdown-timeout: inside that grace period, with time left for the teardown
ABORT, DRAIN = "abort", "drain"  # SERVER_SHUTDOWN's message: the mode vLLM logged, or the signal alone


def _check(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.SERVER_SHUTDOWN)
    if not events:
        return []
    signal = next((e for e in events if e.component), None)
    mode = next((e for e in events if e.message in (ABORT, DRAIN) and e.in_flight), None) or next(
        (e for e in events if e.message in (ABORT, DRAIN)), None
    )
    if mode is not None and mode.message == ABORT and mode.in_flight:
        return [_aborted(mode, signal)]
    return [_stopped(signal or events[0], mode)]


def _who(signal: LogEvent | None) -> str:
    return f"a signal ({signal.component})" if signal is not None and signal.component else "a shutdown request"


def _aborted(mode: LogEvent, signal: LogEvent | None) -> Finding:
    evidence = [c.log_evidence(mode, name="in-flight requests aborted", value=mode.in_flight)]
    if signal is not None:
        evidence.insert(0, c.log_evidence(signal, name="stopped by", value=signal.component))
    return RULE.finding(
        Severity.HIGH,
        f"vLLM was stopped by {_who(signal)} and aborted the {mode.in_flight} request(s) it was serving: "
        f"--shutdown-timeout is {SHUTDOWN_TIMEOUT_S}",
        summary="vLLM stops on SIGTERM (a `docker stop`, a pod deleted or rolled out, systemd's stop) or SIGINT; "
        f"with --shutdown-timeout {SHUTDOWN_TIMEOUT_S}, its default, it aborts every request in flight at once, so "
        "every rollout and every scale-down fails the requests of the replicas it stops. Given a timeout, it drains "
        "them for up to that long first.",
        evidence=evidence,
        changes=[
            ConfigChange(
                flag="--shutdown-timeout",
                current=str(SHUTDOWN_TIMEOUT_S),
                proposed=str(DRAIN_S),
                reason=f"drains in-flight requests for up to {DRAIN_S} s before stopping, inside Kubernetes' default "
                f"grace period of {K8S_GRACE_S} s",
                cost="a stop takes up to that long",
            )
        ],
        actions=[
            f"Keep the drain inside the time the platform waits before it kills: the pod's "
            f"terminationGracePeriodSeconds ({K8S_GRACE_S} s by default) above --shutdown-timeout, raised for long "
            "generations; `docker stop -t`, systemd's TimeoutStopSec the same way.",
            "Stop sending new requests first: a readiness probe on /health and a preStop hook (a short sleep) let the "
            "Service drop the pod before vLLM stops taking requests.",
            "If nobody meant to stop it, find who did: `kubectl describe pod` (Killing events, a liveness probe), "
            "`journalctl -u <unit>`.",
        ],
        confidence=0.8,
    )


def _stopped(event: LogEvent, mode: LogEvent | None) -> Finding:
    drained = mode is not None and mode.message == DRAIN
    title = (
        f"vLLM was stopped by {_who(event if event.component else None)} and drained its requests (--shutdown-timeout "
        f"{(mode.timeout_ms or 0) // 1000} s): a stop from outside, not a crash"
        if drained and mode is not None
        else f"vLLM was stopped by {_who(event if event.component else None)}: a stop from outside, not a crash"
    )
    return RULE.finding(
        Severity.LOW if drained else Severity.MEDIUM,
        title,
        summary="vLLM logged the shutdown it was asked for: the process received SIGTERM or SIGINT (a `docker "
        "stop`, a pod deleted or rolled out, systemd's stop, Ctrl-C) and stopped in order. Nothing in vLLM failed; "
        "what sent the signal is outside it.",
        evidence=[c.log_evidence(event, name="stopped by", value=event.component or event.message)],
        actions=[
            "Find who stopped it: `kubectl describe pod` (a Killing event: a liveness probe, a rollout, an eviction), "
            "`kubectl get events`, `journalctl -u <unit>`, the deploy's history.",
            f"If it stops with requests in flight, give it --shutdown-timeout (seconds to drain; 0 aborts them) inside "
            f"the platform's grace period ({K8S_GRACE_S} s by default in Kubernetes).",
        ],
        confidence=0.7,
    )


RULE = Rule(
    code="OP-5.41",
    title="vLLM was told to stop, and what it did with its requests",
    category=Category.RELIABILITY,
    check=_check,
    needs=("events",),
    fallback="failure",
    page=RulePage(
        checks="vLLM 0.32's shutdown lines: `[shutdown] EngineCore: trigger received signal=SIGTERM` (or SIGINT), "
        "`start mode=abort|drain timeout=Ns`, `aborting in-flight requests count=N`, `draining in-flight requests "
        "count=N timeout=Ns`.",
        why=f"A stop from outside is not a crash; and with --shutdown-timeout {SHUTDOWN_TIMEOUT_S} (the default) "
        "every stop fails the requests in flight, which a rollout does to every replica.",
        example="`[shutdown] EngineCore: trigger received signal=SIGTERM` then `aborting in-flight requests "
        f"count=12` during a rolling update: --shutdown-timeout {DRAIN_S} with the pod's grace period above it.",
        fix=f"--shutdown-timeout inside the platform's grace period ({K8S_GRACE_S} s by default in Kubernetes), a "
        "readiness probe and a preStop hook; otherwise whoever sent the signal.",
        limits="A fallback: the probe or the OOM kill that caused the stop says more. Older releases word their "
        "shutdown otherwise and are not read.",
        references=["https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination"],
    ),
)

RULES: list[Rule] = [RULE]
