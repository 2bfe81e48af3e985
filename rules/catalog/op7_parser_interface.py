"""OP-7.129: a reasoning or tool parser whose constructor does not take what this vLLM passes it.

Why a rule of its own: vLLM builds the parser named by --reasoning-parser or --tool-call-parser (its own, or a
plugin's from --reasoning-parser-plugin / --tool-parser-plugin) for each request and passes it keywords its interface
has grown: in late 2025 the OpenAI server began passing `chat_template_kwargs` to reasoning parsers, and vLLM 0.32's
base class takes `*args, **kwargs` for such additions (vllm/reasoning/abs_reasoning_parsers.py). A parser whose own
`__init__` names only the tokenizer refuses them in Python's words (`TypeError: Ernie45ReasoningParser.__init__() got
an unexpected keyword argument 'chat_template_kwargs'`), on every request that uses it. vllm PR #27973 fixed
ERNIE 4.5's built-in parser so; a plugin's parser needs the same change.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

PARSER_REFUSED = re.compile(
    r"(?P<parser>\w+(?P<kind>Reasoning|Tool)Parser)\.__init__\(\) (?:got an unexpected keyword argument "
    r"'(?P<keyword>\w+)'|takes \d+ positional arguments? but \d+ were given)"
)
_FLAGS = {
    "Reasoning": ("--reasoning-parser", "--reasoning-parser-plugin"),
    "Tool": ("--tool-call-parser", "--tool-parser-plugin"),
}


def _parser_interface_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    parser, (flag, plugin_flag) = match["parser"], _FLAGS[match["kind"]]
    passed = f" ({match['keyword']})" if match["keyword"] else ""
    return RULE.finding(
        Severity.HIGH,
        f"the {match['kind'].lower()} parser {parser} does not take the arguments this vLLM passes it{passed}: "
        "it was written for another release's parser interface",
        summary=f"vLLM builds the parser {flag} names for each request and passes it keywords its interface has "
        "grown; a parser whose __init__ takes only the tokenizer refuses them, so every request that uses it "
        "fails.",
        evidence=[c.log_evidence(event, name="the parser's refusal", value=match.group(0))],
        actions=[
            f"A parser of your own or a plugin's ({plugin_flag}): give its __init__ `*args, **kwargs` and pass "
            "them to the base class, as vLLM's own parsers do.",
            f"vLLM's own parser: upgrade to the release that fixed it (vllm PR #27973 fixed ERNIE 4.5's for "
            "chat_template_kwargs), or install the release the parser was written with; until then serving "
            f"without {flag} avoids the call, at the cost of what the parser extracted.",
        ],
        confidence=0.8,
    )


RULE = Rule(
    code="OP-7.129",
    title="a reasoning or tool parser that does not take what vLLM passes it",
    category=Category.RELIABILITY,
    check=c.on_phrase(PARSER_REFUSED, _parser_interface_finding),
    needs=("events",),
    page=RulePage(
        checks="Python's `<Name>ReasoningParser.__init__() got an unexpected keyword argument 'k'` (or a "
        "ToolParser's, or `takes N positional arguments but M were given`).",
        why="vLLM passes parsers keywords its interface added later; a parser written for an older interface refuses "
        "them on every request.",
        example="`Ernie45ReasoningParser.__init__() got an unexpected keyword argument 'chat_template_kwargs'` "
        "(vllm PR #27973).",
        fix="`*args, **kwargs` in a plugin parser's __init__; for vLLM's own, the release with its fix.",
        limits="Whether the parser is vLLM's or a plugin's is in the traceback's frames, when pasted.",
        references=["https://github.com/vllm-project/vllm/pull/27973"],
    ),
)

RULES: list[Rule] = [RULE]
