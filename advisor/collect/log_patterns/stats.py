"""The lines a running server prints periodically: throughput and queue stats, each step's make-up when asked
for it, speculative decoding.

Every version's stats line (0.8.0 without a prefix, V1 per engine or DP-aggregated, V0 with
Pending) maps to one event kind; optional parts are read one by one so a line missing some of
them still yields the rest.
"""

from __future__ import annotations

import re

from advisor.collect.log_patterns.pattern import Fields, Pattern, to_float, to_int, wording
from rules.events import LogEventKind as K


def _stats_fields(match: re.Match[str]) -> Fields:
    """The periodic stats line: 0.8.0 (no prefix), `Engine 000:`, DP-aggregated, V0 (Pending); a line a
    person pasted cut after its throughputs has no queue fields (running and waiting unknown)."""
    text, groups = match.string, match.groupdict()
    fields: Fields = {
        "engine": groups.get("engine") or ("all" if groups.get("engines") else None),
        "prompt_throughput_tps": to_float(groups.get("prompt")),
        "generation_throughput_tps": to_float(groups.get("gen")),
        "running": to_int(groups.get("running")),
        "waiting": to_int(groups.get("waiting")),
        "swapped": to_int(groups.get("swapped")),  # V0's requests preempted to CPU
    }
    optional = {
        "deferred": (r"Deferred: (\d+) reqs", to_int),
        "preemptions": (r"Preemptions: (\d+)", to_int),
        # requests that finished with NaN in their logits this interval (0.11.1+, with VLLM_COMPUTE_NANS_IN_LOGITS=1)
        "corrupted": (r"Corrupted: (\d+) reqs", to_int),
        "kv_usage": (r"(?:GPU|[A-Z][\w+ ]*?) KV cache usage: ([\d.]+)%", lambda t: to_float(t) / 100),
        "prefix_hit_rate": (r"Prefix cache hit rate: (?:GPU: )?([\d.]+)%", lambda t: to_float(t) / 100),
    }
    for name, (pattern, convert) in optional.items():
        found = re.search(pattern, text)
        if found:
            fields[name] = convert(found.group(1))
    return fields


def _spec_fields(match: re.Match[str]) -> Fields:
    text = match.string
    wanted = {
        "mean_acceptance_length": (r"Mean acceptance length: ([\d.]+)", to_float),
        "accepted_tps": (r"Accepted throughput: ([\d.]+)", to_float),
        "drafted_tps": (r"Drafted throughput: ([\d.]+)", to_float),
        "accepted_tokens": (r"Accepted: (\d+) tokens", to_int),
        "drafted_tokens": (r"Drafted: (\d+) tokens", to_int),
        "acceptance_rate": (r"Draft acceptance rate: ([\d.]+)%", lambda t: to_float(t) / 100),
    }
    fields: Fields = {}
    for name, (pattern, convert) in wanted.items():
        found = re.search(pattern, text)
        if found:
            fields[name] = convert(found.group(1))
    positions = re.search(r"Per-position acceptance rate: ((?:[\d.]+(?:, )?)+)", text)
    if positions:
        fields["position_acceptance"] = [float(rate) for rate in re.findall(r"[\d.]+", positions.group(1))]
    return fields


PATTERNS: tuple[Pattern, ...] = (
    wording(
        ("Avg prompt throughput",),
        K.STATS_LINE,
        r"(?:Engine (?P<engine>\d+): |(?P<engines>\d+) Engines Aggregated: )?"
        r"Avg prompt throughput: (?P<prompt>[\d.]+) tokens/s, Avg generation throughput: (?P<gen>[\d.]+) tokens/s"
        # a pasted line cut after the throughputs still tells them; the queue is then unknown
        r"(?:, Running: (?P<running>\d+) reqs, (?:Swapped: (?P<swapped>\d+) reqs, Pending|Waiting): "
        r"(?P<waiting>\d+) reqs)?",
        _stats_fields,
    ),
    wording(  # the same line pasted from its queue on, without the throughputs (vllm#39863: `Running: 0 reqs,
        # Waiting: 3 reqs, GPU KV cache usage: 0.0%`); the KV usage after the queue tells it from other counts
        ("Running: ",),
        K.STATS_LINE,
        r"^Running: (?P<running>\d+) reqs, (?:Swapped: (?P<swapped>\d+) reqs, Pending|Waiting): (?P<waiting>\d+) reqs"
        r"(?=.*KV cache usage: [\d.]+%)",
        _stats_fields,
    ),
    wording(  # V1's first release (v1/engine/core.py 0.6.6) logged only its queue, every 5 s
        ("RUNNING: ",),
        K.STATS_LINE,
        r"^RUNNING: (?P<running>\d+) \| WAITING: (?P<waiting>\d+)$",
        lambda m: {"running": to_int(m["running"]), "waiting": to_int(m["waiting"])},
    ),
    wording(  # V0 (engine/metrics.py 0.5-0.10) prints the hit rate on its own line after the stats line; the
        # reader joins it to that line (logs.py, _joined_to_stats_line)
        ("Prefix cache hit rate: GPU:",),
        K.STATS_LINE,
        r"^Prefix cache hit rate: GPU: (?P<gpu>[\d.]+)%",
        lambda m: {"prefix_hit_rate": to_float(m["gpu"]) / 100},
    ),
    wording(  # 0.32's per-step line (v1/metrics/loggers.py, --enable-logging-iteration-details); its own kind:
        # it is no interval's stats line, and reading it as one would skew the rates taken from those
        ("Iteration(",),
        K.ITERATION_LINE,
        r"(?:Engine (?P<engine>\d+): )?Iteration\((?P<iteration>\d+)\): (?P<ctx_req>\d+) context requests, "
        r"(?P<ctx_tok>\d+) context tokens, (?P<gen_req>\d+) generation requests, (?P<gen_tok>\d+) generation "
        r"tokens, iteration elapsed time: (?P<ms>[\d.]+) ms(?P<dummy> \(dummy\))?"
        r"(?:, (?:[A-Z][\w+ ]*?) KV cache usage: (?P<kv>[\d.]+)%)?",
        lambda m: {
            "engine": m["engine"],
            "iteration": to_int(m["iteration"]),
            "context_requests": to_int(m["ctx_req"]),
            "context_tokens": to_int(m["ctx_tok"]),
            "generation_requests": to_int(m["gen_req"]),
            "generation_tokens": to_int(m["gen_tok"]),
            "step_ms": to_float(m["ms"]),
            "dummy": m["dummy"] is not None,
            "kv_usage": to_float(m["kv"]) / 100 if m["kv"] else None,
        },
    ),
    wording(("SpecDecoding metrics",), K.SPEC_DECODE_METRICS, r"SpecDecoding metrics: ", _spec_fields),
    wording(  # V0's spec decode (engine/metrics.py 0.5-0.8): the rate is a fraction there, not a percentage; 0.5's
        # format doubled a word (`Number of draft tokens tokens: 42272`, vllm#6768)
        ("Speculative metrics: Draft acceptance rate",),
        K.SPEC_DECODE_METRICS,
        r"Speculative metrics: Draft acceptance rate: (?P<rate>[\d.]+),.*?Number of accepted tokens: (?P<acc>\d+), "
        r"Number of draft tokens(?: tokens)?: (?P<drafted>\d+)",
        lambda m: {
            "acceptance_rate": to_float(m["rate"]),
            "accepted_tokens": to_int(m["acc"]),
            "drafted_tokens": to_int(m["drafted"]),
        },
    ),
    # "by" is vLLM's word (0.4 to 0.10, vllm/core/scheduler.py); "in", and "impact" for "affect", a 0.6.1 build's
    # (vllm#8219, pasted from a company image): the same warning, and the same KV pressure behind it.
    wording(
        ("is preempted by PreemptionMode", "is preempted in PreemptionMode"),
        K.V0_PREEMPTION_WARNING,
        r"Sequence group \S+ is preempted (?:by|in) PreemptionMode\.\w+.*?"
        r"(?:total_(?:num_)?cumulative_preemption(?:_cnt)?=(?P<n>\d+))?$",
        lambda m: {"total_preemptions": to_int(m["n"])},
    ),
    wording(("disabling stats logging",), K.STATS_DISABLED, r"disabling stats logging"),
)
