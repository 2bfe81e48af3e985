"""OP-7.151 to OP-7.153: three of Python's and Ray's own reports around vLLM, read for what they say and what not.

OP-7.151: Ray prints `ray.exceptions.RayTaskError(<Exception>): ray::<Actor>.<method>()` before the traceback of an
exception raised inside a task or an actor's method; pasted alone, the header names the class and where, not why.
For an import error the two usual causes differ by the module's name below the header: a Ray worker imports from the
environment Ray gave it, not the driver's (OpenRLHF#400: `pip list` showed vLLM where the job ran, the workers had
none), and a framework's rollout worker imports vLLM's internals, which move between releases (microsoft/agent-
lightning PR #144: verl 0.5.0's rollout under vLLM 0.11.0).

OP-7.152: with the spawn start method, every process vLLM starts re-imports the main module; code that creates the
engine at import time (LLM(…) at a script's top level) then starts processes from a process still importing, and
multiprocessing stops with `An attempt has been made to start a new process before the current process has finished
its bootstrapping phase` (vLLM's troubleshooting guide: guard the script with `if __name__ == "__main__":`). vLLM
uses spawn when CUDA was initialised first, and always on some platforms; a vllm serve that stops so is a bug of its
release or plugin (vllm-project/tpu-inference PR #1708: pipeline parallelism on TPU v7).

OP-7.153: logging's handleError prints `--- Logging error ---`, a traceback and `Message: '<format>'` when a record
cannot be formatted, and the program goes on: the bug is in that log statement (vllm PR #6694: chunked prefill's
startup line formatted an unset max_num_batched_tokens with %d).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

_IMPORT_ERRORS = ("ModuleNotFoundError", "ImportError")


def _ray_task_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    exception, target = event.message or "an exception", event.component or "a task"
    if exception.rsplit(".", 1)[-1] in _IMPORT_ERRORS:
        return RULE_RAY_TASK.finding(
            Severity.HIGH,
            f"a Ray worker could not import a module in {target} ({exception}): the module's name, below this "
            "header, says whether the worker's environment lacks a package or the code imports one another release "
            "moved",
            summary="Ray runs a task in a worker process with its own environment: the node's Python, or the job's "
            "runtime_env, not the driver's virtual environment. And frameworks that drive vLLM (verl, OpenRLHF) "
            "import vLLM's internal modules, which move between releases.",
            evidence=[c.log_evidence(event, name="the exception Ray reports", value=exception)],
            actions=[
                "A package's name (`No module named 'vllm'`, 'openrlhf'): install it where the workers run, on every "
                "node, or in the job's runtime environment (`ray job submit --runtime-env-json "
                '\'{"pip": ["openrlhf[vllm]"]}\'`, OpenRLHF#400).',
                "A vLLM module's name (`vllm.x.y`): the framework was written for another vLLM release; install the "
                "vLLM its requirements name (agent-lightning PR #144: verl 0.5.0 does not run on vLLM 0.11.0).",
            ],
            confidence=0.6,
        )
    return RULE_RAY_TASK.finding(
        Severity.HIGH,
        f"a Ray task raised {exception} in {target}: its message and traceback follow this header",
        summary="Ray wraps an exception raised inside a task or an actor's method and prints this header first; "
        "the cause is the exception's own message and the frames below it.",
        evidence=[c.log_evidence(event, name="the exception Ray reports", value=exception)],
        actions=[
            f"Copy the lines after the header, down to the `{exception.rsplit('.', 1)[-1]}: …` line, and triage "
            "them: that line names the cause.",
        ],
        confidence=0.4,
    )


RULE_RAY_TASK = Rule(
    code="OP-7.151",
    title="an exception raised in a Ray task or actor method (RayTaskError's header)",
    category=Category.RELIABILITY,
    check=c.on_kind(LogEventKind.RAY_TASK_RAISED, _ray_task_finding),
    needs=("events",),
    fallback="failure",
    page=RulePage(
        checks="`ray.exceptions.RayTaskError(<Exception>): ray::<Actor>.<method>()` (a Serve replica's start is "
        "OP-7.41's).",
        why="The header names where an exception was raised in a Ray worker; for an import error, whether the "
        "worker's environment or the vLLM release is the cause.",
        example="`RayTaskError(ModuleNotFoundError): ray::WorkerDict.actor_rollout_init_model()` (verl's rollout on "
        "vLLM 0.11.0, microsoft/agent-lightning PR #144); OpenRLHF's actors without vLLM (OpenRLHF#400).",
        fix="The exception below the header; for imports, the workers' environment or the vLLM release the "
        "framework names.",
        limits="A fallback: a finding that names the exception's cause replaces it.",
        references=[
            "https://github.com/OpenRLHF/OpenRLHF/issues/400",
            "https://github.com/microsoft/agent-lightning/pull/144",
        ],
    ),
)


def _spawn_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE_SPAWN.finding(
        Severity.CRITICAL,
        "a process was started while the main module was still being imported: the code creates vLLM's engine at "
        'import time, outside `if __name__ == "__main__":`',
        summary="With the spawn start method every new process imports the main module again; an LLM(…) (or "
        "anything that starts vLLM's workers) at a script's top level then runs in each of them, and multiprocessing "
        "refuses. vLLM uses spawn when CUDA was initialised before its workers start, and on platforms that need it.",
        evidence=[c.log_evidence(event, name="multiprocessing's refusal", value=match.group(0))],
        actions=[
            'Put the script\'s work under `if __name__ == "__main__":` (vLLM\'s troubleshooting guide, "Python '
            'multiprocessing"), so the processes vLLM spawns import it without running it.',
            "When it comes from `vllm serve` itself (no script of yours), it is that release's or plugin's bug: "
            "upgrade (vllm-project/tpu-inference PR #1708 fixed one, pipeline parallelism on TPU v7).",
        ],
        confidence=0.8,
    )


RULE_SPAWN = Rule(
    code="OP-7.152",
    title="vLLM's workers spawned from a module still being imported (no __main__ guard)",
    category=Category.STARTUP,
    check=c.on_kind(LogEventKind.SPAWN_BEFORE_MAIN, _spawn_finding),
    needs=("events",),
    page=RulePage(
        checks="multiprocessing's `An attempt has been made to start a new process before the current process has "
        "finished its bootstrapping phase`.",
        why="Spawned processes re-import the main module; an engine created at import time starts them again.",
        example="`vllm serve` with pipeline parallelism on TPU v7 (vllm-project/tpu-inference PR #1708); an offline "
        "script with LLM(…) at its top level (vLLM's troubleshooting guide).",
        fix='`if __name__ == "__main__":` around the script\'s work; for vllm serve, an upgrade.',
        limits="Which code started the process is in the traceback above the message.",
        references=["https://github.com/vllm-project/tpu-inference/pull/1708"],
    ),
)


def _logging_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE_LOGGING.finding(
        Severity.LOW,
        f"Python's logging could not format a message ('{event.message}'): a bug in that log statement, and the "
        "program went on",
        summary="logging's handleError prints `--- Logging error ---`, its traceback and the record's format string "
        "instead of the message, then carries on: nothing failed but the line itself.",
        evidence=[c.log_evidence(event, name="the format string", value=event.message)],
        actions=[
            "Look past it: the failure you are chasing, if any, is another line of the log.",
            "The statement's arguments did not fit its placeholders (vllm PR #6694: an unset max_num_batched_tokens "
            "formatted with %d); a newer release of the program that logged it has it fixed or it is worth a report.",
        ],
        confidence=0.7,
    )


RULE_LOGGING = Rule(
    code="OP-7.153",
    title="a log statement that could not be formatted (logging's handleError)",
    category=Category.RELIABILITY,
    check=c.on_kind(LogEventKind.LOGGING_ERROR, _logging_finding),
    needs=("events",),
    page=RulePage(
        checks="logging's `Message: '<format with a placeholder>'` line under `--- Logging error ---`.",
        why="It looks like an error in the log and is harmless; the failure, if any, is elsewhere.",
        example="`Message: 'Chunked prefill is enabled with max_num_batched_tokens=%d.'` (vllm PR #6694).",
        fix="Nothing for the server; the statement's owner fixes it.",
        limits="Reads the Message line when its string holds a %-placeholder.",
        references=["https://github.com/vllm-project/vllm/pull/6694"],
    ),
)

RULES: list[Rule] = [RULE_RAY_TASK, RULE_SPAWN, RULE_LOGGING]
