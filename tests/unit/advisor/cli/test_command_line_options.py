"""Options whose value is a command line take a lone flag as that value.

`--server-args --enable-prefix-caching` stopped with argparse's "expected one argument": a word
starting with '-' after an option reads as another option. Every option declared with
`type=command_line` now binds the next word, and an unbalanced quote is one line, exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor.cli.main import build_parser, main
from advisor.cli.options import bind_command_line_values

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "vllm_cpu"

LONE_FLAG_CASES = [
    (("triage", "--metrics", "m.prom", "--server-args", "--enable-prefix-caching"), "server_args"),
    (
        ("predict", "--ramp", "r.json", "--server-args", "--enforce-eager", "--change", "--enable-prefix-caching"),
        "server_args",
    ),
    (("tune", "--flags", "--enforce-eager"), "flags"),
    (("demo", "--engine-flags", "--enforce-eager"), "engine_flags"),
]


@pytest.mark.parametrize(("argv", "dest"), LONE_FLAG_CASES, ids=lambda v: v[0] if isinstance(v, tuple) else v)
def test_a_lone_flag_is_read_as_the_options_value(argv: tuple[str, ...], dest: str) -> None:
    parser = build_parser()
    args = parser.parse_args(bind_command_line_values(parser, argv))
    assert getattr(args, dest).startswith("--")


def test_predict_takes_a_lone_flag_as_a_change() -> None:
    parser = build_parser()
    argv = ("predict", "--ramp", "r.json", "--change", "--enable-prefix-caching", "--change", "--max-num-seqs 8")
    args = parser.parse_args(bind_command_line_values(parser, argv))
    assert args.change == ["--enable-prefix-caching", "--max-num-seqs 8"]


def test_words_that_only_look_like_command_line_options_are_left_alone() -> None:
    parser = build_parser()
    argv = ["ramp", "--endpoint", "http://127.0.0.1:9", "--concurrency", "1", "--model", "--server-args"]
    assert bind_command_line_values(parser, argv) == argv  # --model's value, not an option of ours


def test_triage_with_a_lone_server_flag_reads_it_into_the_current_command(tmp_path: Path) -> None:
    out = tmp_path / "triage.json"
    code = main(
        [
            "triage",
            "--metrics",
            str(FIXTURES / "idle_after.prom"),
            "--server-args",
            "--enable-prefix-caching",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    assert "--enable-prefix-caching" in json.loads(out.read_text())["current_command"]


def test_an_unbalanced_quote_is_one_line_naming_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["triage", "--metrics", "m.prom", "--server-args", "vllm serve m --served-model-name 'a"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "--server-args" in err and "quote" in err


RECORDED = Path(__file__).resolve().parents[3] / "fixtures" / "vllm_cpu"


def test_save_window_beside_a_ramp_is_one_line_saying_which_to_drop(servops, tmp_path: Path) -> None:
    """With a ramp the predictions are calibrated on the ramp: a saved window would be a file no
    printed command uses."""
    outcome = servops(
        "triage",
        "--logs",
        str(RECORDED / "preempting.log"),
        "--ramp",
        str(RECORDED / "preempting_ramp.json"),
        "--save-window",
        str(tmp_path / "w.json"),
    )
    outcome.assert_one_line_error("triage", "--save-window", "--ramp", "drop --save-window")
    assert not (tmp_path / "w.json").exists()


def test_save_window_on_an_idle_window_writes_nothing_and_says_why(servops, tmp_path: Path) -> None:
    window = tmp_path / "w.json"
    metrics = ["--metrics", str(RECORDED / "idle_before.prom"), "--metrics", str(RECORDED / "idle_after.prom")]
    outcome = servops("triage", *metrics, "--metrics-interval", "8", "--save-window", str(window))
    assert outcome.code == 0 and not window.exists()
    assert f"the window was not saved to {window}: the metrics window cannot stand for a load step" in outcome.out


def test_save_window_on_a_scheduled_run_is_one_line_naming_where_windows_go(servops, tmp_path: Path) -> None:
    outcome = servops(
        "triage",
        "--logs",
        str(RECORDED / "idle.log"),
        "--count",
        "1",
        "--out",
        str(tmp_path / "runs"),
        "--save-window",
        str(tmp_path / "w.json"),
    )
    outcome.assert_one_line_error("triage", "--save-window", "window-<time>.json", "drop --save-window")
