"""OP-7.199: argparse took an option the command does not have for the start of several it has.

Why a rule of its own: argparse lets a flag be abbreviated, so an option the installed vLLM lacks (removed or renamed)
that begins several of its flags is refused as `error: ambiguous option: --model could match --model-impl,
--model-loader-extra-config`, words that hide that the option itself is gone. The common one is `--model` for `vllm
serve`, whose model is its positional argument: in vllm PR #18999 a --config YAML's `model:` key became `--model` and
met exactly this refusal (the PR passes the key as the positional argument).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity


def _ambiguous_finding(_facts: Facts, event: LogEvent, _match: object) -> Finding:
    option, candidates = event.message or "the option", event.component or "several flags"
    model = option == "--model"
    summary = (
        f"The installed vLLM has no {option}; argparse takes a flag's beginning for the flag, and {option} begins "
        f"{candidates}, so it refused the option as ambiguous instead of unknown."
    )
    if model:
        summary += (
            " `vllm serve` takes the model as its first, positional argument; a --config YAML's `model:` key is "
            "turned into --model by releases whose loader does so (vllm PR #18999)."
        )
    return RULE.finding(
        Severity.CRITICAL,
        f"vLLM has no {option}: argparse read it as the start of {candidates}"
        + (": the model is `vllm serve`'s positional argument" if model else ""),
        summary=summary,
        evidence=[c.log_evidence(event, name="the option refused", value=option)],
        changes=[ConfigChange(flag=option, proposed="", reason="the installed vLLM has no such flag")],
        actions=[
            "Pass the model first, `vllm serve <model> …`, and take `model:` out of the --config YAML."
            if model
            else f"Name the flag meant in full (one of {candidates}), or the flag that replaced {option} in this "
            "release (`vllm serve --help`).",
        ],
        confidence=0.85 if model else 0.75,
    )


RULE = Rule(
    code="OP-7.199",
    title="an option the command lacks, taken for the start of several it has",
    category=Category.STARTUP,
    check=c.on_kind(LogEventKind.ARGS_AMBIGUOUS, _ambiguous_finding),
    needs=("events",),
    page=RulePage(
        checks="argparse's `error: ambiguous option: --X could match --X-a, --X-b`.",
        why="The option is not one of the command's flags: argparse's abbreviations make a missing flag read as an "
        "ambiguous one.",
        example="`vllm serve: error: ambiguous option: --model could match --model-impl, --model-loader-extra-config` "
        "from a --config YAML's `model:` key (vllm PR #18999).",
        fix="The model as `vllm serve`'s positional argument; otherwise the full name of the flag meant.",
        limits="The line does not say where the option came from (the command, a --config file, a wrapper).",
        references=["https://github.com/vllm-project/vllm/pull/18999"],
    ),
)

RULES: list[Rule] = [RULE]
