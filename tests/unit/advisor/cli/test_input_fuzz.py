"""Hostile input files into the commands that compute from them (Hypothesis): ramp documents into
`servops predict` and `servops triage --ramp`, host profiles into `triage --host-profile`, and a
history into scheduled triage (`--every … --out`). Values are replaced by NaN, infinities, 1e308,
integers beyond float range, negative and zero figures, text, or values of another JSON type; a file
may also be cut short or hold bytes that are not UTF-8.

Each command must either do its work (exit 0) or refuse in one line naming the file (exit 2): never a
traceback, and a scheduled run must survive its history whatever it holds. Examples per target
(EXAMPLES) are sized to the work a file that passes the boundary costs: a prediction calibrates and
replays (a few seconds here), a triage of a log does not.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from advisor.cli.main import main
from tests.helpers.hostile_json import exists, replaced, value_paths

FIXTURES = Path(__file__).parents[3] / "fixtures"
RAMP = FIXTURES / "bundled" / "queue_seqs1_ramp.json"
HOST = FIXTURES / "host" / "epyc_2core.json"
NO_FIT = str(FIXTURES / "vllm" / "v0_15_max_model_len_no_fit.log")
IDLE = ["--metrics", str(FIXTURES / "vllm_cpu" / "idle_before.prom")]
IDLE += ["--metrics", str(FIXTURES / "vllm_cpu" / "idle_after.prom"), "--metrics-interval", "8"]
EXAMPLES = {"predict": 12, "triage-ramp": 15, "host-profile": 20, "history": 15}

HOSTILE = st.sampled_from(
    [math.nan, math.inf, -math.inf, 1e308, 10**400, -(10**30), -1, 0, 0.0, "text", "", True, None, [], {}, [1, "x"]]
)


@st.composite
def hostile_files(draw, source: Path) -> bytes:
    """`source` with one to three values replaced, or cut short, or with bytes that are not UTF-8."""
    document = json.loads(source.read_text())
    paths = value_paths(document)
    how = draw(st.sampled_from(["values", "values", "values", "cut", "bytes"]))
    if how == "cut":
        text = json.dumps(document)
        return text[: draw(st.integers(min_value=0, max_value=len(text) - 1))].encode()
    if how == "bytes":
        return b"\xff\xfe" + json.dumps(document).encode()[:200]
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        path = draw(st.sampled_from(paths))
        if exists(document, path):
            document = replaced(document, path, draw(HOSTILE))
    return json.dumps(document).encode()


def _run(argv: list[str], capsys, path: Path) -> None:
    code = main(argv)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    if code != 0:
        errors = [line for line in captured.err.splitlines() if line.startswith("servops ")]
        assert code == 2 and len(errors) == 1 and str(path) in errors[0], captured.err[-2000:]


def _settings(target: str):
    return settings(
        max_examples=EXAMPLES[target],
        deadline=None,
        derandomize=True,  # the same examples every run: a failure is reproducible, never flaky
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
    )


# target -> (the file mutated, the command given it)
COMMANDS = {
    "predict": (RAMP, lambda path: ["predict", "--ramp", str(path), "--change", "--max-num-seqs 2"]),
    "triage-ramp": (RAMP, lambda path: ["triage", "--logs", NO_FIT, "--ramp", str(path)]),
    "host-profile": (HOST, lambda path: ["triage", *IDLE, "--host-profile", str(path)]),
}


@pytest.mark.parametrize("target", list(COMMANDS))
def test_the_command_does_its_work_or_refuses_every_hostile_file(target, tmp_path_factory, capsys):
    source, argv = COMMANDS[target]

    @_settings(target)
    @given(content=hostile_files(source))
    def check(content: bytes):
        path = tmp_path_factory.mktemp(target) / source.name
        path.write_bytes(content)
        _run(argv(path), capsys, path)

    check()


@pytest.fixture(scope="module")
def history_line(tmp_path_factory) -> Path:
    """One real history entry, written by a scheduled run."""
    out = tmp_path_factory.mktemp("history")
    assert main(["triage", "--logs", NO_FIT, "--every", "1s", "--count", "1", "--out", str(out)]) == 0
    entry = out / "entry.json"
    entry.write_text((out / "history.jsonl").read_text().splitlines()[-1])
    return entry


def test_a_scheduled_run_survives_every_hostile_history(history_line: Path, tmp_path_factory, capsys):
    @_settings("history")
    @given(content=hostile_files(history_line))
    def check(content: bytes):
        out = tmp_path_factory.mktemp("runs")
        (out / "history.jsonl").write_bytes(content + b"\n")
        code = main(["triage", "--logs", NO_FIT, "--every", "1s", "--count", "1", "--out", str(out)])
        captured = capsys.readouterr()
        assert code == 0 and "Traceback" not in captured.err, captured.err[-2000:]
        assert list(out.glob("triage-*.json")), "the run wrote no result"

    check()
