"""The values vLLM accepts for the launch flags servops reads, checked where a user gives them.

Why: a `--server-args` or `--server-command` value vLLM would refuse (`--tensor-parallel-size 0`,
`--gpu-memory-utilization 7`, `--num-gpu-blocks-override -3`) used to be dropped by the typed reader
and replaced by vLLM's default, so servops predicted and advised for a launch nobody could run. A
flag given twice kept its last value silently, as a shell script that appends flags does. Both are
now one line naming the value and the fix (exit 2), checked once at the command line's edge
(`validated_command`); the launch's later readers trust it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from advisor.collect.kv_space import BINARY_SUFFIX, DECIMAL_SUFFIX
from advisor.collect.server_args import (
    SHORT_FLAGS,
    ServeCommand,
    ServerArgsError,
    command_from_words,
    launch_text_words,
)
from advisor.units import GIB, MAX_KV_TOKENS, MAX_MEMORY_GIB

__all__ = ["LAUNCH_VALUES", "LaunchValue", "check_value", "size_of", "validated_command"]

# 4096, 32k, 4GiB: vLLM takes human sizes, lower-case units decimal and upper-case binary
_SIZE = re.compile(r"^(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>[kKmMgGtT]?)(?:i?[bB])?$")
_UNIT = {"": 1, **DECIMAL_SUFFIX, **BINARY_SUFFIX}


@dataclass(frozen=True, slots=True)
class LaunchValue:
    """What a flag's value must be: an integer or a number, its least value (inclusive unless
    `above`), its greatest, and values outside the range that vLLM gives a meaning (-1: auto)."""

    kind: str  # "int" | "float" | "size"
    least: float
    above: bool = False
    most: float | None = None
    special: tuple[str, ...] = ()
    means: str = ""


LAUNCH_VALUES: dict[str, LaunchValue] = {
    "--tensor-parallel-size": LaunchValue("int", 1, means="GPUs per pipeline stage"),
    "--pipeline-parallel-size": LaunchValue("int", 1, means="pipeline stages"),
    "--data-parallel-size": LaunchValue("int", 1, means="engine replicas"),
    "--gpu-memory-utilization": LaunchValue("float", 0, above=True, most=1, means="a share of the GPU"),
    "--max-num-seqs": LaunchValue("int", 1, most=MAX_KV_TOKENS, means="sequences per step"),
    "--max-num-batched-tokens": LaunchValue("size", 1, most=MAX_KV_TOKENS, means="tokens per step"),
    "--max-model-len": LaunchValue(
        "size", 1, most=MAX_KV_TOKENS, special=("-1", "auto"), means="tokens per request (-1: auto-fit)"
    ),
    "--block-size": LaunchValue("int", 1, most=MAX_KV_TOKENS, means="tokens per KV block"),
    "--num-gpu-blocks-override": LaunchValue("int", 1, most=MAX_KV_TOKENS, means="KV blocks"),
    "--kv-cache-memory-bytes": LaunchValue("size", 1, most=MAX_MEMORY_GIB * GIB, means="bytes of KV cache"),
    "--swap-space": LaunchValue("float", 0, most=MAX_MEMORY_GIB, means="GiB of CPU swap per GPU"),
    "--cpu-offload-gb": LaunchValue("float", 0, most=MAX_MEMORY_GIB, means="GiB of weights offloaded per GPU"),
    "--max-lora-rank": LaunchValue("int", 1, means="the largest LoRA rank"),
    "--max-loras": LaunchValue("int", 1, means="LoRA adapters per batch"),
}


def check_value(flag: str, value: str | None) -> str | None:
    """Why `value` is not one vLLM accepts for `flag`, or None when it is (or the flag is not checked)."""
    rule = LAUNCH_VALUES.get(SHORT_FLAGS.get(flag, flag))
    if rule is None or value is None or value.strip() in rule.special:
        return None
    text = value.strip()
    number = _number(rule, text)
    if number is None or number != number or abs(number) == float("inf"):
        return f"{flag} {value!r}: not a finite number; give {_range(rule)} ({rule.means})"
    if number <= rule.least if rule.above else number < rule.least:
        return f"{flag} {value}: vLLM refuses it; give {_range(rule)} ({rule.means})"
    if rule.most is not None and number > rule.most:
        held = "vLLM refuses it" if rule.kind == "float" and rule.most <= 1 else "more than any server holds"
        return f"{flag} {value}: {held}; give {_range(rule)} ({rule.means})"
    if rule.kind == "int" and not re.fullmatch(r"\+?\d+", text):
        return f"{flag} {value}: not a whole number; give {_range(rule)} ({rule.means})"
    return None


def size_of(flag: str, text: str) -> float | None:
    """A checked flag's value as a number (`32k` -> 32000, `-1` -> -1), else None."""
    rule = LAUNCH_VALUES.get(SHORT_FLAGS.get(flag, flag))
    return None if rule is None else _number(rule, text.strip())


def _number(rule: LaunchValue, text: str) -> float | None:
    """The value's number: a size may carry a unit (`32k`, `4GiB`), the others are plain numbers."""
    if rule.kind == "size":
        match = _SIZE.match(text)
        return float(match["number"]) * _UNIT[match["unit"]] if match else None
    try:
        return float(text)
    except ValueError:
        return None


def _range(rule: LaunchValue) -> str:
    """`1 or more`, `0 to 1`, `above 0 and at most 1`, with the special values."""
    if rule.above:
        told = f"above {rule.least:g}" + (f" and at most {rule.most:g}" if rule.most is not None else "")
    else:
        told = f"{rule.least:g} to {rule.most:,.0f}" if rule.most is not None else f"{rule.least:g} or more"
    return told + (f", or {' / '.join(rule.special)}" if rule.special else "")


# A model word alone: a catalog name, a Hub id or a path, never brackets, braces or a page of text.
_MODEL_WORD = re.compile(r"^[^\s\[\]{}()<>|;&]{1,512}$")


def _a_launch(command: ServeCommand) -> bool:
    """Whether the text named anything a launch has: a program, a flag, a variable, or a model word alone."""
    if command.program or command.flags or command.env:
        return True
    return command.model is not None and bool(_MODEL_WORD.match(command.model))


def validated_command(text: str, flag: str = "--server-args") -> ServeCommand:
    """The parsed command of a user's launch text, refused in one line when a flag is given twice or a value
    is one vLLM would refuse."""
    words = launch_text_words(text, flag)
    command = command_from_words(words)
    stripped = text.strip()
    if stripped and not _a_launch(command):
        shown = stripped if len(stripped) <= 60 else stripped[:60] + "…"
        raise ServerArgsError(
            f"{flag} {shown!r}: no vLLM launch in it; give the command that starts the server (`vllm serve MODEL "
            "--flag value …`, `python -m vllm.entrypoints.openai.api_server …`, `docker run … IMAGE --flag …`) or "
            "just its flags"
        )
    seen: dict[str, str] = {}
    for index, word in enumerate(words):
        name, equals, inline = word.partition("=")
        if not name.startswith("-") or re.fullmatch(r"-?\d+(?:\.\d+)?", name):
            continue
        key = SHORT_FLAGS.get(name, "--" + name[5:] if name.startswith("--no-") else name)
        following = words[index + 1] if index + 1 < len(words) and not words[index + 1].startswith("--") else None
        given = f"{name} {inline if equals else following or ''}".strip()
        if key in seen:
            raise ServerArgsError(f"{flag}: {key} is given twice ({seen[key]}, then {given}); give each flag once")
        seen[key] = given
    for name, value in command.flags.items():
        problem = check_value(name, value)
        if problem:
            raise ServerArgsError(f"{flag}: {problem}")
    return command
