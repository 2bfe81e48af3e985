"""Triage's model-chosen values, started and ramped for real (not a test).

    .venv/bin/python -m benchmarks.model_choice_check --case vllm --out bench-out/model-choice
    .venv/bin/python -m benchmarks.model_choice_check --case vllm-preempting --rivals 3
    .venv/bin/python -m benchmarks.model_choice_check --case vllm-chunked --ttft-slo 0.9 --rivals 64
    .venv/bin/python -m benchmarks.model_choice_check --case vllm-preempting-kv

Each case is a recorded server and what triage was given of it:
- `vllm`, `bundled` (tests/fixtures/vllm_cpu/queue_seqs1, tests/fixtures/bundled/queue_seqs1): a
  `--max-num-seqs 1` server's log and a ramp of 1-16 streams where requests queue behind the cap;
  triage gets `--logs STEM.log --ramp STEM_ramp.json --ttft-slo S`.
- `vllm-preempting` (tests/fixtures/vllm_cpu/preempting): real vLLM with 2,048 KV tokens, caught
  preempting at 16 streams; triage gets only its log and an 8 s `/metrics` window (no ramp, no SLO:
  the safe point is the highest step below the knee) and `--save-window`, so the window it
  calibrated on is a ramp file the printed `servops predict` command can replay.
- `vllm-preempting-kv` (tests/fixtures/vllm_cpu/preempting_float32): the same server and load in
  float32 (so a CPU without bf16 arithmetic ramps what was recorded), triaged the same way; the
  flag judged is `--kv-cache-memory-bytes`, which triage offers as OP-5.3's alternative.
- `vllm-chunked`, `bundled-chunked` (tests/fixtures/vllm_cpu/chunked, tests/fixtures/bundled/chunked):
  each engine at `--max-num-batched-tokens 64` with 128-word prompts (three chunked steps each),
  ramped over 1-8 streams with a 10 s `/metrics` window in the top step; triage gets the log,
  the window, the ramp and `--ttft-slo S`, and the flag judged is `--max-num-batched-tokens`.

For each case this does what an operator would:
1. runs that triage and takes the value the performance model chose for the case's flag
   (`--max-num-seqs`, `--max-num-batched-tokens` or `--kv-cache-memory-bytes`) and the
   `servops predict` command printed beside it;
2. runs that command (and, for each `--rivals` value and for the window case's current value, the
   same command with that value): the predicted ramp, step by step;
3. starts the same engine with each of those values (and the recorded server's other flags) and
   ramps the same levels and seeded workload.
**Baseline: the measured ramp of each configuration, in the same run.** Reports per step the
predicted and measured TTFT p50/p99, ITL p50/p99 and output tok/s with predicted / measured, and
the safe operating point on both sides, which is what the choice was made for: the model's
choice should measure at least as safe as every rival it passed over.
Writes everything under --out (summary.json, the triage, the predictions, the ramps, the server logs).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import NamedTuple

from advisor.cli.main import main as servops
from advisor.collect.server_args import parse_command
from advisor.servers.vllm import vllm_unavailable_reason
from advisor.triage.forecast import with_change
from benchmarks.predict_accuracy import add_recorded_option, base_flags, measure, recall
from loadtest.workload import WorkloadSpec

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
RECORDING = FIXTURES / "vllm_cpu" / "recording.json"  # how tests/fixtures/vllm_cpu was recorded


class Case(NamedTuple):
    engine: str  # the server started: "vllm" or "bundled"
    stem: Path  # the recorded log (STEM.log) and its ramp (STEM_ramp.json) or window (STEM_before/after.prom)
    source: str  # what triage is given: "ramp", "window", or "ramp+window" (it calibrates on the ramp)
    flag: str = "--max-num-seqs"  # the flag whose model-chosen value is ramped
    situation: str = ""  # its entry in recording.json, for the window cases' server flags


CASES = {
    "vllm": Case("vllm", FIXTURES / "vllm_cpu" / "queue_seqs1", "ramp"),
    "bundled": Case("bundled", FIXTURES / "bundled" / "queue_seqs1", "ramp"),
    "vllm-preempting": Case("vllm", FIXTURES / "vllm_cpu" / "preempting", "window", situation="preempting"),
    "vllm-preempting-kv": Case(
        "vllm",
        FIXTURES / "vllm_cpu" / "preempting_float32",
        "window",
        "--kv-cache-memory-bytes",
        "preempting_float32",
    ),
    "vllm-chunked": Case(
        "vllm", FIXTURES / "vllm_cpu" / "chunked", "ramp+window", "--max-num-batched-tokens", "chunked-vllm"
    ),
    "bundled-chunked": Case(
        "bundled", FIXTURES / "bundled" / "chunked", "ramp+window", "--max-num-batched-tokens", "chunked-bundled"
    ),
}
MIN_REQUEST_TIMEOUT_S = 120.0  # predict_accuracy's measure(), which recorded the ramp cases
FIGURES = {
    "ttft_p50_s": ("ttft_s", "p50"),
    "ttft_p99_s": ("ttft_s", "p99"),
    "itl_p50_s": ("itl_s", "p50"),
    "itl_p99_s": ("itl_s", "p99"),
    "output_tokens_per_s": ("output_tokens_per_s", None),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--case",
        choices=[*CASES, "all"],
        default="all",
        help="which recorded server (default: all): vllm and bundled are triaged from a ramp under "
        "--ttft-slo, vllm-preempting (and vllm-preempting-kv, whose flag is --kv-cache-memory-bytes) from a "
        "live /metrics window without an SLO, vllm-chunked and bundled-chunked from a ramp and a window under "
        "--ttft-slo (their flag: --max-num-batched-tokens)",
    )
    parser.add_argument(
        "--ttft-slo",
        type=float,
        default=2.0,
        help="TTFT p99 target in seconds for the ramp cases (default 2); the window case is triaged without one",
    )
    parser.add_argument(
        "--rivals",
        default="",
        metavar="N,N",
        help="other values of the case's flag to predict and measure beside the model's choice "
        "(e.g. the rule's own value); the window cases also measure the server's current value",
    )
    parser.add_argument("--out", default="bench-out/model-choice", help="folder for every file the run writes")
    add_recorded_option(parser)
    args = parser.parse_args(argv)
    if args.ttft_slo <= 0:
        parser.error(f"--ttft-slo {args.ttft_slo:g}: must be a positive number of seconds")
    try:
        rivals = [int(word) for word in args.rivals.split(",") if word.strip()]
    except ValueError:
        parser.error(f"--rivals {args.rivals!r}: give whole numbers separated by commas, e.g. 3,8")
    if any(value < 1 for value in rivals):
        parser.error(f"--rivals {args.rivals!r}: every value is at least 1")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    summary: dict = {"ttft_slo_s": args.ttft_slo, "engines": {}}
    for name in list(CASES) if args.case == "all" else [args.case]:
        case = CASES[name]
        if case.engine == "vllm" and not args.recorded and (reason := vllm_unavailable_reason()):
            print(f"{name}: skipped: {reason}", file=sys.stderr)
            summary["engines"][name] = {"skipped": reason}
            continue
        slo = args.ttft_slo if case.source != "window" else None
        summary["engines"][name] = check(case, slo, out / name, args.recorded, rivals)
        (out / ("summary-recorded.json" if args.recorded else "summary.json")).write_text(json.dumps(summary, indent=1))
    print(render(summary))
    return 0


def triage_inputs(case: Case, ttft_slo_s: float | None, window_path: Path) -> list[str]:
    """What triage reads for the case: a ramp under the SLO, a /metrics window (saved, to be the window
    cases' "before"), or both."""
    stem = case.stem
    if case.source == "ramp":
        return ["--ramp", f"{stem}_ramp.json", "--ttft-slo", f"{ttft_slo_s:g}"]
    interval = json.loads(RECORDING.read_text())["situations"][case.situation]["interval_s"]  # as recorded
    window = [*("--metrics", f"{stem}_before.prom", "--metrics", f"{stem}_after.prom")]
    window += ["--metrics-interval", f"{interval:g}"]
    if case.source == "ramp+window":
        return ["--ramp", f"{stem}_ramp.json", "--ttft-slo", f"{ttft_slo_s:g}", *window]
    return [*window, "--save-window", str(window_path)]


class Choice(NamedTuple):
    """Triage's verdict on the case's flag: the predict command to vary, the value it chose (if any), the
    values its model rejected, and the server's current value."""

    template: str
    chosen: dict | None
    rejected: list[dict]
    current: str


def triage_choice(case: Case, ttft_slo_s: float | None, folder: Path) -> Choice:
    """Runs servops triage on the recorded server and reads its verdict on the case's flag."""
    engine, flag = case.engine, case.flag
    triage_path = folder / "triage.json"
    given = triage_inputs(case, ttft_slo_s, folder / "window.json")
    code = servops(["triage", "--logs", f"{case.stem}.log", *given, "--json", str(triage_path)])
    if code != 0:
        raise SystemExit(f"[{engine}] servops triage exited {code}")
    chosen, rejected = verdicts(json.loads(triage_path.read_text()), flag)
    template = next((c for c in [chosen and chosen["command"], *(r["command"] for r in rejected)] if c), None)
    if not template:
        raise SystemExit(f"[{engine}] triage printed no predict command for {flag} (chosen or rejected)")
    print(
        f"[{engine}] triage "
        + (f"chose {flag} {chosen['proposed']}" if chosen else f"proposed no {flag} value")
        + "".join(f"; rejected {r['proposed']}" for r in rejected),
        file=sys.stderr,
    )
    return Choice(template, chosen, rejected, (chosen or rejected[0])["current"])


def measured_before(case: Case, folder: Path) -> dict:
    """The run triage read, whose config (workload, levels, step) every value is measured under."""
    if case.source == "window":
        return json.loads((folder / "window.json").read_text())
    return json.loads(Path(f"{case.stem}_ramp.json").read_text())


def values_to_measure(case: Case, choice: Choice, rivals: list[int] | None) -> tuple[list[str], dict[str, str]]:
    """Each value once, the model's choice first, with its role. The ramp cases' recorded servers came from
    predict_accuracy's own measure() with the same flags besides the cap, so their current value is not run
    again; the window cases measure it too."""
    chosen = [choice.chosen["proposed"]] if choice.chosen else []
    current = [] if case.source == "ramp" else [choice.current]
    values = [*chosen, *current, *map(str, rivals or []), *(r["proposed"] for r in choice.rejected)]
    roles = {r["proposed"]: "rejected by the model" for r in choice.rejected}
    roles.update({choice.current: "current", **({chosen[0]: "chosen"} if chosen else {})})
    return list(dict.fromkeys(values)), roles


def server_flags(case: Case) -> list[str]:
    """The flags every measured value's server starts with besides the case's own: predict_accuracy's for the ramp
    cases (their recorded servers came from its measure()), the recorded server's own for the window cases."""
    if case.source == "ramp":
        return base_flags(case.engine)
    return without_flag(recorded_flags(case.situation), case.flag)


def measure_value(
    case: Case,
    choice: Choice,
    value: str,
    flags: list[str],
    before: dict,
    folder: Path,
    recorded: bool,
    ttft_slo_s: float | None,
) -> dict:
    """Predicts the value with triage's own command, then starts the engine with `flags` and the value and ramps
    the recorded load (or recalls that ramp with --recorded), and sets the two side by side."""
    engine, flag = case.engine, case.flag
    predict_command = with_change(choice.template, f"{flag} {value}")
    prediction_path = folder / f"prediction-{flag.lstrip('-')}-{value}.json"
    if servops([*shlex.split(predict_command)[1:], "--json", str(prediction_path)]) != 0:
        raise SystemExit(f"[{engine}] the predict command failed: {predict_command}")
    prediction = json.loads(prediction_path.read_text())
    config = before["config"]
    server = (recall if recorded else measure)(
        engine,
        [*flags, flag, value],
        WorkloadSpec.model_validate(config["workload"]),
        config["levels"],
        config["step_s"],  # the replay's own: requests that outlive a step count the same on both sides
        folder / f"{flag.lstrip('-')}-{value}",
        request_timeout_s=max(MIN_REQUEST_TIMEOUT_S, config.get("request_timeout_s") or 0.0),
    )
    measured = server["ramp"]
    return {
        "value": value,
        "predict_command": predict_command,
        "server_command": server["command"].render(),
        "safe_operating_point": {
            "predicted": (prediction.get("safe_operating_point") or {}).get("offered"),
            "at_quantile_edges": {
                f"{edge['shift_points']:+g}": (edge.get("safe_operating_point") or {}).get("offered")
                for edge in prediction.get("edges") or []
            },
            "measured": measured_safe_point(measured, ttft_slo_s),
        },
        "steps": compare(prediction, measured["steps"]),
    }


def check(
    case: Case,
    ttft_slo_s: float | None,
    folder: Path,
    recorded: bool = False,
    rivals: list[int] | None = None,
) -> dict:
    """Triage's choice for one recorded server, its prediction, and the ramp that measures it; the
    same for each rival value."""
    folder.mkdir(parents=True, exist_ok=True)
    choice = triage_choice(case, ttft_slo_s, folder)
    before = measured_before(case, folder)
    values, roles = values_to_measure(case, choice, rivals)
    flags = server_flags(case)
    measured_runs = []
    for value in values:
        run = measure_value(case, choice, value, flags, before, folder, recorded, ttft_slo_s)
        measured_runs.append({"value": value, "role": roles.get(value, "rival"), **run})
    chosen = choice.chosen
    return {
        "source": case.source,
        "criterion": f"TTFT p99 <= {ttft_slo_s:g} s" if ttft_slo_s else "highest step below the knee (no SLO)",
        "chosen": {"flag": case.flag, "current": choice.current, "proposed": chosen["proposed"] if chosen else None},
        "reason": chosen["reason"] if chosen else None,
        "rejected": choice.rejected,
        "recorded_before": measured_safe_point(before, ttft_slo_s) if case.source != "window" else None,
        "runs": measured_runs,
        "band_coverage": band_coverage(measured_runs),
    }


def verdicts(triage: dict, flag: str) -> tuple[dict | None, list[dict]]:
    """Triage's proposal for `flag` (if any: a finding's change, else one of its alternatives, as a
    preempting CPU server's KV space in bytes is) and the values it lists as rejected, each as
    {current, proposed, reason, command}."""
    chosen = next(
        (
            {
                "current": c["current"],
                "proposed": c["proposed"],
                "reason": c["reason"],
                "command": (c.get("predicted_effect") or {}).get("command"),
            }
            for f in triage["findings"]
            for c in [*f["changes"], *(f.get("alternatives") or [])]
            if c["flag"] == flag
        ),
        None,
    )
    rejected = [
        {
            "current": r["change"]["current"],
            "proposed": r["change"]["proposed"],
            "reason": r["reason"],
            "command": r.get("command"),
        }
        for r in triage.get("rejected_changes") or []
        if r["change"]["flag"] == flag
    ]
    return chosen, rejected


def band_coverage(runs: list[dict]) -> dict[str, dict[str, int]]:
    """Per figure: how many measured steps fell inside the predicted band (cost error either way and the
    percentiles read half a rank either side), of how many had both."""
    coverage: dict[str, dict[str, int]] = {}
    for run in runs:
        for row in run["steps"]:
            for name in FIGURES:
                if name in row and row[name].get("in_band") is not None:
                    count = coverage.setdefault(name, {"inside": 0, "steps": 0})
                    count["inside"] += row[name]["in_band"]
                    count["steps"] += 1
    return coverage


def recorded_flags(situation: str) -> list[str]:
    """The recorded server's own flags (recording.json), less its environment, the program, the
    model and the served name, which the engine's start command adds again."""
    command = parse_command(json.loads(RECORDING.read_text())["situations"][situation]["command"])
    words: list[str] = []
    for flag, value in command.flags.items():
        if flag != "--served-model-name":
            words += [flag, *([value] if value is not None else [])]
    return words


def without_flag(flags: list[str], flag: str) -> list[str]:
    """`flags` with `flag` and its value (if it takes one) left out."""
    out, skip = [], False
    for at, word in enumerate(flags):
        if skip:
            skip = False
            continue
        if word == flag:
            skip = at + 1 < len(flags) and not flags[at + 1].startswith("--")
            continue
        if word.startswith(f"{flag}="):
            continue
        out.append(word)
    return out


def compare(prediction: dict, measured: list[dict]) -> list[dict]:
    """Per offered load: every figure predicted and measured, their ratio, and whether the measured one
    lies in the predicted band."""
    rows = []
    by_load = {step["offered"]: step for step in measured}
    bands = prediction.get("bands") or []
    for k, guess in enumerate(prediction["steps"]):
        real = by_load.get(guess["offered"])
        if real is None or not real.get("ok_requests"):
            continue
        row: dict = {"offered": guess["offered"]}
        for name, (key, part) in FIGURES.items():
            p, m = _value(guess, key, part), _value(real, key, part)
            if p is not None and m:
                band = (bands[k] if k < len(bands) else {}).get(name.removesuffix("_s") if part else name) or {}
                inside = band["low"] <= m <= band["high"] if band.get("low") is not None else None
                row[name] = {"predicted": p, "measured": m, "ratio": p / m, "band": band, "in_band": inside}
        rows.append(row)
    return rows


def _value(step: dict, key: str, part: str | None) -> float | None:
    value = step.get(key)
    return value.get(part) if part and isinstance(value, dict) else value


def measured_safe_point(ramp: dict, ttft_slo_s: float | None) -> float | None:
    """Under a TTFT target: the highest valid step with every measured request successful and TTFT
    p99 within it (the same test for a recorded ramp, ramped without an SLO, and a measured one).
    Without one: the ramp's own safe point, the highest step below its knee, as predict finds it."""
    if ttft_slo_s is None:
        return (ramp.get("safe_operating_point") or {}).get("offered")
    meeting = [
        s["offered"]
        for s in ramp["steps"]
        if s["valid"] and s["ok_requests"] and s["ok_requests"] == s["requests"] and s["ttft_s"]["p99"] <= ttft_slo_s
    ]
    return max(meeting, default=None)


def render(summary: dict) -> str:
    lines = ["ratio = predicted / measured; * = the measured figure lies outside the predicted band"]
    for name, result in summary["engines"].items():
        if "skipped" in result:
            lines.append(f"{name}: skipped: {result['skipped']}")
            continue
        chosen = result["chosen"]
        flag = chosen["flag"]
        verdict = (
            f"{flag} {chosen['current']} -> {chosen['proposed']} (the model's choice"
            if chosen["proposed"]
            else f"{flag} {chosen['current']} kept (no value predicted to help"
        )
        lines.append(
            f"{name}: {verdict}, from the {result['source']}); safe operating point by {result['criterion']}"
            + (f"; recorded before: {result['recorded_before']}" if result["recorded_before"] is not None else "")
        )
        lines += [f"rejected {flag} {r['proposed']}: {r['reason']}" for r in result.get("rejected") or []]
        for run in result["runs"]:
            safe = run["safe_operating_point"]
            edges = ", ".join(f"{v} at {k}" for k, v in (safe.get("at_quantile_edges") or {}).items())
            lines.append(
                f"{flag} {run['value']} ({run['role']}): safe operating point predicted "
                f"{safe['predicted']}" + (f" ({edges} ranks)" if edges else "") + f", measured {safe['measured']} "
                "(streams)"
            )
            lines.append("| streams | " + " | ".join(FIGURES) + " |")
            lines.append("|---|" + "---|" * len(FIGURES))
            for row in run["steps"]:
                cells = [
                    f"{row[n]['predicted']:.3g} / {row[n]['measured']:.3g} ({row[n]['ratio']:.2f}x)"
                    + ("*" if row[n].get("in_band") is False else "")
                    if n in row
                    else "–"
                    for n in FIGURES
                ]
                lines.append(f"| {row['offered']:g} | " + " | ".join(cells) + " |")
        coverage = result.get("band_coverage") or {}
        lines.append(
            "inside the predicted band: " + ", ".join(f"{n} {c['inside']}/{c['steps']}" for n, c in coverage.items())
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
