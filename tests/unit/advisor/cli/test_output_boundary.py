"""The one output boundary (advisor/cli/output.py): documents redacted as values, then serialized;
files written atomically before anything is printed, rescued when the write fails; terminal text
without escape sequences; a closed stdout never costs a result."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from advisor.cli.output import result_json, say, strip_escapes, write_result
from advisor.errors import UserError
from advisor.redact import MASK
from tests.helpers.streams import ClosedPipe

FIXTURE_LOG = Path(__file__).parents[3] / "fixtures" / "vllm" / "v0_10_rpc_timeout.log"


def test_a_double_quoted_key_in_server_args_leaves_valid_json_with_the_key_masked(servops, tmp_path):
    """Redaction over serialized JSON ate the backslash before the escaped quote: invalid JSON, exit 0."""
    out = tmp_path / "t.json"
    outcome = servops(
        "triage", "--logs", str(FIXTURE_LOG), "--server-args", 'vllm serve m --api-key "k1-secret"', "--json", str(out)
    )
    assert outcome.code == 0, outcome.err
    document = json.loads(out.read_text())  # valid JSON
    assert "k1-secret" not in out.read_text() + outcome.out + outcome.err
    assert MASK in json.dumps(document)


def test_result_json_masks_values_before_serializing():
    document = {"command": 'vllm serve m --api-key "a\\"b" --port 1', "api_key": "x", "n": 3}
    text = result_json(document)
    parsed = json.loads(text)
    assert parsed["api_key"] == MASK and parsed["n"] == 3
    assert 'a\\"b' not in text and "--port 1" in parsed["command"]


def test_a_file_is_replaced_whole_and_keeps_a_plain_files_permissions(tmp_path):
    target = tmp_path / "r.json"
    write_result(target, {"a": 1}, "--json")
    assert json.loads(target.read_text()) == {"a": 1}
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    write_result(target, {"a": 2}, "--json")
    assert json.loads(target.read_text()) == {"a": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no partial file left behind


def test_a_write_that_fails_rescues_the_document_and_names_both_paths(tmp_path):
    """The folder went away under the path (a file now stands where it was): the write fails, even as root."""
    (tmp_path / "gone").write_text("a file where the folder was")
    target = tmp_path / "gone" / "r.json"
    with pytest.raises(UserError) as raised:
        write_result(target, {"api_key": "zz-secret", "figure": 7}, "--json")
    message = str(raised.value)
    rescued = Path(message.rsplit("saved to ", 1)[1].split(" ", 1)[0])
    try:
        assert str(target) in message
        assert json.loads(rescued.read_text()) == {"api_key": MASK, "figure": 7}
    finally:
        rescued.unlink()


def test_a_full_disk_rescues_the_triage_json(servops, tmp_path):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    outcome = servops("triage", "--logs", str(FIXTURE_LOG), "--json", "/dev/full")
    # /dev/full is not a folder one can put a temporary file in: the write fails and the result is rescued
    line = outcome.assert_one_line_error("triage", "--json /dev/full", "saved to")
    rescued = Path(line.rsplit("saved to ", 1)[1].split(" ", 1)[0])
    try:
        assert json.loads(rescued.read_text())["kind"] == "triage"
    finally:
        rescued.unlink()


def test_stdout_onto_a_full_disk_is_one_line_not_a_traceback():
    import subprocess
    import sys

    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "advisor", "rules", "list"], stdout=full, stderr=subprocess.PIPE, text=True
        )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == (
        "servops rules: error: cannot write the output to stdout: No space left on device; free space where it "
        "is redirected, or write the result to a file with --json where the command has it"
    )


@pytest.mark.parametrize(
    "raw, shown",
    [
        ("\x1b]8;;http://evil.example\x07click\x1b]8;;\x07 here", "click here"),
        ("\x1b[31mred\x1b[0m text", "red text"),
        ("title\x1b]0;pwned\x1b\\ ok", "title ok"),
        ("bell\x07 and back\x08space", "bell and backspace"),
        ("tab\tand\nnewline stay", "tab\tand\nnewline stay"),
        ("c1 \x9b31m control", "c1 31m control"),
    ],
)
def test_terminal_text_loses_every_escape_sequence(raw, shown):
    assert strip_escapes(raw) == shown


def test_say_masks_secrets_and_survives_a_reader_that_left(monkeypatch):
    buffer = io.StringIO()
    say("vllm serve m --api-key abc123", buffer)
    assert buffer.getvalue() == f"vllm serve m --api-key {MASK}\n"

    say("lost line", ClosedPipe())  # no exception


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


@pytest.mark.parametrize(
    "text, said",
    [
        ('{"kind": "ramp", "steps": [{"offered": NaN}]}', "holds NaN, which is not JSON"),
        ('{"kind": "ramp", "steps": [{"offered": -Infinity}]}', "holds -Infinity, which is not JSON"),
        ('{"kind": "ramp", "steps": [{"offered": 1' + "0" * 400 + "}]}", "steps[0].offered is beyond any figure"),
    ],
)
def test_report_refuses_numbers_json_does_not_hold_in_one_line(servops, tmp_path, text, said):
    source = tmp_path / "r.json"
    source.write_text(text)
    outcome = servops("report", str(source), "-o", str(tmp_path / "r.html"))
    outcome.assert_one_line_error("report", str(source), said)
