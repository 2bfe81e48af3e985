"""Output paths: checked before the work starts; a finished result is never dropped.

Each command gets an output path that cannot be written (a file where a folder should be, a
folder where a file should be) and must fail at once with one line naming the flag — before
any endpoint is contacted (the endpoints here are a closed port, so reaching them would give
a different error).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.cli.output_paths import check_output_dir, check_output_file, write_or_rescue
from advisor.errors import UserError

FIXTURES = Path(__file__).parents[3] / "fixtures" / "reports"


@pytest.fixture
def blocker(tmp_path) -> Path:
    """A plain file, used where a folder is expected."""
    path = tmp_path / "a-file"
    path.write_text("x")
    return path


@pytest.mark.parametrize(
    "argv, flag",
    [
        (("ramp", "--endpoint", "http://127.0.0.1:9", "--concurrency", "1", "--json", "{blocker}/r.json"), "--json"),
        (("ramp", "--endpoint", "http://127.0.0.1:9", "--concurrency", "1", "--json", "{tmp}"), "--json"),
        (
            ("ramp", "--endpoint", "http://127.0.0.1:9", "--concurrency", "1", "--records", "{blocker}/x/r.jsonl"),
            "--records",
        ),
        (("triage", "--endpoint", "http://127.0.0.1:9", "--json", "{blocker}/t.json"), "--json"),
        (("triage", "--endpoint", "http://127.0.0.1:9", "--save-window", "{tmp}"), "--save-window"),
        (
            ("triage", "--endpoint", "http://127.0.0.1:9", "--every", "1m", "--count", "1", "--out", "{blocker}"),
            "--out",
        ),
        (("triage", "--endpoint", "http://127.0.0.1:9", "--count", "1", "--out", "{blocker}/sub"), "--out"),
        (("demo", "--out", "{blocker}"), "--out"),
        (("demo", "--out", "{blocker}/deeper/still"), "--out"),
        (("report", str(FIXTURES / "triage.json"), "-o", "{blocker}/r.html"), "--output"),
        (("report", str(FIXTURES / "triage.json"), "-o", "{tmp}"), "--output"),
    ],
)
def test_unwritable_output_fails_before_any_work(servops, tmp_path, blocker, argv, flag):
    argv = tuple(arg.format(blocker=blocker, tmp=tmp_path) for arg in argv)
    outcome = servops(*argv)
    line = outcome.assert_one_line_error(argv[0], flag)
    assert "127.0.0.1:9" not in line  # it never got as far as the endpoint


def test_checks_create_missing_folders_and_leave_no_probe(tmp_path):
    check_output_dir(tmp_path / "new" / "dir", "--out")
    check_output_file(tmp_path / "other" / "r.json", "--json")
    assert (tmp_path / "new" / "dir").is_dir() and list((tmp_path / "new" / "dir").iterdir()) == []
    assert not (tmp_path / "other" / "r.json").exists()


def test_existing_file_is_kept_by_the_check(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("old")
    check_output_file(target, "--json")
    assert target.read_text() == "old"


def test_a_finished_result_whose_path_broke_is_saved_elsewhere(tmp_path):
    gone = tmp_path / "was-a-folder"
    gone.write_text("now a file")  # the folder became a file during the run
    with pytest.raises(UserError) as caught:
        write_or_rescue(gone / "ramp.json", '{"kind": "ramp"}\n', "--json")
    message = str(caught.value)
    rescued = Path(message.rsplit("saved to ", 1)[1].split(" instead")[0])
    try:
        assert message.startswith(f"--json {gone / 'ramp.json'}: cannot write it")
        assert rescued.read_text() == '{"kind": "ramp"}\n'
    finally:
        rescued.unlink()
