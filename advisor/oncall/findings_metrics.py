"""Scheduled triage's own /metrics: the last run's findings as series Prometheus scrapes.

Why served and not pushed: a Pushgateway never forgets a series and hides whether the job is up
(prometheus.io, "When to use the Pushgateway"); a long-running `servops triage --every` serving its
own /metrics keeps both, and the alert pack's dead-man's switch (`ServopsTriageNotSucceeding`) reads
`servops_triage_last_success_timestamp_seconds`. Only codes go into labels (rule, severity, target);
values, titles and flag changes stay in the JSON and the HTML, so the series count stays bounded by
the catalog.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server

from advisor.errors import UserError
from rules.model import Finding

FINDING = "servops_triage_finding"
LAST_RUN = "servops_triage_last_run_timestamp_seconds"
LAST_SUCCESS = "servops_triage_last_success_timestamp_seconds"
RUNS = "servops_triage_runs"  # exposed as servops_triage_runs_total


def listen_address(text: str, flag: str = "--serve-metrics") -> tuple[str, int]:
    """`HOST:PORT` (`:PORT` for every interface) as (host, port); anything else is a one-line error."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise UserError(f"{flag} {text!r}: give HOST:PORT, e.g. 127.0.0.1:9109 (or :9109 for every interface)")
    return host.strip("[]") or "0.0.0.0", int(port)


class FindingsExporter:
    """The series of one scheduled triage, served on `listen` until `close()`."""

    def __init__(self, listen: str) -> None:
        host, port = listen_address(listen)
        self.registry = CollectorRegistry()
        self.finding = Gauge(
            FINDING,
            "1 for each finding of the last run: its rule code, severity and the server triaged",
            ["rule", "severity", "target"],
            registry=self.registry,
        )
        self.last_run = Gauge(LAST_RUN, "when the last run ended (Unix time)", ["target"], registry=self.registry)
        self.last_success = Gauge(
            LAST_SUCCESS, "when the last run that completed ended (Unix time)", ["target"], registry=self.registry
        )
        self.runs = Counter(RUNS, "runs by outcome (ok or error)", ["outcome"], registry=self.registry)
        try:
            self.server, self.thread = start_http_server(port, addr=host, registry=self.registry)
        except OSError as exc:
            raise UserError(
                f"--serve-metrics {listen}: cannot listen there ({exc.strerror}); choose a free port or another address"
            ) from None

    def record(self, target: str, findings: Iterable[Finding] | None) -> None:
        """One run ended: its findings (None when the run failed)."""
        now = time.time()
        self.last_run.labels(target=target).set(now)
        if findings is None:
            self.runs.labels(outcome="error").inc()
            return
        self.runs.labels(outcome="ok").inc()
        self.last_success.labels(target=target).set(now)
        self.finding.clear()
        for finding in findings:
            self.finding.labels(rule=finding.rule, severity=finding.severity.value, target=target).set(1)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
