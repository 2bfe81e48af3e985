"""OP-7.75 and OP-7.106: a framework's guarded import of vLLM failed, and the name it would have bound is used
anyway (OP-7.75), or the framework reports vLLM as not installed whatever the import's error was (OP-7.106).

Why a rule of its own: frameworks that run vLLM as one backend among several import it inside `try: … except
ModuleNotFoundError: pass`, so a failed import leaves no trace until the backend is used and Python says `NameError:
name 'LLM' is not defined` (EleutherAI/lm-evaluation-harness's lm_eval/models/vllm_causallms.py imports `ray`, then
`from vllm import LLM, SamplingParams`, LoRARequest, `vllm.transformers_utils.tokenizer.get_tokenizer` and
`vllm.utils.get_open_port` in one such block). The NameError is the symptom; the swallowed ModuleNotFoundError is the
cause, and it is one of three: vLLM is not installed in the Python that ran the framework, a package imported in the
same block is missing (ray for lm-eval), or the installed vLLM no longer has a module the framework imports (vLLM
moves its helpers between releases). Reported under lm-eval (arcee-ai/mergekit#524, which points to
lm-evaluation-harness#2744) and lmms-eval (EvolvingLMMs-Lab/lmms-eval#726); a commenter on the first fixed it with a
newer lm-eval (`pip install vllm "lm-eval[api]>=0.4.11"`).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_swallowed_import(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.VLLM_NAME_UNBOUND)
    if not events:
        return []
    name = events[0].message or "LLM"
    return [
        RULE_SWALLOWED_IMPORT.finding(
            Severity.HIGH,
            f"`{name}` was never imported from vLLM: the caller's guarded `from vllm import {name}` failed and its "
            "error was swallowed",
            summary=f"{name} is one of the names vLLM exports. Python says it is not defined because the code that "
            "uses it imported vLLM inside a try block that ignores a failed import (frameworks do this to make vLLM "
            "optional). The hidden ModuleNotFoundError is the cause: vLLM missing from this Python, a package "
            "imported beside it missing (lm-eval imports ray first), or a vLLM module the framework imports that "
            "the installed vLLM has moved.",
            evidence=[c.log_evidence(events[0], name="unbound vLLM name", value=name)],
            actions=[
                "Run the framework's import yourself in the same environment to see the error it hid: `python -c "
                f'"from vllm import {name}"`, then its other vLLM imports (lm-eval: `import ray; from vllm.'
                "transformers_utils.tokenizer import get_tokenizer; from vllm.utils import get_open_port`).",
                "Install what that import names: vLLM itself (`pip install vllm`, or the framework's vllm extra), "
                "or the missing companion package (`pip install ray`).",
                "If a vLLM module is missing, the framework and vLLM are not the releases made together: install the "
                "framework release made for the installed vLLM (for lm-eval, a newer one: a commenter on "
                'arcee-ai/mergekit#524 used `pip install vllm "lm-eval[api]>=0.4.11"`), or the vLLM it pins.',
            ],
            confidence=0.8,
        )
    ]


RULE_SWALLOWED_IMPORT = Rule(
    code="OP-7.75",
    title="a framework's guarded import of vLLM failed silently: a vLLM name is not defined",
    category=Category.STARTUP,
    check=_check_swallowed_import,
    needs=("events",),
    page=RulePage(
        checks="Python's `NameError: name 'LLM' is not defined` (or SamplingParams, LLMEngine, EngineArgs and the "
        "other names vLLM exports), with or without its class.",
        why="A framework that makes vLLM optional imports it in a try block that ignores a failed import; the name "
        "is unbound, and the import's own error is gone.",
        example="`NameError: name 'LLM' is not defined. Did you mean: 'VLLM'?` from lm_eval/models/"
        "vllm_causallms.py (arcee-ai/mergekit#524).",
        fix="Repeat the framework's vLLM imports in that Python to see the hidden error; install vLLM or the "
        "missing package, or the framework release made for the installed vLLM.",
        limits="Which of the three causes it is shows only in the repeated import; the framework is named only by "
        "its traceback's frames.",
        references=[
            "https://github.com/arcee-ai/mergekit/issues/524",
            "https://github.com/EvolvingLMMs-Lab/lmms-eval/issues/726",
            "https://github.com/EleutherAI/lm-evaluation-harness/issues/2744",
        ],
    ),
)


def _check_hidden_import(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.VLLM_IMPORT_HIDDEN)
    if not events:
        return []
    framework = events[0].message or "the framework"
    return [
        RULE_HIDDEN_IMPORT.finding(
            Severity.CRITICAL,
            f"{framework} says vLLM is not installed: its import of vLLM failed, whatever the reason, and the reason "
            "was not shown",
            summary=f"{framework} imports vLLM inside a guard and reports any failure as vLLM missing. vLLM may be "
            "installed: the import also fails when a vLLM module the framework imports has moved in the installed "
            "release (ray-project/ray#64006: Ray 2.55.1's imports against vLLM 0.22.1, which its unbounded vllm "
            "requirement resolved to), or a package vLLM needs is missing.",
            evidence=[c.log_evidence(events[0], name="framework's words", value=framework)],
            actions=[
                'See the real error: `python -c "import vllm; print(vllm.__version__)"` in the same environment, '
                "then the vLLM modules the framework imports (in ray-project/ray#64006, `import "
                "vllm.entrypoints.openai.speech_to_text` failed: the module had moved).",
                "vLLM missing: install it (`pip install vllm`, or the framework's extra). vLLM present: install the "
                "vLLM release the framework release was made for (its pinned version, or its image such as "
                "rayproject/ray-llm), not the newest one an unbounded requirement picked.",
            ],
            confidence=0.8,
        )
    ]


RULE_HIDDEN_IMPORT = Rule(
    code="OP-7.106",
    title="a framework reports vLLM as not installed after its import of vLLM failed",
    category=Category.STARTUP,
    check=_check_hidden_import,
    needs=("events",),
    page=RulePage(
        checks="Ray Serve LLM's `Neither vLLM nor SGLang is installed. At least one is required for Ray Serve LLM "
        "protocol models.`",
        why="The framework turns any failure of its vLLM import into 'not installed'; an installed vLLM whose modules "
        "moved fails it too.",
        example="ray-project/ray#64006: ray[serve,llm] 2.55.1 with vLLM 0.22.1.",
        fix="Repeat the import to see the error; install vLLM, or the vLLM release the framework was made for.",
        limits="Whether vLLM is missing or mismatched shows only in the repeated import.",
        references=["https://github.com/ray-project/ray/issues/64006"],
    ),
)

RULES: list[Rule] = [RULE_SWALLOWED_IMPORT, RULE_HIDDEN_IMPORT]
