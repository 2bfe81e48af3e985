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

from dataclasses import dataclass, field

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# tqdm prints whole seconds: a bar younger than this gives too coarse an average rate to compare.
MIN_ELAPSED_S = 5.0
# One worker's projected run at least this many times another's: a GPU idles for a third of the job or more.
UNBALANCED = 1.5
# Shares within this ratio are an even split by count, so a difference in pace is a difference in work per prompt.
EVEN_COUNTS = 1.1


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
    def rate(self) -> float:
        """Prompts a second over the bar's whole life (tqdm's own figure is a smoothed recent rate)."""
        return (self.latest.prompts_done or 0) / (self.latest.elapsed_s or 1.0)

    @property
    def projected_s(self) -> float:
        """When this worker finishes all its prompts at the pace it has kept."""
        return self.total / self.rate

    def continued_by(self, redraw: LogEvent) -> bool:
        """A later redraw of this bar counts the same total, no fewer prompts and no earlier clock. A redraw with
        nothing done is always a new bar: tqdm draws `0/N` once, when the bar is made, and redraws only as prompts
        finish (two workers' `0/32 [00:00<?` lines are two bars); a full bar is only drawn again as it was, when it
        closes."""
        latest = self.latest
        if latest.prompts_done == self.total:
            return redraw.prompts_done == self.total and redraw.elapsed_s == latest.elapsed_s
        return (
            bool(redraw.prompts_done)
            and redraw.prompts_total == self.total
            and (redraw.prompts_done or 0) >= (latest.prompts_done or 0)
            and (redraw.elapsed_s or 0.0) >= (latest.elapsed_s or 0.0)
        )


def _bars(redraws: list[LogEvent]) -> list[_Bar]:
    """The bars the redraws belong to: each redraw continues the most advanced bar it can, or starts one."""
    bars: list[_Bar] = []
    for position, redraw in enumerate(redraws):
        open_bars = [bar for bar in bars if bar.continued_by(redraw)]
        bar = max(open_bars, key=lambda b: b.latest.prompts_done or 0, default=None)
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


def _check(facts: Facts) -> list[Finding]:
    bars = [
        bar
        for bar in _running_together(_bars(facts.events_of(LogEventKind.OFFLINE_PROGRESS)))
        if (bar.latest.elapsed_s or 0.0) >= MIN_ELAPSED_S and bar.latest.prompts_done and bar.total
    ]
    if len(bars) < 2:
        return []
    slow = max(bars, key=lambda bar: bar.projected_s)
    fast = min(bars, key=lambda bar: bar.projected_s)
    ratio = slow.projected_s / fast.projected_s
    return [_finding(bars, slow, fast, ratio)] if ratio >= UNBALANCED else []


def _tokens_per_prompt(bar: _Bar) -> tuple[float, float] | None:
    """The input and output tokens of this worker's average finished prompt, from the bar's est. speed: vLLM adds a
    request's tokens when it finishes and divides by the bar's clock, so speed x clock / done is that average (the
    prompts finished so far, which in a batch are the shorter ones until the bar is full)."""
    latest = bar.latest
    if latest.prompt_throughput_tps is None or latest.generation_throughput_tps is None or not latest.prompts_done:
        return None
    seconds_per_prompt = (latest.elapsed_s or 0.0) / latest.prompts_done
    return latest.prompt_throughput_tps * seconds_per_prompt, latest.generation_throughput_tps * seconds_per_prompt


def _why(bars: list[_Bar], slow: _Bar, fast: _Bar) -> str:
    """Whether the shares differ in count or in work per prompt, and the token lengths that show it when known."""
    shares = " and ".join(f"{bar.total:,}" for bar in bars)
    if max(bar.total for bar in bars) > EVEN_COUNTS * min(bar.total for bar in bars):
        return f"The shares differ in count ({shares} prompts): the split itself is uneven."
    lengths = [_tokens_per_prompt(slow), _tokens_per_prompt(fast)]
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


def _finding(bars: list[_Bar], slow: _Bar, fast: _Bar, ratio: float) -> Finding:
    idle = 1 - fast.projected_s / slow.projected_s
    return RULE.finding(
        Severity.MEDIUM,
        f"data-parallel offline workers have unequal work: at their pace one finishes its {fast.total:,} prompts in "
        f"~{fast.projected_s:,.0f} s, another needs ~{slow.projected_s:,.0f} s for its {slow.total:,} ({ratio:.1f}×)",
        summary=f"{len(bars)} `Processed prompts` bars run at once: one offline vLLM worker per bar, each with its own "
        f"slice of the prompts. The fast one has done {fast.latest.prompts_done:,} in {fast.latest.elapsed_s:,.0f} s "
        f"({fast.rate:,.1f}/s), the slow one {slow.latest.prompts_done:,} in {slow.latest.elapsed_s:,.0f} s "
        f"({slow.rate:,.1f}/s). {_why(bars, slow, fast)} The job ends with its slowest worker: the fast worker's GPU "
        f"will sit idle for ~{idle:.0%} of the run.",
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
        confidence=0.75 if slow.total <= EVEN_COUNTS * fast.total else 0.8,
    )


RULE = Rule(
    code="OP-5.43",
    title="offline data-parallel workers given unequal work",
    category=Category.PARALLELISM,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="Two or more offline `Processed prompts` progress bars (`LLM.generate`) whose redraws interleave in "
        f"one text, each at least {MIN_ELAPSED_S:g} s into its run: one worker's projected finish (its total at the "
        f"pace it has kept) at least {UNBALANCED:g}× another's. Equal counts (within {EVEN_COUNTS:g}×) point at "
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
        limits="Two bars with the same total are told apart by their counts and clocks only, so two workers of one "
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
