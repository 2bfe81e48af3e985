"""OP-7.196: the model's config file does not parse as JSON.

Why a rule of its own: transformers reads a model's config.json before vLLM sees the model, and a file that is not
JSON stops it with `OSError: It looks like the config file at '<path>' is not a valid JSON file.`, naming neither
why nor what to do. What is in the file decides: nothing (microsoft/OmniParser#130: the repository's own config.json
was 0 bytes, found by the reporter), a download cut short, or something else saved under the name (an HTML error page,
a Git LFS pointer, a hand edit with a syntax error). The path is in the line, so the file can be looked at at once. A
.gguf file in the same words is OP-7.24's (a vLLM without a GGUF loader).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _config_finding(_facts: Facts, event: LogEvent, _match: object) -> Finding:
    path = event.message or "the config file"
    return RULE.finding(
        Severity.CRITICAL,
        f"the model's config file {path.replace(chr(92), '/').rsplit('/', 1)[-1]} is not valid JSON: it is empty, cut "
        "short, or not the model's config",
        summary=f"transformers could not parse {path} as JSON, so no model was loaded. The file may be empty (a "
        "repository can publish a 0-byte config.json: microsoft/OmniParser#130), a download cut short, or another "
        "thing saved under its name (an HTML error page, a Git LFS pointer, a hand edit with a syntax error).",
        evidence=[c.log_evidence(event, name="the config file", value=path)],
        actions=[
            f"Look at the file: `wc -c '{path}'` and `python -m json.tool '{path}'` (it prints where the JSON breaks).",
            "Empty or cut short: download it again (`huggingface-cli download <repo> config.json --force-download`, "
            "or delete the snapshot and let vLLM fetch it); if the repository's own file is empty or broken (its "
            "page on the Hub shows the size), use another revision (`--revision`) or a copy with a fixed config.",
            "An HTML page or a pointer file: it came from a proxy, a mirror or a git clone without Git LFS, not from "
            "the Hub's files; fetch the real file.",
        ],
        confidence=0.8,
    )


RULE = Rule(
    code="OP-7.196",
    title="the model's config file is not valid JSON",
    category=Category.STARTUP,
    check=c.on_kind(LogEventKind.CONFIG_NOT_JSON, _config_finding),
    needs=("events",),
    page=RulePage(
        checks="transformers' `It looks like the config file at '<path>' is not a valid JSON file.` for a file that "
        "is not a .gguf (that one is OP-7.24's).",
        why="What the file holds decides the fix: nothing, a cut download, or something else under the name.",
        example="`OSError: It looks like the config file at '…/models--microsoft--OmniParser-v2.0/snapshots/…/"
        "config.json' is not a valid JSON file.` on `vllm serve microsoft/OmniParser-v2.0` (microsoft/OmniParser#130: "
        "the repository's config.json is 0 bytes).",
        fix="Download the file again, or use a revision or copy whose config is whole.",
        limits="The line does not say what the file holds; the actions say how to see it.",
        references=["https://github.com/microsoft/OmniParser/issues/130"],
    ),
)

RULES: list[Rule] = [RULE]
