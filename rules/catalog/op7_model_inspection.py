"""OP-7.158: the child Python that inspects the model's class failed, so vLLM does not know the architecture.

Why a rule of its own: before it builds the engine, vLLM learns what the model's class supports (multimodal, pooling,
LoRA, …) by importing the class in a separate interpreter, to keep CUDA uninitialised in the server's own process:
`python -m vllm.model_executor.models.registry` (`_run_in_subprocess`, vllm/model_executor/models/registry.py; 0.32
skips it when its cache of model info has the module's hash). When the child exits with an error, the server logs
`Error in inspecting model architecture '<arch>'` with `subprocess.CalledProcessError: Command '[…, '-m',
'vllm.model_executor.models.registry']' returned non-zero exit status 1.`, and then refuses with `Model
architectures [...] failed to be inspected`. Neither line holds the cause: the child's own traceback does, printed
after them as `RuntimeError: Error raised in subprocess:` followed by the child's stderr. Threads that pasted only
these lines (vllm#13216, a CPU build; vllm#21050, Qwen2.5-VL on 0.9.2; dhcode-cpp/X-R1#29) had no cause in them.
A child killed by a signal (`died with <Signals.SIGILL: 4>`) is HL-6's.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

INSPECTION_FAILED = re.compile(
    r"CalledProcessError: Command '\[[^\]]*'-m', 'vllm\.model_executor\.models\.registry'\]' returned non-zero exit "
    r"status (?P<status>-?\d+)"
    r"|Error in inspecting model architecture '(?P<arch>[\w.]+)'"
)


def _reproduce(arch: str) -> str:
    """The child's import, run in the foreground, so its traceback prints (the registry's table, `_VLLM_MODELS` in
    the 0.32 wheel and releases long before it, maps the architecture to its module and class)."""
    return (
        'python -c "import importlib; from vllm.model_executor.models.registry import _VLLM_MODELS as m; '
        f"mod, cls = m['{arch}']; getattr(importlib.import_module('vllm.model_executor.models.' + mod), cls)\""
    )


def _inspection_finding(facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    arch = found["arch"] or "<the architecture in the model's config.json>"
    status = f" (exit status {found['status']})" if found["status"] else ""
    return RULE.finding(
        Severity.HIGH,
        f"vLLM's inspection of the model's class failed in its child Python{status}: the cause is the child's own "
        "traceback, printed after this line",
        summary="vLLM imports the model's class in a separate interpreter (python -m "
        "vllm.model_executor.models.registry) to learn what it supports without initialising CUDA in the server. "
        "The child failed, and these words carry none of its reasons: its stderr follows in the log as "
        "`RuntimeError: Error raised in subprocess:`. What fails there is the import of the model's module in this "
        "environment: a package it needs missing or too old for the architecture (transformers above all), or a "
        "vLLM whose compiled extension does not load with the installed torch.",
        evidence=[c.log_evidence(event, name="the inspection that failed", value=found.group(0))],
        actions=[
            "Read the lines after this one, from `RuntimeError: Error raised in subprocess:` to the child's last "
            "exception, and paste them to `servops triage`.",
            "Or run the child's import in the foreground with the server's Python and environment: "
            f"`{_reproduce(arch)}` prints the error it hit.",
        ],
        confidence=0.6,
    )


RULE = Rule(
    code="OP-7.158",
    title="the model's class failed to import in vLLM's inspection subprocess",
    category=Category.STARTUP,
    check=c.on_phrase(INSPECTION_FAILED, _inspection_finding, kinds=(*c.UNPLACED, LogEventKind.VLLM_MESSAGE)),
    needs=("events",),
    page=RulePage(
        checks="`subprocess.CalledProcessError: Command '[…, '-m', 'vllm.model_executor.models.registry']' returned "
        "non-zero exit status N` and vLLM's `Error in inspecting model architecture '<arch>'`.",
        why="vLLM imports the model's class in a child interpreter; its failure is reported without its cause.",
        example="vllm#21050: `vllm serve Qwen2.5-VL-3B-Instruct` on 0.9.2 stopped at this line.",
        fix="The child's traceback (after the line, as `RuntimeError: Error raised in subprocess:`), or the same "
        "import run by hand, names the package or build to fix.",
        limits="Says where the cause is, not what it is.",
        references=["https://github.com/vllm-project/vllm/issues/21050"],
    ),
)

RULES: list[Rule] = [RULE]
