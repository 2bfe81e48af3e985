"""OP-7.200: mistral_common does not know the tokenizer version a Mistral model's tekken.json declares.

Why a rule of its own: with the Mistral tokenizer mode (`--tokenizer-mode mistral`) vLLM reads the model's tokenizer
through mistral_common, whose Tekkenizer refuses a tekken.json whose `version` is
newer than the release installed: `ValueError: Unknown version: v13 in …/tekken.json. Make sure to use a valid
version string: ['v1', 'v2', 'v3', 'v7', 'v11']` (mistral_common's tokens/tokenizers/tekken.py). The list is what
the installed mistral_common knows, so the line itself says the package is older than the model. Read without this
it is an unknown ValueError in the tokenizer, and the fix is neither a flag nor vLLM: Devstral-Small-2507's v13
needs mistral_common 1.7.0 (vllm PR #20801 raised vLLM's requirement to it, as the model card asks), and
Mistral-Small-4-119B-2603's v15 needs 1.11.0 (its model card, quoted in a user's deployment log where vLLM 0.17.1's
image carried 1.9.1 and 0.20.0's image 1.11.0).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# mistral_common's words; the list of known versions may be cut off by the paste, and the path may be a bare
# tekken.json or a Hub cache folder
UNKNOWN_VERSION = re.compile(
    r"Unknown version: (?P<version>v\d+) in (?P<path>.+?)\.?"
    r"(?:\s+Make sure\b(?:[^\[]*(?P<known>\[[^\]]*\]?))?.*|\s+\(.*|\s*$)"
)
# The first mistral_common release that reads each tokenizer version, where a source says so
FIRST_READING: dict[str, tuple[str, str]] = {
    "v13": ("1.7.0", "vllm PR #20801, Devstral-Small-2507's model card"),
    "v15": (
        "1.11.0",
        "Mistral-Small-4-119B-2603's model card, as a deployment log quotes it: vLLM 0.17.1's image "
        "carried 1.9.1, which knows up to v13, and 0.20.0's carries 1.11.0",
    ),
}


def _version_finding(_facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    version = found["version"]
    known = f" (it knows {found['known']})" if found["known"] else ""
    first = FIRST_READING.get(version)
    needs = f"mistral_common>={first[0]}" if first else "a mistral_common release newer than the one installed"
    source = f" ({first[1]})" if first else ""
    return RULE.finding(
        Severity.CRITICAL,
        f"the installed mistral_common does not know the model's tokenizer version {version}: it is older than the "
        "model",
        summary=f"vLLM reads a Mistral-format tokenizer (tekken.json) through mistral_common, which refuses a "
        f"tokenizer version newer than itself{known}. The model needs {needs}{source}; no flag of vLLM's changes "
        "that, and vLLM is not at fault: the package beside it is behind the model.",
        evidence=[c.log_evidence(event, name="tokenizer version", value=version)],
        actions=[
            f'Install {needs} in the server\'s environment (`pip install -U "{needs}"`; in a container, a layer on '
            "the image), or a vLLM release that requires it (its requirements name mistral_common's floor).",
            "Check the model card: Mistral's cards name the mistral_common release a model needs.",
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-7.200",
    title="mistral_common older than the model's tokenizer version",
    category=Category.STARTUP,
    check=c.on_phrase(UNKNOWN_VERSION, _version_finding),
    needs=("events",),
    page=RulePage(
        checks="mistral_common's `Unknown version: vN in <path>. Make sure to use a valid version string: [...]`.",
        why="The list is what the installed mistral_common knows; a model whose tekken.json declares a later version "
        "needs a newer mistral_common, which neither a flag nor vLLM's code changes.",
        example="`ValueError: Unknown version: v13 in …/models--mistralai--Devstral-Small-2507. Make sure to use a "
        "valid version string: ['v1', 'v2', 'v3', 'v7', 'v11']` (vllm PR #20801: mistral_common>=1.7.0).",
        fix="A mistral_common release that knows the version (1.7.0 for v13, 1.11.0 for v15), or a vLLM release "
        "that requires one.",
        limits="Only v13 and v15 carry a named release, each from a source; other versions are told to upgrade "
        "without one.",
        references=["https://github.com/vllm-project/vllm/pull/20801"],
    ),
)

RULES: list[Rule] = [RULE]
