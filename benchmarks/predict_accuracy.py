"""How well the performance model predicts configurations it never saw (not a test).

    .venv/bin/python -m benchmarks.predict_accuracy --engine both --out bench-out/predict
    .venv/bin/python -m benchmarks.predict_accuracy --engine bundled --quick   # 3 levels, short steps
    python3 -m benchmarks.predict_accuracy --engine bundled --quick --model /tmp/smollm2-shape  # a GPU machine

Per engine (the bundled engine, and real vLLM from .venv-vllm when it is installed):
1. Calibration: start the server with `--max-num-seqs 32` (a cap the 1-16 streams never reach, so
   the ramp shows every batch size), ramp 1-16 closed-loop streams over a random workload; start
   it again with prefix caching on and ramp a shared-prefix workload.
2. Targets, each started and ramped for real over the same steps: `--max-num-seqs` 1, 2, 4, 8,
   `--max-num-batched-tokens 64` (prompts then take several chunked steps), and prefix caching
   off on the shared-prefix workload.
3. For each target, `servops predict`'s model (advisor.perf.whatif) calibrates on the matching
   calibration ramp and predicts the target's flags; the baseline is the measured target ramp.
Reports |predicted/measured - 1| per step for TTFT p50, ITL p50 and output tok/s, and the knee
(error in load steps), with the median and the worst over all targets. Writes every ramp, every
prediction and a summary JSON under --out.

With `--repeats N` every server (calibrations and targets) is started and ramped N times, the
rounds one after another so the repeats of one configuration are minutes apart. The prediction
still comes from the first calibration ramp (what a user has), the baseline becomes the mean of
the target's N ramps, and the run-to-run difference of the same flags on another start
(|ramp k / ramp 1 - 1|, per step) is reported beside the error: the part of the error that no
model of the configuration can remove. A GEMM probe before each ramp records the machine's speed.

vLLM runs with --enforce-eager: its compiled start takes about two minutes per server here
(the compile cache does not reload), eager about 35 s, and eight servers are started per engine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from advisor.cli.options import prompt_lengths
from advisor.collect.server_args import parse_command
from advisor.perf.forecast import figure
from advisor.perf.measured import measured_ramp
from advisor.perf.ranking import kv_tokens_from_log
from advisor.perf.whatif import FlagChanges, ServerContext, what_if
from advisor.servers.process import EngineProcess
from advisor.servers.vllm import vllm_unavailable_reason
from advisor.tune.engines import default_base_flags, start_command
from loadtest.runner import RampConfig, run_ramp
from loadtest.workload import LengthSpec, WorkloadSpec

RANDOM = WorkloadSpec(
    kind="random",
    input_len=LengthSpec(distribution="uniform", mean=64, spread=32),
    output_len=LengthSpec(distribution="uniform", mean=32, spread=16),
    seed=11,
)
SHARED = WorkloadSpec(
    kind="shared-prefix",
    prefix_len=192,
    groups=2,
    share=1.0,
    input_len=LengthSpec(distribution="uniform", mean=32, spread=16),
    output_len=LengthSpec(distribution="uniform", mean=32, spread=16),
    seed=12,
)
# Calibrate where the cap does not bind (32 > the top 16 streams): the ramp then shows every batch size
# from 1 to 16, and the predictions interpolate rather than extrapolate the step cost.
CALIBRATION = {"random": ["--max-num-seqs", "32"], "shared-prefix": ["--max-num-seqs", "32", "--enable-prefix-caching"]}
TARGETS = [  # (name, workload, change)
    ("max-num-seqs 1", "random", "--max-num-seqs 1"),
    ("max-num-seqs 2", "random", "--max-num-seqs 2"),
    ("max-num-seqs 4", "random", "--max-num-seqs 4"),
    ("max-num-seqs 8", "random", "--max-num-seqs 8"),
    ("max-num-batched-tokens 64", "random", "--max-num-batched-tokens 64"),
    ("prefix caching off", "shared-prefix", "--no-enable-prefix-caching"),
]
FIGURES = ("ttft_p50", "itl_p50", "output_tokens_per_s")
# Time after the last step for the requests it sent to finish (the ramp ends sooner when none is left).
# Why this long: output tok/s counts the tokens of a step's requests that finished, and at
# `--max-num-seqs 1` with 16 streams a request sent late in the last step waits behind fifteen others,
# 25-35 s on the bundled engine. With 30 s the measured figure, and the replay's, turned on whether
# one or two requests made the cut-off (a 100 % tok/s error in BENCHMARKS.md's run r4), not on the
# server's speed. Every request then counts, as it does at the earlier steps, which the later steps drain.
COOLDOWN_S = 90.0
# Lone prefills timed after each calibration ramp (loadtest.prefill_probe): the random workload's
# prompts are 32-96 words and the shared-prefix ones compute 32-224 tokens, so neither pins what a
# prompt token costs; these lengths span and pass them.
PREFILL_PROBE = (64, 256, 512)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=["bundled", "vllm", "both"], default="both")
    parser.add_argument("--out", default="bench-out/predict", help="folder for ramps, predictions and summary.json")
    parser.add_argument("--quick", action="store_true", help="levels 1,4,16 and 10 s steps (a smoke run)")
    add_recorded_option(parser)
    parser.add_argument(
        "--model",
        default=None,
        help="the bundled engine serves this checkpoint folder instead of the embedded SmolLM2 (for example "
        "a benchmarks.synthetic_model shape on a GPU machine, where the GGUF cannot travel)",
    )
    parser.add_argument(
        "--prefill-probe",
        type=prompt_lengths,
        default=list(PREFILL_PROBE),
        help="prompt lengths (words) each calibration server's ramp times lone prefills at afterwards "
        f"(`servops ramp --prefill-probe`; default {','.join(map(str, PREFILL_PROBE))}); the fit reads them",
    )
    parser.add_argument(
        "--without-probe",
        action="store_true",
        help="predict as if the calibration ramps had no prefill probe (with --recorded: the A/B of the probe "
        "on the same measurements)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="start and ramp every server this many times (whole rounds); the baseline becomes the mean, "
        "and the run-to-run difference of the same flags is reported beside the error",
    )
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats {args.repeats}: must be at least 1")
    if args.model and args.engine != "bundled":
        parser.error("--model: only with --engine bundled (vLLM serves the embedded SmolLM2 from its own venv)")
    if args.model and not (Path(args.model) / "config.json").is_file():
        parser.error(f"--model {args.model}: no config.json there; give a checkpoint folder")
    engines = ["bundled", "vllm"] if args.engine == "both" else [args.engine]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    levels = [1.0, 4.0, 16.0] if args.quick else [1.0, 2.0, 4.0, 8.0, 16.0]
    step_s = 10.0 if args.quick else 20.0
    summary = {"levels": levels, "step_s": step_s, "engines": {}}
    summary_name = "summary-recorded.json" if args.recorded else "summary.json"
    for engine in engines:
        if engine == "vllm" and (reason := vllm_unavailable_reason()):
            print(f"vllm: skipped: {reason}", file=sys.stderr)
            summary["engines"][engine] = {"skipped": reason}
            continue
        summary["engines"][engine] = run_engine(
            engine,
            out / engine,
            levels,
            step_s,
            args.recorded,
            args.repeats,
            args.model,
            prefill_probe=[] if args.without_probe else args.prefill_probe,
        )
        (out / summary_name).write_text(json.dumps(summary, indent=1))
    print(render(summary))
    (out / summary_name).write_text(json.dumps(summary, indent=1))
    return 0


def add_recorded_option(parser: argparse.ArgumentParser) -> None:
    """`--recorded`, as every benchmark that measures and then predicts offers it: the same model
    questions asked again of saved measurements, so model versions compare on identical data."""
    parser.add_argument(
        "--recorded",
        action="store_true",
        help="start and measure nothing: predict again from the ramps and logs a previous run left in --out "
        "(to compare model versions on the same measurements)",
    )


def base_flags(engine: str) -> list[str]:
    """Every server's flags besides the ones a run varies: the demo's base flags (float32 on the
    bundled engine); vLLM keeps its own dtype default and runs eager (see the module docstring)."""
    return ["--max-model-len", "2048"] + (
        ["--enforce-eager"] if engine == "vllm" else list(default_base_flags("bundled"))
    )


def run_engine(
    engine: str,
    out: Path,
    levels: list[float],
    step_s: float,
    recorded: bool = False,
    repeats: int = 1,
    model: str | None = None,
    prefill_probe: list[int] | None = None,
) -> dict:
    base = base_flags(engine)
    workloads = {"random": RANDOM, "shared-prefix": SHARED}
    run = recall if recorded else measure
    calibrations: dict[str, list[dict]] = {name: [] for name in CALIBRATION}
    targets: dict[str, list[dict]] = {name: [] for name, _, _ in TARGETS}
    for repeat in range(1, repeats + 1):  # whole rounds, so the repeats of one server are minutes apart
        for name, flags in CALIBRATION.items():
            folder = out / _folder(f"calib-{name}", repeat)
            command = start_command(engine, base + flags, model)
            calibrations[name].append(
                run(engine, command, workloads[name], levels, step_s, folder, prefill_probe=prefill_probe or [])
            )
        for name, workload_name, change in TARGETS:
            target_flags = calibrations[workload_name][0]["command"].with_changes(_change_dict(change))
            folder = out / _folder(f"target-{name.replace(' ', '-')}", repeat)
            targets[name].append(run(engine, target_flags, workloads[workload_name], levels, step_s, folder))
    rows = []
    for name, workload_name, change in TARGETS:
        calib = calibrations[workload_name][0]
        started = time.monotonic()
        ramp = calib["ramp"] if prefill_probe else {**calib["ramp"], "prefill_probe": None}
        command = parse_command(calib["command"].render(), flag="--server-args")
        source = f"calib-{workload_name}"
        server = ServerContext(command=command, kv_cache_tokens=calib["kv_tokens"])
        prediction = what_if(measured_ramp(ramp, source), source, server, FlagChanges.parse([change]))
        predict_s = time.monotonic() - started
        (out / f"prediction-{name.replace(' ', '-')}.json").write_text(prediction.model_dump_json(indent=1))
        rows.append(compare(name, prediction, [t["ramp"] for t in targets[name]], predict_s))
        print(
            f"[{engine}] {name}: " + ", ".join(f"{k} {v:.0%}" for k, v in rows[-1]["median"].items()),
            file=sys.stderr,
            flush=True,
        )
    servers = [*calibrations.values(), *targets.values()]  # each configuration's runs, one per round
    result = {
        "repeats": repeats,
        "calibration_flags": {k: v[0]["command"].render() for k, v in calibrations.items()},
        "targets": rows,
        "overall": overall(rows),
        "probe_gflops": {r["folder"]: r["probe_gflops"] for group in servers for r in group},
    }
    if repeats > 1:
        result["run_to_run"] = run_to_run([[r["ramp"] for r in group] for group in servers])
    return result


def _folder(name: str, repeat: int) -> str:
    """The first round keeps the plain names (so older outputs still read with --recorded)."""
    return name if repeat == 1 else f"{name}-r{repeat}"


def measure(
    engine: str,
    flags,
    workload: WorkloadSpec,
    levels: list[float],
    step_s: float,
    folder: Path,
    request_timeout_s: float = 120.0,
    prefill_probe: list[int] | None = None,
) -> dict:
    """Start the server, ramp it, stop it; the ramp JSON, the command and the KV size it logged."""
    from benchmarks.engine_throughput import gemm_probe  # torch: only when measuring

    command = flags if not isinstance(flags, list) else start_command(engine, flags)
    folder.mkdir(parents=True, exist_ok=True)
    probe = gemm_probe()
    (folder / "probe.json").write_text(json.dumps({"gemm_gflops": probe}))
    print(
        f"[{engine}] {folder.name}: GEMM probe {probe} GFLOP/s; starting {command.render()}",
        file=sys.stderr,
        flush=True,
    )
    with EngineProcess(command, folder / "server.log", startup_timeout_s=600) as server:
        ramp = run_ramp(
            RampConfig(
                endpoint=server.base_url,
                mode="concurrency",
                levels=levels,
                step_s=step_s,
                warmup_s=3.0,
                cooldown_s=COOLDOWN_S,
                workload=workload,
                request_timeout_s=request_timeout_s,
                prefill_probe=prefill_probe or [],
            ),
            progress=lambda line: print(f"[{engine}] {line}", file=sys.stderr, flush=True),
        )
    document = ramp.model_dump(mode="json")
    (folder / "ramp.json").write_text(json.dumps(document, indent=1))
    return {
        "ramp": document,
        "command": command,
        "kv_tokens": kv_tokens_from_log(str(folder / "server.log")),
        "folder": folder.name,
        "probe_gflops": probe,
    }


def recall(
    engine: str, flags, workload: WorkloadSpec, levels: list[float], step_s: float, folder: Path, **_: float
) -> dict:
    """What `measure` left in `folder` on an earlier run: the ramp, the command and the logged KV size."""
    command = flags if not isinstance(flags, list) else start_command(engine, flags)
    if not (folder / "ramp.json").is_file():
        raise SystemExit(f"--recorded: {folder / 'ramp.json'} is missing; run without --recorded first")
    probe = folder / "probe.json"
    return {
        "ramp": json.loads((folder / "ramp.json").read_text()),
        "command": command,
        "kv_tokens": kv_tokens_from_log(str(folder / "server.log")),
        "folder": folder.name,
        "probe_gflops": json.loads(probe.read_text())["gemm_gflops"] if probe.is_file() else None,
    }


def _steps(ramp: dict) -> list:
    """A saved ramp's steps as StepResult (the figures advisor.perf.forecast.figure reads)."""
    from loadtest.results import StepResult

    return [StepResult.model_validate(s) for s in ramp["steps"]]


def _usable(step) -> bool:
    """A step whose figures count: valid, with at least one successful request."""
    return bool(step.valid and step.ok_requests)


def compare(name: str, prediction, measured: list[dict], predict_s: float) -> dict:
    """Predicted vs measured per step; with several measured ramps of the target, vs their mean."""
    runs = [_steps(ramp) for ramp in measured]
    errors: dict[str, list[float]] = {f: [] for f in FIGURES}
    per_step = []
    for index, guess in enumerate(prediction.steps):
        reals = [steps[index] for steps in runs if index < len(steps)]
        reals = [r for r in reals if _usable(r)]
        if not reals:
            continue
        row = {"offered": reals[0].offered}
        for name_ in FIGURES:
            values = [v for v in (figure(r, name_) for r in reals) if v]
            p = figure(guess, name_)
            if values and p is not None:
                m = statistics.fmean(values)
                errors[name_].append(abs(p / m - 1))
                row[name_] = {"measured": m, "predicted": p, "runs": values}
        per_step.append(row)
    levels = [s.offered for s in runs[0]]
    knees = [_position(levels, (ramp.get("knee") or {}).get("offered")) for ramp in measured]
    knee_p = prediction.knee.offered if prediction.knee else None
    knee_m = (measured[0].get("knee") or {}).get("offered")
    knee_steps = min(abs(_position(levels, knee_p) - k) for k in knees)  # the nearest measured knee
    return {
        "target": name,
        "change": prediction.changes,
        "predict_s": round(predict_s, 2),
        "median": {f: statistics.median(v) for f, v in errors.items() if v},
        "worst": {f: max(v) for f, v in errors.items() if v},
        "knee": {
            "measured": knee_m,
            "measured_runs": [(ramp.get("knee") or {}).get("offered") for ramp in measured],
            "predicted": knee_p,
            "error_steps": knee_steps,
        },
        "relative_error_stated": prediction.cost.relative_error,
        "steps": per_step,
    }


def run_to_run(groups: list[list[dict]]) -> dict:
    """|ramp k / ramp 1 - 1| per step and figure, over every configuration ramped more than once:
    how much the same flags differ on another start of the same server, minutes later."""
    spread: dict[str, list[float]] = {f: [] for f in FIGURES}
    for ramps in groups:
        runs = [_steps(ramp) for ramp in ramps]
        for other in runs[1:]:
            for first, again in zip(runs[0], other, strict=False):
                if not (_usable(first) and _usable(again)):
                    continue
                for name_ in FIGURES:
                    a, b = figure(first, name_), figure(again, name_)
                    if a and b:
                        spread[name_].append(abs(b / a - 1))
    return {f: {"median": statistics.median(v), "worst": max(v), "n": len(v)} for f, v in spread.items() if v}


def overall(rows: list[dict]) -> dict:
    result = {}
    for f in FIGURES:
        values = [abs(s[f]["predicted"] / s[f]["measured"] - 1) for r in rows for s in r["steps"] if f in s]
        if values:
            result[f] = {"median": statistics.median(values), "worst": max(values), "n": len(values)}
    knees = [r["knee"]["error_steps"] for r in rows]
    result["knee_error_steps"] = {"median": statistics.median(knees), "worst": max(knees), "n": len(knees)}
    return result


def _position(levels: list[float], knee: float | None) -> int:
    """A knee as a step index; no knee counts as one step past the last."""
    return levels.index(knee) if knee in levels else len(levels)


def _change_dict(change: str) -> dict[str, str]:
    from advisor.perf.whatif import parse_change

    return parse_change(change)


def render(summary: dict) -> str:
    lines = []
    for engine, result in summary["engines"].items():
        if "skipped" in result:
            lines.append(f"{engine}: skipped ({result['skipped']})")
            continue
        lines.append(f"{engine}: calibrated on {result['calibration_flags']}")
        lines.append(
            "| target | TTFT p50 median / worst | ITL p50 median / worst | tok/s median / worst | knee "
            "(measured → predicted) |"
        )
        lines.append("|---|---|---|---|---|")
        for row in result["targets"]:
            cells = [
                f"{row['median'].get(f, float('nan')):.0%} / {row['worst'].get(f, float('nan')):.0%}" for f in FIGURES
            ]
            lines.append(
                f"| {row['target']} | "
                + " | ".join(cells)
                + f" | {row['knee']['measured']} → {row['knee']['predicted']} |"
            )
        o = result["overall"]
        lines.append(
            "| **all** | "
            + " | ".join(f"{o[f]['median']:.0%} / {o[f]['worst']:.0%}" for f in FIGURES if f in o)
            + f" | off by {o['knee_error_steps']['median']} step(s) median, "
            f"{o['knee_error_steps']['worst']} worst |"
        )
        if "run_to_run" in result:
            noise = result["run_to_run"]
            lines.append(
                f"| *same flags, another start (run-to-run, {result['repeats']} rounds)* | "
                + " | ".join(
                    f"{noise[f]['median']:.0%} / {noise[f]['worst']:.0%} (n={noise[f]['n']})"
                    for f in FIGURES
                    if f in noise
                )
                + " | |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
