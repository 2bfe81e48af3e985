"""`servops triage`: why is this vLLM server slow, failing or not starting — and which flag to change.

Inputs are whatever the on-call engineer has: a live `--endpoint`, a `--prometheus` server
in front of many replicas, saved `--metrics` dumps (two, with `--metrics-interval`, for
rates), a `--logs` file or stdin, and the `--server-args` it was started with. Output is
ranked findings with their evidence and flag changes (human text on stdout; the full JSON
with `--json PATH`), or, with `--every 5m --out DIR`, a scheduled run with history.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from advisor.cli.options import command_line, non_negative_int, positive_float, positive_int, unit_interval
from advisor.cli.output import print_json, result_json, say, write_result
from advisor.cli.output_paths import check_output_dir, check_output_file, write_or_rescue
from advisor.cli.schedule import HistoryEntry, parse_duration, run_schedule
from advisor.cli.triage_io import triage_with_files
from advisor.collect.host import load_profile
from advisor.collect.launch_values import validated_command
from advisor.collect.metrics import DEFAULT_TIMEOUT_S
from advisor.collect.prometheus import DEFAULT_WINDOW_S
from advisor.errors import EXIT_FINDINGS, UserError
from advisor.oncall.alert_pack import DEFAULT_RUNBOOK_BASE
from advisor.oncall.alertmanager import AlertmanagerClient
from advisor.oncall.findings_metrics import FindingsExporter
from advisor.oncall.junit import junit_report
from advisor.perf.replay import REPLAY_BOUNDS
from advisor.redact import redact, split_url_credentials
from advisor.triage.result import TriageRequest, TriageResult
from advisor.triage.text import render_text
from rules.facts import Workload
from rules.model import Severity

NAME = "triage"


def register(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        NAME,
        help="diagnose a vLLM-style server from its metrics, Prometheus, logs and launch flags",
        description=(
            "Collect what the inputs support (live /metrics, a Prometheus server, saved metrics "
            "files, a log file or stdin, the launch command), run the rules, and print ranked "
            "findings with evidence and the `vllm serve` flag changes to make, each with the "
            "effect the memory model predicts; with --ramp or a two-scrape window, each change's "
            f"latency is predicted by replaying it ({REPLAY_BOUNDS}). Exit code 0 when triage ran "
            "(findings or not), 1 with --fail-on when a finding reaches it, 2 for unusable input."
        ),
    )
    _add_sources(parser)
    _add_deployment(parser)
    _add_workload(parser)
    _add_predictions(parser)
    _add_output(parser)
    _add_schedule(parser)
    return parser


def _add_sources(parser: argparse.ArgumentParser) -> None:
    """Where triage looks: live /metrics, Prometheus, saved metrics, a log or stdin, the launch command."""
    source = parser.add_argument_group("where to look (at least one)")
    source.add_argument(
        "--endpoint", metavar="URL", help="server base URL; its /metrics is scraped (e.g. http://127.0.0.1:8000)"
    )
    source.add_argument(
        "--prometheus",
        metavar="URL",
        help="Prometheus base URL to query for every replica (e.g. http://127.0.0.1:9090)",
    )
    source.add_argument(
        "--selector",
        default="",
        metavar="MATCHER",
        help="PromQL label matcher picking the servers, e.g. '{job=\"vllm\"}' (default: all vllm:* series)",
    )
    source.add_argument(
        "--window",
        default=None,
        metavar="DURATION",
        help=f"Prometheus window for rates and percentiles, e.g. 5m (default {DEFAULT_WINDOW_S:g}s)",
    )
    _add_saved_sources(source)


def _add_saved_sources(source: argparse._ArgumentGroup) -> None:
    """The sources a person hands over instead of a live server: saved /metrics, a log, the launch command, and
    the headers the live ones need."""
    source.add_argument(
        "--metrics",
        action="append",
        default=[],
        metavar="FILE",
        help="saved /metrics text; give it twice (before, after) with --metrics-interval for rates",
    )
    source.add_argument(
        "--metrics-interval",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="seconds between the two --metrics files, or between two scrapes of --endpoint",
    )
    source.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="HTTP header for --endpoint and --prometheus requests, e.g. 'Authorization: Bearer …' "
        "(repeatable; never written to the JSON)",
    )
    source.add_argument("--logs", metavar="FILE", help="server log file, or '-' to read stdin")
    source.add_argument(
        "--server-args",
        metavar="ARGS",
        type=command_line,
        help='the launch command or its flags, e.g. "vllm serve MODEL --max-model-len 32768"',
    )


def _add_deployment(parser: argparse.ArgumentParser) -> None:
    """What runs where: the model, the GPU and their count, which the memory model and the fixes are sized for."""
    deployment = parser.add_argument_group("deployment (for predicted effects)")
    deployment.add_argument("--model", help="catalog model name, HF config.json or model dir (default: from args/log)")
    deployment.add_argument("--gpu", help="GPU catalog name, e.g. H100-SXM-80GB")
    deployment.add_argument("--gpus", type=positive_int, default=None, metavar="N", help="GPUs per replica")
    deployment.add_argument(
        "--gpu-memory-gib",
        type=positive_float,
        default=None,
        metavar="GIB",
        help="device memory size when the GPU is not in the catalog",
    )
    deployment.add_argument(
        "--host-profile",
        metavar="FILE",
        help="a CPU server's host, measured by `servops probe --json FILE` on it: with it the CPU tier gets "
        "physical floors (decode bandwidth, prefill compute) at the cores the engine is pinned to",
    )


def _add_workload(parser: argparse.ArgumentParser) -> None:
    """The traffic and its targets, for the rules and predictions that need them when the metrics do not say."""
    workload = parser.add_argument_group("workload hints (optional)")
    workload.add_argument(
        "--input-tokens", type=positive_float, default=None, metavar="N", help="typical (p50) prompt length"
    )
    workload.add_argument(
        "--output-tokens", type=positive_float, default=None, metavar="N", help="typical (p50) output length"
    )
    workload.add_argument(
        "--input-tokens-p95",
        type=positive_float,
        default=None,
        metavar="N",
        help="p95 prompt length (long prompts drive KV sizing)",
    )
    workload.add_argument(
        "--output-tokens-p95", type=positive_float, default=None, metavar="N", help="p95 output length"
    )
    workload.add_argument(
        "--shared-prefix-tokens",
        type=non_negative_int,
        default=None,
        metavar="N",
        help="typical shared prefix (system prompt) length in tokens",
    )
    workload.add_argument(
        "--routing",
        default=None,
        choices=["round_robin", "prefix_aware", "session_affinity", "unknown"],
        help="how the load balancer spreads requests over replicas",
    )
    workload.add_argument(
        "--concurrency", type=positive_int, default=None, metavar="N", help="requests clients keep in flight"
    )
    workload.add_argument("--replicas", type=positive_int, default=None, metavar="N", help="number of server replicas")
    workload.add_argument(
        "--prefix-reuse",
        type=unit_interval,
        default=None,
        metavar="FRACTION",
        help="share of prompt tokens in shared prefixes, 0–1",
    )
    workload.add_argument(
        "--ttft-slo", type=positive_float, default=None, metavar="SECONDS", help="p99 time-to-first-token target"
    )
    workload.add_argument(
        "--itl-slo", type=positive_float, default=None, metavar="SECONDS", help="p99 inter-token latency target"
    )


def _add_predictions(parser: argparse.ArgumentParser) -> None:
    """What the performance model calibrates on for each change's predicted latency."""
    predicted = parser.add_argument_group("latency predictions (optional)")
    predicted.add_argument(
        "--ramp",
        metavar="RAMP.json",
        help="a ramp of this server (servops ramp --json): each proposed scheduling change gets "
        "its predicted TTFT, ITL, tok/s and safe operating point (performance model "
        "calibrated on the ramp), batch-size values are the model's best, and changes "
        "predicted not to help are listed as rejected",
    )
    predicted.add_argument(
        "--save-window",
        metavar="RAMP.json",
        help="without --ramp, the model calibrates on the metrics window (two scrapes, or --window of "
        "Prometheus) as one measured load step; write that step here as a ramp document, and each "
        "prediction prints the `servops predict --ramp RAMP.json ...` command that reproduces it "
        "(scheduled runs keep each run's window as DIR/window-<time>.json without it)",
    )


def _add_output(parser: argparse.ArgumentParser) -> None:
    """Where one run's results go, and what it exits with for a CI gate."""
    output = parser.add_argument_group("output and CI gates")
    output.add_argument(
        "--json", metavar="PATH", help="also write the triage JSON document to PATH ('-' for stdout only)"
    )
    output.add_argument(
        "--no-facts",
        action="store_true",
        help="leave the collected facts (snapshots, events) out of the JSON to keep it small "
        "(scheduled runs always keep them)",
    )
    output.add_argument(
        "--timeout",
        type=positive_float,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help="per-request timeout for endpoints and Prometheus (default %(default)s)",
    )
    output.add_argument(
        "--fail-on",
        choices=[severity.value for severity in Severity],
        metavar="SEVERITY",
        help="exit 1 when a finding at or above SEVERITY exists (critical, high, medium, low or info), for CI "
        "gates and scheduled jobs; 2 stays the code for bad input, 0 otherwise. With --every, the last run "
        "decides",
    )
    output.add_argument(
        "--junit",
        metavar="PATH",
        help="also write the triage as a JUnit report: one test case per rule evaluated, failed when it fired "
        "(skipped when its facts were not given), for CI systems that show test reports",
    )


def _add_schedule(parser: argparse.ArgumentParser) -> None:
    """Scheduled runs, and the on-call stack they report to."""
    schedule = parser.add_argument_group("scheduled runs (--every)")
    schedule.add_argument("--every", metavar="DURATION", help="repeat every DURATION (e.g. 5m); needs --out")
    schedule.add_argument("--out", metavar="DIR", help="directory for scheduled results and history.jsonl")
    schedule.add_argument(
        "--count",
        type=positive_int,
        default=None,
        metavar="N",
        help="with --every: stop after N runs (default: run until interrupted)",
    )
    schedule.add_argument(
        "--serve-metrics",
        metavar="HOST:PORT",
        help="with --every: serve /metrics for Prometheus: servops_triage_finding{rule,severity,target} = 1 per "
        "finding of the last run, the last run and last success times, runs by outcome (:PORT for every "
        "interface); the alert pack's ServopsTriageNotSucceeding watches it",
    )
    schedule.add_argument(
        "--alertmanager",
        metavar="URL",
        help="with --every: post each run's findings to Alertmanager's v2 API (e.g. http://127.0.0.1:9093) with "
        "the alert pack's labels; a finding that is gone resolves at the next run; an Alertmanager that goes "
        "down is reported and the schedule goes on",
    )
    schedule.add_argument(
        "--runbook-base",
        default=DEFAULT_RUNBOOK_BASE,
        metavar="URL",
        help=f"with --alertmanager: where servops's docs/ folder is served, for each alert's runbook_url "
        f"(default: {DEFAULT_RUNBOOK_BASE})",
    )


def run(args: argparse.Namespace) -> int:
    request = request_from_args(args)
    check_output_file(args.json, "--json")  # before collecting, not after
    check_output_file(args.save_window, "--save-window")
    check_output_file(args.junit, "--junit")
    if args.host_profile:
        load_profile(args.host_profile)  # a bad file is its own one-line error, before collecting
    check_output_dir(args.out, "--out")
    if args.every or args.out or args.count is not None:
        return _scheduled(args, request)
    if args.serve_metrics or args.alertmanager:
        flag = "--serve-metrics" if args.serve_metrics else "--alertmanager"
        raise UserError(f"{flag} serves a schedule: add --every DURATION --out DIR (one run exits at once)")
    result = triage_with_files(request)
    _emit(result, args.json, include_facts=not args.no_facts)  # `| head` ends the printing, not the JSON
    return _gate(result, args)


def _gate(result: TriageResult, args: argparse.Namespace) -> int:
    """The JUnit report when asked, and the exit code CI reads: 1 when a finding reaches --fail-on."""
    if args.junit:
        report = junit_report(result.rules_run, result.rules_skipped, result.findings, _target(result.inputs))
        write_or_rescue(args.junit, report, "--junit")
    if args.fail_on is None:
        return 0
    bar = Severity(args.fail_on).rank
    reached = [f for f in result.findings if f.severity.rank <= bar]
    if reached:
        say(f"servops triage: {len(reached)} finding(s) at or above {args.fail_on} (--fail-on): exit 1", sys.stderr)
        return EXIT_FINDINGS
    return 0


def request_from_args(args: argparse.Namespace) -> TriageRequest:
    hints = {
        "p50_input_tokens": args.input_tokens,
        "p50_output_tokens": args.output_tokens,
        "p95_input_tokens": args.input_tokens_p95,
        "p95_output_tokens": args.output_tokens_p95,
        "shared_prefix_tokens": args.shared_prefix_tokens,
        "routing": args.routing,
        "client_concurrency": args.concurrency,
        "num_replicas": args.replicas,
        "prefix_reuse_share": args.prefix_reuse,
        "ttft_slo_s": args.ttft_slo,
        "itl_slo_s": args.itl_slo,
    }
    workload = Workload(**hints) if any(value is not None for value in hints.values()) else None
    headers = _headers(args.header)
    endpoint, endpoint_auth = split_url_credentials(args.endpoint)
    prometheus, prometheus_auth = split_url_credentials(args.prometheus)
    if endpoint_auth and prometheus_auth and endpoint_auth != prometheus_auth and not _has_authorization(headers):
        raise UserError(
            "--endpoint and --prometheus carry different user:password; pass one "
            "--header 'Authorization: …' for both, or credentials in only one URL"
        )
    if not _has_authorization(headers) and (endpoint_auth or prometheus_auth):
        headers["Authorization"] = endpoint_auth or prometheus_auth  # the URL's user:pass, as Basic auth
    request = TriageRequest(
        endpoint=endpoint,
        prometheus=prometheus,
        selector=args.selector,
        metrics_files=list(args.metrics),
        metrics_interval_s=args.metrics_interval,
        logs=args.logs,
        server_args=redact(args.server_args) if _checked_launch(args.server_args) else None,
        model=args.model,
        gpu=args.gpu,
        gpus=args.gpus,
        gpu_memory_gib=args.gpu_memory_gib,
        timeout_s=args.timeout,
        workload=workload,
        ramp=args.ramp,
        save_window=args.save_window,
        host_profile=args.host_profile,
        headers=headers,
    )
    if args.window:
        request.window_s = parse_duration(args.window, "--window")
    return request


def _headers(values: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for value in values:
        name, colon, content = value.partition(":")
        if not colon or not name.strip() or " " in name.strip():
            shown = value.strip().split(" ")[0].split(":")[0][:40]  # never echo what may be a token
            raise UserError(f"--header {shown!r}…: write it as 'NAME: VALUE', e.g. 'Authorization: Bearer TOKEN'")
        headers[name.strip()] = content.strip()
    return headers


def _checked_launch(server_args: str | None) -> bool:
    """Whether --server-args was given; a value vLLM would refuse or a flag given twice is a one-line
    error here, before anything is collected (advisor/collect/launch_values.py)."""
    if not server_args:
        return False
    validated_command(server_args, flag="--server-args")
    return True


def _has_authorization(headers: dict[str, str]) -> bool:
    return any(name.lower() == "authorization" for name in headers)


def _emit(result: TriageResult, json_path: str | None, include_facts: bool = True) -> None:
    exclude = None if include_facts else {"facts"}
    if json_path == "-":
        print_json(result_json(result, exclude=exclude))
        return
    if json_path:  # the file first: it must exist even if stdout's reader goes away
        write_result(json_path, result, "--json", exclude=exclude)
    say(render_text(result), end="")
    if json_path:
        say(f"JSON written to {json_path}")


def _scheduled(args: argparse.Namespace, request: TriageRequest) -> int:
    _check_schedule_flags(args)
    every_s = parse_duration(args.every or "5m")
    runs = _ScheduledRuns(args, request, every_s)
    try:
        entries = run_schedule(request, every_s, runs.out_dir, args.count, runs.hand_on)
    finally:
        runs.close()
    if entries and len(runs.failures) == len(entries):
        return 2
    return _gate(runs.last, args) if runs.last is not None else 0


def _target(request: TriageRequest) -> str:
    """What was triaged, as the JUnit suite, the metrics' and the alerts' `target` name it."""
    return request.endpoint or request.prometheus or request.logs or "offline inputs"


def _check_schedule_flags(args: argparse.Namespace) -> None:
    if not args.out:
        raise UserError("--every/--count need --out DIR, where each run's JSON and the history are kept")
    if args.save_window:
        raise UserError(
            f"--save-window {args.save_window} with --every/--out: scheduled runs keep each run's window as "
            f"{Path(args.out) / 'window-<time>.json'} beside its triage JSON; drop --save-window"
        )
    if args.count is not None and args.count < 1:
        raise UserError(f"--count {args.count}: must be at least 1")
    if args.logs == "-" and args.count != 1:
        raise UserError("--logs - (stdin) can be read only once; pass the log file's path for scheduled runs")


class _ScheduledRuns:
    """Where each scheduled run goes: the terminal, servops's own /metrics (--serve-metrics) and
    Alertmanager (--alertmanager), both opened before the first run so a taken port or an absent
    Alertmanager is one line and exit 2, not a schedule that silently delivers nothing."""

    def __init__(self, args: argparse.Namespace, request: TriageRequest, every_s: float) -> None:
        self.out_dir = Path(args.out)
        self.failures: list[str] = []
        self.last: TriageResult | None = None
        self.target = _target(request)
        self.alertmanager = (
            AlertmanagerClient(args.alertmanager, args.runbook_base, every_s) if args.alertmanager else None
        )
        if self.alertmanager is not None:
            self.alertmanager.check()
        self.exporter = FindingsExporter(args.serve_metrics) if args.serve_metrics else None

    def hand_on(self, run_no: int, entry: HistoryEntry, result: TriageResult | None) -> None:
        self._print(run_no, entry, result)
        findings = result.findings if result is not None else None
        if self.exporter is not None:
            self.exporter.record(self.target, findings)
        if self.alertmanager is not None and findings is not None:
            problem = self.alertmanager.post(findings, self.target)
            if problem:
                say(f"servops triage: run {run_no}: {problem}; the next run sends them again", sys.stderr)
        if result is not None:
            self.last = result

    def _print(self, run_no: int, entry: HistoryEntry, result: TriageResult | None) -> None:
        if result is None:
            self.failures.append(entry.error or "")
            say(f"servops triage: run {run_no}: error: {entry.error}", sys.stderr)
            return
        top = result.top
        headline = f"{top.rule} [{top.severity.value}] {top.title}" if top else "no findings"
        say(f"run {run_no} at {entry.created_at}: {len(result.findings)} finding(s); top: {headline}")
        if result.changes_since_last is not None:
            say(f"  {result.changes_since_last.summary()}")
        say(f"  written: {self.out_dir / (entry.result_file or '')}")

    def close(self) -> None:
        if self.exporter is not None:
            self.exporter.close()
