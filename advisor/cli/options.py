"""One validation layer for every numeric command-line option of servops.

Why here and not in the models: a value that reaches a pydantic model or a loop unchecked
comes back as a traceback (a NaN timeout), a silent clamp (a share of 1.5 used as 1) or a
wait that never ends (a zero step). argparse calls an option's `type` while it parses, so a
type from this module turns every bad number into argparse's own one-line error that names
the flag, the value and what to pass instead, with exit code 2:

    servops ramp: error: argument --step-seconds: 'nan' is not a finite number; pass a number > 0, e.g. 30

Every command declares its numbers with these types (`type=positive_float`, …).
`harden_numeric_options` is the net under them: `advisor.cli.main` runs it over the whole parser,
so an option still declared `type=float` refuses NaN and ±Inf too.
"""

from __future__ import annotations

import argparse
import math
import shlex
from collections.abc import Iterator, Sequence

from loadtest.prefill_probe import MAX_PROBE_WORDS

__all__ = [
    "bind_command_line_values",
    "command_line",
    "factor_above_one",
    "finite_float",
    "fraction",
    "harden_numeric_options",
    "non_negative_float",
    "non_negative_int",
    "percent",
    "port",
    "positive_float",
    "positive_int",
    "unit_interval",
]


def finite_float(text: str) -> float:
    """Any real number; NaN and ±Inf refused."""
    return _float(text, "a number, e.g. 10")


def positive_float(text: str) -> float:
    """A number > 0 (durations, sizes, rates)."""
    value = _float(text, "a number > 0, e.g. 30")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be greater than 0; pass e.g. 30")
    return value


def non_negative_float(text: str) -> float:
    """A number >= 0 (cool-downs, margins)."""
    value = _float(text, "a number >= 0, e.g. 10")
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 or more; pass e.g. 10")
    return value


def fraction(text: str) -> float:
    """A share in (0, 1], such as vLLM's --gpu-memory-utilization."""
    value = _float(text, "a fraction in (0, 1], e.g. 0.9")
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a fraction in (0, 1]; pass e.g. 0.9")
    return value


def unit_interval(text: str) -> float:
    """A share in [0, 1] (0 allowed: "none of the requests")."""
    value = _float(text, "a number between 0 and 1, e.g. 0.5")
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 1; pass e.g. 0.5")
    return value


def factor_above_one(text: str) -> float:
    """A growth factor > 1 (a knee at p99 x 1 would be every step)."""
    value = _float(text, "a factor > 1, e.g. 2")
    if value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be greater than 1; pass e.g. 2")
    return value


def percent(text: str) -> float:
    """A percentage in (0, 100] (CPU limits of one core)."""
    value = _float(text, "a percentage in (0, 100], e.g. 90")
    if not 0 < value <= 100:
        raise argparse.ArgumentTypeError(f"{text!r} must be a percentage in (0, 100]; pass e.g. 90")
    return value


def positive_int(text: str) -> int:
    """A whole number >= 1 (counts, lengths, sizes)."""
    value = _int(text, "a whole number >= 1, e.g. 4")
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1; pass e.g. 4")
    return value


def prompt_lengths(text: str) -> list[int]:
    """Comma-separated prompt lengths, each a whole number from 2 to MAX_PROBE_WORDS (e.g. --prefill-probe
    64,256,512)."""
    values = [_int(part.strip(), "lengths like 64,256,512") for part in text.split(",") if part.strip()]
    if not values or min(values) < 2 or max(values) > MAX_PROBE_WORDS:
        raise argparse.ArgumentTypeError(
            f"{text!r} must list prompt lengths of 2 to {MAX_PROBE_WORDS:,} words; pass e.g. 64,256,512"
        )
    return values


def non_negative_int(text: str) -> int:
    """A whole number >= 0 (0 meaning "none", e.g. --workers 0)."""
    value = _int(text, "a whole number >= 0, e.g. 0")
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 or more; pass e.g. 0")
    return value


def port(text: str) -> int:
    """A TCP port, 1-65535."""
    value = _int(text, "a port 1-65535, e.g. 5557")
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port; pass 1-65535, e.g. 5557")
    return value


def harden_numeric_options(parser: argparse.ArgumentParser) -> None:
    """Swap a plain `type=float` for `finite_float` in `parser` and all its subparsers.

    A net, not the rule: each command states its range with the types above. This pass only
    makes sure no option of any command, present or future, lets NaN or Inf through.
    """
    for action in _all_actions(parser):
        if action.type is float:
            action.type = finite_float


def command_line(text: str) -> str:
    """An option whose value is itself a command line (`--server-args "--max-num-seqs 8"`).

    Checked here so that an unbalanced quote is argparse's one-line error, not a traceback from
    the flag parser later; the text is kept as given."""
    try:
        shlex.split(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a command line ({exc}); quote it as a shell would, "
            'e.g. "--max-num-seqs 8 --enable-prefix-caching"'
        ) from None
    return text


def bind_command_line_values(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """`--server-args --enable-prefix-caching` → `--server-args=--enable-prefix-caching`.

    Why: argparse reads a word starting with '-' after an option as another option, so a lone
    flag given as the value stopped with "expected one argument". Every option declared with
    `type=command_line` (in any command) takes the next word as its value, whatever it starts with.
    """
    options = _command_line_options(parser)
    bound: list[str] = []
    words = list(argv)
    index = 0
    while index < len(words):
        word = words[index]
        if word in options and index + 1 < len(words) and words[index + 1].startswith("-"):
            bound.append(f"{word}={words[index + 1]}")
            index += 2
            continue
        bound.append(word)
        index += 1
    return bound


def _command_line_options(parser: argparse.ArgumentParser) -> set[str]:
    return {name for action in _all_actions(parser) if action.type is command_line for name in action.option_strings}


def _all_actions(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    """Every option of `parser` and of its subcommands' parsers (each parser once: aliases share one)."""
    for action in parser._actions:
        yield action
        if isinstance(action, argparse._SubParsersAction):
            for subparser in set(action.choices.values()):
                yield from _all_actions(subparser)


def _float(text: str, expected: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; pass {expected}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number; pass {expected}")
    return value


def _int(text: str, expected: str) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; pass {expected}") from None
