"""The tensor-parallel transform against a published vLLM measurement (not a test)

    .venv/bin/python -m benchmarks.tp_transform_check [--json bench-out/tp-transform.json]

No task here has had two GPUs, so the layout choice (advisor/perf/parallel.py) is checked against
figures someone else measured and published: vLLM issue #16300 timed QwQ-32B (the Qwen2.5-32B
shape) on 8 x A100-80GB with vLLM's own benchmark_latency at TP 2, 4 and 8, for batches of 1 and
16 (tests/fixtures/published/vllm_issue_16300_tp_latency.json, with the source). The step cost is
fitted to the TP-2 figures alone (the batch-1 step, and its rise to batch 16 as the per-sequence
cost) and moved to TP 4 and TP 8 by `cost_at_layout`; the predicted decode step is compared with the
measured one. Baseline, in the same run: the naive answer, every term scaled by TP/TP' (a step
that is all physics), which is what "twice the GPUs, half the step" assumes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pydantic import BaseModel

from advisor.catalog.gpus import resolve_gpu
from advisor.catalog.models import resolve_model
from advisor.memory.budget import LaunchConfig
from advisor.memory.kv_change import Deployment
from advisor.perf.cost import StepCost, StepShape
from advisor.perf.parallel import cost_at_layout, parallel_terms

FIGURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "published" / "vllm_issue_16300_tp_latency.json"


class TransformRow(BaseModel):
    batch: int
    tensor_parallel: int
    measured_step_s: float
    predicted_step_s: float
    naive_step_s: float
    relative_error: float  # the transform's stated uncertainty

    @property
    def ratio(self) -> float:
        return self.predicted_step_s / self.measured_step_s

    @property
    def naive_ratio(self) -> float:
        return self.naive_step_s / self.measured_step_s


def published() -> dict:
    return json.loads(FIGURES.read_text())


def fitted_at(figures: dict, tp: str) -> StepCost:
    """The step cost at `tp` from its two measured batches: base + decode_seq x batch (no context term:
    the contexts stay under 201 tokens)."""
    tokens = figures["output_tokens"]
    one = figures["latency_s"]["1"][tp] / tokens
    sixteen = figures["latency_s"]["16"][tp] / tokens
    per_seq = (sixteen - one) / 15
    return StepCost(
        base_s=one - per_seq,
        prefill_token_s=0.0,
        decode_seq_s=per_seq,
        context_token_s=0.0,
        relative_error=0.0,
        source=f"fitted to the published TP-{tp} batch-1 and batch-16 steps",
    )


def check(figures: dict | None = None, start: int = 2) -> list[TransformRow]:
    """Every published (batch, TP) step but the fitted TP, predicted from the fitted TP."""
    figures = figures or published()
    deployment = Deployment(
        model=resolve_model(figures["model"]),
        gpu=resolve_gpu(figures["gpu"]),
        launch=LaunchConfig(tensor_parallel_size=start),
    )
    cost = fitted_at(figures, str(start))
    before = parallel_terms(deployment, start)
    rows = []
    for batch, by_tp in figures["latency_s"].items():
        for tp_text, latency in by_tp.items():
            tp = int(tp_text)
            if tp == start:
                continue
            moved, _ = cost_at_layout(cost, before, parallel_terms(deployment, tp))
            shape = StepShape(decode_seqs=int(batch))
            rows.append(
                TransformRow(
                    batch=int(batch),
                    tensor_parallel=tp,
                    measured_step_s=latency / figures["output_tokens"],
                    predicted_step_s=moved.step_time(shape),
                    naive_step_s=cost.scaled(start / tp).step_time(shape),
                    relative_error=moved.relative_error,
                )
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None, metavar="OUT.json", help="write the rows here")
    args = parser.parse_args(argv)
    figures = published()
    rows = check(figures)
    print(f"source: {figures['source']}\nsetup: {figures['setup']}\nfitted at TP 2; baseline: every term x 2/TP")
    print(f"{'batch':>5} {'TP':>3} {'measured ms':>12} {'predicted ms':>13} {'ratio':>6} {'naive ms':>9} {'ratio':>6}")
    for row in rows:
        print(
            f"{row.batch:>5} {row.tensor_parallel:>3} {row.measured_step_s * 1e3:>12.2f} "
            f"{row.predicted_step_s * 1e3:>13.2f} {row.ratio:>6.2f} {row.naive_step_s * 1e3:>9.2f} "
            f"{row.naive_ratio:>6.2f}  (±{row.relative_error:.0%})"
        )
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps([r.model_dump() | {"ratio": r.ratio} for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
