"""OP-7.83: a class vLLM, a vLLM plugin or a framework's vLLM wrapper builds lacks a method its base class requires.

Why a rule of its own: Python refuses to build an object whose class leaves one of its base class's abstract methods
unimplemented (`Can't instantiate abstract class NeuronWorker with abstract method execute_worker`; from Python 3.12
`… without an implementation for abstract method 'execute_worker'`). No flag, request or model causes that: the base
class gained (or renamed) a method and the subclass was not changed with it, so the two come from different points of
their project's history. With vLLM it recurs in three places:

- vLLM's own backend for a less-tested platform, left behind by a change to the interface every worker implements
  (vllm#6269: vLLM 0.5.1's NeuronWorker without `execute_worker`, after the worker base class gained it; the Neuron
  executor broke the same way in 0.3.3, vllm#3694, and 0.4.0, vllm#3976, fixed by PR #4051);
- a hardware plugin's worker or model runner made for another vLLM release than the one installed;
- a framework's vLLM wrapper behind its own framework's base class (lm-evaluation-harness#1610: its `VLLM` model
  without `prefix_token_id`, on the main branch the day its base gained it, fixed by PR #1611 the next day;
  langchain-ai/langchain#9841: langchain 0.0.274's `VLLM` without `_agenerate`).

The class's name says whose it is; the fix is the package version where the class and its base agree.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage

# Python's refusal, both wordings (3.11 and earlier; 3.12 on, which quotes the method names).
_ABSTRACT = re.compile(
    r"Can't instantiate abstract class (?P<cls>\w+) (?:with|without an implementation for) abstract methods? "
    r"(?P<methods>'?\w+'?(?:, '?\w+'?)*)"
)
# vLLM's names for the classes a platform implements (its workers, executors, model runners, attention backends).
_VLLM_ROLE = re.compile(r"(?:Worker|Executor|ModelRunner|AttentionBackend|AttentionImpl|Platform|Communicator)$")
# The platforms whose vLLM backends (in-tree or plugin) are tested less than CUDA's, by the prefix vLLM names them with.
_PLATFORM_PREFIX = re.compile(r"^(?P<platform>Neuron|TPU|Tpu|XPU|Xpu|HPU|Hpu|CPU|Cpu|OpenVINO|NPU|Npu|ROCm|Rocm)")


def _check_abstract(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR):
        refused = _ABSTRACT.search(event.message or "") if event.exception == "TypeError" else None
        if refused is not None:
            return [_finding(event, refused["cls"], refused["methods"].replace("'", ""))]
    return []


def _finding(event: LogEvent, cls: str, methods: str) -> Finding:
    vllm_role = _VLLM_ROLE.search(cls) is not None
    platform = _PLATFORM_PREFIX.match(cls)
    if event.plugin is not None:
        whose = f"{event.plugin}'s {cls}"
        actions = [
            f"Install the {event.plugin} release made for the installed vLLM (or the vLLM release it names): a "
            "plugin's classes implement the interface of the vLLM they were written for."
        ]
    elif vllm_role:
        where = f"vLLM's {platform['platform']} backend" if platform else "vLLM's own code"
        whose = f"{where} ({cls})"
        actions = [
            "Install a vLLM release whose code for this platform is whole: the release before the one installed, or a "
            "newer one that fixed it (search vLLM's issues for the class and method); a platform's own documentation "
            "often names the vLLM release it was tested with (AWS Neuron's, Intel's, Google's).",
            'A source checkout or a main-branch build: `python -c "import vllm; print(vllm.__version__, '
            'vllm.__file__)"`, then a clean install of one release.',
        ]
    else:
        whose = f"{cls} (not a vLLM class name: a framework's, such as lm-eval's or LangChain's `VLLM` wrapper)"
        actions = [
            f"Upgrade the package that defines {cls} (a release or commit that implements {methods}), or install its "
            "release before the change: the wrapper and its framework's base class disagree, whatever vLLM does.",
            "A framework installed from its main branch (`pip install -e .`, `git+https://…`): pull again, or pin "
            "its last release.",
        ]
    return RULE_ABSTRACT.finding(
        c.phase_severity(event),
        f"{whose} does not implement {methods}, which its base class requires: the class and its base come from "
        "different versions",
        summary=f"{event.message}. Python refuses to build an object whose class leaves an abstract method of its "
        "base unimplemented: the base gained or renamed the method and this class was not changed with it, so the "
        "installed code holds two points of the project's history (a release or commit with the bug, or a mixed "
        "install). No flag, request or model causes it.",
        evidence=[c.log_evidence(event, name="root_exception", value=event.message)],
        actions=actions,
        confidence=0.7,
    )


RULE_ABSTRACT = Rule(
    code="OP-7.83",
    title="A class lacks a method its base class requires: the class and its base come from different versions",
    category=Category.STARTUP,
    check=_check_abstract,
    needs=("events",),
    page=RulePage(
        checks="Python's `TypeError: Can't instantiate abstract class <C> with abstract method(s) <m>` (3.12 on: "
        "`… without an implementation for abstract method '<m>'`).",
        why="The base class requires a method the class does not implement: the two were written at different "
        "points of their project (a release or commit with the bug, a mixed install, a plugin for another vLLM).",
        example="`TypeError: Can't instantiate abstract class NeuronWorker with abstract method execute_worker` "
        "(vllm#6269, vLLM 0.5.1); `Can't instantiate abstract class VLLM with abstract method prefix_token_id` "
        "(lm-evaluation-harness#1610, fixed by its PR #1611).",
        fix="The release of the package defining the class where it and its base agree: vLLM's for its platform "
        "backends, the plugin's made for the installed vLLM, the framework's for its wrapper.",
        limits="Whose class it is is read from its name (vLLM's role names, a platform's prefix) or the plugin in the "
        "traceback; a framework's class with a vLLM-like name would be taken for vLLM's.",
        references=[
            "https://github.com/vllm-project/vllm/issues/6269",
            "https://github.com/vllm-project/vllm/issues/3694",
            "https://github.com/vllm-project/vllm/pull/4051",
            "https://github.com/EleutherAI/lm-evaluation-harness/issues/1610",
            "https://github.com/langchain-ai/langchain/issues/9841",
        ],
    ),
)

RULES: list[Rule] = [RULE_ABSTRACT]
