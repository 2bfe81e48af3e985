"""OP-5.43: offline data-parallel workers given unequal work.

Why a rule of its own: offline, vLLM runs one engine per process. `LLM(data_parallel_size=2)` in one process is
refused (vllm/entrypoints/llm.py, 0.32, which points to its multi-process example), so an offline data-parallel run
is N processes, each with its own `LLM` and its own slice of the prompts, and the slicing is the caller's code (a
script, an evaluation harness's data-parallel mode). The job ends when its slowest worker ends; a worker that
finishes early leaves its GPU idle. A list sorted by length (harnesses sort so each batch holds similar lengths) and
cut into contiguous slices hands one worker all the long prompts: equal counts, unequal work.

The evidence is in the paste: each worker prints its own `Processed prompts` bar, so two bars counting different
totals, their redraws interleaved in one text, are two workers running at once, and each bar says how many of its
prompts are done after how many seconds of its own clock. lm-evaluation-harness#1468 is this shape (4,687 prompts on
two GPUs, bars of 2,344 and 2,343, one twice as fast as the other); its maintainers traced it to the length-sorted
split and changed the split (PR #1477).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# tqdm prints whole seconds: a bar younger than this gives too coarse an average rate to compare.
MIN_ELAPSED_S = 5.0
# One worker's run at least this many times another's: a GPU idles for a third of the job or more.
UNBALANCED = 1.5
# Shares within this ratio are an even split by count, so a difference in pace is a difference in work per prompt.
EVEN_COUNTS = 1.1
# A running bar's pace is projected only once this share of its prompts is done. Why: vLLM admits a batch together
# and its prompts finish in a burst as the batch drains, so an early pace says little: on the recorded 0.32 job
# (tests/fixtures/vllm_cpu, offline_data_parallel) the long half's bar stood at 2 of 32 after 103 s and was full a
# second later, where its pace so far projected 1,648 s (at 1 of 32, 3,296 s).
MIN_SHARE_DONE = 0.1
# How far a projected ratio strayed from the final one on the recorded paced job (offline_data_parallel_paced: 3.4×
# projected at 5 of the slow worker's 32 prompts, 2.0× measured at the end; tests/unit/rules/test_op5_offline_split.py
# holds every projection of that job within it).
PROJECTION_SPREAD = 1.7


@dataclass
class _Bar:
    """One progress bar's redraws, in text order; `first`/`last` are positions among all the bars' redraws."""

    total: int
    first: int
    redraws: list[LogEvent] = field(default_factory=list)
    last: int = 0

    @property
    def latest(self) -> LogEvent:
        return self.redraws[-1]

    @property
    def elapsed_s(self) -> float:
        return self.latest.elapsed_s or 0.0

    @property
    def done(self) -> int:
        return self.latest.prompts_done or 0

    @property
    def finished(self) -> bool:
        return bool(self.total) and self.done >= self.total

    @property
    def rate(self) -> float:
        """Prompts a second over the bar's whole life (tqdm's own figure is a smoothed recent rate)."""
        return self.done / (self.elapsed_s or 1.0)

    @property
    def run_s(self) -> float | None:
        """The worker's whole run: measured when its bar is full; projected at the pace it has kept once a tenth of
        its prompts is done; otherwise unknown."""
        if self.finished:
            return self.elapsed_s
        if self.done >= MIN_SHARE_DONE * self.total:
            return self.total / self.rate
        return None

    def continued_by(self, redraw: LogEvent) -> bool:
        """A later redraw of this bar counts the same total, no fewer prompts and no earlier clock. A redraw with
        nothing done is always a new bar: tqdm draws `0/N` once, when the bar is made, and redraws only as prompts
        finish (two workers' `0/32 [00:00<?` lines are two bars); a full bar is only drawn again as it was, when it
        closes."""
        if self.done == self.total:
            return redraw.prompts_done == self.total and redraw.elapsed_s == self.latest.elapsed_s
        return (
            bool(redraw.prompts_done)
            and redraw.prompts_total == self.total
            and (redraw.prompts_done or 0) >= self.done
            and (redraw.elapsed_s or 0.0) >= self.elapsed_s
        )


@dataclass(frozen=True)
class _Gap:
    """The fast and the slow worker and how their runs compare: `measured` when the fast bar is full and the slow
    one's own clock already shows the ratio (exact once it is full too, a lower bound while it runs); otherwise both
    runs are projections at the pace each has kept."""

    fast: _Bar
    slow: _Bar
    measured: bool

    @property
    def fast_s(self) -> float:
        return self.fast.run_s or 0.0  # known: full when measured, projected otherwise

    @property
    def slow_s(self) -> float:
        return self.slow.elapsed_s if self.measured else (self.slow.run_s or 0.0)

    @property
    def ratio(self) -> float:
        return self.slow_s / self.fast_s


def _bars(redraws: list[LogEvent]) -> list[_Bar]:
    """The bars the redraws belong to: each redraw continues the most advanced bar it can, or starts one."""
    bars: list[_Bar] = []
    for position, redraw in enumerate(redraws):
        open_bars = [bar for bar in bars if bar.continued_by(redraw)]
        bar = max(open_bars, key=lambda b: b.done, default=None)
        if bar is None:
            bar = _Bar(total=redraw.prompts_total or 0, first=position)
            bars.append(bar)
        bar.redraws.append(redraw)
        bar.last = position
    return bars


def _running_together(bars: list[_Bar]) -> list[_Bar]:
    """The bars whose redraws interleave with another's: workers running at once, not one job's batches in turn."""
    return [
        bar
        for bar in bars
        if any(other is not bar and other.first < bar.last and bar.first < other.last for other in bars)
    ]


def _gap(bars: list[_Bar]) -> _Gap | None:
    """The widest gap the bars show, measured first: a full bar against another's clock, then the runs projected at
    each bar's pace (a full bar's run is its own measurement)."""
    full = [bar for bar in bars if bar.finished]
    if full:
        fast = min(full, key=lambda bar: bar.elapsed_s)
        slow = max((bar for bar in bars if bar is not fast), key=lambda bar: bar.elapsed_s, default=None)
        if slow is not None and slow.elapsed_s >= UNBALANCED * fast.elapsed_s:
            return _Gap(fast, slow, measured=True)
    known = [bar for bar in bars if bar.run_s]
    if len(known) < 2:
        return None
    gap = _Gap(min(known, key=lambda bar: bar.run_s or 0.0), max(known, key=lambda bar: bar.run_s or 0.0), False)
    return gap if gap.ratio >= UNBALANCED else None


def _check(facts: Facts) -> list[Finding]:
    bars = [
        bar
        for bar in _running_together(_bars(facts.events_of(LogEventKind.OFFLINE_PROGRESS)))
        if bar.elapsed_s >= MIN_ELAPSED_S and bar.done and bar.total
    ]
    gap = _gap(bars) if len(bars) >= 2 else None
    return [_finding(bars, gap)] if gap else []


def _tokens_per_prompt(bar: _Bar) -> tuple[float, float] | None:
    """The input and output tokens of this worker's average finished prompt, from the bar's est. speed: vLLM adds a
    request's tokens when it finishes and divides by the bar's clock, so speed x clock / done is that average (the
    prompts finished so far, which in a batch are the shorter ones until the bar is full)."""
    latest = bar.latest
    if latest.prompt_throughput_tps is None or latest.generation_throughput_tps is None or not latest.prompts_done:
        return None
    seconds_per_prompt = (latest.elapsed_s or 0.0) / latest.prompts_done
    return latest.prompt_throughput_tps * seconds_per_prompt, latest.generation_throughput_tps * seconds_per_prompt


def _why(bars: list[_Bar], gap: _Gap) -> str:
    """Whether the shares differ in count or in work per prompt, and the token lengths that show it when known."""
    shares = " and ".join(f"{bar.total:,}" for bar in bars)
    if max(bar.total for bar in bars) > EVEN_COUNTS * min(bar.total for bar in bars):
        return f"The shares differ in count ({shares} prompts): the split itself is uneven."
    lengths = [_tokens_per_prompt(gap.slow), _tokens_per_prompt(gap.fast)]
    measured = ""
    if lengths[0] is not None and lengths[1] is not None:
        (slow_in, slow_out), (fast_in, fast_out) = lengths
        measured = (
            f" Their own bars show it: the prompts the slow worker has finished average {slow_in:,.0f} input and "
            f"{slow_out:,.0f} output tokens, the fast one's {fast_in:,.0f} and {fast_out:,.0f}."
        )
    return (
        f"The shares are even in count ({shares} prompts), so on like GPUs the slow worker has more work per prompt: "
        "longer prompts or longer outputs, what a list sorted by length and cut into contiguous slices hands out."
        + measured
    )


def _floor(ratio: float) -> float:
    """A lower bound shown to one decimal without rounding up past what was measured."""
    return math.floor(ratio * 10) / 10


def _comparison(gap: _Gap) -> tuple[str, str]:
    """The title's comparison and the summary's idle share: measured, a measured lower bound, or a projection."""
    fast, slow = gap.fast, gap.slow
    if gap.measured and slow.finished:
        return (
            f"one finished its {fast.total:,} prompts in {fast.elapsed_s:,.0f} s, another took {slow.elapsed_s:,.0f} s "
            f"for its {slow.total:,} ({gap.ratio:.1f}×)",
            f"the fast worker's GPU sat idle for {1 - 1 / gap.ratio:.0%} of the run.",
        )
    if gap.measured:
        return (
            f"one finished its {fast.total:,} prompts in {fast.elapsed_s:,.0f} s, another is at {slow.done:,} of its "
            f"{slow.total:,} after {slow.elapsed_s:,.0f} s (≥{_floor(gap.ratio):.1f}×)",
            f"the fast worker's GPU has sat idle for {1 - 1 / gap.ratio:.0%} of the run so far, and more until the "
            "slow one ends.",
        )
    fast_run = (
        f"one finished its {fast.total:,} prompts in {fast.elapsed_s:,.0f} s; at the pace it has kept, another needs"
        if fast.finished
        else f"at the pace each has kept, one needs ~{gap.fast_s:,.0f} s for its {fast.total:,} prompts, another"
    )
    return (
        f"{fast_run} ~{gap.slow_s:,.0f} s for its {slow.total:,} (~{gap.ratio:.1f}×)",
        f"at these paces the fast worker's GPU will sit idle for about {1 - 1 / gap.ratio:.0%} of the run. A "
        "projection from a bar's pace so far moves as the prompts still to come differ in length from those done: on "
        f"a recorded vLLM 0.32 job its ratio was up to {PROJECTION_SPREAD:g}× the final one early on, closer as the "
        "bars filled.",
    )


def _finding(bars: list[_Bar], gap: _Gap) -> Finding:
    fast, slow = gap.fast, gap.slow
    title, idle = _comparison(gap)
    return RULE.finding(
        Severity.MEDIUM,
        f"data-parallel offline workers have unequal work: {title}",
        summary=f"{len(bars)} `Processed prompts` bars run at once: one offline vLLM worker per bar, each with its own "
        f"slice of the prompts. The fast one has done {fast.done:,} in {fast.elapsed_s:,.0f} s ({fast.rate:,.1f}/s), "
        f"the slow one {slow.done:,} in {slow.elapsed_s:,.0f} s ({slow.rate:,.1f}/s). {_why(bars, gap)} The job ends "
        f"with its slowest worker: {idle}",
        evidence=[
            c.log_evidence(bar.latest, name="offline progress", value=round(bar.rate, 2), unit="prompts/s")
            for bar in (fast, slow)
        ],
        actions=[
            "Give every worker the same mix of lengths: deal the prompts round-robin (prompt i to worker i mod N) or "
            "shuffle them before splitting, instead of cutting a length-sorted list into contiguous slices; sorting "
            "inside each worker's share is fine.",
            "If a tool splits the prompts for you (an evaluation harness's data-parallel mode, a batch framework), the "
            "split is its code, not vLLM's: upgrade it to a release that balances the shards, or report it there with "
            "these bars.",
            "Or serve the model once with `vllm serve --data-parallel-size N` and send it the prompts: its load "
            "balancer gives each request to the engine with the fewest in flight, so a sorted list is dealt out in "
            "turn, not in slices.",
        ],
        confidence=(0.75 if slow.total <= EVEN_COUNTS * fast.total else 0.8) + (0.05 if gap.measured else 0.0),
    )


RULE = Rule(
    code="OP-5.43",
    title="offline data-parallel workers given unequal work",
    category=Category.PARALLELISM,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="Two or more offline `Processed prompts` progress bars (`LLM.generate`) whose redraws interleave in "
        f"one text, each at least {MIN_ELAPSED_S:g} s into its run: one worker's run at least {UNBALANCED:g}× "
        "another's. Measured where it can be: a full bar's clock against another bar's (exact once both are full, a "
        "lower bound while the slow one runs); otherwise each run projected at the pace its bar has kept, once "
        f"{MIN_SHARE_DONE:.0%} of its prompts are done. Equal counts (within {EVEN_COUNTS:g}×) point at "
        "work per prompt, unequal counts at the split; the bars' est. speed, when printed, gives each worker's "
        "average prompt and output length.",
        why="Offline data parallelism is one process per worker with the caller's own slice of the prompts; the job "
        "takes as long as its slowest slice, and a length-sorted list cut into slices gives one worker the long "
        "prompts.",
        example="lm-evaluation-harness#1468: 4,687 prompts on two GPUs; bars of 2,344 and 2,343 at 59.9 and 124.7 "
        "prompts/s; one GPU finished and idled after 14 s. The maintainers traced it to splitting the length-sorted "
        "requests into contiguous slices (PR #1477).",
        fix="Deal prompts round-robin or shuffled across workers; upgrade a harness that splits by slices; or send "
        "them to one `vllm serve --data-parallel-size N`, whose load balancer spreads them.",
        limits="A projected run is only as good as the pace so far: vLLM admits a batch together and its prompts "
        "finish in bursts, so early paces are low and the projected seconds too long (the ratio of paces holds "
        "better). Two bars with the same total are told apart by their counts and clocks only, so two workers of one "
        "size whose redraws cross may be read as one bar; unlike GPUs also run at unlike paces, which the bars do "
        "not show.",
        references=[
            "https://github.com/EleutherAI/lm-evaluation-harness/issues/1468",
            "https://github.com/EleutherAI/lm-evaluation-harness/pull/1477",
            "https://docs.vllm.ai/en/latest/serving/data_parallel_deployment.html",
        ],
    ),
)

RULES: list[Rule] = [RULE]
