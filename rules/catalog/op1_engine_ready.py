"""OP-1.11: the API server stopped waiting for the engine before the engine had started (the engine-ready wait).

Why a rule of its own: when vLLM starts more than one API server process (`--api-server-count`, data-parallel
deployments: the `ApiServer_N` processes), each of them waits for the engine cores' first message on its input
socket, and gives up after VLLM_ENGINE_READY_TIMEOUT_S seconds (600 unset; the variable exists from 0.14, before it
the same 600 s were fixed in core_client.py). Loading a large checkpoint, compiling kernels at start (DeepGEMM,
FlashInfer) or a slow network volume can take longer, and the API server dies while the engine is still healthy
and busy: vLLM's own words are `Timed out waiting for engines to send initial message on input socket.` (0.9 to
0.16) and, from 0.17, `Timed out waiting for engine core processes to start. … Waited 600s (configured by
VLLM_ENGINE_READY_TIMEOUT_S)`. A paste often stops before that line; then the weights' progress bar still running
near 600 s when an `ApiServer_N` process dies says the same (vllm#35547, a 163-shard checkpoint at 9 min 36 s,
closed by vllm#35616, which named the variable in the message; vllm#32116, DeepGEMM's warm-up).
"""

from __future__ import annotations

import math

from rules import vllm_defaults as d
from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity

# A weight load this far into the wait when an API server dies is read as the wait running out.
NEAR_TIMEOUT_SHARE = 0.8
# The proposal: this many times the longer of the wait and the load the progress bar projects, in whole steps.
HEADROOM = 2.0
ROUNDED_TO_S = 300


def _check_engine_ready(facts: Facts) -> list[Finding]:
    timeout = facts.last_event(LogEventKind.ENGINE_READY_TIMEOUT)
    progress = facts.last_event(LogEventKind.WEIGHT_LOAD_PROGRESS)
    if timeout is not None:
        wait_s = timeout.timeout_ms / 1000 if timeout.timeout_ms else d.ENGINE_READY_TIMEOUT_S
        message = c.log_evidence(timeout, name="vLLM's engine-ready timeout", value=f"{wait_s:g} s")
        message.description = "the API server's wait for the engine cores' first message ran out"
        return [_finding(facts, wait_s, [message, *_load_evidence(progress)], progress, said=True)]
    died = facts.last_event(LogEventKind.API_SERVER_PROCESS_FAILED)
    if died is None or progress is None or not _near_the_wait(progress) or facts.events_of(*c.STARTUP_CAUSE_KINDS):
        return []
    process = c.log_evidence(died, name="API server process failed", value=died.message)
    process.description = "an API server process of a multi-API-server start died"
    return [_finding(facts, d.ENGINE_READY_TIMEOUT_S, [process, *_load_evidence(progress)], progress, said=False)]


def _near_the_wait(progress: LogEvent) -> bool:
    """The load had run most of the wait (finished or not: profiling and warm-up follow it inside the same wait)."""
    return (progress.load_seconds or 0) >= NEAR_TIMEOUT_SHARE * d.ENGINE_READY_TIMEOUT_S


def _load_evidence(progress: LogEvent | None) -> list[Evidence]:
    if progress is None:
        return []
    evidence = c.log_evidence(progress, name="weights loaded", value=progress.message)
    expected = f", about {c.clock(progress.load_expected_s)} in all" if progress.load_expected_s else ""
    evidence.description = f"the checkpoint's shards loaded after {c.clock(progress.load_seconds)}{expected}"
    return [evidence]


def _proposed_s(wait_s: float, progress: LogEvent | None) -> int:
    longest = max(wait_s, (progress.load_expected_s or 0) if progress else 0)
    return int(math.ceil(HEADROOM * longest / ROUNDED_TO_S) * ROUNDED_TO_S)


def _finding(facts: Facts, wait_s: float, evidence: list[Evidence], progress: LogEvent | None, said: bool) -> Finding:
    proposed = _proposed_s(wait_s, progress)
    loading = f" while the weights were still loading ({c.clock(progress.load_seconds)} in)" if progress else ""
    if said:
        title = (
            f"the API server stopped waiting for the engine after {wait_s:g} s{loading}: the engine takes longer to "
            f"start than {d.ENGINE_READY_TIMEOUT_ENV} allows"
        )
    else:  # inferred from the bar and the process's death: the wait is the default one
        title = (
            f"an API server process died{loading}: the engine takes longer to start than the engine-ready wait "
            f"({d.ENGINE_READY_TIMEOUT_ENV}, {wait_s:g} s unset)"
        )
    actions = [
        "Make the start shorter as well: the weights on a local disk rather than a network volume (or pre-downloaded "
        "into the image or a cache volume), and kernels compiled at start (DeepGEMM, FlashInfer) kept in a cache "
        "directory that survives restarts.",
    ]
    version = c.vllm_version(facts)
    if version is None or version < c.release_of(d.ENGINE_READY_TIMEOUT_ENV_SINCE)[:2]:
        actions.insert(
            0,
            f"{d.ENGINE_READY_TIMEOUT_ENV} exists from vLLM {d.ENGINE_READY_TIMEOUT_ENV_SINCE}; before it the wait "
            f"is fixed at {d.ENGINE_READY_TIMEOUT_S} s: on an older vLLM, upgrade to set it.",
        )
    return RULE_ENGINE_READY.finding(
        Severity.CRITICAL,
        title,
        summary="With several API server processes each waits for the engine cores' first message and gives up "
        f"after {d.ENGINE_READY_TIMEOUT_ENV} seconds ({d.ENGINE_READY_TIMEOUT_S} unset). Loading a large checkpoint, "
        "or compiling kernels at start, took longer: the engine was not failing, the wait was too short.",
        evidence=evidence,
        changes=[
            ConfigChange(
                flag=d.ENGINE_READY_TIMEOUT_ENV,
                current=f"{wait_s:g}",
                proposed=str(proposed),
                reason=f"{HEADROOM:g} times the longer of the wait and the weight load the progress bar projects: "
                "loading, profiling, CUDA graphs and warm-up must all fit in it",
                kind="env",
            )
        ],
        actions=actions,
        confidence=0.95 if said else 0.7,
    )


RULE_ENGINE_READY = Rule(
    code="OP-1.11",
    title="the API server stopped waiting for the engine before it had started",
    category=Category.STARTUP,
    check=_check_engine_ready,
    needs=("events",),
    page=RulePage(
        checks="vLLM's `Timed out waiting for engines to send initial message on input socket.` (0.9 to 0.16) or "
        "`Timed out waiting for engine core processes to start. … (configured by VLLM_ENGINE_READY_TIMEOUT_S)` "
        "(0.17 on); or, in a paste cut before it, an `ApiServer_N` process dying after the checkpoint's progress "
        f"bar has run {NEAR_TIMEOUT_SHARE:.0%} of the {d.ENGINE_READY_TIMEOUT_S} s wait.",
        why="Each API server process of a multi-API-server start waits for the engine cores' first message for "
        f"{d.ENGINE_READY_TIMEOUT_ENV} seconds ({d.ENGINE_READY_TIMEOUT_S} unset, fixed before "
        f"{d.ENGINE_READY_TIMEOUT_ENV_SINCE}); a start longer than that kills the server while the engine is fine.",
        example="A 163-shard checkpoint at `106/163 [09:36<05:20]` when `Process ApiServer_5:` printed its traceback "
        "(vllm#35547; vllm#35616 named the variable in vLLM's message).",
        fix=f"{d.ENGINE_READY_TIMEOUT_ENV} raised to {HEADROOM:g} times the longer of the wait and the load the bar "
        f"projects, rounded up to {ROUNDED_TO_S} s (an environment change; vLLM {d.ENGINE_READY_TIMEOUT_ENV_SINCE} "
        "or later); a shorter start (local weights, cached kernels).",
        limits="Without vLLM's message the cause is inferred from the bar and the process's death; an error of the "
        "engine itself in the text takes precedence.",
        references=[
            "https://github.com/vllm-project/vllm/issues/35547",
            "https://github.com/vllm-project/vllm/pull/35616",
            "https://github.com/vllm-project/vllm/issues/32116",
        ],
    ),
)

RULES: list[Rule] = [RULE_ENGINE_READY]
