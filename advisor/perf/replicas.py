"""How many replicas the load in flight needs, read off the performance model's ramp.

Why a model-chosen count and not "add replicas": the on-call question is how many. A ramp of
this server says how many requests one replica carries within the SLOs (its safe operating
point); the load in flight now (running + waiting, or the clients' stated concurrency) split
evenly over N replicas must stay at or under that point, so N = ceil(load / safe point). The
figures shown are the replayed ramp's at the largest load step each replica then carries: the
same replay `servops predict` prints for the ramped configuration (or for the flag change the
finding also proposes, since both would be applied together), so the command beside them
reproduces them. A balancer that does not spread load evenly needs more (OP-5.11).

Only closed-loop (concurrency) ramps size replicas: an open-loop ramp's load is a request rate,
which the in-flight count does not measure.
"""

from __future__ import annotations

import math

from pydantic import BaseModel

from rules.model import ConfigChange, PredictedEffect

# The rules whose remedy includes more replicas: queueing on a busy engine, slow steps under load,
# slow first tokens under load.
REPLICA_RULES = ("OP-5.2", "OP-5.4", "OP-5.1")
# vLLM's flag for replicas inside one server (one per GPU); separate servers behind a balancer do the same.
REPLICAS_FLAG = "--data-parallel-size"
# Engines that run on the host's cores: vLLM's CPU backend binds each engine to its own cores and the bundled
# engine has no data-parallel flag, so their replicas are servers (machines), never a flag of this command.
CPU_ENGINES = ("vllm-cpu", "bundled")
# The fleet's tok/s is N x one replica's only for replicas that share nothing: two real vLLM engines of
# one server on one host ran 0.75-0.88 of two lone engines (BENCHMARKS.md, "Two data-parallel vLLM engines").
SHARED_FRONT_END = " from separate servers; engines of one server share its front end and host, which takes part of it"


def replicas_are_servers(engine: str) -> bool:
    """Whether more replicas of `engine` are more servers like this one (CPU_ENGINES), not a flag of its
    command: the one test behind the replica change's wording and the proposed command that leaves it out."""
    return engine in CPU_ENGINES


class ReplicaSizing(BaseModel):
    """The replica count and the figures it rests on (per replica, and for the whole fleet)."""

    replicas: int
    in_flight: float
    safe_point: float
    per_replica_step: float
    ttft_p99_s: float | None
    itl_p99_s: float | None
    output_tokens_per_s: float
    relative_error: float


def size_replicas(
    in_flight: float | None, steps: list[dict], safe_point: float | None, relative_error: float
) -> ReplicaSizing | None:
    """N replicas for `in_flight` requests given a predicted ramp (`steps`, concurrency) and its safe point.

    None when one replica already carries the load, or when nothing is known to size against."""
    if not in_flight or not safe_point or in_flight <= safe_point or not steps:
        return None
    replicas = math.ceil(in_flight / safe_point)
    share = in_flight / replicas
    carried = [s for s in steps if s["offered"] <= share + 1e-9]
    if not carried:
        return None
    step = max(carried, key=lambda s: s["offered"])
    return ReplicaSizing(
        replicas=replicas,
        in_flight=in_flight,
        safe_point=safe_point,
        per_replica_step=step["offered"],
        ttft_p99_s=step["ttft_s"]["p99"],
        itl_p99_s=step["itl_s"]["p99"],
        output_tokens_per_s=step["output_tokens_per_s"],
        relative_error=relative_error,
    )


def replicas_change(
    sizing: ReplicaSizing, current: int, command: str, with_change: str | None, servers: bool = False
) -> ConfigChange:
    """The ConfigChange triage proposes, with its predicted effect and the command that reproduces it.
    `servers`: a CPU engine's replicas are servers like this one (`replicas_are_servers`), said so in the change and
    kept out of the proposed command (advisor/triage/run.py)."""
    setting = f" with {with_change}" if with_change else ""
    figures = _sizing_figures(sizing)
    fleet_of, cost, machines = _fleet(sizing, current, servers)
    if machines is not None:
        figures["servers"] = machines  # the count to act on: the flag's value counts engines
    return ConfigChange(
        flag=REPLICAS_FLAG,
        current=str(current),
        proposed=str(max(current, sizing.replicas)),
        reason=(
            f"one replica holds the SLOs up to {sizing.safe_point:g} concurrent requests{setting}; "
            f"{sizing.in_flight:g} are in flight, so ceil({sizing.in_flight:g} / {sizing.safe_point:g}) = {fleet_of}"
        ),
        cost=cost,
        predicted_effect=PredictedEffect(
            text=_sizing_text(sizing, setting, servers),
            figures={k: round(float(v), 4) for k, v in figures.items() if v is not None},
            command=command,
        ),
    )


def _sizing_figures(sizing: ReplicaSizing) -> dict[str, float | None]:
    """The sizing's figures under the names the prediction check and the reports read."""
    return {
        "replicas": sizing.replicas,
        "in_flight": sizing.in_flight,
        "safe_operating_point": sizing.safe_point,
        "per_replica_offered": sizing.per_replica_step,
        "ttft_p99_s_per_replica": sizing.ttft_p99_s,
        "itl_p99_s_per_replica": sizing.itl_p99_s,
        "output_tokens_per_s_per_replica": sizing.output_tokens_per_s,
        "output_tokens_per_s_fleet_at_least": sizing.replicas * sizing.output_tokens_per_s,
        "relative_error": sizing.relative_error,
    }


def _sizing_text(sizing: ReplicaSizing, setting: str, servers: bool) -> str:
    """The predicted effect in words: each replica's share, its step's latencies and the fleet's tokens/s."""
    fleet = sizing.replicas * sizing.output_tokens_per_s
    return (
        f"{sizing.in_flight:g} requests in flight over {sizing.replicas} replicas: each carries at most "
        f"{sizing.in_flight / sizing.replicas:.3g}, predicted at the ramp's {sizing.per_replica_step:g}-stream "
        f"step{setting}: TTFT p99 {seconds_text(sizing.ttft_p99_s)}, ITL p99 {ms_text(sizing.itl_p99_s)}, "
        f"{sizing.output_tokens_per_s:.0f} tok/s "
        f"per replica (at least {fleet:.0f} tok/s in all{'' if servers else SHARED_FRONT_END}) "
        f"(±{sizing.relative_error:.0%})"
    )


def _fleet(sizing: ReplicaSizing, current: int, servers: bool) -> tuple[str, str, int | None]:
    """What the replicas are, what they cost, and (for a CPU engine) how many servers like this one they take:
    this server's engines count in the total, so N engines are ceil(N / its engines) servers."""
    if not servers:
        fleet_of = f"{sizing.replicas} replicas (or as many servers behind an even balancer)"
        return fleet_of, f"{sizing.replicas}x the GPUs (or machines) of one replica", None
    machines = math.ceil(sizing.replicas / max(1, current))
    each = f" ({current} engines each)" if current > 1 else ""
    count = f"{sizing.replicas} engines: " if current > 1 else ""
    fleet_of = (
        f"{count}{machines} servers like this one{each} behind an even balancer (a CPU engine's replicas "
        "need their own cores: not a flag of this command)"
    )
    return fleet_of, f"{machines}x the machines of this server", machines


def seconds_text(value: float | None) -> str:
    """A latency as triage prints it in seconds ("–" when the step measured none)."""
    return "–" if value is None else f"{value:.2f} s"


def ms_text(value: float | None) -> str:
    """A latency as triage prints it in milliseconds ("–" when the step measured none)."""
    return "–" if value is None else f"{value * 1000:.0f} ms"
