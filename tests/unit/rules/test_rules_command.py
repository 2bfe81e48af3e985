"""`servops rules list|explain`: the catalog from the command line, JSON first, one-line errors."""

import json
import subprocess
import sys
from pathlib import Path

from advisor.cli.commands.rules import (
    MARKDOWN_BEGIN,
    MARKDOWN_END,
    PAGES_BEGIN,
    PAGES_END,
    catalog_markdown,
    pages_markdown,
)
from advisor.cli.main import main
from rules.catalog import ALL_RULES

RULES_DOC = Path(__file__).parents[3] / "docs" / "rules.md"
RULE_PAGES_DOC = RULES_DOC.parent / "rule-pages.md"


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
    proc = subprocess.run(
        [sys.executable, "-m", "advisor", "rules", "explain", "OP-9.9"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0
    assert "OP-9.9" in proc.stderr and "servops rules list" in proc.stderr


def test_list_markdown_prints_every_rule_with_its_checks(capsys):
    assert main(["rules", "list", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert out == catalog_markdown()
    assert out.startswith(MARKDOWN_BEGIN) and out.rstrip().endswith(MARKDOWN_END)
    for rule in ALL_RULES:
        assert f"| `{rule.code}` | {rule.category.value} | {rule.title} |" in out


def test_docs_rules_md_embeds_the_current_generated_catalog():
    """The catalog and its thresholds in docs/rules.md are generated from the rules, never restated by hand."""
    doc = RULES_DOC.read_text()
    start, end = doc.index(MARKDOWN_BEGIN), doc.index(MARKDOWN_END) + len(MARKDOWN_END) + 1
    assert doc[start:end] == catalog_markdown(), (
        "docs/rules.md is out of date: run '.venv/bin/python scripts/generated_docs.py' "
        "(it replaces the generated block with the output of 'servops rules list --markdown')"
    )


def test_docs_rule_pages_md_embeds_every_rules_current_page(capsys):
    """Each rule's whole page is a section of docs/rule-pages.md, generated from the rule, and
    `servops rules list --pages` prints the same block."""
    assert main(["rules", "list", "--pages"]) == 0
    assert capsys.readouterr().out == pages_markdown()
    doc = RULE_PAGES_DOC.read_text()
    start, end = doc.index(PAGES_BEGIN), doc.index(PAGES_END) + len(PAGES_END) + 1
    assert doc[start:end] == pages_markdown(), (
        "docs/rule-pages.md is out of date: run '.venv/bin/python scripts/generated_docs.py'"
    )
    for rule in ALL_RULES:
        section = doc[doc.index(f"## {rule.code}: {rule.title}") :]
        assert " ".join(rule.page.fix.split()) in section.split("\n## ", 1)[0]
    engine_dead = doc[doc.index("## HL-2: engine dead") :].split("\n## ", 1)[0]
    for link in ("EngineCore encountered a fatal error", "EngineDeadError", "died unexpectedly"):
        assert link in engine_dead
