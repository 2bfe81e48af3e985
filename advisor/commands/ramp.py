"""`servops ramp`: a Locust ramp test of a streaming OpenAI endpoint (thin CLI over loadtest).

All the work is in loadtest.runner; this module only turns flags into a RampConfig, prints
one progress line per step on stderr and writes the JSON result. `--worker` turns this
machine into a Locust worker for a `--master` elsewhere.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys

from advisor.cli_types import (
    factor_above_one,
    non_negative_float,
    non_negative_int,
    percent,
    port,
    positive_float,
    positive_int,
    unit_interval,
)
from advisor.errors import UserError
from advisor.output_paths import check_output_file, write_or_rescue
from advisor.redact import redact, split_url_credentials


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "ramp", help="ramp load on a streaming OpenAI endpoint; per-step TTFT/ITL, knee, safe point",
        description="Step load up over request rate (open loop) or concurrency (closed loop) against an "
                    "OpenAI-compatible streaming endpoint, with Locust; writes a 'ramp' JSON result.",
    )
    p.add_argument("--endpoint", help="base URL of the server, e.g. http://127.0.0.1:8000")
    p.add_argument("--model", help="model name to request (default: first id from GET /v1/models)")
    p.add_argument("--api-key", help="bearer token for servers started with --api-key (never written to JSON)")
    load = p.add_mutually_exclusive_group()
    load.add_argument("--rates", help="open-loop request rates per step, requests/s, e.g. 1,2,4,8")
    load.add_argument("--concurrency", help="closed-loop concurrent streams per step, e.g. 1,2,4,8")
    p.add_argument("--step-seconds", type=positive_float, default=30.0, help="duration of each step (default 30)")
    p.add_argument("--warmup-seconds", type=non_negative_float, default=None,
                   help="start of each step excluded from statistics, by request start (default: 20%% of a step)")
    p.add_argument("--cooldown-seconds", type=non_negative_float, default=10.0,
                   help="after the last step, time for in-flight requests to finish (default 10)")
    p.add_argument("--arrival", choices=["constant", "poisson"], default="constant",
                   help="open-loop arrival process on an absolute schedule (default constant)")
    p.add_argument("--workload", choices=["random", "shared-prefix", "file"], default="random",
                   help="random prompts, shared-prefix groups, or prompts from --prompts (default random)")
    p.add_argument("--api", choices=["chat", "completions"], default="chat",
                   help="/v1/chat/completions or /v1/completions (default chat)")
    p.add_argument("--input-len", default="128",
                   help="prompt length in words (~tokens): N, uniform:MEAN:SPREAD or normal:MEAN:STD (default 128)")
    p.add_argument("--output-len", default="64",
                   help="output tokens: N, uniform:MEAN:SPREAD or normal:MEAN:STD (default 64)")
    p.add_argument("--no-force-output-len", action="store_true",
                   help="do not send min_tokens/ignore_eos (let the model stop early)")
    p.add_argument("--prefix-len", type=positive_int, default=256, help="shared-prefix: prefix length in words (default 256)")
    p.add_argument("--prefix-groups", type=positive_int, default=4, help="shared-prefix: distinct prefixes (default 4)")
    p.add_argument("--prefix-share", type=unit_interval, default=1.0,
                   help="shared-prefix: fraction of requests that use a prefix (default 1.0)")
    p.add_argument("--unique-prefix-per-step", action="store_true",
                   help="shared-prefix: new prefixes every step so caching cannot carry over between steps")
    p.add_argument("--prompts", help="file workload: JSONL ({'prompt'|'messages', 'output_len'}) or ShareGPT JSON")
    p.add_argument("--seed", type=int, default=0, help="seed for prompts and Poisson arrivals (default 0)")
    p.add_argument("--slo", help="service-level objectives, e.g. ttft_p99=2s,itl_p99=100ms")
    p.add_argument("--json", dest="json_path", help="write the ramp result JSON here")
    p.add_argument("--records", help="also write every request's full-precision record here (JSONL)")
    p.add_argument("--request-timeout", type=positive_float, default=60.0, help="per-request time limit, s (default 60)")
    p.add_argument("--max-ttft", type=positive_float, default=30.0,
                   help="stop early when a step's median TTFT exceeds this many seconds (default 30)")
    p.add_argument("--tokenizer", help="local Hugging Face tokenizer dir to count tokens when the server "
                                       "sends no usage")
    p.add_argument("--knee-factor", type=factor_above_one, default=2.0,
                   help="knee: p99 growth over the lowest-load step that counts as a knee (default 2.0)")
    p.add_argument("--max-client-cpu", type=percent, default=90.0,
                   help="a step is invalid when a load process used more CPU than this %% of a core (default 90)")
    p.add_argument("--max-send-lateness-ms", type=positive_float, default=25.0,
                   help="a step is invalid when send lateness p99 exceeds this (default 25 ms)")
    p.add_argument("--metrics-url", help="where to sample Prometheus metrics (default ENDPOINT/metrics)")
    p.add_argument("--workers", type=non_negative_int, default=0, help="local Locust worker processes (default 0: one process)")
    p.add_argument("--master", action="store_true", help="be a Locust master and wait for --expect-workers")
    p.add_argument("--expect-workers", type=positive_int, default=1, help="master: workers to wait for (default 1)")
    p.add_argument("--master-bind-host", default="*", help="master: interface to bind (default all)")
    p.add_argument("--master-port", type=port, default=5557, help="master: port to bind / worker: to connect")
    p.add_argument("--worker", action="store_true", help="be a Locust worker of a master at --master-host")
    p.add_argument("--master-host", default="127.0.0.1", help="worker: the master's address")
    p.add_argument("--master-timeout", type=positive_float, default=60.0,
                   help="worker: give up when no master answers within this many seconds (default 60)")
    return p


def run(args: argparse.Namespace) -> int:
    if args.worker:
        return _worker(args)
    from loadtest.runner import RampConfig, run_ramp
    from loadtest.workload import LengthSpec, WorkloadSpec

    if not args.endpoint:
        raise UserError("--endpoint is required (e.g. --endpoint http://127.0.0.1:8000)")
    # The URL's user:password is taken out of the URL (never stored or echoed) and sent as Basic
    # auth, unless --api-key gives the Authorization header explicitly.
    endpoint, url_auth = split_url_credentials(args.endpoint)
    if not (args.rates or args.concurrency):
        raise UserError("give --rates 1,2,4 (open loop) or --concurrency 1,2,4 (closed loop)")
    check_output_file(args.json_path, "--json")  # before minutes of measurement, not after
    check_output_file(args.records, "--records")
    mode = "rate" if args.rates else "concurrency"
    levels = _levels(args.rates or args.concurrency, "--rates" if args.rates else "--concurrency")
    warmup = args.warmup_seconds if args.warmup_seconds is not None else 0.2 * args.step_seconds
    if warmup >= args.step_seconds:
        raise UserError(f"--warmup-seconds {warmup:g}: must be shorter than --step-seconds {args.step_seconds:g}; "
                        "lower it or lengthen the steps")
    workload = WorkloadSpec(
        kind=args.workload, api=args.api,
        input_len=LengthSpec(**_length(args.input_len, "--input-len")),
        output_len=LengthSpec(**_length(args.output_len, "--output-len")),
        force_output_len=not args.no_force_output_len, prefix_len=args.prefix_len if args.workload == "shared-prefix" else 0,
        groups=args.prefix_groups, share=args.prefix_share,
        unique_prefix_per_step=args.unique_prefix_per_step, path=args.prompts, seed=args.seed,
    )
    config = RampConfig(
        endpoint=endpoint, model=args.model, mode=mode, levels=levels, step_s=args.step_seconds,
        warmup_s=warmup, cooldown_s=args.cooldown_seconds, arrival=args.arrival, workload=workload,
        slo=args.slo, request_timeout_s=args.request_timeout, workers=args.workers, master=args.master,
        expect_workers=args.expect_workers, master_bind_host=args.master_bind_host,
        master_port=args.master_port, max_ttft_s=args.max_ttft, tokenizer=args.tokenizer,
        knee_factor=args.knee_factor, max_client_cpu_percent=args.max_client_cpu,
        max_send_lateness_s=args.max_send_lateness_ms / 1000.0, metrics_url=args.metrics_url,
        records_path=args.records, api_key=args.api_key, authorization=None if args.api_key else url_auth,
    )
    result = run_ramp(config, progress=lambda line: print(redact(line), file=sys.stderr, flush=True))
    document = redact(result.model_dump_json(indent=2))
    if args.json_path:
        write_or_rescue(args.json_path, document + "\n", "--json")
        print(f"ramp: {result.summary}; wrote {args.json_path}", file=sys.stderr)
    else:
        print(document)
    _check_any_request_succeeded(result, args.json_path)
    return 0


def _check_any_request_succeeded(result, json_path: str | None) -> None:
    """A ramp where every request failed measured the errors, not the server: exit 2 and say why."""
    sent = sum(step.requests for step in result.steps)
    if sent == 0 or any(step.ok_requests for step in result.steps):
        return
    errors: dict[str, int] = {}
    example = ""
    for step in result.steps:
        for kind, count in step.errors.items():
            errors[kind] = errors.get(kind, 0) + count
        example = example or next(iter(step.error_examples.values()), "")
    counts = ", ".join(f"{kind}: {count}" for kind, count in sorted(errors.items(), key=lambda item: -item[1]))
    shown = f", e.g. {redact(example)[:160]!r}" if example else ""
    where = f"; the result is in {json_path}" if json_path else ""
    raise UserError(f"every one of the {sent} requests failed ({counts}{shown}); check that the server at "
                    f"--endpoint serves --model and accepts the --api-key{where}")


def _worker(args: argparse.Namespace) -> int:
    """Be a Locust worker; give up with one line when no master answers within --master-timeout."""
    from loadtest.errors import EXIT_NO_MASTER

    print(f"ramp: Locust worker connecting to a master at {args.master_host}:{args.master_port} "
          f"(waiting up to {args.master_timeout:g} s)", file=sys.stderr, flush=True)
    code = subprocess.call([sys.executable, "-m", "loadtest.locust_main", "worker",
                            "--master-host", args.master_host, "--master-port", str(args.master_port),
                            "--connect-timeout", str(args.master_timeout)])
    if code == EXIT_NO_MASTER:
        raise UserError(f"--worker: no Locust master answered at {args.master_host}:{args.master_port} within "
                        f"{args.master_timeout:g} s; start 'servops ramp --master …' there first, or fix "
                        "--master-host/--master-port")
    return code


def _levels(text: str, flag: str) -> list[float]:
    try:
        levels = [float(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise UserError(f"{flag} {text!r}: expected comma-separated numbers, e.g. 1,2,4,8") from exc
    if not levels or any(not math.isfinite(x) or x <= 0 for x in levels):
        raise UserError(f"{flag} {text!r}: every level must be a positive number, e.g. 1,2,4,8")
    if flag == "--concurrency" and any(x != int(x) for x in levels):
        raise UserError(f"{flag} {text!r}: concurrency levels must be whole numbers")
    return levels


def _length(text: str, flag: str) -> dict:
    parts = text.split(":")
    try:
        if len(parts) == 1 and int(parts[0]) >= 1:
            return {"distribution": "fixed", "mean": int(parts[0])}
        if len(parts) == 3 and parts[0] in ("uniform", "normal") and int(parts[1]) >= 1 and float(parts[2]) >= 0:
            return {"distribution": parts[0], "mean": int(parts[1]), "spread": float(parts[2])}
    except ValueError:
        pass
    raise UserError(f"{flag} {text!r}: expected N, uniform:MEAN:SPREAD or normal:MEAN:STD, e.g. uniform:128:64")
