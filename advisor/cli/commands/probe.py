"""`servops probe`: measure the serving host's memory read bandwidth and GEMM throughput.

Why a command: a CPU server's physical floors (the fastest a decode step or a prefill can be)
need this host's figures, which no catalog holds (advisor/collect/host.py). Run it once on the
machine that serves, keep the JSON, and give it to `servops triage --host-profile`.
"""

from __future__ import annotations

import argparse
import sys

from advisor.cli.output import say, write_result
from advisor.cli.output_paths import check_output_file
from advisor.collect.host import probe
from advisor.errors import UserError

NAME = "probe"


def register(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        NAME,
        help="measure this host's memory bandwidth and GEMM throughput (the CPU floors' figures)",
        description=(
            "Measure this host with 1, 2, 4 … up to all usable cores: the read bandwidth of a 512 MiB buffer "
            "and the throughput of 1024x1024 GEMMs in bfloat16 and float32, best of 5 each. Run it on the "
            "machine that serves (it takes under a minute, and measures nothing else while it runs: stop or "
            "idle the server first), then pass the JSON to `servops triage --host-profile`: triage then states "
            "a CPU server's ITL and TTFT as multiples of the floors at the cores the engine is pinned to."
        ),
    )
    parser.add_argument("--json", metavar="FILE", help="write the profile (kind 'host_profile') to FILE")
    parser.add_argument(
        "--max-threads",
        type=int,
        metavar="N",
        help="measure up to N threads (default: every usable core)",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    if args.max_threads is not None and args.max_threads < 1:
        raise UserError(f"--max-threads {args.max_threads}: give at least 1")
    check_output_file(args.json, "--json")

    profile = probe(args.max_threads, progress=lambda line: say(line, sys.stderr))
    say(f"{profile.cpu_model}, {profile.usable_cores} usable core(s), bf16 arithmetic: {profile.bf16_arithmetic}")
    say(f"{'threads':>8} | {'read GB/s':>10} | {'bf16 GFLOP/s':>13} | {'fp32 GFLOP/s':>13}")
    for row in profile.figures:
        say(f"{row.threads:>8} | {row.read_gbps:>10.1f} | {row.bf16_gflops:>13.1f} | {row.fp32_gflops:>13.1f}")
    if args.json:
        path = write_result(args.json, profile, "--json", indent=1)
        say(f"wrote {path}")
    return 0
