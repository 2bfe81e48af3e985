"""OP-7.188: vLLM's command line refused a JSON flag's value: not JSON, or not the object its config class reads.

Why a rule of its own: vLLM's structured flags (--compilation-config, --speculative-config, --kv-transfer-config,
--limit-mm-per-prompt …) take a JSON object that becomes one of its config classes, and argparse refuses them in two
ways OP-7.47's other readings do not explain. A value that is not JSON fails json.loads, which argparse words after
the function's name: `argument --speculative-config: invalid loads value: "{'method': 'arctic', …, True}"` — a
Python dict's text (single quotes, `True`), which a YAML config file's nested mapping or code that formats a dict
with str() produces (snowflakedb/ArcticInference#29). A value that is JSON but not an object of the class's fields
fails pydantic: `argument --compilation-config/-O: 1 validation error for CompilationConfig`. The threads that met
the second gave --compilation-config a bare level, `3`, which newer releases take only as an object
(VectorInstitute/vector-inference#157, kubernetes-sigs/gateway-api-inference-extension#2243 with vLLM 0.11.0: fixed
by `{"mode": 3}`; vector-inference's reporter wrote `{"level": 3}`, the field's older name, which vLLM 0.32 still
reads beside mode).
"""

from __future__ import annotations

import json

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.literals import python_literal
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

NOT_JSON = "loads"  # argparse names the type function that refused: json.loads
CONFIG_INVALID = "config_invalid"  # the collector's message for pydantic refusing the flag's config class
COMPILATION_LEVEL = 3  # the level both threads gave (VLLM_COMPILE), written as the object's mode


def is_json_flag_refusal(event: LogEvent) -> bool:
    """An argparse refusal this rule answers (OP-7.47 leaves these to it)."""
    return event.message == CONFIG_INVALID or (event.message == "invalid_value" and event.accepted_instead == NOT_JSON)


def _check_json_flag(facts: Facts) -> list[Finding]:
    events = [e for e in facts.events_of(LogEventKind.ARG_VALUE_REFUSED) if is_json_flag_refusal(e)]
    if not events:
        return []
    event = events[0]
    flag = event.component or "a JSON flag"
    if event.message == CONFIG_INVALID:
        return [_config_refused(event, flag, event.accepted_instead or "its config class")]
    return [_not_json(event, flag, event.argument_value or "")]


def _as_json(value: str) -> str | None:
    """The value as JSON, where it is a Python literal of a mapping or a list (None when it is not one)."""
    parsed = python_literal(value)
    if not isinstance(parsed, (dict, list)):
        return None
    try:
        return json.dumps(parsed)
    except (TypeError, ValueError):  # a set, bytes or a tuple key: no JSON for it
        return None


def _not_json(event: LogEvent, flag: str, value: str) -> Finding:
    fixed = _as_json(value)
    quoted = fixed or '{"key": "value"}'
    return RULE_JSON_FLAG.finding(
        Severity.CRITICAL,
        f"vLLM's command line refused {flag}: its value is "
        + ("a Python dict's text, not JSON" if fixed else "not JSON")
        + (f" (write {fixed})" if fixed else ""),
        summary=f"{flag} takes a JSON object, which argparse reads with json.loads; {value!r} is not JSON"
        + (
            " but Python's way of writing the same mapping (single quotes, True/False/None), as str() of a dict "
            "writes it: a YAML config file's nested mapping, or code that formats the value, produces it."
            if fixed
            else "."
        ),
        evidence=[c.log_evidence(event, name="value refused", value=value)],
        changes=[ConfigChange(flag=flag, current=value, proposed=fixed, reason="the same mapping as JSON")]
        if fixed
        else [],
        actions=[
            f"On a shell's command line, put the JSON in single quotes: `{flag} '{quoted}'`.",
            "In vLLM's YAML config file (--config), write the value as one quoted JSON string, not as a nested "
            "mapping (ArcticInference#29 met the nested mapping's text).",
        ],
        confidence=0.85,
    )


def _config_refused(event: LogEvent, flag: str, config: str) -> Finding:
    compilation = config == "CompilationConfig"
    mode = json.dumps({"mode": COMPILATION_LEVEL})
    return RULE_JSON_FLAG.finding(
        Severity.CRITICAL,
        f"vLLM's command line refused {flag}: the value is not an object of {config}'s fields"
        + (f" (a bare level such as {COMPILATION_LEVEL} is written {mode} now)" if compilation else ""),
        summary=f"{flag} takes a JSON object that vLLM validates as {config}; pydantic refused the value given (the "
        "lines after this one name the field and why)."
        + (
            " A bare number, the compilation level older releases took as --compilation-config 3, is refused where "
            "only an object is read: that was the cause in both threads that met this (vLLM 0.11.0 among them)."
            if compilation
            else ""
        ),
        evidence=[c.log_evidence(event, name="config refused", value=config)],
        # no change proposed: the value refused is on the lines after this one, and a guess would replace what the
        # launch set (the loop applies proposals)
        actions=[
            f"If the value was a level (`{flag} 3`), write it as the object's mode: `{flag} '{mode}'` "
            "(gateway-api-inference-extension#2243's fix), or `{\"level\": 3}` (the field's older name, which vLLM "
            "0.32 still reads beside mode); otherwise the field pydantic names after this line is the one to fix."
            if compilation
            else f"Write {flag} as a JSON object of {config}'s fields (`vllm serve --help={flag.lstrip('-')}` lists "
            "them); the field pydantic names after this line is the one to fix.",
        ],
        confidence=0.8 if compilation else 0.75,
    )


RULE_JSON_FLAG = Rule(
    code="OP-7.188",
    title="vLLM's command line refused a JSON flag's value",
    category=Category.STARTUP,
    check=_check_json_flag,
    needs=("events",),
    page=RulePage(
        checks='argparse\'s `error: argument <flag>: invalid loads value: "…"` (json.loads refused the value) and '
        "`error: argument <flag>: N validation error(s) for <X>Config` (pydantic refused it for the config class).",
        why="A structured flag's value in the wrong form stops the start before anything loads.",
        example="`vllm serve: error: argument --compilation-config/-O: 1 validation error for CompilationConfig` "
        "(kubernetes-sigs/gateway-api-inference-extension#2243: `--compilation-config 3` on vLLM 0.11.0, fixed by "
        '`{"mode": 3}`).',
        fix="The value as JSON (computed from a Python dict's text); for --compilation-config given a bare level, "
        'an object (`{"mode": 3}`), named in the actions, since the refused value is not on the line.',
        limits="The refused value of a config class is on pydantic's lines after the first, which are not read: the "
        "bare level is the cause both threads had, named as a likelihood, not proposed as a change.",
        references=[
            "https://github.com/kubernetes-sigs/gateway-api-inference-extension/issues/2243",
            "https://github.com/VectorInstitute/vector-inference/issues/157",
            "https://github.com/snowflakedb/ArcticInference/issues/29",
        ],
    ),
)

RULES: list[Rule] = [RULE_JSON_FLAG]
