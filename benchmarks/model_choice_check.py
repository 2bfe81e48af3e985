"""Triage's model-chosen batch cap, started and ramped for real (not a test).

    .venv/bin/python -m benchmarks.model_choice_check --engine vllm --out bench-out/model-choice

For each recorded `--max-num-seqs 1` server (tests/fixtures/vllm_cpu/queue_seqs1 for real vLLM,
tests/fixtures/bundled/queue_seqs1 for the bundled engine: a log and a ramp of 1-16 streams where
requests queue behind the cap), this does what an operator would:
1. `servops triage --logs STEM.log --ramp STEM_ramp.json --ttft-slo 2`, and takes the
   `--max-num-seqs` value the performance model chose and the `servops predict` command printed
   beside it;
2. runs that command: the predicted ramp, step by step;
3. starts the same engine with the chosen cap (and the recorded server's other flags) and ramps
   the recorded ramp's own levels, steps and seeded workload.
**Baseline: the measured ramp of the chosen configuration, in the same run.** Reports per step the
predicted and measured TTFT p50/p99, ITL p50/p99 and output tok/s with predicted / measured, and
the safe operating point under the SLO on both sides, which is what the choice was made for.
Writes everything under --out (summary.json, the triage, the prediction, the ramp, the server log).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from advisor.cli import main as servops
from advisor.vllm_launch import vllm_unavailable_reason
from benchmarks.predict_accuracy import add_recorded_option, base_flags, measure, recall
from loadtest.workload import WorkloadSpec

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
CASES = {"vllm": FIXTURES / "vllm_cpu" / "queue_seqs1", "bundled": FIXTURES / "bundled" / "queue_seqs1"}
FIGURES = {
    "ttft_p50_s": ("ttft_s", "p50"),
    "ttft_p99_s": ("ttft_s", "p99"),
    "itl_p50_s": ("itl_s", "p50"),
    "itl_p99_s": ("itl_s", "p99"),
    "output_tokens_per_s": ("output_tokens_per_s", None),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=["vllm", "bundled", "both"], default="both")
    parser.add_argument("--ttft-slo", type=float, default=2.0, help="TTFT p99 target in seconds (default 2)")
    parser.add_argument("--out", default="bench-out/model-choice", help="folder for every file the run writes")
    add_recorded_option(parser)
    args = parser.parse_args(argv)
    if args.ttft_slo <= 0:
        parser.error(f"--ttft-slo {args.ttft_slo:g}: must be a positive number of seconds")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    summary: dict = {"ttft_slo_s": args.ttft_slo, "engines": {}}
    for engine in ["vllm", "bundled"] if args.engine == "both" else [args.engine]:
        if engine == "vllm" and not args.recorded and (reason := vllm_unavailable_reason()):
            print(f"vllm: skipped: {reason}", file=sys.stderr)
            summary["engines"][engine] = {"skipped": reason}
            continue
        summary["engines"][engine] = check(engine, args.ttft_slo, out / engine, args.recorded)
        (out / ("summary-recorded.json" if args.recorded else "summary.json")).write_text(json.dumps(summary, indent=1))
    print(render(summary))
    return 0


def check(engine: str, ttft_slo_s: float, folder: Path, recorded: bool = False) -> dict:
    """Triage's choice for one recorded server, its prediction, and the ramp that measures it."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = CASES[engine]
    triage_path = folder / "triage.json"
    code = servops(
        [
            "triage",
            "--logs",
            f"{stem}.log",
            "--ramp",
            f"{stem}_ramp.json",
            "--ttft-slo",
            f"{ttft_slo_s:g}",
            "--json",
            str(triage_path),
        ]
    )
    if code != 0:
        raise SystemExit(f"[{engine}] servops triage exited {code}")
    triage = json.loads(triage_path.read_text())
    change = next(c for f in triage["findings"] for c in f["changes"] if c["flag"] == "--max-num-seqs")
    command = change["predicted_effect"]["command"]
    print(f"[{engine}] triage chose --max-num-seqs {change['proposed']}; running {command}", file=sys.stderr)
    prediction_path = folder / "prediction.json"
    if servops([*shlex.split(command)[1:], "--json", str(prediction_path)]) != 0:
        raise SystemExit(f"[{engine}] the printed predict command failed: {command}")
    prediction = json.loads(prediction_path.read_text())

    # The recorded servers came from predict_accuracy's own measure(): the same flags besides the
    # cap, the same warm-up, cool-down and timeout; so the chosen one is measured by it too.
    before = json.loads(Path(f"{stem}_ramp.json").read_text())
    config = before["config"]
    flags = [*base_flags(engine), "--max-num-seqs", change["proposed"]]
    run = recall if recorded else measure
    workload = WorkloadSpec.model_validate(config["workload"])
    server = run(engine, flags, workload, config["levels"], config["step_s"], folder)
    measured = server["ramp"]
    return {
        "chosen": {"flag": "--max-num-seqs", "current": change["current"], "proposed": change["proposed"]},
        "predict_command": command,
        "server_command": server["command"].render(),
        "safe_operating_point": {
            "predicted": (prediction.get("safe_operating_point") or {}).get("offered"),
            "measured": safe_point(measured["steps"], ttft_slo_s),
            "recorded_before": safe_point(before["steps"], ttft_slo_s),
        },
        "steps": compare(prediction["steps"], measured["steps"]),
    }


def compare(predicted: list[dict], measured: list[dict]) -> list[dict]:
    """Per offered load: every figure predicted and measured, and their ratio."""
    rows = []
    by_load = {step["offered"]: step for step in measured}
    for guess in predicted:
        real = by_load.get(guess["offered"])
        if real is None or not real.get("ok_requests"):
            continue
        row: dict = {"offered": guess["offered"]}
        for name, (key, part) in FIGURES.items():
            p, m = _value(guess, key, part), _value(real, key, part)
            if p is not None and m:
                row[name] = {"predicted": p, "measured": m, "ratio": p / m}
        rows.append(row)
    return rows


def _value(step: dict, key: str, part: str | None) -> float | None:
    value = step.get(key)
    return value.get(part) if part and isinstance(value, dict) else value


def safe_point(steps: list[dict], ttft_slo_s: float) -> float | None:
    """The highest valid step with every measured request successful and TTFT p99 within the
    target: the same test for the recorded ramp (ramped without an SLO) and the measured one."""
    meeting = [
        s["offered"]
        for s in steps
        if s["valid"] and s["ok_requests"] and s["ok_requests"] == s["requests"] and s["ttft_s"]["p99"] <= ttft_slo_s
    ]
    return max(meeting, default=None)


def render(summary: dict) -> str:
    lines = [f"TTFT p99 target {summary['ttft_slo_s']:g} s; ratio = predicted / measured"]
    for engine, result in summary["engines"].items():
        if "skipped" in result:
            lines.append(f"{engine}: skipped: {result['skipped']}")
            continue
        chosen, safe = result["chosen"], result["safe_operating_point"]
        lines.append(
            f"{engine}: --max-num-seqs {chosen['current']} -> {chosen['proposed']} (the model's choice); "
            f"safe operating point {safe['recorded_before']} before, predicted {safe['predicted']}, "
            f"measured {safe['measured']} (streams)"
        )
        lines.append("| streams | " + " | ".join(FIGURES) + " |")
        lines.append("|---|" + "---|" * len(FIGURES))
        for row in result["steps"]:
            cells = [
                f"{row[n]['predicted']:.3g} / {row[n]['measured']:.3g} ({row[n]['ratio']:.2f}x)" if n in row else "–"
                for n in FIGURES
            ]
            lines.append(f"| {row['offered']:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
