"""OP-5 queueing: requests wait — in the server, in front of it, past the knee, or on one replica.

From docs/reference.md §5: a queue means saturation, by batch cap or by KV capacity (OP-5.2);
fewer requests in the server than the clients have in flight is a bottleneck upstream (OP-5.6).
OP-5.9 reads a ramp: past the knee more load buys latency, not throughput. OP-5.11 compares
replicas (one queues while another idles).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from rules import signals, vllm_defaults
from rules.alerts import BY, Alert, series
from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts, LoadStep, LoadTestFacts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt

AT_CAP_SHARE = 0.95  # running at this share of --max-num-seqs is running at the cap
UPSTREAM_SHARE = 0.8  # running + waiting below this share of the clients' requests in flight
# Below this share most of the clients' requests wait outside the server, so their latency is mostly time
# vLLM never sees: the hold-up is HIGH, with confidence 0.8 (both counts are direct readings), so it ranks
# before the latency findings measured at the load that did get through.
UPSTREAM_SEVERE_SHARE = 0.5
KNEE_GAIN = 1.1  # past the knee, throughput grows by less than this factor ...
KNEE_SLOWDOWN = 1.5  # ... while ITL p99 grows by at least this one
IMBALANCE_SHARE = 0.5


# --- OP-5.2 requests queue (saturation) --------------------------------------------------------


class _Limit(NamedTuple):
    """What holds the queue back, with the evidence that says so and what lifts it."""

    cause: str
    evidence: tuple[Evidence, ...] = ()
    changes: tuple[ConfigChange, ...] = ()
    alternatives: tuple[ConfigChange, ...] = ()
    actions: tuple[str, ...] = ()


def _check_saturation(facts: Facts) -> list[Finding]:
    queue, run, kv = signals.waiting(facts), signals.running(facts), signals.kv_usage(facts)
    if queue is None or run is None or queue.value < 1:
        return []
    if run.value == 0 and kv is not None and kv.value == 0:
        return []  # nothing admitted with the cache empty: not saturation, the scheduler (HL-5)
    limit = _saturation_limit(facts, run, kv)
    evidence = [queue.evidence.model_copy(update={"threshold": 0, "comparison": ">"}), run.evidence, *limit.evidence]
    ttft = signals.quantile(facts, c.TTFT, "p99")
    slow = ttft is not None and ttft.value > c.ttft_slo(facts)
    if ttft is not None:
        evidence.append(c.over(ttft, c.ttft_slo(facts)))
    deferred = limit.cause.startswith("the KV cache runs out")
    return [
        RULE_SATURATION.finding(
            Severity.HIGH if slow and not deferred else Severity.MEDIUM,
            f"{fmt(queue.value)} requests waiting > 0 ({limit.cause})",
            evidence=evidence,
            changes=list(limit.changes),
            alternatives=list(limit.alternatives),
            actions=list(limit.actions),
            confidence=0.8 if facts.window else 0.6,
            summary=_queue_summary(kv),
        )
    ]


def _saturation_limit(facts: Facts, run: signals.Signal, kv: signals.Signal | None) -> _Limit:
    """The first limit the readings show, in order: a full KV cache, the batch cap, preemptions (the
    cache running out between readings), nothing to tell them apart, else compute."""
    if kv is not None and kv.value >= c.KV_HIGH:
        fp8 = ConfigChange(
            flag="--kv-cache-dtype",
            current="auto",
            proposed="fp8",
            reason="doubles the KV tokens each replica holds",
            cost="small accuracy risk",
            safety="unsafe",
        )
        auto_kv = not facts.config or facts.config.kv_cache_dtype in (None, "auto")
        return _Limit(
            f"KV usage {fmt(kv.value)} >= {c.KV_HIGH}",
            evidence=(c.over(kv, c.KV_HIGH, ""),),
            alternatives=(fp8,) if auto_kv else (),
            actions=("Raise the GPU count (replicas, or larger GPUs): the KV cache is full.",),
        )
    # vLLM's gauges and the stats lines sum the --data-parallel-size engines; the cap is each engine's
    engines = max(c.data_parallel_size(facts), signals.stats_engines(facts))
    cap = _batch_cap(facts, run.value / engines, kv)
    if cap is not None and run.value >= AT_CAP_SHARE * engines * (seqs := int(cap.value)):
        whose = ", vLLM's default" if cap.source == "default" else ""
        return _Limit(
            f"running {fmt(run.value)} at --max-num-seqs {seqs}{whose}",
            evidence=(cap,),
            changes=tuple(change for change in [_higher_cap(facts, seqs)] if change),
        )
    if (preempting := signals.preemption_rate(facts)) is not None and preempting.value > 0:
        # KV usage dips between preemptions, so the instant gauge may read below KV_HIGH: the
        # preemptions say the cache is what runs out, and OP-5.3 carries the remedy.
        return _Limit(
            "the KV cache runs out: requests are preempted",
            evidence=(preempting.evidence.model_copy(update={"threshold": 0, "comparison": ">"}),),
            actions=("See OP-5.3: fix the preemptions first; the queue follows from them.",),
        )
    if (silent := _silent_engine(facts, run)) is not None:
        return silent
    if kv is None and c.max_num_seqs(facts) is None:
        return _Limit(
            "limit unknown: no KV usage or --max-num-seqs",
            actions=("Collect KV usage (/metrics) and the launch flags to tell capacity from the batch cap.",),
        )
    return _Limit("compute-bound", actions=("Add replicas: the engine is busy with its current batch.",))


def _silent_engine(facts: Facts, run: signals.Signal) -> _Limit | None:
    """The limit when the engine finished no token in its last stats interval (_no_token_lately): not capacity."""
    stalled = _no_token_lately(facts)
    if not stalled:
        return None
    return _Limit(
        f"not capacity: {fmt(run.value)} running and 0 tokens/s in the last stats interval",
        evidence=tuple(
            c.log_evidence(line, "stats line generation throughput", 0.0, unit="tokens/s") for line in stalled
        ),
        actions=(
            "The engine finished no token in its last interval: it is stalled, not busy, and replicas would not "
            "help. A minute of such lines is a hang (HL-1): dump the workers' stacks (py-spy dump --pid …) while "
            "it lasts, then restart.",
        ),
    )


def _no_token_lately(facts: Facts) -> list[LogEvent]:
    """Each engine's last stats line, when the stats lines are the readings (no scrape) and every one shows requests
    running and no token, prompt or generated, in its interval; [] otherwise. The API server prints the line every
    10 s from the engine's last report whether it steps or not (vllm/v1/metrics/loggers.py, 0.32), so such a line is
    an interval in which no step finished a token: a queue behind it is not the engine being busy."""
    if facts.window is not None or facts.snapshot is not None:
        return []
    latest = signals.latest_per_engine(facts, "generation_throughput_tps")
    quiet = [
        line
        for line in latest
        if (line.running or 0) >= 1 and line.generation_throughput_tps == 0 and line.prompt_throughput_tps == 0
    ]
    return quiet if latest and len(quiet) == len(latest) else []


def _batch_cap(facts: Facts, running_per_engine: float, kv: signals.Signal | None) -> Evidence | None:
    """--max-num-seqs as the launch sets it; else vLLM's default when the batch holds exactly that many.

    Why: a stats line or a scrape rarely comes with the launch flags, and most servers run the default. The
    batch cannot exceed the cap, so running that sits on one of the defaults vLLM may have chosen (256, or 1024
    on a GPU of 70 GiB or more; which one is unknown while the GPU is) with requests waiting and KV room left is
    the cap at work, not compute; any other count says nothing about the cap."""
    if seqs := c.max_num_seqs(facts):
        return Evidence(source="config", name="--max-num-seqs", value=seqs)
    if kv is None:  # KV room unread: a full cache could hold the batch at that count too
        return None
    defaults = {c.default_max_num_seqs(facts)}
    if not c.total_gib(facts) and c.vllm_device(facts) == "cuda":
        defaults |= {vllm_defaults.BASE_MAX_NUM_SEQS, vllm_defaults.LARGE_MAX_NUM_SEQS}
    if running_per_engine not in defaults:
        return None
    said = "--max-num-seqs is not in the text: vLLM's default, which the batch holds exactly"
    return Evidence(source="default", name="--max-num-seqs", value=int(running_per_engine), description=said)


def _higher_cap(facts: Facts, seqs: int) -> ConfigChange | None:
    """Twice the batch cap, or as many requests as the KV cache holds when that is known and fewer."""
    proposed = seqs * 2
    if facts.memory and facts.memory.kv_cache_tokens and c.workload_tokens_p95(facts):
        proposed = min(proposed, max(seqs, int(facts.memory.kv_cache_tokens / c.workload_tokens_p95(facts))))
    if proposed <= seqs:
        return None
    return ConfigChange(
        flag="--max-num-seqs",
        current=str(seqs),
        proposed=str(proposed),
        reason="the batch cap, not memory, holds requests back",
        cost="higher ITL per request as batches grow",
    )


def _queue_summary(kv: signals.Signal | None) -> str:
    """The queue in both vLLM's words (V1 counts requests `waiting`; V0's stats line says `Pending`, which an
    on-call engineer reading an old log searches for), with how full the KV cache was when it is known."""
    said = "Requests queue before they start (V1 counts them as waiting; V0's stats line says Pending): TTFT grows "
    said += "with the queue."
    return said + (f" The KV cache is {kv.value:.0%} used." if kv is not None else "")


# Requests wait to start, and the KV cache is full while they do: the two causes OP-5.2 tells apart.
ALERT_QUEUEING = Alert(
    name="VllmRequestsQueueing",
    expr=f"sum by ({BY}) (vllm:num_requests_waiting) >= 1",
    for_="5m",
    severity=Severity.MEDIUM,
    description="{{ $labels.instance }} ({{ $labels.model_name }}): {{ $value }} request(s) waiting to start for "
    "5 minutes: TTFT grows with the queue.",
)
ALERT_KV_FULL = Alert(
    name="VllmKvCacheFull",
    expr=(
        f"avg by ({BY}) {series('vllm:kv_cache_usage_perc')}"
        f" >= {c.KV_HIGH:g} and on ({BY}) (sum by ({BY}) (vllm:num_requests_waiting) >= 1)"
    ),
    for_="5m",
    severity=Severity.MEDIUM,
    description="{{ $labels.instance }} ({{ $labels.model_name }}): KV cache {{ $value | humanizePercentage }} "
    f"used (>= {c.KV_HIGH:.0%}) with requests waiting: the cache, not the batch cap, holds them back.",
)

RULE_SATURATION = Rule(
    code="OP-5.2",
    title="requests queue (saturation)",
    category=Category.SATURATION,
    check=_check_saturation,
    alerts=(
        ALERT_QUEUEING,
        ALERT_KV_FULL,
    ),
    needs=("window", "snapshot", "events"),
    page=RulePage(
        checks=f"num_requests_waiting >= 1, and which limit holds them: KV usage >= {c.KV_HIGH:.2f} (capacity), "
        "running at --max-num-seqs (batch cap; with the flag unknown, a batch that sits exactly on one of vLLM's "
        "defaults, 256 or 1024, with KV room left) or neither (compute).",
        why="Waiting requests add their queue time to TTFT; the remedy depends on the limit.",
        example="12 waiting, running 256 = --max-num-seqs 256, KV usage 0.55 -> --max-num-seqs 512.",
        fix="Batch cap with free KV: raise --max-num-seqs (bounded by what the KV cache holds at p95 length). KV "
        "full: --kv-cache-dtype fp8 or more replicas. Compute: more replicas.",
        limits="A single scrape shows one instant; a window's end value is better but still not an average. From "
        "0.20 waiting includes deferred requests. The cap is per engine: running is compared with it times the "
        "data-parallel engines (--data-parallel-size, or the engines whose stats lines the text holds).",
        references=[c.OPTIMIZATION_DOCS, c.METRICS_DOCS],
    ),
)


# --- OP-5.6 fewer requests in the server than clients sent -------------------------------------


def _check_upstream(facts: Facts) -> list[Finding]:
    clients = facts.workload.client_concurrency if facts.workload else None
    run, queue = signals.running(facts), signals.waiting(facts)
    if not clients or run is None:
        return []
    inside = run.value + (queue.value if queue else 0.0)
    at_start = signals.in_server_at_start(facts)
    if at_start is not None:  # a hold-up upstream shows at both scrapes, a client between requests at one
        inside = max(inside, at_start.value)
    if inside >= UPSTREAM_SHARE * clients:
        return []
    severe = inside < UPSTREAM_SEVERE_SHARE * clients
    return [
        RULE_UPSTREAM.finding(
            Severity.HIGH if severe else Severity.MEDIUM,
            f"running + waiting {fmt(inside)} < {c.percent(UPSTREAM_SHARE)} of {clients} client requests in flight",
            evidence=[
                run.evidence,
                *([at_start.evidence] if at_start is not None else []),
                Evidence(
                    source="workload",
                    name="client concurrency",
                    value=clients,
                    threshold=round(UPSTREAM_SHARE * clients, 1),
                    comparison=">",
                ),
            ],
            confidence=0.8 if severe else 0.6,
            summary="Requests are held before they reach vLLM."
            + (
                f" Most of them ({1 - inside / clients:.0%}) wait outside it, so the server's own latency "
                "figures describe a load the clients never get through: fix this first, then measure again."
                if severe
                else ""
            ),
            actions=["Check the load balancer, gateway, auth/vector-DB hops and client connection pools."],
        )
    ]


RULE_UPSTREAM = Rule(
    code="OP-5.6",
    title="fewer requests in the server than clients sent (upstream bottleneck)",
    category=Category.SATURATION,
    check=_check_upstream,
    needs=("workload",),
    page=RulePage(
        checks=f"running + waiting below {c.percent(UPSTREAM_SHARE)} of the clients' in-flight requests (workload "
        f"facts), at both scrapes of a window; HIGH with confidence 0.8 below {c.percent(UPSTREAM_SEVERE_SHARE)}, "
        "ahead of latency findings measured at the load that got through.",
        why="Requests stuck before vLLM (load balancer, gateway, connection pools) never show in its metrics.",
        example="64 client requests in flight, running 20 + waiting 0.",
        fix="Look upstream: LB limits, gateway, auth, vector DB, client pools.",
        limits="Needs the client concurrency from the load test or the user. With two scrapes it must hold at both: "
        "one instant can catch a closed-loop client between two requests.",
        references=[],
    ),
)


# --- OP-5.9 past the knee ----------------------------------------------------------------------


def _check_past_knee(facts: Facts) -> list[Finding]:
    test = facts.loadtest
    if test is None:
        return []
    measured = _past_knee(test)
    if measured is None:
        return []
    at_knee, gain, slowdown = measured
    if gain >= KNEE_GAIN or slowdown < KNEE_SLOWDOWN:
        return []
    evidence = [
        Evidence(
            source="ramp",
            name="throughput gain past the knee",
            value=round(gain, 2),
            threshold=KNEE_GAIN,
            comparison="<",
        ),
        Evidence(
            source="ramp",
            name="ITL p99 growth past the knee",
            value=round(slowdown, 2),
            threshold=KNEE_SLOWDOWN,
            comparison=">=",
        ),
    ]
    return [
        RULE_KNEE.finding(
            Severity.MEDIUM,
            f"past the knee ({fmt(at_knee.offered)} req/s) throughput +{gain - 1:.0%} < {c.percent(KNEE_GAIN - 1)} "
            f"while ITL p99 x{slowdown:.1f}",
            evidence=evidence,
            changes=_batch_at_knee(facts, at_knee),
            confidence=0.7,
            actions=[
                f"Keep offered load at or below the safe operating point {test.safe_operating_point}."
                if test.safe_operating_point
                else "Keep offered load at or below the knee."
            ],
            summary="The server is at its throughput ceiling: extra load only adds latency.",
        )
    ]


def _past_knee(test: LoadTestFacts) -> tuple[LoadStep, float, float] | None:
    """The step at the knee, the best throughput after it as a multiple of the knee's, and the last step's ITL
    p99 as a multiple of the knee's; None when the ramp has no knee, no step after it, or no throughput or ITL
    at the knee to compare against."""
    knee = test.knee_offered()
    steps = test.valid_steps
    at_knee = next((s for s in steps if s.offered == knee), None)
    later = [s for s in steps if knee is not None and s.offered > knee]
    if at_knee is None or not later or not at_knee.output_tokens_per_s or not at_knee.itl_s.p99:
        return None
    best = max((s.output_tokens_per_s or 0.0) for s in later)
    gain = best / at_knee.output_tokens_per_s
    slowdown = (later[-1].itl_s.p99 or at_knee.itl_s.p99) / at_knee.itl_s.p99
    return at_knee, gain, slowdown


def _batch_at_knee(facts: Facts, at_knee: LoadStep) -> list[ConfigChange]:
    """--max-num-seqs at the batch the server ran at the knee, when the ramp recorded it: that batch gave the
    throughput, a larger one only adds latency."""
    running_at_knee = at_knee.server_value("running_mean", "num_requests_running", "running", "running_max")
    if running_at_knee is None or running_at_knee < 1:
        return []
    seqs = c.max_num_seqs(facts)
    return [
        ConfigChange(
            flag="--max-num-seqs",
            current=str(seqs) if seqs else None,
            proposed=str(int(math.ceil(running_at_knee))),
            reason="the batch size at the knee gave the throughput; more only adds latency",
            cost="excess load queues (visible as waiting) instead of slowing everyone",
        )
    ]


RULE_KNEE = Rule(
    code="OP-5.9",
    title="past the knee: load adds latency, not throughput",
    category=Category.SATURATION,
    check=_check_past_knee,
    needs=("loadtest",),
    page=RulePage(
        checks=f"In a ramp result: throughput after the knee grows < {c.percent(KNEE_GAIN - 1)} while ITL p99 grows "
        f">= {KNEE_SLOWDOWN:g}x.",
        why="At the throughput ceiling, a bigger batch only slows every request.",
        example="knee 8 req/s; at 12 req/s throughput +4 %, ITL p99 x2.3 -> --max-num-seqs = running at the knee.",
        fix="Cap --max-num-seqs at the running count at the knee and keep load at the safe operating point.",
        limits="Needs the ramp's per-step server samples for a concrete cap.",
        references=[],
    ),
)


# --- OP-5.11 replicas unevenly loaded ----------------------------------------------------------


def _check_imbalance(facts: Facts) -> list[Finding]:
    """One replica queues while another has room: the balancer, not capacity, is the problem."""
    parts = facts.window.per_instance if facts.window else []
    if len(parts) < 2:
        return []
    loads = {
        p.instance: (p.gauge("vllm:num_requests_running") or 0.0, p.gauge("vllm:num_requests_waiting") or 0.0)
        for p in parts
    }
    busiest = max(loads, key=lambda k: loads[k][0] + loads[k][1])
    idlest = min(loads, key=lambda k: loads[k][0] + loads[k][1])
    busy_run, busy_wait = loads[busiest]
    idle_total = sum(loads[idlest])
    if busy_wait < 1 or idle_total >= IMBALANCE_SHARE * busy_run:
        return []
    evidence = [
        Evidence(
            source=signals.window_source(facts), name="running + waiting", value=busy_run + busy_wait, location=busiest
        ),
        Evidence(
            source=signals.window_source(facts),
            name="running + waiting",
            value=idle_total,
            threshold=round(IMBALANCE_SHARE * busy_run, 1),
            comparison="<",
            location=idlest,
        ),
    ]
    return [
        RULE_IMBALANCE.finding(
            Severity.MEDIUM,
            f"{busiest} has {fmt(busy_wait)} waiting while {idlest} has {fmt(idle_total)} requests "
            f"(< {IMBALANCE_SHARE:.0%} of the busiest's running)",
            evidence=evidence,
            confidence=0.7,
            summary="Replicas are unevenly loaded: requests queue on one while another has room.",
            actions=[
                "Balance by outstanding requests (least-requests / KV-aware routing), not round-robin per connection."
            ],
        )
    ]


RULE_IMBALANCE = Rule(
    code="OP-5.11",
    title="replicas unevenly loaded",
    category=Category.SATURATION,
    check=_check_imbalance,
    needs=("window",),
    page=RulePage(
        checks="Per replica over the window: one has requests waiting while another's running + waiting is below "
        f"{c.percent(IMBALANCE_SHARE)} of the busiest's running.",
        why="Capacity exists but the balancer does not use it: queueing on one replica inflates TTFT for its users.",
        example="10.0.0.1 has 60 running and 12 waiting; 10.0.0.2 has 9 running.",
        fix="Balance on outstanding requests or KV usage (least-requests, llm-d/production-stack routers).",
        limits="Needs per-instance series (Prometheus); a snapshot is one instant.",
        references=[c.METRICS_DOCS],
    ),
)


RULES: list[Rule] = [RULE_SATURATION, RULE_UPSTREAM, RULE_KNEE, RULE_IMBALANCE]
