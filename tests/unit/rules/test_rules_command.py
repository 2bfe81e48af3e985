"""`servops rules list|explain`: the catalog from the command line, JSON first, one-line errors."""

import json
import subprocess
import sys

from advisor.cli import main
from rules.catalog import ALL_RULES


def test_list_prints_every_code_with_its_title(capsys):
    assert main(["rules", "list"]) == 0
    out = capsys.readouterr().out
    for rule in ALL_RULES:
        assert rule.code in out and rule.title in out


def test_list_json_is_a_document_with_kind_version_and_every_rule(capsys):
    assert main(["rules", "list", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["kind"] == "rules" and document["servops_version"] and document["created_at"]
    assert [r["code"] for r in document["rules"]] == [rule.code for rule in ALL_RULES]
    assert document["rules"][0]["page"]["fix"]


def test_explain_prints_the_page(capsys):
    assert main(["rules", "explain", "op-5.3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OP-5.3") and "Why it matters" in out and "Limits" in out


def test_explain_unknown_code_is_one_line_exit_2_without_traceback():
    proc = subprocess.run([sys.executable, "-m", "advisor", "rules", "explain", "OP-9.9"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0
    assert "OP-9.9" in proc.stderr and "servops rules list" in proc.stderr
