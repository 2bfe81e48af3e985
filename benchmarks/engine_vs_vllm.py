"""The bundled engine against real vLLM on this machine, the same seeded ramp on each (not a test).

    .venv/bin/python -m benchmarks.engine_vs_vllm --out bench-out/engine-vs-vllm
    .venv/bin/python -m benchmarks.engine_vs_vllm --quick          # 1 and 4 streams, 10 s steps
    .venv/bin/python -m benchmarks.engine_vs_vllm --rounds 2       # each side twice, vLLM-bundled-bundled-vLLM

Baseline: vLLM (from .venv-vllm, its own defaults: bf16 where the CPU has AVX512-BF16, torch.compile,
its CPU thread binding), started first. Candidate: the bundled engine with its own defaults, started
after vLLM has stopped, so the two never share the machine. On each server the same `servops ramp`
runs twice, closed loop at 1, 4, 16 and 64 streams: short prompts (64 ± 32 random words) and long
prompts (512 ± 128 words, three times longer steps), 64 ± 16 output tokens forced, seeded so both
engines see the same requests. Above 16 streams a step grows with the streams (64 streams: four
times as long, as its own ramp with a cool-down of one step), since a saturated engine's request
life does, and a step shorter than one request's life counts nothing (see SATURATED_STREAMS). Both
run with `--max-model-len 2048`, so neither is given a KV pool the other lacks.

Reports per step: output tok/s (whole requests sent in the step's window), streamed tok/s (every
token received in the window, from any request: smooth where a window holds only a few request
lives; loadtest/stats.py), TTFT and ITL p50/p99 of each engine, and the bundled engine's ratio to
vLLM (tok/s: bundled / vLLM, higher is better; latencies: bundled / vLLM, lower is better).
Writes each ramp, each server log and summary.json under --out.

With `--rounds N` each engine is started and ramped N times, in mirrored order (vLLM, bundled, then
bundled, vLLM, ...), so a machine whose speed drifts during the run favours neither side. Each
figure is then the median over an engine's rounds, the ratio is taken between those medians, and
each round's own ratio (round k bundled / round k vLLM) is reported beside it: the spread says how
much of a ratio the machine's drift can move. Why: on the shared 2-core VM the GEMM probe moved
between 173 and 317 GFLOP/s across runs, and vLLM's own rate with it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from advisor.collect.server_args import parse_command
from advisor.perf.forecast import figure
from advisor.servers.process import EngineProcess
from advisor.servers.vllm import vllm_unavailable_reason
from advisor.tune.engines import start_command
from benchmarks.engine_throughput import gemm_probe
from loadtest.results import StepResult
from loadtest.runner import RampConfig, run_ramp
from loadtest.workload import LengthSpec, WorkloadSpec

OUTPUT = LengthSpec(distribution="uniform", mean=64, spread=16)
WORKLOADS = {
    "short": WorkloadSpec(
        kind="random", input_len=LengthSpec(distribution="uniform", mean=64, spread=32), output_len=OUTPUT, seed=20
    ),
    "long": WorkloadSpec(
        kind="random", input_len=LengthSpec(distribution="uniform", mean=512, spread=128), output_len=OUTPUT, seed=21
    ),
}
LEVELS = [1.0, 4.0, 16.0, 64.0]
# Long prompts at 16+ streams keep each request in prefill for many seconds on two cores: a step must
# outlast a request's life, or none finishes inside it and the step measures nothing.
STEP_FACTOR = {"short": 1.0, "long": 3.0}
# Above this many streams a saturated engine's request life grows with the streams (each waits for the
# others' prefills and shares every decode step), so the step grows with them: at 64 streams of long
# prompts on two cores one request lived 150-170 s in vLLM (run 20: 64 prompts of ~570 tokens at
# 259 prompt tok/s), and a 60 s step finished none. A stream's first request is sent inside the
# warm-up and never counts; a counted one is sent in the window, so the window must hold about a
# whole request life, and the cool-down after the step another, for it to finish.
SATURATED_STREAMS = 16.0
COMMON_FLAGS = ["--max-model-len", "2048"]
ENGINES = ("vllm", "bundled")  # baseline first
FIGURES = (
    ("output_tokens_per_s", "tok/s"),
    ("streamed_tokens_per_s", "streamed tok/s"),
    ("ttft_p50", "TTFT p50"),
    ("ttft_p99", "TTFT p99"),
    ("itl_p50", "ITL p50"),
    ("itl_p99", "ITL p99"),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench-out/engine-vs-vllm", help="folder for ramps, logs and summary.json")
    parser.add_argument("--quick", action="store_true", help="1 and 4 streams, 10 s steps (a smoke run)")
    parser.add_argument(
        "--levels", default="", help="comma-separated stream counts instead of 1,4,16,64 (e.g. 16,64 for an A/B)"
    )
    parser.add_argument(
        "--step-s",
        type=float,
        default=20.0,
        help="seconds per load step up to 16 streams, three times that for long prompts, and "
        "longer in proportion above 16 streams (default 20)",
    )
    parser.add_argument("--workloads", default="short,long", help="comma-separated subset of: short, long")
    parser.add_argument("--bundled-flags", default="", help="extra flags for the bundled engine (A/B of a change)")
    parser.add_argument("--vllm-flags", default="", help="extra flags for vLLM (e.g. --enforce-eager)")
    parser.add_argument("--bundled-env", default="", help="NAME=value assignments for the bundled engine's process")
    parser.add_argument("--only", choices=ENGINES, help="run one engine (to iterate on a change; no ratios)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="start and ramp each engine this many times, in mirrored order (vLLM, bundled, bundled, vLLM, ...); "
        "figures are the median over rounds, each round's ratio is reported too (default 1)",
    )
    parser.add_argument(
        "--model",
        default=None,
        help="model dir or name both engines serve (default: the embedded SmolLM2); e.g. a "
        "benchmarks.synthetic_model checkpoint on a GPU machine",
    )
    return parser


def checked_inputs(args: argparse.Namespace) -> tuple[list[str], list[float]] | None:
    """The workloads and stream levels to run, or None after one line on stderr naming the bad input: a run
    that cannot start is refused before an engine is."""
    if args.only != "bundled" and (reason := vllm_unavailable_reason()):
        print(f"engine_vs_vllm: vLLM is the baseline and cannot start here: {reason}", file=sys.stderr)
        return None
    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    unknown = sorted(set(workloads) - set(WORKLOADS))
    if unknown:
        print(f"engine_vs_vllm: unknown workload {unknown}; choose from {sorted(WORKLOADS)}", file=sys.stderr)
        return None
    levels = [1.0, 4.0] if args.quick else LEVELS
    if args.levels:
        try:
            levels = [float(v) for v in args.levels.split(",") if v.strip()]
        except ValueError:
            print(f"engine_vs_vllm: --levels {args.levels!r}: give stream counts like 16,64", file=sys.stderr)
            return None
    return workloads, levels


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: must be at least 1")
    inputs = checked_inputs(args)
    if inputs is None:
        return 2
    workloads, levels = inputs
    step_s = 10.0 if args.quick else args.step_s
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    extra = {"vllm": args.vllm_flags.split(), "bundled": args.bundled_flags.split()}
    ramps = {name: step_groups(levels, step_s * STEP_FACTOR[name]) for name in workloads}
    summary: dict = {
        "levels": levels,
        "step_s": step_s,
        "ramps": ramps,
        "workloads": workloads,
        "rounds": args.rounds,
        "engines": {},
    }
    env = {"vllm": "", "bundled": args.bundled_env}
    runs: dict[str, list[dict]] = {}
    for round_index, engine in round_order([args.only] if args.only else list(ENGINES), args.rounds):
        folder = out / (engine if round_index == 1 else f"{engine}-r{round_index}")
        print(f"[{engine}] round {round_index} of {args.rounds}", file=sys.stderr, flush=True)
        runs.setdefault(engine, []).append(
            run_engine(engine, COMMON_FLAGS + extra[engine], env[engine], ramps, folder, args.model)
        )
        summary["engines"][engine] = combine_rounds(runs[engine])
        (out / "summary.json").write_text(json.dumps(summary, indent=1))
    if args.only:
        return 0
    summary["ratios"] = ratios(summary)
    if args.rounds > 1:
        summary["round_ratios"] = [
            ratios({"engines": {engine: runs[engine][k] for engine in ENGINES}}) for k in range(args.rounds)
        ]
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(render(summary))
    return 0


def run_engine(
    engine: str,
    flags: list[str],
    env: str,
    ramps: dict[str, list[tuple[float, list[float]]]],
    folder: Path,
    model: str | None = None,
) -> dict:
    """Start one engine, ramp each workload on it (`ramps`: the workload's `step_groups`), stop it; the
    per-step figures and the command."""
    folder.mkdir(parents=True, exist_ok=True)
    command = start_command(engine, flags, model)
    if env:
        command = parse_command(f"{env} {command.render()}", origin="server-args")
    print(f"[{engine}] starting {command.render()}", file=sys.stderr, flush=True)
    # the shared box's speed drifts by a third between minutes: say how fast it was when each side ran
    result: dict = {"command": command.render(), "gemm_probe_gflops": gemm_probe(), "workloads": {}}
    print(f"[{engine}] GEMM probe {result['gemm_probe_gflops']} GFLOP/s", file=sys.stderr, flush=True)
    with EngineProcess(command, folder / "server.log", startup_timeout_s=900) as server:
        for name, groups in ramps.items():
            steps = []
            for group_step_s, group_levels in groups:
                suffix = "" if len(groups) == 1 else "-" + "-".join(f"{level:g}" for level in group_levels)
                ramp = run_ramp(
                    RampConfig(
                        endpoint=server.base_url,
                        mode="concurrency",
                        levels=group_levels,
                        step_s=group_step_s,
                        warmup_s=5.0,
                        # the last step's requests sent late in its window need about one request life more
                        cooldown_s=max(30.0, group_step_s),
                        workload=WORKLOADS[name],
                        request_timeout_s=600.0,
                        # every request's times, so a figure defined later can be read from this run
                        records_path=str(folder / f"records-{name}{suffix}.jsonl"),
                    ),
                    progress=lambda line, name=name: print(f"[{engine}/{name}] {line}", file=sys.stderr, flush=True),
                )
                document = ramp.model_dump(mode="json")
                (folder / f"ramp-{name}{suffix}.json").write_text(json.dumps(document, indent=1))
                steps += [_step_figures(step) for step in ramp.steps]
            result["workloads"][name] = steps
    return result


def step_groups(levels: list[float], step_s: float) -> list[tuple[float, list[float]]]:
    """The ramps one workload runs as (step seconds, stream counts): a step lasts `step_s` up to
    SATURATED_STREAMS streams and grows in proportion above; levels of one length share a ramp, in order."""
    groups: list[tuple[float, list[float]]] = []
    for level in levels:
        length = step_s * max(1.0, level / SATURATED_STREAMS)
        if groups and groups[-1][0] == length:
            groups[-1][1].append(level)
        else:
            groups.append((length, [level]))
    return groups


def round_order(engines: list[str], rounds: int) -> list[tuple[int, str]]:
    """(round, engine) in run order: each round mirrors the one before (A B, B A, A B, ...), so a
    steady drift of the machine's speed lands on both sides alike."""
    order = []
    for index in range(1, rounds + 1):
        order += [(index, engine) for engine in (engines if index % 2 else engines[::-1])]
    return order


def combine_rounds(runs: list[dict]) -> dict:
    """One engine's rounds as one result: each step's figures the median over the rounds (one round
    is returned as it is), requests summed, valid only where every round's step was."""
    if len(runs) == 1:
        return runs[0]
    combined: dict = {
        "command": runs[0]["command"],
        "gemm_probe_gflops": [run["gemm_probe_gflops"] for run in runs],
        "workloads": {},
    }
    for name in runs[0]["workloads"]:
        steps = []
        for per_round in zip(*(run["workloads"][name] for run in runs), strict=True):
            step = {
                "offered": per_round[0]["offered"],
                "ok_requests": sum(s["ok_requests"] for s in per_round),
                "valid": all(s["valid"] for s in per_round),
            }
            for path, _ in FIGURES:
                values = [s[path] for s in per_round if s.get(path) is not None]
                step[path] = statistics.median(values) if values else None
            steps.append(step)
        combined["workloads"][name] = steps
    return combined


def _step_figures(step: StepResult) -> dict:
    return {
        "offered": step.offered,
        "ok_requests": step.ok_requests,
        "valid": step.valid,
        **{name: figure(step, name) for name, _ in FIGURES},
    }


def ratios(summary: dict) -> dict:
    """Bundled / vLLM per workload, step and figure (None where either side measured nothing)."""
    base, cand = summary["engines"]["vllm"]["workloads"], summary["engines"]["bundled"]["workloads"]
    result: dict = {}
    for name in cand:
        rows = []
        for b, c in zip(base.get(name, []), cand[name], strict=False):
            row = {"offered": c["offered"]}
            for path, _ in FIGURES:
                row[path] = c[path] / b[path] if b.get(path) and c.get(path) is not None else None
            rows.append(row)
        result[name] = rows
    return result


def render(summary: dict) -> str:
    def cell(value: float | None, path: str) -> str:
        if value is None:
            return "–"
        return f"{value:.0f}" if path.endswith("tokens_per_s") else f"{value * 1000:.0f} ms"

    lines = []
    engines = summary["engines"]
    for name in summary["workloads"]:
        lines.append(
            f"\n{name} prompts (vLLM: {engines['vllm']['command']}; bundled: {engines['bundled']['command']}; "
            f"GEMM probe {engines['vllm'].get('gemm_probe_gflops')} / {engines['bundled'].get('gemm_probe_gflops')} "
            "GFLOP/s)"
        )
        header = ["streams"] + [f"{label} vLLM / bundled / ratio" for _, label in FIGURES]
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "---|" * len(header))
        base, cand = engines["vllm"]["workloads"][name], engines["bundled"]["workloads"][name]
        for b, c, r in zip(base, cand, summary["ratios"][name], strict=False):
            cells = [f"{c['offered']:g}"]
            for path, _ in FIGURES:
                cells.append(f"{cell(b[path], path)} / {cell(c[path], path)} / **{_ratio(r[path])}**")
            lines.append("| " + " | ".join(cells) + " |")
        if summary.get("round_ratios"):
            lines.append("\ntok/s ratio in each round (bundled / vLLM of the same round):")
            for index, per_round in enumerate(summary["round_ratios"], start=1):
                values = ", ".join(f"{r['offered']:g}: {_ratio(r['output_tokens_per_s'])}" for r in per_round[name])
                lines.append(f"- round {index}: {values}")
    return "\n".join(lines)


def _ratio(value: float | None) -> str:
    return f"{value:.2f}×" if value is not None else "–"


if __name__ == "__main__":
    sys.exit(main())
