"""OP-5.16: generation throughput fell between two vLLM releases the text names.

Why a rule of its own: "it was fast on 0.2.7 and is slow on 0.3.2" is how a performance regression is
reported (vllm#2971, vllm#3779, vllm#9452): two stats lines, each under the release it came from. The other
performance rules read one server at one moment and would call the slow one's numbers load or sizing; the
comparison itself is the finding. What vLLM's maintainers ask first is to find the first slow release and to
run the slow one with `--enforce-eager` (vllm#2971): CUDA graphs, and from V1 torch.compile, are the decode
path that changes most between releases, and eager mode takes them out of the picture. The reporter of
vllm#2971 got the speed back on 0.3.3 with `--enforce-eager`. The flag exists from 0.2.6 (vllm#2229 sets it
on 0.2.6), the release CUDA graphs came with.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.vllm_defaults import Version

SLOWER_BELOW = 0.5  # the newer release makes less than half the older one's tokens/s: not noise or load
EAGER_FLAG_FROM: Version = (0, 2, 6)  # --enforce-eager and CUDA graphs (vllm#2229 sets it on 0.2.6)
REFS = [
    "https://github.com/vllm-project/vllm/issues/2971",
    "https://github.com/vllm-project/vllm/issues/3779",
    "https://github.com/vllm-project/vllm/issues/2229",
]


def _check_upgrade_regression(facts: Facts) -> list[Finding]:
    by_release = _throughput_by_release(facts)
    if len(by_release) < 2:
        return []
    (_, old_lines), (new, new_lines) = by_release[0], by_release[-1]
    before, after = _mean(old_lines), _mean(new_lines)
    if before <= 0 or after >= SLOWER_BELOW * before:
        return []
    old_text, new_text = old_lines[0].version, new_lines[0].version
    same_load = _same_load(old_lines[-1], new_lines[-1])
    summary = (
        f"The stats lines from {old_text} make {before:,.1f} generated tokens/s and those from {new_text} "
        f"{after:,.1f}: {before / after:,.1f}x fewer. "
        + (
            "The lines show the same number of running requests, so the load does not explain it."
            if same_load
            else "The lines do not show the same running requests (or show none), so part of the gap may be the "
            "load each was taken under; compare under the same requests to be sure."
        )
    )
    return [
        RULE_UPGRADE_REGRESSION.finding(
            Severity.HIGH,
            f"generation throughput fell {before / after:,.1f}x from vLLM {old_text} to {new_text} "
            f"({before:,.1f} → {after:,.1f} tokens/s)",
            summary=summary,
            evidence=[_evidence(old_lines[-1]), _evidence(new_lines[-1])],
            changes=_eager(facts, new),
            actions=[
                f"Run the releases between {old_text} and {new_text} on the same launch to find the first slow "
                "one, and report it to vLLM with both stats lines: that is what its maintainers ask first.",
                f"Upgrade to the newest patch release after {new_text}, or stay on {old_text} until a release "
                "without the regression.",
                "Compare under the same load: a stats line's throughput follows the requests running when it was "
                "printed; replay one workload on both (servops ramp) for a like-for-like figure.",
            ],
            confidence=0.7 if same_load else 0.5,
        )
    ]


def _throughput_by_release(facts: Facts) -> list[tuple[Version, list[LogEvent]]]:
    """The stats lines that generated tokens, grouped by the release they came from, oldest release first."""
    groups: dict[Version, list[LogEvent]] = {}
    for event in facts.events_of(LogEventKind.STATS_LINE):
        release = c.release_of(event.version)
        if release is not None and (event.generation_throughput_tps or 0) > 0:
            groups.setdefault(release, []).append(event)
    return sorted(groups.items())


def _mean(lines: list[LogEvent]) -> float:
    return sum(line.generation_throughput_tps or 0.0 for line in lines) / len(lines)


def _same_load(old: LogEvent, new: LogEvent) -> bool:
    return old.running is not None and old.running == new.running


def _evidence(line: LogEvent) -> Evidence:
    value = line.generation_throughput_tps or 0.0
    evidence = c.log_evidence(line, name=f"generation throughput on {line.version}", value=value, unit="tokens/s")
    evidence.description = f"the stats line pasted for vLLM {line.version}"
    return evidence


def _eager(facts: Facts, release: Version) -> list[ConfigChange]:
    """`--enforce-eager` on the slow release, to take CUDA graphs (and torch.compile) out of the comparison;
    not where the launch already runs eager, nor before the release that had graphs."""
    if release < EAGER_FLAG_FROM or (facts.config is not None and facts.config.enforce_eager):
        return []
    return [
        c.eager_mode(
            "run the slow release without CUDA graphs (and, from V1, without torch.compile): the decode path "
            "that changes most between releases. Back to speed in eager mode means the regression is in graph "
            "capture or compilation; just as slow means it is elsewhere (a kernel, the scheduler).",
            cost="eager decode launches every kernel from Python: slower per step than working CUDA graphs, most "
            "at small batches; keep it only until a release without the regression",
        )
    ]


RULE_UPGRADE_REGRESSION = Rule(
    code="OP-5.16",
    title=f"generation throughput fell below {SLOWER_BELOW:.0%} between two vLLM releases",
    category=Category.LATENCY,  # fewer tokens per second is a longer wait per token
    check=_check_upgrade_regression,
    needs=("events",),
    page=RulePage(
        checks="Stats lines tagged with the vLLM release they came from (the server's version banner above them, "
        "or a release a person named in the text before pasting them): the newest release's mean generation "
        f"throughput below {SLOWER_BELOW:.0%} of the oldest's.",
        why="A regression across an upgrade is found by comparing releases, not by reading one server: the slow "
        "release's numbers alone look like load or sizing.",
        example="'Here's my speed on the 0.2.7 release: … Avg generation throughput: 273.8 tokens/s' and 'on 0.3.2: "
        "… 15.5 tokens/s' (vllm#2971, one RTX 4090).",
        fix="Find the first slow release; run the slow one with --enforce-eager to tell CUDA graphs from the rest; "
        "upgrade to the next patch release or stay on the fast one.",
        limits="A stats line's throughput follows the load it was printed under: lines with different running "
        "requests (or none) lower the confidence to 0.5. Only generation throughput is compared; a prompt "
        "throughput drop alone is too dependent on what arrived in those 10 seconds.",
        references=REFS,
    ),
)

# --- OP-5.18 a benchmark's result lower in the later of two runs ------------------------------------

BENCHMARK_SLOWER_BELOW = 0.95  # the same benchmark, the same machine: its run-to-run spread is a few percent
CONFIDENT_DROP = 0.10  # twice that spread: one run per side is enough to call it
# Labels a person puts on the earlier and the later run; releases order themselves.
EARLIER_LABELS = ("before", "old", "baseline", "previous")
LATER_LABELS = ("after", "new", "current", "now")


def _check_benchmark_regression(facts: Facts) -> list[Finding]:
    pair = _benchmark_pair(facts)
    if pair is None:
        return []
    earlier, later = pair
    before, after = earlier.tokens_per_s or 0.0, later.tokens_per_s or 0.0
    if before <= 0 or after >= BENCHMARK_SLOWER_BELOW * before:
        return []
    drop = 1 - after / before
    old_text, new_text = _run_name(earlier), _run_name(later)
    releases = earlier.version is not None and later.version is not None
    bisect = (
        f"Run the releases between {old_text} and {new_text} to find the first slow one"
        if releases
        else "Find what changed between the runs; if it was a vLLM upgrade, run the releases in between to find the "
        "first slow one"
    )
    return [
        RULE_BENCHMARK_REGRESSION.finding(
            Severity.MEDIUM,
            f"benchmark throughput fell {drop:.0%} from {old_text} to {new_text} ({before:,.2f} → {after:,.2f} "
            "tokens/s): a regression",
            summary=f"The same benchmark made {before:,.2f} tokens/s ({earlier.requests_per_s or 0:,.2f} requests/s) "
            f"and then {after:,.2f} ({later.requests_per_s or 0:,.2f}): {drop:.0%} less, beyond a benchmark's "
            "run-to-run spread of a few percent.",
            evidence=[_benchmark_evidence(earlier), _benchmark_evidence(later)],
            actions=[
                f"{bisect}, and report it to vLLM with both results.",
                "Upgrade to the newest patch release of the slower vLLM, or stay on the faster one until a release "
                "without the regression.",
                "Run each side twice more: the spread between runs of one side is the least difference the "
                "benchmark can tell apart.",
            ],
            confidence=0.7 if round(drop, 6) >= CONFIDENT_DROP else 0.5,
        )
    ]


def _benchmark_pair(facts: Facts) -> tuple[LogEvent, LogEvent] | None:
    """The earlier and the later of two labelled benchmark results: by release, else by before/after words."""
    results = [e for e in facts.events_of(LogEventKind.BENCHMARK_THROUGHPUT) if e.tokens_per_s]
    by_release = sorted((r for r in results if c.release_of(r.version)), key=lambda r: c.release_of(r.version))
    if len(by_release) >= 2 and by_release[0].version != by_release[-1].version:
        return by_release[0], by_release[-1]
    earlier = [r for r in results if (r.label or "").lower() in EARLIER_LABELS]
    later = [r for r in results if (r.label or "").lower() in LATER_LABELS]
    return (earlier[0], later[-1]) if earlier and later else None


def _run_name(result: LogEvent) -> str:
    return f"vLLM {result.version}" if result.version else (result.label or "one run").lower()


def _benchmark_evidence(result: LogEvent) -> Evidence:
    return c.log_evidence(
        result, name=f"benchmark throughput ({_run_name(result)})", value=result.tokens_per_s, unit="tokens/s"
    )


RULE_BENCHMARK_REGRESSION = Rule(
    code="OP-5.18",
    title=f"a benchmark's throughput more than {1 - BENCHMARK_SLOWER_BELOW:.0%} lower in the later run",
    category=Category.LATENCY,
    check=_check_benchmark_regression,
    needs=("events",),
    page=RulePage(
        checks="Two results of vLLM's throughput benchmark (`Throughput: X requests/s, Y tokens/s`) labelled with "
        "two releases, or `Before:` / `After:` (old/new, baseline/current): the later one's tokens/s below "
        f"{BENCHMARK_SLOWER_BELOW:.0%} of the earlier one's.",
        why="The same benchmark on the same machine is a controlled comparison: a drop beyond its run-to-run "
        "spread is a regression in what changed between the runs.",
        example="'Before: Throughput: 20.13 requests/s, 10308.29 tokens/s' / 'After: Throughput: 17.67 requests/s, "
        "9048.03 tokens/s' (vllm#4210, 0.4.0 → 0.4.1; fixed by vllm#4280).",
        fix="Find the change (bisect the releases when it was an upgrade); upgrade to the next patch release or "
        "stay on the faster one.",
        limits="A 5-10 % drop is reported with confidence 0.5: two runs per side tell it from noise. Results without "
        "labels are not compared (which ran first is unknown).",
        references=["https://github.com/vllm-project/vllm/issues/4210"],
    ),
)

RULES: list[Rule] = [RULE_UPGRADE_REGRESSION, RULE_BENCHMARK_REGRESSION]
