"""The roofline prior against a measured GPU ramp: how far off is a prediction with nothing measured (not a test).

    .venv/bin/python -m benchmarks.prior_accuracy --ramp bench-out/gpu/large/ramp.json \\
        --model bench-out/gpu/large/config.json --gpu H100-SXM-80GB \\
        --server-args "python -m engine serve M --max-model-len 2048"

Offline triage predicts latency from the roofline prior (advisor/perf/prior.py) when no ramp exists,
and says ±50 %. This replays the measured ramp's own workload twice: once with the prior's cost
(model bytes and FLOPs over the GPU catalog's bandwidth and peak), once with the cost fitted to that
same ramp (the calibration `servops predict` would use, in-sample, so the best the replay can do).
Baseline: the measured ramp. Reports per step the measured TTFT p50, ITL p50 and output tok/s, each
prediction's ratio to it, and both costs' coefficients side by side, so the term the prior gets
wrong is named. Writes the figures as JSON with --json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from advisor.catalog.gpus import resolve_gpu
from advisor.catalog.models import resolve_model
from advisor.collect.server_args import parse_command
from advisor.errors import UserError
from advisor.perf.forecast import figure
from advisor.perf.limits import engine_kind
from advisor.perf.measured import measured_ramp
from advisor.perf.prior import roofline_cost
from advisor.perf.whatif import Forecaster, ServerContext

FIGURES = ("ttft_p50", "itl_p50", "output_tokens_per_s")


def compare(document: dict, source: str, server_args: str, model: str, gpu: str) -> dict:
    """Measured vs prior vs in-sample fit, per step, and the two costs."""
    spec, card = resolve_model(model), resolve_gpu(gpu)
    engine = engine_kind(parse_command(server_args))
    prior = roofline_cost(spec, card, engine=engine)
    if prior is None:
        raise UserError(f"--gpu {gpu}: the catalog has no bandwidth or bf16 FLOPs for {card.name}; pick another GPU")
    ramp, server = measured_ramp(document, source), ServerContext(command=parse_command(server_args))
    with_prior = Forecaster(ramp, source, server).fit(cost=prior)
    fitted = Forecaster(ramp, source, server).fit()
    steps = []
    for measured, from_prior, from_fit in zip(
        with_prior.ramp.steps, with_prior.baseline.steps, fitted.baseline.steps, strict=True
    ):
        if not measured.valid:
            continue
        row: dict = {"offered": measured.offered}
        for name in FIGURES:
            value = figure(measured, name)
            row[name] = {
                "measured": value,
                "prior": figure(from_prior, name),
                "fitted": figure(from_fit, name),
            }
        steps.append(row)
    return {
        "ramp": source,
        "model": spec.name,
        "gpu": card.name,
        "engine": engine,
        "prior": prior.model_dump(),
        "fitted": fitted.cost.model_dump(),
        "steps": steps,
        "summary": summary(steps),
    }


def summary(steps: list[dict]) -> dict:
    """Median and worst |predicted / measured − 1| of each figure, for the prior and the fit."""
    out: dict = {}
    for source in ("prior", "fitted"):
        for name in FIGURES:
            errors = [
                abs(row[name][source] / row[name]["measured"] - 1)
                for row in steps
                if row[name]["measured"] and row[name][source] is not None
            ]
            if errors:
                out[f"{source}.{name}"] = {"median": statistics.median(errors), "worst": max(errors), "n": len(errors)}
    return out


def render(result: dict) -> str:
    prior, fitted = result["prior"], result["fitted"]
    lines = [
        f"{result['model']} on {result['gpu']}: roofline prior vs the cost fitted to {result['ramp']}",
        f"{'term':<18}{'prior':>12}{'fitted':>12}",
    ]
    for term in ("base_s", "prefill_token_s", "decode_seq_s", "context_token_s", "overhead_s"):
        lines.append(f"{term:<18}{prior[term]:>12.3g}{fitted[term]:>12.3g}")
    if fitted.get("decode_knots"):
        curve = ", ".join(
            f"{k:g}: {v * 1000:.1f} ms" for k, v in zip(fitted["decode_knots"], fitted["decode_curve_s"], strict=False)
        )
        lines.append(f"fitted step time by decode batch: {curve}")
    lines.append("")
    lines.append(f"{'offered':>8}  {'figure':<20}{'measured':>10}{'prior':>10}{'x':>7}{'fitted':>10}{'x':>7}")
    for row in result["steps"]:
        for name in FIGURES:
            cell = row[name]
            measured = cell["measured"]
            ratios = [
                f"{cell[s] / measured:>7.2f}" if measured and cell[s] else f"{'-':>7}" for s in ("prior", "fitted")
            ]
            lines.append(
                f"{row['offered']:>8g}  {name:<20}{measured or 0:>10.4g}{cell['prior'] or 0:>10.4g}{ratios[0]}"
                f"{cell['fitted'] or 0:>10.4g}{ratios[1]}"
            )
    lines.append("")
    for key, value in result["summary"].items():
        lines.append(f"{key:<30} median |error| {value['median']:.0%}, worst {value['worst']:.0%} (n={value['n']})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ramp", required=True, help="a ramp result (servops ramp --json) measured on the GPU")
    parser.add_argument("--model", required=True, help="catalog name, config.json or model dir of the served model")
    parser.add_argument("--gpu", required=True, help="GPU catalog name, e.g. H100-SXM-80GB")
    parser.add_argument("--server-args", default="", help="the command or flags the ramped server ran with")
    parser.add_argument("--json", default=None, help="write the figures here")
    args = parser.parse_args(argv)
    try:
        document = json.loads(Path(args.ramp).read_text())
        result = compare(document, args.ramp, args.server_args, args.model, args.gpu)
    except (OSError, json.JSONDecodeError) as exc:
        print(f"prior_accuracy: --ramp {args.ramp}: {exc}", file=sys.stderr)
        return 2
    except UserError as exc:
        print(f"prior_accuracy: {exc}", file=sys.stderr)
        return 2
    print(render(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
