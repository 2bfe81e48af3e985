"""OP-7.205: vLLM's code calls its LoRA worker manager in a way the class in use does not take: a replaced class.

Why a rule of its own: vLLM's worker builds its LoRA manager from `WorkerLoRAManager` or `LRUCacheWorkerLoRAManager`
(vllm/lora/worker_manager.py) and calls what its own release defines. A manager without the method, or with another
signature, is not the installed vLLM's own class: Unsloth (unsloth_zoo) replaces both with classes of its own for
`fast_inference=True`, written against the vLLM releases Unsloth supports. A newer vLLM then calls what they lack:
vLLM 0.23 added `get_dummy_lora_warmup_rank` and calls it during warm-up, so unsloth_zoo's manager failed with
`'LRUCacheWorkerLoRAManager' object has no attribute 'get_dummy_lora_warmup_rank'` until unsloth-zoo PR #788 added
it; `create_lora_manager() takes 2 positional arguments but 3 were given` (unslothai/unsloth#3962, vLLM 0.15) is the
same drift in a signature. Python's words name vLLM's class, so without this the line reads as a bug of vLLM's LoRA.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# Python's words for a call the class does not take: a missing public method, or a method's signature (a private
# attribute such as `_adapter_manager` is set by vLLM's own create_lora_manager: missing, the manager was used early)
MANAGER_MISMATCH = re.compile(
    r"'(?P<owner>(?:LRUCache)?WorkerLoRAManager)' object has no attribute '(?P<name>[a-z]\w*)'"
    r"|(?P<cls>(?:LRUCache)?WorkerLoRAManager)\.(?P<method>\w+)\(\) (?:takes|got|missing) "
)
# The fix each release of vLLM's needed from unsloth_zoo, with the source that says so
FIXED_IN_UNSLOTH = {"get_dummy_lora_warmup_rank": "unsloth-zoo PR #788 added it for vLLM 0.23's LoRA warm-up"}


def _manager_finding(_facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    owner = found["owner"] or found["cls"]
    name = found["name"] or found["method"]
    what = (
        f"has no {name}, which the installed vLLM calls"
        if found["name"]
        else f"takes {name}() with another signature than the installed vLLM calls it with"
    )
    fixed = FIXED_IN_UNSLOTH.get(name)
    upgrade = "Upgrade unsloth and unsloth_zoo (`pip install -U unsloth unsloth_zoo`)" + (f": {fixed}" if fixed else "")
    return RULE.finding(
        Severity.CRITICAL,
        f"the {owner} in use {what}: a class that replaced vLLM's own (as Unsloth's fast_inference does), "
        "written for another vLLM",
        summary="vLLM's worker calls its LoRA manager as its own release defines it, so a manager that does not take "
        "the call is not the installed vLLM's class. Unsloth (unsloth_zoo) replaces vLLM's LoRA worker managers with "
        "its own for fast_inference; a vLLM newer than those were written for calls what they lack. The LoRA "
        "adapter and vLLM's flags are not the cause.",
        evidence=[c.log_evidence(event, name="LoRA worker manager", value=f"{owner}.{name}")],
        actions=[
            f"{upgrade}; or install the vLLM release your Unsloth supports (its release notes name it).",
            "Without Unsloth: another framework or plugin that patches vllm.lora.worker_manager, or two vLLM "
            'installs mixed (`pip show vllm`, and `python -c "import vllm; print(vllm.__file__)"`).',
        ],
        confidence=0.8 if found["name"] else 0.7,
    )


RULE = Rule(
    code="OP-7.205",
    title="vLLM's LoRA worker manager replaced by code written for another vLLM",
    category=Category.CONFIGURATION,
    check=c.on_phrase(MANAGER_MISMATCH, _manager_finding, kinds=c.RELAYED_TOO),
    needs=("events",),
    page=RulePage(
        checks="Python's `'LRUCacheWorkerLoRAManager' object has no attribute '<name>'` or "
        "`LRUCacheWorkerLoRAManager.<method>() takes … positional arguments but … were given` (also for "
        "WorkerLoRAManager).",
        why="vLLM calls its LoRA manager as its own release defines it; a manager that lacks the call is a class "
        "that replaced vLLM's, as unsloth_zoo's does for fast_inference, written for another vLLM.",
        example="`RuntimeError: 'LRUCacheWorkerLoRAManager' object has no attribute 'get_dummy_lora_warmup_rank'` "
        "(unsloth-zoo PR #788: vLLM 0.23's warm-up calls it; unsloth_zoo added it).",
        fix="The Unsloth release written for the installed vLLM, or the vLLM release Unsloth supports.",
        limits="Unsloth is named because it is the known replacer; the line alone does not prove it, and the action "
        "says what else replaces the class.",
        references=[
            "https://github.com/unslothai/unsloth-zoo/pull/788",
            "https://github.com/unslothai/unsloth/issues/3962",
        ],
    ),
)

RULES: list[Rule] = [RULE]
