"""OP-5.53: Mistral's tokenizer refuses a tool call id that is not nine letters and digits.

Why a rule of its own: with `--tokenizer-mode mistral`, vLLM encodes a chat through mistral_common, which validates
every tool call the conversation replays and raises `InvalidFunctionCallException: Tool call id <id> must be a-z,
A-Z, 0-9, with a length of 9.` for any other id. vLLM's own ids (`chatcmpl-tool-…`) failed that check, so a client
that sent back a tool call vLLM had made got an error on its next turn; vllm PR #12332 (merged January 2025) made
vLLM generate nine-character ids in mistral mode. Ids a client or another server made need the same shape.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

BAD_TOOL_ID = re.compile(r"Tool call id (?P<id>.*?) must be a-z, A-Z, 0-9, with a length of 9")


def _tool_id_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE.finding(
        Severity.HIGH,
        "Mistral's tokenizer (--tokenizer-mode mistral) refused a replayed tool call whose id is not nine "
        "letters and digits",
        summary="mistral_common validates each tool call in the conversation; vLLM's own `chatcmpl-tool-…` ids "
        "failed it before vllm PR #12332, so the request after a tool call fails.",
        evidence=[c.log_evidence(event, name="the refused tool call id", value=match["id"])],
        actions=[
            "Upgrade vLLM to a release after January 2025 (vllm PR #12332): in mistral mode it makes "
            "nine-character ids itself.",
            "For ids your client or another service made: give each tool call (and its tool message's "
            "tool_call_id) nine letters and digits before sending the conversation back.",
            "Or serve with --tokenizer-mode auto (Hugging Face's tokenizer and chat template), which does not "
            "check ids, where the model ships one.",
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-5.53",
    title="a tool call id Mistral's tokenizer refuses",
    category=Category.RELIABILITY,
    check=c.on_phrase(BAD_TOOL_ID, _tool_id_finding),
    needs=("events",),
    page=RulePage(
        checks="mistral_common's `InvalidFunctionCallException: Tool call id … must be a-z, A-Z, 0-9, with a length "
        "of 9.`",
        why="With --tokenizer-mode mistral every replayed tool call is validated; ids of another shape fail the "
        "request.",
        example="A chat that sends back vLLM's `chatcmpl-tool-…` id in mistral mode (vllm PR #12332).",
        fix="A vLLM with PR #12332, nine-character ids from the client, or --tokenizer-mode auto.",
        limits="The release that first carried the fix is not in the catalog; the PR's merge date is given.",
        references=["https://github.com/vllm-project/vllm/pull/12332"],
    ),
)

RULES: list[Rule] = [RULE]
