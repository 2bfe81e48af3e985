"""OP-7.26: a package built on vLLM passes it an argument the installed vLLM does not take.

Why a rule of its own: frameworks that start vLLM from Python (TRL's `vllm-serve`, evaluation harnesses, RL
trainers) pass engine arguments straight through `LLM(...)` or `EngineArgs(...)`. Each release of such a package is
written against one vLLM; when the installed vLLM is older, its EngineArgs refuses the newer argument in Python's
words (`EngineArgs.__init__() got an unexpected keyword argument 'worker_extension_cls'`), raised in vLLM's file,
so the traceback looks like vLLM's fault. The traceback's outer frames name the package that called; whether vLLM
0.32's command line takes the argument (servops' table of vLLM's interface) tells which side is older. Such
packages often pin the vLLM they were written for in an extra named `vllm`: huggingface/trl#3304 was fixed by
`pip install trl[vllm]`.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import UNEXPECTED_KEYWORD, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_caller_argument(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR):
        refused = UNEXPECTED_KEYWORD.search(event.message or "")
        in_vllm = c.installed_package(event.code_file) == "vllm"
        if event.exception == "TypeError" and refused and event.caller and in_vllm:
            return [_caller_finding(event, event.caller, refused["function"], refused["keyword"])]
    return []


def _caller_finding(event: LogEvent, caller: str, function: str, keyword: str) -> Finding:
    name = caller.replace("_", "-")
    flag = "--" + keyword.replace("_", "-")
    if event.known_in_release:
        which = (
            f"vLLM {event.known_in_release} takes it ({flag}), so the installed vLLM is older than the one {name} "
            "was written for"
        )
    else:
        which = (
            f"vLLM {flag} is not among the flags of the newest vLLM servops knows either, so it may have been renamed "
            f"or removed: the installed vLLM may be newer than {name} supports"
        )
    return RULE_CALLER_ARGUMENT.finding(
        Severity.CRITICAL if event.phase != "serving" else Severity.HIGH,
        f"{name} passes vLLM an argument the installed vLLM version does not take ({keyword}): {name} and vLLM are "
        "not versions made for each other",
        summary=f"{event.message}: raised in vLLM's {function}, with the argument {name} passed through (its frames "
        f"call vLLM). {which}.",
        evidence=[c.log_evidence(event, name="root_exception", value=event.message)],
        actions=[
            f"Install the vLLM version {name} requires: its vllm extra where it declares one (`pip install "
            f"'{name}[vllm]'` pins the vLLM it was written for), or the version its requirements name; `pip show "
            "vllm` says which is installed.",
            f"Or install the {name} release made for the installed vLLM (its changelog or requirements say which).",
        ],
        confidence=0.8,
    )


RULE_CALLER_ARGUMENT = Rule(
    code="OP-7.26",
    title="a package built on vLLM passes an argument the installed vLLM does not take",
    category=Category.STARTUP,
    check=_check_caller_argument,
    needs=("events",),
    page=RulePage(
        checks="A TypeError `X() got an unexpected keyword argument 'k'` raised in vLLM's own file, whose traceback's "
        "outer frames are in another installed package (the caller); whether vLLM 0.32's command line takes `--k`.",
        why="Packages that start vLLM from Python pass engine arguments through to vLLM; each release is written "
        "against one vLLM, and an older vLLM refuses the newer arguments.",
        example="`trl vllm-serve …` / `TypeError: EngineArgs.__init__() got an unexpected keyword argument "
        "'worker_extension_cls'` (huggingface/trl#3304: `pip install trl[vllm]` fixed it).",
        fix="The vLLM version the caller requires (its vllm extra, its requirements), or the caller's release made "
        "for the installed vLLM.",
        limits="Reads the argument's name only; the release that added or removed it is known only when it is a flag "
        "of vLLM 0.32.",
        references=["https://github.com/huggingface/trl/issues/3304"],
    ),
)

RULES: list[Rule] = [RULE_CALLER_ARGUMENT]
