"""OP-7.202: an object defined inside a function has to cross into another of vLLM's processes, and pickle refuses it.

Why a rule of its own: vLLM runs its engine in processes of its own (V1's engine core from 0.8, its multiprocess
workers, and from 0.5.3 the V0 API server's engine process), and what crosses to them is pickled: the engine's
configuration with whatever a caller put in it, and a request's logits processors. Python cannot pickle a class or
function defined inside another function, and names it as `<function>.<locals>.<name>`: `Can't pickle local object
'patch_vllm_compute_dtype.<locals>.BitsAndBytesConfig'`. Read without this it is an unknown AttributeError or
RuntimeError; the name before `<locals>` says whose code it is, and the fix is that code's release, not a flag:
Unsloth's vLLM patch defined BitsAndBytesConfig locally (unsloth#2380: on an A100 not a T4, gone with vllm 0.7.3,
fixed in Unsloth in May 2025), lm-format-enforcer's tokenizer data held a local decode_fn (noamgat/lm-format-enforcer
#124: functools.partial in LMFE 0.10.6), and vLLM's own cached tokenizer is a class made inside get_cached_tokenizer,
which vllm PR #17048 made pickle-compatible (vllm#6953 met it sending a json_object request's guided decoding to the
engine process).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# Python's words, from pickle (`Can't pickle local object '<qualname>'`) or its lookup on either side (`Can't get
# local object …`, `Can't get local attribute …`), the name quoted or, as some Pythons print it, the object's repr
LOCAL_OBJECT = re.compile(
    r"Can't (?:pickle|get) local (?:object|attribute) [`'\"<]?(?:(?:function|class) )?"
    r"(?P<qualname>[A-Za-z_][\w.]*(?:\.<locals>\.(?:\w+|<\w+>))+(?:\.\w+)*)"
)
_LOCALS = ".<locals>."


def _defined(name: str) -> str:
    return "the lambda as a named function" if name == "<lambda>" else name


def _owner_and_name(qualname: str) -> tuple[str, str]:
    """The function whose locals hold the object (the innermost, with its class: `Foo.__init__`), and the object's
    own name (`<lambda>` kept whole)."""
    outer, name = qualname.rsplit(_LOCALS, 1)
    return outer.rsplit(_LOCALS, 1)[-1], name


class Owner(NamedTuple):
    """Whose code a function name before `<locals>` is, and the release of it that defines the object where pickle
    finds it, with the thread that says so."""

    who: str
    fix: str
    source: str
    into_llm: bool  # the object goes into LLM(...)'s configuration, which an in-process engine core does not pickle


OWNERS: dict[str, Owner] = {
    "patch_vllm_compute_dtype": Owner(
        "Unsloth's vLLM patch (unsloth_zoo)",
        "Upgrade Unsloth: `pip install -U unsloth unsloth_zoo` (fixed in Unsloth in May 2025; until then "
        '"vllm==0.7.3" avoided it)',
        "unslothai/unsloth#2380",
        True,
    ),
    "build_token_enforcer_tokenizer_data": Owner(
        "lm-format-enforcer's vLLM integration",
        'Upgrade lm-format-enforcer: `pip install -U "lm-format-enforcer>=0.10.6"` (it builds the decoder with '
        "functools.partial there)",
        "noamgat/lm-format-enforcer#124",
        False,
    ),
    "get_cached_tokenizer": Owner(
        "vLLM's own cached tokenizer (vllm/transformers_utils/tokenizer.py)",
        "Upgrade vLLM to a release with vllm PR #17048 (merged April 2025), which made the cached tokenizer "
        "pickle-compatible",
        "vllm#6953, vllm PR #17048",
        False,
    ),
}

_IN_PROCESS = ConfigChange(
    flag="VLLM_ENABLE_V1_MULTIPROCESSING",
    proposed="0",
    reason="where the object goes into LLM(...) (an offline engine, an RL or fine-tuning framework), V1's engine core "
    "then runs in the caller's process, so the configuration the caller built is not pickled to a process of its own "
    "(vLLM 0.8 on): a stopgap until the code is fixed",
    cost="the engine's loop shares the caller's process and its GIL; with tensor or pipeline parallelism the "
    "workers are still processes of their own",
    kind="env",
)


def _local_object_finding(_facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    qualname = found["qualname"]
    owner_name, name = _owner_and_name(qualname)
    owner = OWNERS.get(owner_name.rsplit(".", 1)[-1])
    whose = owner.who if owner else f"the code that defines {owner_name}() (yours, or a library's that drives vLLM)"
    actions = (
        [f"{owner.fix} ({owner.source})."]
        if owner
        else [
            f"Define {_defined(name)} at the top level of its module (or build it with functools.partial from a "
            f"top-level function) in the code of {owner_name}(), or upgrade the library it belongs to: pickle "
            "finds an object by its module and name, which a local one lacks."
        ]
    )
    into_llm = owner is None or owner.into_llm
    return RULE.finding(
        Severity.CRITICAL,
        f"{qualname} is defined inside a function, so it cannot be pickled into vLLM's engine process: a fix in "
        f"{whose}",
        summary="vLLM runs its engine in processes of its own and pickles what crosses to them: the engine's "
        "configuration with whatever the caller put in it, a request's logits processors. Python pickles a class or "
        f"function by its module and name, and {name} has no name outside {owner_name}(). The fix is "
        f"in {whose}, whose release defines it where pickle can find it.",
        evidence=[c.log_evidence(event, name="local object", value=qualname)],
        actions=actions,
        alternatives=[_IN_PROCESS] if into_llm else [],  # a stopgap: the fix is the owner's release
        confidence=0.9 if owner else 0.8,  # Python's words are certain; whose code it is, only a known owner says
    )


RULE = Rule(
    code="OP-7.202",
    title="an object defined inside a function cannot cross to vLLM's engine process",
    category=Category.STARTUP,
    check=c.on_phrase(LOCAL_OBJECT, _local_object_finding, kinds=c.RELAYED_TOO),
    needs=("events",),
    page=RulePage(
        checks="Python's `Can't pickle local object '<function>.<locals>.<name>'` (or `Can't get local object`).",
        why="vLLM's engine core, its workers and (from 0.5.3) the V0 API server's engine run in processes of their "
        "own, and what crosses to them is pickled; a class or function defined inside another function cannot be, so "
        "the function named before `<locals>` says whose code to change.",
        example="`RuntimeError: Can't pickle local object 'patch_vllm_compute_dtype.<locals>.BitsAndBytesConfig'` "
        "(unslothai/unsloth#2380: fixed in Unsloth).",
        fix="The owner's release that defines the object at module level (Unsloth; lm-format-enforcer 0.10.6; vLLM "
        "with PR #17048 for its cached tokenizer); VLLM_ENABLE_V1_MULTIPROCESSING=0 keeps V1's engine core in the "
        "caller's process meanwhile.",
        limits="Three owners are known by name, each from its thread; any other is told to move the object to module "
        "level. Workers of a parallel engine are processes whatever the variable says.",
        references=[
            "https://github.com/unslothai/unsloth/issues/2380",
            "https://github.com/noamgat/lm-format-enforcer/issues/124",
            "https://github.com/vllm-project/vllm/pull/17048",
        ],
    ),
)

RULES: list[Rule] = [RULE]
