"""Fitting the step cost to a measured ramp (and the server's /metrics during it).

Method: replay every measured step with a cost guess; for each step take the replayed
request at the measured median (TTFT p50, the pooled ITL p50, TPOT p50) and, when the server
exposed them, the mean engine-side prefill and decode times of the step's requests
(vllm:request_prefill_time_seconds, vllm:request_decode_time_seconds). Each of those is
linear in the cost's coefficients (`features`), so one non-negative least-squares solve on
relative errors gives the next guess; the schedule is replayed again with it, until the
coefficients stop moving. The server-side rows are what tells engine time from the time a
request spends outside the engine (HTTP, tokenisation), which the client's TTFT alone cannot.

Two stages: first the line (base + per decode sequence); then, when the measured steps ran at
several decode batch sizes, the fixed part plus the decode part becomes a curve pinned at each
of those batch sizes (linear between them and past the last). Real engines are not linear in
the batch: on this repository's CPU machines the bundled engine's step at a batch of two takes
nearly twice its batch-of-one step and then flattens, which no line fits.

The whole fit (line, then curve) runs twice, with and without a fixed cost per prompt chunk
(`StepCost.prefill_seq_s`); the chunk term is kept only when it lowers the in-sample error by
CHUNK_TERM_GAIN (see there: a ramp whose prompts all have about the same length cannot pin it).

A ramp run with `--prefill-probe` carries lone requests of a few prompt lengths timed on the idle
server; each becomes one more TTFT row (`probe_rows`), which pins the per-token prefill cost that a
ramp of like-sized prompts leaves free.

The stated uncertainty is the fit's own: the RMS relative error of TTFT p50, ITL p50 and
output tok/s over the measured steps, replayed with the final cost (at least 5 %).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from pydantic import BaseModel, Field

from advisor.errors import UserError
from advisor.perf import features as F
from advisor.perf.cost import StepCost, StepShape
from advisor.perf.limits import SchedulerLimits
from advisor.perf.measured import MeasuredRamp
from advisor.perf.memo import kept
from advisor.perf.readings import predicted_step
from advisor.perf.replay import StepReplay, replay_step
from advisor.perf.workload import ReplayWorkload
from loadtest.results import StepResult

MAX_ITERATIONS = 8
CONVERGED = 0.01
MIN_RELATIVE_ERROR = 0.05
RIDGE = 1e-3
# The overhead column's ridge weight, relative to the engine's: the per-request overhead outside
# the engine is small on any healthy server (HTTP, template, tokenisation: milliseconds), so a
# TTFT that one step cannot split between prefill and overhead is put on the engine, which is
# what scales with load.
OVERHEAD_RIDGE = 100.0
# A fit with one measured step (a live /metrics window) holds the overhead at 0. One step cannot
# split its TTFT between the engine and the outside, and what the replay of that step misses is
# not a per-request constant: it is the queueing and recomputation of a loaded moment. Left free,
# the float32 preempting window (tests/fixtures/vllm_cpu/preempting_float32: TTFT p50 21.7 s
# behind preemptions, while vLLM's queue-time histogram read 0 for every finished request) put
# 12.6 s outside the engine, and every prediction carried it: a lone request was predicted 14 s to
# its first token and measured 0.76 s when ramped (BENCHMARKS.md, "The KV space of a preempting
# vLLM"). Held at 0, the same window predicts 1.25 s there and the miss stays where it belongs, in
# the fit's stated error. vLLM's own figure for the time a request spends outside its engine core
# (mean e2e latency - queue time - inference time, the same finished requests) reads 0.03-0.61 s on
# the six recorded windows, against 0.3-12.6 s the free fits took; and on this 2-core box it grows
# with load (the API server shares a core with the clients), so even that, held, over-predicts a
# lone request (the float32 window's 0.61 s would put it at 1.9 s against 0.76 s measured).
# The per-prompt-chunk term (StepCost.prefill_seq_s) is fitted jointly with the others, then kept
# only when it lowers the in-sample RMS error (TTFT, ITL, tok/s) by this much against the same fit
# without it. A ramp whose computed prompts all have about the same length cannot tell a chunk's
# fixed part from its per-token part (the two columns are nearly proportional): a free column
# then fits a little better in-sample and splits the prefill cost at random, which misjudges
# longer prompts and prompts chunked differently. Prompts of different lengths in one ramp (a
# shared prefix's first request computes the whole prompt, the others only their suffix) and the
# server's prefill-time rows are what pin it. On the recorded ramps of BENCHMARKS.md the gate keeps
# it for the bundled engine's shared-prefix calibration and drops it for every vLLM calibration.
CHUNK_TERM_GAIN = 0.02
# A ramp whose every step decoded one sequence at a time (a server at --max-num-seqs 1) cannot tell
# the fixed part of a step from its per-sequence part: any split of the batch-of-one step fits it
# equally, and the ridge then split it about 60/40, which predicted a 16-sequence step at 4.2x
# (vLLM) and 1.9x (bundled) its measured time (benchmarks/model_choice_check.py). Measured on real
# engines, one more sequence adds a small share of the batch-of-one step: vLLM 0.32 CPU
# (SmolLM2-135M, bf16, 2 cores) 31 -> 51 ms from 1 to 16 sequences, 4.3 % per sequence; the bundled
# engine on the same CPU (float32) 54 -> 123 ms, 8.5 %; the bundled engine on an H100 (8B shape)
# 23 -> 27 ms, about 1 % (BENCHMARKS.md). A decode step reads every weight once whatever the batch,
# and each sequence adds only its own FLOPs and KV reads. So such a fit holds the per-sequence
# cost at this share of the batch-of-one step and solves the rest; the prediction then carries
# the extrapolation's uncertainty (whatif.EXTRAPOLATION_ERROR), which covers 1-10 %. The same holds
# for any fit whose steps all ran one batch size (a live window is one step): base + B x per-sequence
# is pinned there, its split is not (held_decode_seq_s).
UNBATCHED_DECODE_SHARE = 0.05
MIN_CURVE_KNOTS = 4  # 0, 1 and at least two more batch sizes, or the line stays
MAX_CURVE_KNOTS = 8


class FitRow(BaseModel):
    offered: float
    figure: str
    measured: float
    fitted: float

    @property
    def error(self) -> float:
        return self.fitted / self.measured - 1.0


class Calibration(BaseModel):
    """The fitted cost and how well it reproduces the ramp it was fitted on."""

    cost: StepCost
    iterations: int
    rows: list[FitRow] = Field(default_factory=list, description="in-sample: measured vs replayed, per step")
    used_server_metrics: bool = False
    max_batch_seen: int = Field(default=1, description="the largest decode batch the measured steps mostly ran")


@kept
def calibrate(
    ramp: MeasuredRamp,
    limits: SchedulerLimits,
    workload: ReplayWorkload,
    start: StepCost | None = None,
    source: str = "ramp",
) -> Calibration:
    usable = [s for s in ramp.usable_steps if s.ttft_s.p50 and s.itl_s.p50]
    if not usable:
        raise UserError(
            f"{source}: no valid step with successful streamed requests to calibrate from; "
            f"re-run the ramp against a server that answers"
        )
    start = start or _first_guess(usable)
    fit = _fit(ramp, usable, limits, workload, start.model_copy(update={"prefill_seq_s": 0.0}), chunk_term=False)
    chunked = _fit(ramp, usable, limits, workload, start, chunk_term=True)
    if chunked.rms < fit.rms - CHUNK_TERM_GAIN:
        fit = chunked
    cost = fit.cost.model_copy(
        update={
            "relative_error": round(max(MIN_RELATIVE_ERROR, fit.rms), 3),
            "source": f"fitted to {len(usable)} measured step(s) of {source}"
            + (" and the server's /metrics" if fit.server_rows else "")
            + (
                f" and a prefill probe of {len(ramp.prefill_probe.medians())} prompt length(s)"
                if ramp.prefill_probe
                else ""
            ),
        }
    )
    return Calibration(
        cost=cost,
        iterations=fit.iterations,
        rows=fit.rows,
        used_server_metrics=fit.server_rows,
        max_batch_seen=fit.max_batch,
    )


class _Fit(BaseModel):
    cost: StepCost
    iterations: int
    server_rows: bool
    max_batch: int
    rows: list[FitRow]
    rms: float


def _fit(
    ramp: MeasuredRamp,
    usable: list[StepResult],
    limits: SchedulerLimits,
    workload: ReplayWorkload,
    start: StepCost,
    chunk_term: bool,
) -> _Fit:
    """The line, then the curve when the ramp ran several batch sizes; with the per-chunk term
    free (`chunk_term`) or held at the start's value (0), and the in-sample RMS error. One measured
    step: the overhead outside the engine held at 0 (see OVERHEAD_RIDGE)."""
    one_step = {"overhead": 0.0} if len(usable) == 1 else {}
    cost, iterations, server_rows, batches = _fixed_point(ramp, usable, limits, workload, start, chunk_term, one_step)
    if len(set(batches)) <= 1:  # one batch size (1 at --max-num-seqs 1, or a live window): no split in the data
        held = {"decode_seq_s": held_decode_seq_s(cost, max([1, *batches])), "context_token_s": 0.0, **one_step}
        cost, more, used, batches = _fixed_point(ramp, usable, limits, workload, cost, chunk_term, held)
        iterations, server_rows = iterations + more, server_rows or used
    knots = curve_knots(batches)
    if len(knots) >= MIN_CURVE_KNOTS:  # several batch sizes seen: pin the step time at each of them
        curved, more, used, _ = _fixed_point(
            ramp, usable, limits, workload, cost.with_curve(knots), chunk_term, one_step
        )
        cost, iterations, server_rows = curved, iterations + more, server_rows or used
    rows = in_sample_rows(ramp, usable, limits, cost, workload)
    errors = [row.error for row in rows if row.measured > 0]
    rms = math.sqrt(sum(e * e for e in errors) / len(errors)) if errors else 0.5
    return _Fit(
        cost=cost, iterations=iterations, server_rows=server_rows, max_batch=max([1, *batches]), rows=rows, rms=rms
    )


def _fixed_point(
    ramp: MeasuredRamp,
    usable: list[StepResult],
    limits: SchedulerLimits,
    workload: ReplayWorkload,
    cost: StepCost,
    chunk_term: bool,
    held: dict[str, float] | None = None,
) -> tuple[StepCost, int, bool, list[int]]:
    """Replay with `cost`, solve for its coefficients, repeat until they stop moving.

    `held`: columns kept at a given value rather than fitted (their share of each row is taken
    off its target). Returns the cost, the iterations, whether server metrics gave rows, and the
    decode batch sizes the measured windows held (time-weighted, for the curve's knots)."""
    held = held or {}
    columns = [*cost.columns(), "overhead"]
    held_index = {columns.index(name): value for name, value in held.items()}
    server_rows, iterations, batches = False, 0, []
    for _ in range(MAX_ITERATIONS):
        iterations += 1
        rows, targets, used, batches = _replayed_rows(ramp, usable, limits, workload, cost)
        server_rows = server_rows or used
        if not rows:
            break
        for features, measured in probe_rows(ramp, limits, cost):
            rows.append(features / measured)
            targets.append(1.0)
        updated = _solve(cost, rows, targets, chunk_term, held_index)
        moved = _largest_move(updated, cost)
        cost = updated
        if moved < CONVERGED:
            break
    return cost, iterations, server_rows, [b for b in batches if b]


def _replayed_rows(
    ramp: MeasuredRamp, usable: list[StepResult], limits: SchedulerLimits, workload: ReplayWorkload, cost: StepCost
) -> tuple[list[np.ndarray], list[float], bool, list[int]]:
    """Every usable step replayed with `cost`: its fit rows and targets, whether server metrics gave any, and
    the decode batch each step's measured window held."""
    rows: list[np.ndarray] = []
    targets: list[float] = []
    server_rows, batches = False, []
    for step in usable:
        replay = replay_step(ramp.plan, step.step, limits, cost, workload)
        step_rows, step_targets, used = _rows(ramp, step, replay, cost)
        rows += step_rows
        targets += step_targets
        server_rows = server_rows or used
        batches.append(_typical_batch(ramp, step, replay))
    return rows, targets, server_rows, batches


def _solve(
    cost: StepCost, rows: list[np.ndarray], targets: list[float], chunk_term: bool, held_index: dict[int, float]
) -> StepCost:
    """One least-squares solve of the cost's coefficients (non-negative, ridge-weighted), the held columns
    kept at their values: their share of each row is taken off its target and their weight made infinite."""
    a, y, weights = np.array(rows), np.array(targets), _ridge(cost, chunk_term)
    for index, value in held_index.items():
        y = y - a[:, index] * value
        weights[index] = math.inf
    solved = _nonnegative_fit(a, y, weights)
    for index, value in held_index.items():
        solved[index] = value
    return cost.with_coefficients(list(solved))


def _largest_move(updated: StepCost, cost: StepCost) -> float:
    """The largest relative change of a coefficient between two iterations, ignoring ones near zero in
    both: the fixed point is reached when it falls under CONVERGED."""
    return max(
        (
            abs(a - b) / max(abs(b), 1e-12)
            for a, b in zip(updated.vector(), cost.vector(), strict=False)
            if max(abs(a), abs(b)) > 1e-9
        ),
        default=0.0,
    )


def probe_rows(ramp: MeasuredRamp, limits: SchedulerLimits, cost: StepCost) -> list[tuple[np.ndarray, float]]:
    """The prefill probe's lone requests as fit rows: (features, measured TTFT) per probed length.

    A lone uncached prompt of L tokens is computed in chunks of the token budget, each step one
    prompt chunk and no decode (L within the budget: one step), and its TTFT is those steps; with
    prompts of several lengths these rows are what pins the per-token prefill cost
    (loadtest.prefill_probe).

    Without the per-request overhead: a probe is a `/v1/completions` request for one token with no
    chat template, the least work outside the engine a request can have, while `overhead_s` is what
    the ramp's chat requests cost there (template, streaming every token). Tied to the probe's, it
    could not grow to the chat path's: the bundled engine's random-prompt fit on the AVX2 box then
    missed its own one-stream TTFT by 18 % (0.20 against 0.24 s) and every target inherited it
    (BENCHMARKS.md, "Both engines on the 2-core AVX2 box"). The probe's own few milliseconds count
    as the step's fixed part."""
    if ramp.prefill_probe is None:
        return []
    budget = limits.max_num_batched_tokens if limits.enable_chunked_prefill else math.inf
    rows = []
    for tokens, ttft_s in ramp.prefill_probe.medians():
        features, done = np.zeros(len(cost.columns())), 0
        while done < tokens:
            chunk = int(min(tokens - done, budget))
            shape = StepShape(prefill_tokens=chunk, prefill_seqs=1, decode_seqs=0, context_tokens=done + chunk)
            features += np.array(cost.feature_row(shape), dtype=float)
            done += chunk
        if ttft_s > 0:
            rows.append((np.append(features, 0.0), ttft_s))
    return rows


def held_decode_seq_s(cost: StepCost, batch: int) -> float:
    """The per-sequence cost at UNBATCHED_DECODE_SHARE of the batch-of-one step, given a fit pinned at
    one batch size only: that fit's step at `batch` (base + batch x per-sequence) is the measured
    figure, its split is not, so step(1) = step(batch) / (1 + share x (batch - 1))."""
    step = cost.base_s + batch * cost.decode_seq_s
    return UNBATCHED_DECODE_SHARE * step / (1 + UNBATCHED_DECODE_SHARE * (batch - 1))


def curve_knots(batches: list[int]) -> list[float]:
    """Knots for the decode curve: 0 (prefill-only steps), 1, and the distinct batch sizes the
    measured steps mostly ran, so every knot has data near it; at most MAX_CURVE_KNOTS, picked
    evenly over the sorted sizes when the ramp had more steps (the solve tries every support)."""
    sizes = sorted({float(b) for b in batches if b > 1})
    if len(sizes) > MAX_CURVE_KNOTS - 2:
        picks = {round(i * (len(sizes) - 1) / (MAX_CURVE_KNOTS - 3)) for i in range(MAX_CURVE_KNOTS - 2)}
        sizes = [sizes[i] for i in sorted(picks)]
    return [0.0, 1.0, *sizes]


def _typical_batch(ramp: MeasuredRamp, step: StepResult, replay) -> int:
    """The decode batch size the step's window ran at most of the time (0 when idle)."""
    time_at: dict[int, float] = {}
    for s in replay.steps_in_window(ramp.plan, step.step):
        if s.shape.decode_seqs:
            time_at[s.shape.decode_seqs] = time_at.get(s.shape.decode_seqs, 0.0) + (s.end - s.start)
    return max(time_at, key=time_at.get) if time_at else 0


def in_sample_rows(
    ramp: MeasuredRamp, usable: list[StepResult], limits: SchedulerLimits, cost: StepCost, workload: ReplayWorkload
) -> list[FitRow]:
    """Measured vs replayed TTFT p50, ITL p50 and output tok/s for each measured step."""
    rows = []
    for step in usable:
        predicted = predicted_step(ramp, step.step, limits, cost, workload)
        for figure, measured, fitted in (
            ("ttft_p50", step.ttft_s.p50, predicted.ttft_s.p50),
            ("itl_p50", step.itl_s.p50, predicted.itl_s.p50),
            ("output_tokens_per_s", step.output_tokens_per_s, predicted.output_tokens_per_s),
        ):
            if measured and fitted is not None:
                rows.append(FitRow(offered=step.offered, figure=figure, measured=measured, fitted=fitted))
    return rows


def _rows(ramp: MeasuredRamp, step: StepResult, replay: StepReplay, cost: StepCost) -> tuple[list, list, bool]:
    start, end = ramp.plan.window(step.step)
    done = [
        r
        for r in replay.requests
        if start <= r.send + ramp.plan.step_start(step.step) < end
        and not r.rejected
        and len(r.token_times) == r.output_tokens
        and r.token_times
    ]
    if not done:
        return [], [], False
    index = F.StepIndex(replay.steps, cost)
    rows, targets = [], []

    def add(features, measured: float | None) -> None:
        if measured and measured > 0:
            rows.append(features / measured)
            targets.append(1.0)

    by_ttft = sorted(done, key=lambda r: r.token_times[0] - r.send)
    add(F.ttft(index, by_ttft[len(by_ttft) // 2]), step.ttft_s.p50)
    gaps = sorted(
        ((b - a, r.index, j) for r in done for j, (a, b) in enumerate(itertools.pairwise(r.token_times))),
        key=lambda g: g[0],
    )
    by_index = {r.index: r for r in done}
    if gaps:
        _, i, j = gaps[len(gaps) // 2]
        add(F.gap(index, by_index[i], j), step.itl_s.p50)
    multi = [r for r in done if len(r.token_times) > 1]
    if multi:
        by_tpot = sorted(multi, key=lambda r: (r.token_times[-1] - r.token_times[0]) / (len(r.token_times) - 1))
        add(F.tpot(index, by_tpot[len(by_tpot) // 2]), step.tpot_s.p50)
    server = step.server
    used = False
    if server is not None:
        if server.prefill_time_mean_s:
            add(np.mean([F.prefill_phase(index, r) for r in done], axis=0), server.prefill_time_mean_s)
            used = True
        if server.decode_time_mean_s and multi:
            add(np.mean([F.decode_phase(index, r) for r in multi], axis=0), server.decode_time_mean_s)
            used = True
    return rows, targets, used


def _ridge(cost: StepCost, chunk_term: bool) -> np.ndarray:
    """The ridge weight of each column of `cost` (columns(), then the overhead); infinite for a
    column held out of the fit (it keeps its value, 0)."""
    weights = {"prefill_seq_s": 1.0 if chunk_term else math.inf}
    return np.array([weights.get(c, 1.0) for c in cost.columns()] + [OVERHEAD_RIDGE])


def _nonnegative_fit(a: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """argmin ||a·x - y||² + ridge·weights on scaled columns, x >= 0, by trying every support (at
    most 12 unknowns: a few thousand small solves)."""
    scale = np.sqrt((a**2).mean(axis=0))
    scale[scale == 0] = 1.0
    scaled = a / scale
    n = a.shape[1]
    best, best_value = np.zeros(n), float(np.sum(y**2))
    free = [i for i in range(n) if np.isfinite(weights[i])]
    for size in range(1, len(free) + 1):
        for support in itertools.combinations(free, size):
            cols = list(support)
            sub = scaled[:, cols]
            lhs = sub.T @ sub + RIDGE * len(y) * np.diag(weights[cols])
            x = np.linalg.solve(lhs, sub.T @ y)
            if np.any(x < 0):
                continue
            full = np.zeros(n)
            full[cols] = x
            value = float(np.sum((scaled @ full - y) ** 2) + RIDGE * len(y) * np.sum(weights[cols] * x**2))
            if value < best_value:
                best, best_value = full, value
    return best / scale


def _first_guess(usable: list[StepResult]) -> StepCost:
    """A start for the fixed point from the lowest load's ITL (about one step at its batch size).

    TTFT is not used: at load it holds queueing, and a prefill guess taken from it can make the
    first replay too slow to finish any request."""
    low = min(usable, key=lambda s: s.offered)
    itl = low.itl_s.p50 or 0.05
    batch = max(
        1.0,
        (
            low.server.running_mean
            if low.server and low.server.running_mean
            else low.offered
            if low.offered_unit == "concurrency"
            else 1.0
        ),
    )
    return StepCost(
        base_s=0.6 * itl, prefill_token_s=0.4 * itl / 64, decode_seq_s=0.4 * itl / batch, context_token_s=0.0
    )
