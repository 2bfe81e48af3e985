"""Numeric options: one validation layer (advisor/cli/options.py) for every command.

Each bad number — NaN, ±Inf, zero or negative where a positive is needed, a fraction above 1,
a factor that is no growth, a percentage above 100 — is argparse's one line naming the flag,
the value and what to pass, exit 2, before any work starts (no endpoint is contacted: the
URLs below point at a closed port).
"""

from __future__ import annotations

import argparse

import pytest

from advisor.cli import options as cli_types
from advisor.cli.main import build_parser

RAMP = ("ramp", "--endpoint", "http://127.0.0.1:9", "--concurrency", "1")
TRIAGE = ("triage", "--metrics", "unused.txt")
ADVISE = ("advise", "--model", "Llama-3.1-8B", "--gpu", "H100-SXM-80GB")

CASES = [
    (RAMP, "--step-seconds", "nan"),
    (RAMP, "--step-seconds", "inf"),
    (RAMP, "--step-seconds", "0"),
    (RAMP, "--step-seconds", "-5"),
    (RAMP, "--warmup-seconds", "nan"),
    (RAMP, "--warmup-seconds", "-1"),
    (RAMP, "--cooldown-seconds", "-1"),
    (RAMP, "--cooldown-seconds", "-inf"),
    (RAMP, "--request-timeout", "0"),
    (RAMP, "--request-timeout", "nan"),
    (RAMP, "--max-ttft", "-3"),
    (RAMP, "--knee-factor", "nan"),
    (RAMP, "--knee-factor", "1"),
    (RAMP, "--knee-factor", "0.5"),
    (RAMP, "--max-client-cpu", "-10"),
    (RAMP, "--max-client-cpu", "150"),
    (RAMP, "--max-send-lateness-ms", "0"),
    (RAMP, "--prefix-share", "1.5"),
    (RAMP, "--prefix-share", "-0.1"),
    (RAMP, "--prefix-share", "nan"),
    (RAMP, "--prefix-groups", "0"),
    (RAMP, "--prefix-len", "-4"),
    (RAMP, "--workers", "-1"),
    (RAMP, "--expect-workers", "0"),
    (RAMP, "--master-port", "70000"),
    (RAMP, "--master-port", "x"),
    (RAMP, "--master-timeout", "0"),
    (TRIAGE, "--timeout", "nan"),
    (TRIAGE, "--timeout", "0"),
    (TRIAGE, "--timeout", "-1"),
    (TRIAGE, "--metrics-interval", "inf"),
    (TRIAGE, "--metrics-interval", "0"),
    (TRIAGE, "--gpus", "0"),
    (TRIAGE, "--gpu-memory-gib", "-80"),
    (TRIAGE, "--prefix-reuse", "2"),
    (TRIAGE, "--ttft-slo", "nan"),
    (TRIAGE, "--itl-slo", "-0.1"),
    (TRIAGE, "--concurrency", "0"),
    (TRIAGE, "--replicas", "-2"),
    (TRIAGE, "--count", "0"),
    (TRIAGE, "--input-tokens", "inf"),
    (TRIAGE, "--shared-prefix-tokens", "-1"),
    (ADVISE, "--gpu-memory-utilization", "1.5"),
    (ADVISE, "--gpu-memory-utilization", "nan"),
    (ADVISE, "--max-model-len", "0"),
    (ADVISE, "--max-num-seqs", "-8"),
    (ADVISE, "--free-memory-gib", "inf"),
    (ADVISE, "--prefix-reuse", "1.01"),
    (ADVISE, "--block-size", "0"),
    (ADVISE, "--target-concurrency", "nan"),
    (("demo",), "--step-seconds", "nan"),
    (("demo",), "--startup-timeout", "inf"),
    (("demo",), "--warmup-seconds", "-inf"),
]


@pytest.mark.parametrize("command, flag, value", CASES, ids=[f"{c[0]} {f} {v}" for c, f, v in CASES])
def test_bad_number_is_one_line_naming_flag_value_and_fix(servops, command, flag, value):
    outcome = servops(*command, f"{flag}={value}")
    line = outcome.assert_one_line_error(command[0], flag, repr(value) if value != "x" else "'x'")
    assert "pass" in line  # the fix: what to pass instead


@pytest.mark.parametrize(
    "argv, mentions",
    [
        ((*RAMP[:-1], "nan,2"), ["--concurrency", "'nan,2'"]),
        (("ramp", "--endpoint", "http://127.0.0.1:9", "--rates", "1,inf"), ["--rates", "'1,inf'"]),
        ((*RAMP, "--step-seconds", "5", "--warmup-seconds", "6"), ["--warmup-seconds 6", "--step-seconds 5"]),
        (("demo", "--step-seconds", "5", "--warmup-seconds", "6", "--out", "unused-out"), ["--step-seconds 5"]),
    ],
)
def test_inconsistent_numbers_name_the_flags_at_fault(servops, tmp_path, monkeypatch, argv, mentions):
    monkeypatch.chdir(tmp_path)
    servops(*argv).assert_one_line_error(argv[0], *mentions)


def test_no_command_option_takes_a_plain_float():
    """The net under the types: no option of any command, present or future, parses NaN."""
    parser = build_parser()
    seen = 0
    stack = [parser]
    while stack:
        current = stack.pop()
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack.extend(action.choices.values())
            elif action.type is not None:
                assert action.type is not float, action.option_strings
                seen += 1
    assert seen > 40


@pytest.mark.parametrize(
    "type_, text, expected",
    [
        (cli_types.positive_float, "2.5", 2.5),
        (cli_types.non_negative_float, "0", 0.0),
        (cli_types.fraction, "1", 1.0),
        (cli_types.unit_interval, "0", 0.0),
        (cli_types.factor_above_one, "1.5", 1.5),
        (cli_types.percent, "100", 100.0),
        (cli_types.positive_int, "3", 3),
        (cli_types.non_negative_int, "0", 0),
        (cli_types.port, "8000", 8000),
        (cli_types.finite_float, "-2", -2.0),
    ],
)
def test_good_numbers_pass_unchanged(type_, text, expected):
    assert type_(text) == expected
