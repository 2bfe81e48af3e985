"""`servops ramp` takes its defaults, help and bounds from loadtest.config.RampConfig.

Every bad value is one line naming the flag, the value and the fix, exit 2, before any work
starts (the endpoint is a closed port: no request is ever sent). A value the model refuses is
refused, never clamped; a flag that the chosen mode or workload would ignore is refused too.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from advisor.cli.commands.ramp import OPTIONS, options_markdown, ramp_config
from advisor.cli.main import build_parser
from loadtest.config import RampConfig
from loadtest.workload import WORKLOAD_KINDS

URL = "http://127.0.0.1:9"
RAMP = ("ramp", "--endpoint", URL, "--concurrency", "1")
DOCS = Path(__file__).resolve().parents[4] / "docs" / "loadtest.md"

BAD = [
    # (extra arguments, what the one line must name)
    (("--prefix-groups", "0"), ("--prefix-groups", "'0'", "pass")),
    (("--workload", "shared-prefix", "--prefix-groups", "-2"), ("--prefix-groups", "'-2'", "pass")),
    (("--workload", "shared-prefix", "--prefix-share", "1.5"), ("--prefix-share", "'1.5'", "pass")),
    (("--cooldown-seconds", "-1"), ("--cooldown-seconds", "'-1'", "pass")),
    (("--workers", "-1"), ("--workers", "'-1'", "pass")),
    (("--step-seconds", "5", "--warmup-seconds", "5"), ("--warmup-seconds 5", "--step-seconds 5", "lower it")),
    (("--input-len", "uniform:128:200"), ("--input-len", "'uniform:128:200'", "at most 127")),
    (("--input-len", "0"), ("--input-len", "'0'", "pass e.g. 128")),
    (("--output-len", "normal:0:3"), ("--output-len", "'normal:0:3'", "pass e.g. 64")),
    (("--output-len", "many"), ("--output-len", "'many'", "e.g. uniform:128:64")),
    (("--prefix-groups", "8"), ("--prefix-groups 8", "--workload shared-prefix", "leave --prefix-groups out")),
    (("--prefix-len", "64"), ("--prefix-len 64", "--workload shared-prefix")),
    (("--unique-prefix-per-step",), ("--unique-prefix-per-step", "--workload shared-prefix")),
    (("--workload", "shared-prefix", "--prompts", "p.jsonl"), ("--prompts 'p.jsonl'", "--workload file")),
    (("--expect-workers", "3"), ("--expect-workers 3", "add --master")),
    (("--master-bind-host", "127.0.0.1"), ("--master-bind-host '127.0.0.1'", "add --master")),
    (("--master-timeout", "5"), ("--master-timeout 5", "add --worker")),
    # a 10^8-word probe prompt was built in memory for minutes before any server could refuse it
    (("--prefill-probe", "64,100000000"), ("--prefill-probe", "'64,100000000'", "2 to 1,048,576 words")),
    (("--prefill-probe", "1"), ("--prefill-probe", "'1'", "pass e.g. 64,256,512")),
]


@pytest.mark.parametrize("extra, mentions", BAD, ids=[" ".join(extra) for extra, _ in BAD])
def test_a_bad_value_is_one_line_naming_flag_value_and_fix(servops, extra, mentions):
    servops(*RAMP, *extra).assert_one_line_error("ramp", *mentions)


@pytest.mark.parametrize(
    "flag, levels, mention",
    [
        ("--concurrency", "1,2.5", "whole numbers"),
        ("--concurrency", "0,1", "positive"),
        ("--rates", "1,-2", "positive"),
        ("--rates", "2,nan", "finite"),
        ("--rates", "1,,x", "comma-separated"),
    ],
)
def test_bad_levels_name_the_flag_and_the_levels_as_given(servops, flag, levels, mention):
    servops("ramp", "--endpoint", URL, flag, levels).assert_one_line_error("ramp", flag, repr(levels), mention)


def _parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(list(argv))


def test_a_bare_command_line_is_exactly_the_models_defaults():
    config = ramp_config(_parse(*RAMP))
    assert config.model_dump() == RampConfig(endpoint=URL, mode="concurrency", levels=[1.0]).model_dump()
    assert (config.master_host, config.master_timeout_s) == (
        RampConfig.model_fields["master_host"].default,
        RampConfig.model_fields["master_timeout_s"].default,
    )


def test_flags_reach_their_fields():
    config = ramp_config(
        _parse(
            *RAMP,
            "--cooldown-seconds",
            "3",
            "--max-send-lateness-ms",
            "40",
            "--workload",
            "shared-prefix",
            "--prefix-groups",
            "2",
            "--input-len",
            "uniform:50:10",
            "--no-force-output-len",
            "--arrival",
            "poisson",
        )
    )
    assert config.cooldown_s == 3 and config.max_send_lateness_s == pytest.approx(0.040)
    assert (config.workload.kind, config.workload.groups, config.workload.prefix_len) == ("shared-prefix", 2, 256)
    assert config.workload.input_len.text == "uniform:50:10" and config.workload.force_output_len is False
    assert config.arrival == "poisson"


def test_help_shows_each_default_read_from_the_model(servops):
    outcome = servops("ramp", "--help")
    assert outcome.code == 0
    text = " ".join(outcome.out.split())  # argparse wraps lines
    options = text.split(" options: ", 1)[1]
    flags = [option.flag for option in OPTIONS]
    for index, option in enumerate(OPTIONS):
        default = option.default
        start = options.index(f" {option.flag} ")
        end = min(
            (options.index(f" {flag} ", start + 1) for flag in flags[index + 1 : index + 2]), default=len(options)
        )
        own = options[start:end]  # this option's help entry
        assert (option.info.description or "")[:30] in own, option.flag
        if default is not None and not isinstance(default, bool):
            assert f"(default {default:g})" in own if isinstance(default, float) else f"(default {default})" in own
    cooldown = options[options.index(" --cooldown-seconds ") : options.index(" --arrival ")]
    assert "(default 10)" in cooldown and "cancelled" in cooldown


def test_workload_choices_are_the_models_literal():
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    ramp = commands.choices["ramp"]
    workload = next(a for a in ramp._actions if "--workload" in a.option_strings)
    assert tuple(workload.choices) == WORKLOAD_KINDS


def test_docs_table_of_options_is_the_generated_one():
    """docs/loadtest.md states the defaults once, as generated from the model: `python -m advisor.cli.commands.ramp`."""
    text = DOCS.read_text(encoding="utf-8")
    table = re.search(r"<!-- ramp-options:begin[^>]*-->\n(.*?)<!-- ramp-options:end -->", text, re.DOTALL)
    assert table, "docs/loadtest.md lost its generated table of ramp options"
    assert table.group(1) == options_markdown(), (
        "docs/loadtest.md's options table is out of date: run '.venv/bin/python scripts/generated_docs.py'"
    )
