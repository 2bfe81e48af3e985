"""OP-7.210: a client script written for the openai SDK before 1.0 runs with openai 1.x installed.

Why a rule of its own: clients of vLLM's OpenAI-compatible server are very often the `openai` package, and its 1.0
release (November 2023) removed the module-level API classes (`openai.ChatCompletion.create`, `openai.Completion`) for
a client object. A script from before that, or an example copied from old docs, fails before any request reaches the
server, with the SDK's own `APIRemovedInV1`: `You tried to access openai.ChatCompletion, but this is no longer
supported in openai>=1.0.0`. vllm#1875 met it following vLLM's quickstart, whose example still used the old interface;
the reporter's fix was the client object (`OpenAI(base_url=…)`), which vLLM's docs then adopted. The server is not
involved: nothing on it changes the error.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# The openai SDK's words (openai/lib/_old_api.py) for a name of the pre-1.0 interface
REMOVED_IN_V1 = re.compile(
    r"You tried to access openai\.(?P<name>\w+), but this is no longer supported in openai>=1\.0\.0"
)
_CLIENT = (
    'from openai import OpenAI; client = OpenAI(base_url="http://<host>:8000/v1", api_key="<key, or EMPTY>"); '
    "client.chat.completions.create(model=..., messages=[...])"
)


def _sdk_finding(_facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    name = found["name"]
    return RULE.finding(
        Severity.HIGH,
        f"the client calls openai.{name}, the openai SDK's interface before 1.0, with openai 1.x installed: the "
        "script, not the server",
        summary="openai 1.0 removed the module-level API classes (openai.ChatCompletion, openai.Completion, "
        "openai.Embedding …) for a client object, and raises this before any request is sent. vLLM's server is not "
        "involved (vllm#1875: an example from vLLM's quickstart of the time).",
        evidence=[c.log_evidence(event, name="openai SDK interface", value=f"openai.{name}")],
        actions=[
            f"Use the client object against vLLM's server: `{_CLIENT}`.",
            "Or run `openai migrate` on the script (the SDK's own tool), or pin the old SDK for it "
            '(`pip install "openai<1"`), whose interface the script was written for.',
        ],
        confidence=0.9,
    )


RULE = Rule(
    code="OP-7.210",
    title="a client written for the openai SDK before 1.0",
    category=Category.CONFIGURATION,
    check=c.on_phrase(REMOVED_IN_V1, _sdk_finding, kinds=c.RELAYED_TOO),
    needs=("events",),
    page=RulePage(
        checks="The openai SDK's `You tried to access openai.<name>, but this is no longer supported in "
        "openai>=1.0.0` (APIRemovedInV1).",
        why="openai 1.0 replaced the module-level interface with a client object; a script written before it fails "
        "in the client, before the server sees a request.",
        example="`You tried to access openai.ChatCompletion, but this is no longer supported in openai>=1.0.0` "
        "(vllm#1875, vLLM's quickstart example of the time with openai 1.3.5).",
        fix="`OpenAI(base_url=…).chat.completions.create(…)`, `openai migrate`, or `openai<1` for the old script.",
        limits="Only the SDK's own words; other clients' version errors are not read here.",
        references=["https://github.com/vllm-project/vllm/issues/1875"],
    ),
)

RULES: list[Rule] = [RULE]
