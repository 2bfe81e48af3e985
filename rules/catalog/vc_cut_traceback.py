"""VC-3: a pasted traceback that stops before its exception line.

A person on call copies what fits on the screen, and an issue's quote is often the middle of a long worker
traceback: frames, and no `SomethingError: …` line after them. Saying "nothing looks wrong" of a crash is the
worst answer; the honest one is where vLLM was when the paste stops (the deepest vLLM frame, the component
and the phase its calls say), what vLLM does there, and that the exception line, which names the error, is
the part to fetch. The collector records it as `LogEventKind.CUT_TRACEBACK`.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# The cause is unknown: the finding says where to look, never what broke, so it yields to any rule that names one.
CUT_CONFIDENCE = 0.35
# What vLLM does in the calls a traceback is most often cut in, as an on-call engineer would say it.
ACTIVITIES: dict[str, str] = {
    "load_model": "loading the model's weights",
    "init_device": "initialising the GPU and the distributed group",
    "_initialize_kv_caches": "sizing and allocating the KV cache",
    "determine_num_available_blocks": "profiling memory with a dummy forward pass, to size the KV cache",
    "determine_available_memory": "profiling memory with a dummy forward pass, to size the KV cache",
    "profile_run": "profiling memory with a dummy forward pass, to size the KV cache",
    "capture_model": "capturing CUDA graphs",
    "compile_or_warm_up_model": "compiling and warming up the model",
    "_wait_for_engine_startup": "waiting for the engine core process to start (its own log has the error)",
    "schedule": "scheduling a step",
    "execute_model": "running a forward pass",
    "execute_model_async": "running a forward pass",
    "step": "running an engine step",
    "step_async": "running an engine step",
    "collective_rpc": "calling every worker and waiting for their replies",
    # v1/executor/multiproc_executor.py: a reply that does not come in time is `RPC call to <method> timed out.`
    "get_response": "waiting for the workers' reply to a call (a model step or a utility): a worker failed, or is "
    "stuck in or too slow at the step",
    # distributed/device_communicators/shm_broadcast.py: the engine reads its workers' replies there, and each
    # worker its next step: the other side has not written (stuck, slow or gone)
    "dequeue": "waiting for the other side of the queue (the workers' reply, or a worker's next step) to write",
    "acquire_read": "waiting for the other side of the queue (the workers' reply, or a worker's next step) to write",
    "get_output": "waiting for the engine core's output (the engine core's log has the error)",
    "get_output_async": "waiting for the engine core's output (the engine core's log has the error)",
}
_PHASES = {"startup": "during startup", "serving": "while serving"}


def _package_of(path: str) -> str | None:
    """`vllm` for a frame the collector counts as vLLM's (`vllm/` in its path, a checkout's too: the same test as
    pasted_text.deepest_vllm_frame, which falls back to the last frame when none is), else the installed package
    the frame is in (`uvicorn`, `autogen_ext`), else None."""
    if "vllm/" in path.replace("\\", "/"):
        return "vllm"
    return c.installed_package(path)


def _check_cut(facts: Facts) -> list[Finding]:
    cut = facts.first_event(LogEventKind.CUT_TRACEBACK)
    if cut is None:
        return []
    if cut.code_file is None:  # a notebook's traceback cut at its header: the class alone
        return [_cut_at_header(cut)]
    package = _package_of(cut.code_file or "")
    frame = (
        "last vLLM frame" if package == "vllm" else f"last frame (in {package or 'code outside vLLM'}; none of vLLM's)"
    )
    where = f"in {cut.component}" if cut.component else ("in vLLM" if package == "vllm" else "outside vLLM")
    phase = _PHASES.get(cut.phase or "", "phase unknown")
    doing = ACTIVITIES.get(cut.function or "") if package == "vllm" else None
    evidence = c.log_evidence(cut, name="last_frame", value=cut.message)
    evidence.description = (
        f"the deepest {'vLLM ' if package == 'vllm' else ''}frame before the text ends, {where}, {phase}"
    )
    summary = (
        f"The text ends inside a traceback, before its exception line: the {frame} is {cut.message} "
        f"({where}, {phase})" + (f", where vLLM is {doing}" if doing else "") + ". The exception line (the "
        "traceback's last line, `SomethingError: …`) names the error; without it no cause can be told."
    )
    raised = f"a {cut.exception} traceback" if cut.exception else "a traceback"  # a notebook's header names it
    return [
        RULE_CUT_TRACEBACK.finding(
            # What the paste lacks, not how bad the crash is: a finding that names a cause ranks first (above it
            # by severity, or at MEDIUM by confidence), one about tuning (LOW) after it.
            Severity.MEDIUM,
            f"{raised} cut before its exception line, {where}, {phase}: {frame} {cut.message}",
            summary=summary,
            evidence=[evidence],
            actions=[
                f"Fetch the rest of the traceback: the lines after {cut.message} down to the exception line, "
                "and the ERROR lines just before the traceback (`kubectl logs <pod> --previous`, `docker logs "
                "<container> 2>&1 | tail -n 300`, or the server's log file); triage them with this text.",
                "In a multi-process engine (V1, tensor parallel) the worker's or the engine core's traceback is "
                "printed apart from the API server's: take the lines prefixed with the worker's or EngineCore's "
                "pid, not only the API server's.",
            ],
            confidence=CUT_CONFIDENCE,
        )
    ]


def _cut_at_header(cut: LogEvent) -> Finding:
    """IPython prints the class first (`RuntimeError    Traceback (most recent call last)`), then the frames and
    `RuntimeError: message`: a paste that stops at the header knows what was raised, not where or why."""
    phase = _PHASES.get(cut.phase or "", "phase unknown")
    evidence = c.log_evidence(cut, name="traceback_header", value=cut.exception)
    evidence.description = f"a notebook traceback's header, {phase}; nothing of it after"
    return RULE_CUT_TRACEBACK.finding(
        Severity.MEDIUM,
        f"a {cut.exception} traceback cut at its header, {phase}: no frame and no message pasted",
        summary=f"The text ends at a notebook's traceback header: a {cut.exception} was raised ({phase}), and the "
        f"frames (where) and the `{cut.exception}: …` line (why) that follow it in the notebook are not in the "
        "text; without them no cause can be told.",
        evidence=[evidence],
        actions=[
            f"Copy the whole traceback from the notebook cell's output, down to its last line (`{cut.exception}: "
            "…`), with the log lines printed just before it, and triage them with this text.",
            "If the cell ran vLLM in the notebook (`LLM(...)`), the engine's own error may be printed above the "
            "traceback, or in a worker process's output: take those lines too.",
        ],
        confidence=CUT_CONFIDENCE,
    )


RULE_CUT_TRACEBACK = Rule(
    code="VC-3",
    title="a traceback cut before its exception line: where vLLM was, and what to fetch",
    category=Category.RELIABILITY,
    check=_check_cut,
    needs=("events",),
    page=RulePage(
        checks="The text ends inside a traceback: frames were read and no exception line followed them; or it "
        "ends at a notebook's traceback header (`RuntimeError    Traceback (most recent call last)`), which names "
        "the class before any frame.",
        why="A crash pasted without its last line still says where vLLM was (the deepest vLLM frame, its "
        "component, startup or serving); answering 'nothing looks wrong' to a crash would send the engineer "
        "away with nothing, while the missing line is usually one command away.",
        example='File ".../vllm/engine/llm_engine.py", line 484, in _initialize_kv_caches (and nothing after)',
        fix="None to propose: the cause is in the exception line that was not pasted. The finding says which "
        "lines to fetch and from which process.",
        limits="Ranks below any rule that names a cause (MEDIUM, at low confidence), so a log whose earlier lines "
        "explain the failure keeps that finding on top. The phase comes from the outermost frame that names a "
        "start-up or serving call.",
        references=["docs/triage.md"],
    ),
)

RULES: list[Rule] = [RULE_CUT_TRACEBACK]
