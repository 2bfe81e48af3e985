"""HL-1 … HL-3: engine health — hung or dead, whatever /health says.

A /health 200 does not prove progress (docs/reference.md §2.7): hang incidents answer /v1/models while nothing is
generated and `No available shared memory broadcast block found` repeats every 60 s. Death
shows as `EngineCore encountered a fatal error` / EngineDeadError and, from 0.11, /health 503.
The same shm wait printed while the engine is still starting (torch.compile on vLLM's CPU
backend takes about a minute) is compilation, not a hang: the collector marks it
`during_startup` and HL-1 leaves it out.
"""

from __future__ import annotations

from rules import signals, vllm_defaults
from rules.alerts import BY, Alert, rate
from rules.catalog import common as c
from rules.catalog import op7_kvcached_pool
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt

TIMEOUT_ENV = vllm_defaults.EXECUTE_MODEL_TIMEOUT_ENV
TIMEOUT_S = vllm_defaults.EXECUTE_MODEL_TIMEOUT_S
JIT_TIMEOUT_FACTOR = 4  # the step deadline proposed when a JIT compile ran inside it: minutes fit, a hang still ends

# "For minutes", measured: vLLM itself calls a 60 s wait a hang (its shared-memory broadcast warns
# after 60 s without a step), and one legitimate step can take tens of seconds (a 2,048-token
# prefill chunk of an 8B model on a CPU, a first torch.compile), so a shorter silence proves nothing.
MIN_STALL_WINDOW_S = 60.0
# A worker crash recorded on a real vLLM 0.32 (CPU backend), its cause's marker, and what serves instead:
# with --pipeline-parallel-size 2 and --enforce-eager the last stage asserts on intermediate tensors the
# eager path never allocated, on the first request; compiled, the same server answers
# (tests/fixtures/vllm_cpu/pipeline_eager_crash.log).
PIPELINE_EAGER_MARKER = "intermediate_tensors is not None"
# The line each engine prints before the traceback that killed it (V1's engine core; V0's background loop):
# the exception that traceback ends with is the cause, the line itself is not.
V0_LOOP_FAILED = "Engine background task failed"
# asyncio's words for the same death, when the V0 loop's done-callback raised (0.2 to 0.10)
V0_LOOP_CALLBACK = ("_raise_exception_on_finish", "_log_task_completion")
DEATH_HEADERS = (
    "EngineCore encountered a fatal error",
    V0_LOOP_FAILED,
    "Exception in callback functools.partial(",
    *(f"Exception in callback {name}" for name in V0_LOOP_CALLBACK),  # vLLM 0.2's callback, without the partial
)
# HL-2's confidence beside a more specific cause: below every rule that names one (a guessed OOM phase, 0.6; an NCCL
# result, 0.55), so the cause leads and the engine's death follows it.
SPECIFIC_BESIDE = 0.5
SPECIFIC_CAUSES = (
    LogEventKind.RPC_TIMEOUT,
    LogEventKind.NCCL_WATCHDOG_TIMEOUT,
    LogEventKind.NCCL_ERROR,
    LogEventKind.WORKER_DIED,
    LogEventKind.CUDA_OOM,
    LogEventKind.EMPTY_PROMPT,  # V0 asserted on a request with no tokens (OP-5.21)
    LogEventKind.DETOKENIZER_UNKNOWN_ID,  # the detokenizer's failure on an id (OP-7.70) ended the engine loop
    LogEventKind.DECODE_STREAM_FAILED,  # … or on DecodeStream's state or input (OP-7.192), V1's output handler
    LogEventKind.ZERO_PROBABILITIES,  # sampling on probabilities cut to nothing (OP-5.64)
    LogEventKind.NAN_PROBABILITIES,  # … or holding inf or NaN (HL-9)
)


def _stalled(facts: Facts) -> list[Evidence]:
    """Evidence that work is pending but no token was generated over a long enough window."""
    if facts.window is None or facts.window.interval_s < MIN_STALL_WINDOW_S:
        return []
    tokens, steps = signals.work_rates(facts)  # steps: the engine's heartbeat, one per step, prefill or decode
    run, queue = signals.running(facts), signals.waiting(facts)
    pending = (run.value if run else 0.0) + (queue.value if queue else 0.0)
    if (tokens is None and steps is None) or signals.moved((tokens, steps)) or pending < 1:
        return []
    evidence = [
        s.evidence.model_copy(update={"threshold": 0, "comparison": "=="}) for s in (tokens, steps) if s is not None
    ]
    evidence += [s.evidence for s in (run, queue) if s is not None]
    return evidence


def _progress_after(facts: Facts, line_no: int | None) -> bool:
    """Work done after `line_no` (same log): a stats line with generation throughput > 0, or an offline job's
    progress bar redrawn with prompts finished (tqdm redraws only when a prompt finishes). A 0.32 offline job on CPU
    printed two 60 s waits during one long batch of prefills, then finished every prompt
    (tests/fixtures/vllm_cpu/offline_data_parallel_contended.log: another vLLM worker held a core)."""
    if line_no is None:
        return False
    after = [e for e in facts.events if e.line_no is not None and e.line_no > line_no]
    return any(
        (e.kind is LogEventKind.STATS_LINE and (e.generation_throughput_tps or 0) > 0)
        or (e.kind is LogEventKind.OFFLINE_PROGRESS and (e.prompts_done or 0) > 0)
        for e in after
    )


# What a run of stats lines with no token says, for the finding's reader.
QUIET_LINES = (
    " The API server prints its stats line every 10 s from the engine's last report, whether the engine steps or "
    "not: lines with requests running and 0.0 tokens/s for a minute mean no step finished a token."
)


def _stalled_lines(facts: Facts) -> tuple[list[LogEvent], float]:
    """The longest run of one engine's consecutive stats lines with requests running and no token, prompt or
    generated, and the seconds it spans, when that is MIN_STALL_WINDOW_S or more; ([], 0) otherwise.

    Why the lines alone tell a stall: vLLM's API server prints the stats line every VLLM_LOG_STATS_INTERVAL (10 s)
    whatever the engine does, its throughputs from the tokens the engine reported since the last line and its counts
    from the engine's last report (vllm/v1/metrics/loggers.py, 0.32; V0's server forced the same line every 10 s).
    A line with requests running and 0.0 of both is an interval in which no step finished a token; a minute of them
    is what vLLM itself calls a hang (MIN_STALL_WINDOW_S). The run's span starts at the line before it (its first
    zero interval began there), or at its first line when nothing precedes it."""
    longest: list[LogEvent] = []
    longest_span = 0.0
    lines = [e for e in facts.events_of(LogEventKind.STATS_LINE) if e.time_s is not None]
    for engine in sorted({e.engine or "" for e in lines}):
        previous_s: float | None = None
        run: list[LogEvent] = []
        run_start_s = 0.0
        for line in (e for e in lines if (e.engine or "") == engine):
            now_s = line.time_s or 0.0
            if (line.running or 0) >= 1 and line.prompt_throughput_tps == 0 and line.generation_throughput_tps == 0:
                if not run:
                    run_start_s = previous_s if previous_s is not None else now_s
                run.append(line)
                if now_s - run_start_s > longest_span:
                    longest, longest_span = list(run), now_s - run_start_s
            else:
                run = []
            previous_s = now_s
    return (longest, longest_span) if longest_span >= MIN_STALL_WINDOW_S else ([], 0.0)


def serving_shm_waits(facts: Facts) -> list[LogEvent]:
    """shm_broadcast waits printed after the engine finished starting (a start-up one is compilation)."""
    return [e for e in facts.events_of(LogEventKind.SHM_BROADCAST_HANG) if not e.during_startup]


def _hang_evidence(
    stall: list[Evidence], quiet: list[LogEvent], quiet_s: float, shm: list[LogEvent], health: int | None
) -> list[Evidence]:
    """What HL-1 shows: the scrape window's silence, the silent stats lines, the shm waits, /health's answer."""
    evidence = list(stall)
    if quiet:
        evidence.append(
            c.log_evidence(quiet[-1], "stats lines with 0 tokens/s", quiet_s, MIN_STALL_WINDOW_S, ">=", "s")
        )
    if shm:
        evidence.append(
            c.log_evidence(shm[-1], "shm_broadcast warnings", len(shm), 1, ">" if len(shm) > 1 else ">=", "lines")
        )
    if health is not None:
        evidence.append(Evidence(source="probe", name="GET /health", value=health))
    return evidence


def _check_hang(facts: Facts) -> list[Finding]:
    shm = serving_shm_waits(facts)
    stall = _stalled(facts)
    quiet, quiet_s = _stalled_lines(facts)
    if not shm and not stall and not quiet:
        return []
    health = facts.endpoint.health_status if facts.endpoint else None
    evidence = _hang_evidence(stall, quiet, quiet_s, shm, health)
    signs = [f"{len(shm)} shm_broadcast warning(s)"] if shm else []
    if quiet:
        signs.insert(
            0, f"0 tokens/s for {quiet_s:,.0f} s in the stats lines with {quiet[-1].running} request(s) running"
        )
    last_sign = max((e.line_no or 0 for e in (*shm[-1:], *quiet[-1:])), default=None)
    if not stall and _progress_after(facts, last_sign):
        return [
            RULE_HANG.finding(
                Severity.MEDIUM,
                f"engine stalled ({'; '.join(signs)}) but generated tokens afterwards",
                evidence=evidence,
                confidence=0.5,
                summary="A worker blocked for a while (compilation, quantization, a slow rank) and then recovered.",
                actions=["If it recurs, dump worker stacks during the stall (py-spy dump --pid …)."],
            )
        ]
    if stall:
        signs.insert(0, f"0 tokens/s over {fmt(facts.window.interval_s)} s with requests pending")
    confidence = 0.9 if (stall and (shm or quiet)) or len(shm) >= 2 or (shm and quiet) else 0.8 if quiet else 0.6
    return [
        RULE_HANG.finding(
            Severity.CRITICAL,
            "engine hung: " + "; ".join(signs) + (f" (/health {health})" if health else ""),
            evidence=evidence,
            confidence=confidence,
            summary="The engine accepts requests but makes no progress; a worker is stuck (NCCL, compile, "
            "quantization)." + (QUIET_LINES if quiet else ""),
            actions=[
                "Dump stacks of the worker processes (py-spy dump --pid …) to find the stuck rank.",
                "Restart the server; /health may keep returning 200 while hung, so alert on token throughput.",
            ],
        )
    ]


# The stall as an alert: requests in the server, and neither a generated token nor an engine step
# over MIN_STALL_WINDOW_S (the same window the rule needs), while the server exposes those counters.
STALL_WINDOW = f"{MIN_STALL_WINDOW_S:g}s"
ALERT_STALL = Alert(
    name="VllmEngineStalled",
    expr=(
        f"(sum by ({BY}) (vllm:num_requests_running) + sum by ({BY}) (vllm:num_requests_waiting) >= 1)"
        f" and on ({BY}) (sum by ({BY}) (vllm:generation_tokens_total) >= 0)"
        f" unless on ({BY}) ({rate('vllm:generation_tokens_total', STALL_WINDOW)} > 0)"
        f" unless on ({BY}) ({rate('vllm:iteration_tokens_total_count', STALL_WINDOW)} > 0)"
    ),
    for_="1m",
    severity=Severity.CRITICAL,
    description=(
        "{{ $labels.instance }} ({{ $labels.model_name }}): {{ $value }} request(s) in the server and no engine "
        f"step or generated token for {MIN_STALL_WINDOW_S:g} s; /health may still answer 200."
    ),
)

RULE_HANG = Rule(
    code="HL-1",
    title="engine hung (no progress)",
    category=Category.HEALTH,
    check=_check_hang,
    alerts=(ALERT_STALL,),
    needs=("window", "events"),
    page=RulePage(
        checks="`No available shared memory broadcast block found …` warnings, or a window of "
        f">= {MIN_STALL_WINDOW_S:g} s with "
        "requests running or waiting, zero generated tokens and no engine step: the heartbeat is "
        "vllm:iteration_tokens_total, observed once per step, prefill or decode; or one engine's stats lines with "
        f"requests running and 0.0 tokens/s, prompt and generated, for >= {MIN_STALL_WINDOW_S:g} s (timed from the "
        "line before the first, where its interval began). Later progress (a stats line with tokens, an offline "
        "progress bar with prompts finished) makes it a recovered stall.",
        why="/health only checks that the engine process answers; a stuck worker blocks every step.",
        example="/v1/models answers, num_requests_running 4, generation tokens +0 over 60 s, shm_broadcast warning "
        "every 60 s (#51921); or the silent stall: 3 waiting, 0 running, /health 200, no step in the window.",
        fix="Find the stuck rank (stack dump), restart; alert on token throughput, not /health.",
        limits="One shm warning after start-up can be a long compilation; confidence rises with repeats or a "
        "stalled window. Warnings before the engine finished starting (`init engine … took`, `Starting "
        "vLLM server on`) are start-up compilation and are not counted. A silence shorter than "
        f"{MIN_STALL_WINDOW_S:g} s is not reported: one long prefill step or a compilation fills it; scrape "
        f"--metrics-interval {MIN_STALL_WINDOW_S:g} or more to see a stall.",
        references=["https://github.com/vllm-project/vllm/issues/51921"],
    ),
)


def _check_dead(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.FATAL_ERROR, LogEventKind.ENGINE_DEAD)
    health = facts.endpoint.health_status if facts.endpoint else None
    if not events and health not in (500, 503):
        return []
    # A worker's own traceback comes before the engine core's: the core's exception (a KeyError on a request
    # id the worker never returned) is then the consequence, the worker's the cause.
    worker = next((e for e in facts.events_of(LogEventKind.WORKER_EXCEPTION) if _named(e)), None) if events else None
    v0_dead = _v0_dead(events)
    cause = _death_cause(events, worker) or v0_dead
    evidence = [c.log_evidence(e) for e in ([worker] if worker else []) + events[:2]]
    if health is not None:
        evidence.append(Evidence(source="probe", name="GET /health", value=health, threshold=200, comparison="!="))
    chain = [e for e in facts.events_of(LogEventKind.WORKER_DIED) if c.follows_engine_death(facts, e)]
    evidence += [c.log_evidence(e) for e in chain[:1]]
    link = _death_link(events, cause)
    title = "engine dead" + link + (f" ({cause})" if cause else "")
    title += f" (/health {health})" if health else ""
    v0_loop = v0_dead is not None or any(
        V0_LOOP_FAILED in e.raw or any(name in e.raw for name in V0_LOOP_CALLBACK) for e in events
    )
    return [
        RULE_DEAD.finding(
            Severity.CRITICAL,
            title,
            evidence=evidence,
            confidence=_dead_confidence(facts, events),
            summary="The engine loop stopped; every request fails until the server restarts.",
            actions=_v0_loop_actions() if v0_loop else _V1_ACTIONS if link != CONSEQUENCE_ONLY else _FETCH_CAUSE,
            changes=_pipeline_eager_fix(facts, cause) or _step_size_suspect(facts, cause),
        )
    ]


def _death_cause(events: list[LogEvent], worker: LogEvent | None) -> str | None:
    """What the title names as the cause: the engine core's fatal error (its own message, not a death header),
    after a failed worker's exception when one came first (the caller falls back to V0's AsyncEngineDeadError)."""
    cause = next(
        (
            e.message
            for e in events
            if e.kind == LogEventKind.FATAL_ERROR and e.message and not e.message.startswith(DEATH_HEADERS)
        ),
        None,
    )
    if worker is not None:
        then = f"; then the engine core: {cause}" if cause else ""
        cause = f"{worker.process or 'a worker'}: {worker.message}{then}"
    return cause


def _v0_dead(events: list[LogEvent]) -> str | None:
    """V0's last AsyncEngineDeadError message: its background loop died (see _v0_loop_actions)."""
    return next((e.message for e in reversed(events) if (e.message or "").startswith("AsyncEngineDeadError")), None)


def _dead_confidence(facts: Facts, events: list[LogEvent]) -> float:
    """A more specific cause in the log (RPC timeout, NCCL, worker death, OOM) is the better top finding;
    the engine core's own death after its fatal error is the chain's last link, not a cause. A CUDA kernel
    fault is the cause wherever it is printed: inside the fatal error's traceback it is the root exception,
    and HL-4 says which kernels to turn off; a GPU's own fault (an Xid, an ECC error), OP-7.33."""
    specific = [e for e in facts.events_of(*SPECIFIC_CAUSES) if not c.follows_engine_death(facts, e)]
    specific += facts.events_of(LogEventKind.CUDA_KERNEL_FAULT, LogEventKind.GPU_FAULT, LogEventKind.CUDA_RUNTIME_ERROR)
    race = op7_kvcached_pool.died_of_the_race(facts)  # kvcached's pool race (OP-7.217), on that rule's own predicate
    return SPECIFIC_BESIDE if specific or race else 0.95 if events else 0.8


def _death_link(events: list[LogEvent], cause: str | None) -> str:
    """The link of the death chain the title names: the engine core's own `fatal error` (its traceback holds
    the cause); a text with only the consequence (`EngineDeadError` as the API server and its requests get
    it) says that the cause was printed elsewhere, rather than repeating "engine dead"."""
    if not events:
        return ""
    if events[0].kind == LogEventKind.FATAL_ERROR:
        return ": fatal error"
    if cause or any(e.kind == LogEventKind.FATAL_ERROR for e in events):
        return ""
    return CONSEQUENCE_ONLY


CONSEQUENCE_ONLY = ": the text holds its consequence (EngineDeadError), not the engine core's traceback with the cause"


# The API server's side alone: the cause was printed by another process, earlier.
_FETCH_CAUSE = [
    "Fetch the engine core's lines from before 'AsyncLLM output_handler failed': 'EngineCore encountered a fatal "
    "error.' and its traceback, printed under the engine core's own prefix (`(EngineCore_DP0 pid=…)`) by another "
    "process than the API server's (`kubectl logs <pod> --previous` after a restart, `docker logs <container>`, "
    "or the server's log file); triage them with this text.",
    "Restart the server (it shuts down unless VLLM_KEEP_ALIVE_ON_ENGINE_DEATH=1).",
]
_V1_ACTIONS = [
    "Read the traceback after 'EngineCore encountered a fatal error.' (and the 'Dumping …' lines).",
    "Restart the server (it shuts down unless VLLM_KEEP_ALIVE_ON_ENGINE_DEATH=1).",
]


def _v0_loop_actions() -> list[str]:
    """V0's engine (AsyncLLMEngine, vllm/engine/async_llm_engine.py) ran every request in one background
    loop: an exception one request raised stopped the loop, and /health and every later request then raised
    AsyncEngineDeadError. Releases after 0.5 made such errors the request's own (vllm#5903, for an invalid
    request parameter), and V0's engine is gone from current vLLM."""
    return [
        "Find the first exception before 'Background loop is stopped' (or 'Background loop has errored "
        "already'), the one the traceback after 'Engine background task failed' ends with: it is the root cause; "
        "the dead-engine errors after it are consequences.",
        "If that exception came from one request (an invalid parameter, a bad prompt), upgrade vLLM: V0's "
        "background loop stopped for a single request's error, which later releases fail for that request "
        "alone (vllm#5903).",
        "Restart the server meanwhile: a stopped background loop does not recover.",
    ]


def _pipeline_eager_fix(facts: Facts, cause: str | None) -> list[ConfigChange]:
    """The known crash of pipeline stages in eager mode (PIPELINE_EAGER_MARKER): compile instead."""
    config = facts.config
    if not cause or PIPELINE_EAGER_MARKER not in cause or config is None:
        return []
    if (config.pipeline_parallel_size or 1) < 2 or not config.enforce_eager:
        return []
    return [
        ConfigChange(
            flag="--enforce-eager",
            current="true",
            proposed="false",
            reason=f"pipeline stages ({config.pipeline_parallel_size}) in eager mode: the last stage finds no "
            "intermediate tensors from the one before and the engine dies on its first request (recorded on "
            "vLLM 0.32's CPU backend); compiled, the same layout serves",
            cost="a longer start while the model compiles (cached for the next start)",
        )
    ]


def _step_size_suspect(facts: Facts, cause: str | None) -> list[ConfigChange]:
    """With the cause cut from the text, a per-step token budget beyond any default vLLM picks is the first
    setting to take back: the step that carries the most tokens is the one that allocates the most
    (activations, MoE and attention workspaces), so a death that follows it goes away with it. Proposed
    only for a budget the user set above vLLM's largest default, never when the text names the cause."""
    config = facts.config
    if cause or config is None or not config.is_explicit("--max-num-batched-tokens"):
        return []
    budget = config.max_num_batched_tokens
    if budget is None or budget <= vllm_defaults.HUGE_MAX_NUM_BATCHED_TOKENS:
        return []
    known_gpu = facts.hardware is not None and facts.hardware.usable_gib is not None
    default = c.default_batched_tokens(facts) if known_gpu else vllm_defaults.LARGE_MAX_NUM_BATCHED_TOKENS
    which = (
        "vLLM's default on this GPU"
        if known_gpu
        else f"vLLM's default on a GPU of {vllm_defaults.LARGE_GPU_GIB} GiB or more "
        f"({vllm_defaults.BASE_MAX_NUM_BATCHED_TOKENS} below)"
    )
    return [
        ConfigChange(
            flag="--max-num-batched-tokens",
            current=str(budget),
            proposed=str(default),
            reason=f"the text stops before the cause; this launch lets one step carry {budget:,} tokens, "
            f"{budget / default:,.0f}x {which}, and that step allocates the most. If the engine survives at "
            f"{default:,}, the death follows the step size",
            cost="long prompts are prefilled in more, smaller chunks: a little more time to first token for them",
        )
    ]


RULE_DEAD = Rule(
    code="HL-2",
    title="engine dead",
    category=Category.HEALTH,
    check=_check_dead,
    needs=("events", "endpoint"),
    page=RulePage(
        checks="Any link of the chain vLLM prints when its engine loop dies, or /health answering 503 (0.11+) "
        "or 500. The chain, in log order: (1) the engine core process logs `EngineCore encountered a fatal "
        "error.` with the traceback of the root cause (often after `Dumping input data …` lines with the "
        "scheduler output of the failed step); (2) the API server's output loop logs `AsyncLLM "
        "output_handler failed.`, and every request in flight or sent later fails with `EngineDeadError: "
        "EngineCore encountered an issue. See stack trace (above) for the root cause.` (HTTP 500); (3) the "
        "client side notices the process gone: `Engine core proc EngineCore_DP0 died unexpectedly, "
        "shutting down client.` (0.33: `Engine core process … died unexpectedly.`), and the server shuts "
        "down unless VLLM_KEEP_ALIVE_ON_ENGINE_DEATH=1. The title quotes the root cause from (1) when "
        "the log has it; when a worker failed first (`WorkerProc hit an exception.` with its own traceback, "
        "before (1)), the worker's exception is the cause and the engine core's the consequence, and an "
        "exception without a message (a failed `assert`) is quoted with its source line and frame. A text "
        "holding only (2), the API server's side, says that the cause is in the engine core's lines, not in "
        "it.",
        why="After engine death every request fails (HTTP 500) until a restart; the links after the "
        "first are consequences, so a log cut after (3) still has its cause near (1).",
        example="(EngineCore) EngineCore encountered a fatal error. RuntimeError: CUDA error: an illegal memory "
        "access was encountered → (APIServer) AsyncLLM output_handler failed. → EngineDeadError: EngineCore "
        "encountered an issue. See stack trace (above) for the root cause.",
        fix="Fix the root cause in the traceback under (1); restart. V0's `AsyncEngineDeadError: Background loop is "
        "stopped` is the same death in the old engine, quoted in the title: there one request's error stopped the "
        "whole loop, which later releases fail for that request alone (vllm#5903), so the action is to upgrade.",
        limits="The cause is in the traceback, which other rules (OP-1.8, OP-3.x, HL-3) may classify; a "
        "specific cause found there ranks above this finding. A process death that follows the engine's "
        "fatal error is listed as a link of this chain, not as a cause (OP-3.3).",
        references=["vllm/v1/engine/core.py", "vllm/v1/engine/async_llm.py", "vllm/v1/engine/exceptions.py"],
    ),
)


def _named(event: LogEvent) -> bool:
    """A worker exception whose traceback's cause was read (not just its `WorkerProc hit an exception.`): the reader
    names the root exception's class on the event when it reads one."""
    return event.exception is not None


def _check_rpc_timeout(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.RPC_TIMEOUT)
    named = [e for e in events if e.rpc_method]  # a chain prints the queue's bare TimeoutError, then the RPC's
    events = named or events
    if not events:
        return []
    jit = facts.events_of(LogEventKind.JIT_DURING_INFERENCE)
    title = (
        f"RPC call to {named[-1].rpc_method} timed out ({len(events)}x, > {TIMEOUT_S} s)"
        if named
        else f"a worker's reply to the engine core timed out: a bare TimeoutError from its message queue "
        f"({len(events)}x; a model step waits {TIMEOUT_S} s by default)"
    )
    evidence = [c.log_evidence(events[-1], "RPC timeouts", len(events), 0, ">")]
    if jit:  # a kernel compiled inside the worker for a shape warm-up did not cover: the step outlasted the deadline
        return [_compiling_step(jit[-1], title, evidence)]
    return [
        RULE_RPC.finding(
            Severity.CRITICAL,
            title,
            evidence=evidence,
            confidence=0.9,
            summary=f"A model step did not return within {TIMEOUT_ENV}: a worker hangs or died."
            + (
                ""
                if named
                else " The engine core's multiprocess executor waits on each worker's reply through a shared-memory "
                "queue, which raises TimeoutError without words; the executor re-raises it as `RPC call to "
                "execute_model timed out.` (the chain's next exception, after 'The above exception was the direct "
                "cause'), so a paste of the chain's first exception line shows it bare."
            ),
            actions=[
                "Look for NCCL watchdog or worker-death lines at the same time (OP-3.2, OP-3.3), and in each "
                "worker's own log for the step it was in: the stuck rank is the cause, the timeout its symptom.",
                f"If the step is legitimately slow (huge batch, compilation), raise {TIMEOUT_ENV}.",
            ],
        )
    ]


def _compiling_step(jit: LogEvent, title: str, evidence: list[Evidence]) -> Finding:
    """vLLM's JIT monitor saw a kernel compile during inference, then the step's RPC timed out: the compile (minutes
    for a large fused kernel) ran inside the step, so the deadline, not a hang, ended it."""
    kernel = f"{jit.message} kernel {jit.function}" if jit.function else f"a {jit.message} kernel"
    compiled = c.log_evidence(jit, name="JIT compilation during inference", value=jit.function or jit.message)
    return RULE_RPC.finding(
        Severity.CRITICAL,
        f"{title}: the {kernel} was JIT-compiled during inference, inside the step",
        evidence=[*evidence, compiled],
        confidence=0.85,
        summary=f"vLLM's JIT monitor logged a {jit.message} kernel compiled after warm-up, for a shape warm-up did not "
        f"cover; the compile ran inside the model step, and the step outlasted {TIMEOUT_ENV} ({TIMEOUT_S} s by "
        "default), so the engine declared the worker dead. A compile is slow, not hung.",
        changes=[
            ConfigChange(
                flag=TIMEOUT_ENV,
                current=str(TIMEOUT_S),
                proposed=str(TIMEOUT_S * JIT_TIMEOUT_FACTOR),
                reason=f"{JIT_TIMEOUT_FACTOR} times the default: a compile of minutes fits, a real hang still ends",
                cost="a worker that truly hangs is declared dead that much later",
                kind="env",
            )
        ],
        actions=[
            "Cover the shape at warm-up so nothing compiles while serving (vLLM's monitor says so: 'consider "
            "extending warmup to cover this shape/config'): the batch sizes and lengths the traffic brings, or a "
            "kernel cache built ahead of time and kept between restarts.",
            "Run with --jit-monitor-mode error in testing to fail fast on each shape that still compiles.",
        ],
    )


RULE_RPC = Rule(
    code="HL-3",
    title="worker RPC timeout",
    category=Category.HEALTH,
    check=_check_rpc_timeout,
    needs=("events",),
    page=RulePage(
        checks="`TimeoutError: RPC call to execute_model timed out.` (or sample_tokens, 0.33), and the bare "
        "`TimeoutError` the shared-memory queue raises, logged by the V1 engine core (core.py) or ending in "
        "shm_broadcast.py.",
        why=f"The engine waited {TIMEOUT_ENV} ({TIMEOUT_S} s) for a model step.",
        example="TimeoutError: RPC call to execute_model timed out. (#17965)",
        fix="Find the hung rank (NCCL, driver); restart; raise the timeout only for legitimately slow steps: when "
        f"vLLM's JIT monitor logged a kernel compiled during inference just before, {JIT_TIMEOUT_FACTOR} times the "
        "default and warm-up that covers the shape.",
        limits="The timeout is the symptom; the stuck rank is the cause. A compile is read only from vLLM's JIT "
        "monitor (0.21 on).",
        references=[],
    ),
)


RULES: list[Rule] = [RULE_HANG, RULE_DEAD, RULE_RPC]
