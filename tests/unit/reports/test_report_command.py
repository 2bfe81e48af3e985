"""`servops report`: files in, one HTML file out, one-line errors for bad input."""

from __future__ import annotations

import json
import subprocess
import sys

from advisor.cli.main import main

from .conftest import FIXTURES


def test_report_command_writes_one_html_file_from_several_results(tmp_path, capsys):
    out = tmp_path / "sub" / "report.html"
    code = main(["report", str(FIXTURES / "triage.json"), str(FIXTURES / "advise.json"), "-o", str(out)])
    assert code == 0
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "from <code>triage.json</code>" in page and "from <code>advise.json</code>" in page
    assert str(out) in capsys.readouterr().out


def test_missing_file_is_one_line_exit_2(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "advisor", "report", str(tmp_path / "nope.json"), "-o", str(tmp_path / "r.html")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "nope.json: no such file" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_invalid_json_names_the_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "ramp",\n oops}', encoding="utf-8")
    assert main(["report", str(bad), "-o", str(tmp_path / "r.html")]) == 2
    assert "bad.json: not valid JSON (line 2" in capsys.readouterr().err


def test_json_of_another_kind_is_refused_with_the_kinds_listed(tmp_path, capsys):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"kind": "profile"}), encoding="utf-8")
    assert main(["report", str(other), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "'profile' is not a servops result" in err and "triage" in err


def test_a_result_embedded_in_a_demo_is_read_through_its_own_model(tmp_path, capsys):
    # a demo keeps its triage as plain JSON; `"actions": true` there ended the report in a traceback
    demo = json.loads((FIXTURES / "recorded-demo-tiny.json").read_text(encoding="utf-8"))
    demo["triage"]["findings"][0]["actions"] = True
    bad = tmp_path / "demo.json"
    bad.write_text(json.dumps(demo), encoding="utf-8")
    assert main(["report", str(bad), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "not a demo result servops can read: triage.findings[0].actions: input should be a valid list" in err


def test_report_command_attaches_rule_pages_to_triage_findings(tmp_path):
    out = tmp_path / "triage.html"
    assert main(["report", str(FIXTURES / "recorded-triage-tiny.json"), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    rule = json.loads((FIXTURES / "recorded-triage-tiny.json").read_text(encoding="utf-8"))["findings"][0]["rule"]
    assert f"Rule page {rule}" in page and "What it checks" in page
