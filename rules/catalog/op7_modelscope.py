"""OP-7.219: VLLM_USE_MODELSCOPE is set, and the server still called the Hugging Face Hub.

Why a rule of its own: with VLLM_USE_MODELSCOPE on, vLLM fetches the model's config, tokenizer and weights from
ModelScope, and a person behind a network that cannot reach huggingface.co sets it for exactly that reason. A call to
huggingface.co beside it is then not "the Hub is unreachable, add a proxy" (OP-7.38) but a call that should not have
been made. vLLM's file-list lookup (`list_repo_files` in vllm/transformers_utils/config.py, retried with
`Error retrieving file list`) came in during 0.7.3's development without a ModelScope branch; PR #13384 added one
before the 0.7.3 release (vllm#13382: a 0.7.3.dev133 build waited two minutes per retry on huggingface.co). The
0.7.2 wheel has no such lookup and the 0.7.3 wheel has the branch, so a development build of 0.7.3 is that bug; any
other release calling the Hub means the variable did not reach the server's process, or a code path without a
ModelScope branch.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

FIXED_IN = "0.7.3"  # the release whose list_repo_files asks ModelScope when VLLM_USE_MODELSCOPE is set (PR #13384)
_BEFORE_FIX = re.compile(r"^0\.7\.3\.?dev")  # a development build of 0.7.3: the lookup without ModelScope's branch
# The Hub client's failures that show a call to huggingface.co (OP-7.38 and OP-7.17 read them otherwise)
_HUB_CALLS = (
    LogEventKind.HUB_NOT_CACHED,
    LogEventKind.HUB_UNAVAILABLE,
    LogEventKind.HUB_TLS_UNTRUSTED,
    LogEventKind.HUB_ACCESS_REFUSED,
)


def _check(facts: Facts) -> list[Finding]:
    switched = facts.first_event(LogEventKind.MODELSCOPE_ON)
    called = facts.first_event(*_HUB_CALLS)
    if switched is None or called is None:
        return []
    what = "the model's file list" if "file list" in (called.raw or "") else "the model's files"
    version = next((e.version for e in facts.events_of(LogEventKind.VERSION) if e.version), None)
    evidence = [c.log_evidence(switched, name="VLLM_USE_MODELSCOPE"), c.log_evidence(called, name="call to the Hub")]
    if version is not None and _BEFORE_FIX.match(version):
        return [_before_fix(what, version, evidence)]
    return [
        RULE.finding(
            Severity.CRITICAL,
            f"VLLM_USE_MODELSCOPE is set, yet the server asked huggingface.co for {what}: the variable did not reach "
            "the server's process, or a lookup without ModelScope's branch ran",
            summary="With VLLM_USE_MODELSCOPE on, vLLM fetches the model from ModelScope; this call went to the "
            "Hugging Face Hub. Most often the variable was set in another shell or not passed into the container "
            f"(`-e VLLM_USE_MODELSCOPE=True`). A development build of {FIXED_IN} listed the model's files on the "
            f"Hub whatever the variable said (vllm#13382, fixed by PR #13384 in {FIXED_IN}).",
            evidence=evidence,
            actions=[
                "Check the server process's environment (`cat /proc/<pid>/environ | tr '\\0' '\\n' | grep "
                "MODELSCOPE`, or the container's -e flags): the variable must be set where vLLM starts.",
                f"On a vLLM build older than {FIXED_IN}, or a development build of it, upgrade vLLM "
                f"(`pip install -U 'vllm>={FIXED_IN}'`); meanwhile serve the model's downloaded directory by path.",
            ],
            confidence=0.88,  # above OP-7.38's "add a proxy": with the variable set, the Hub should not be asked
        )
    ]


def _before_fix(what: str, version: str, evidence: list) -> Finding:
    return RULE.finding(
        Severity.CRITICAL,
        f"VLLM_USE_MODELSCOPE is set, yet vLLM {version} asked huggingface.co for {what}: a development build of "
        f"{FIXED_IN} from before its ModelScope fix",
        summary=f"vLLM's lookup of the model's file list (vllm/transformers_utils/config.py, `Error retrieving file "
        f"list` on each retry) came in during {FIXED_IN}'s development without a ModelScope branch, so with "
        "VLLM_USE_MODELSCOPE on the server still called the Hugging Face Hub and, where that is unreachable, waited "
        f"out its retries (vllm#13382). PR #13384 gave it the branch before the {FIXED_IN} release.",
        evidence=evidence,
        actions=[
            f"Upgrade vLLM to {FIXED_IN} or later (`pip install -U 'vllm>={FIXED_IN}'`): its file-list lookup asks "
            "ModelScope when VLLM_USE_MODELSCOPE is set.",
            "Meanwhile download the model from ModelScope yourself (`modelscope download --model <id>`) and serve "
            "its directory by path: a path is read from disk and never looked up.",
        ],
        confidence=0.9,
    )


RULE = Rule(
    code="OP-7.219",
    title="VLLM_USE_MODELSCOPE is set, and the server still called the Hugging Face Hub",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="VLLM_USE_MODELSCOPE set to true where the text shows it, beside the Hub client's failure to reach or "
        "use huggingface.co; the server's version says whether it is 0.7.3's development-build bug.",
        why="vLLM's file-list lookup had no ModelScope branch in 0.7.3's development builds (PR #13384 added it); "
        "elsewhere the variable did not reach the process.",
        example='`export VLLM_USE_MODELSCOPE=True`, then `Error retrieving file list: (MaxRetryError("HTTPSConnection'
        "Pool(host='huggingface.co', port=443)…` from vLLM 0.7.3.dev133 (vllm#13382).",
        fix=f"Upgrade vLLM to {FIXED_IN} or later; set the variable where the server starts.",
        limits="Sees the variable only where the text shows it set.",
        references=["https://github.com/vllm-project/vllm/issues/13382"],
    ),
)

RULES: list[Rule] = [RULE]
