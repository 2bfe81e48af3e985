"""Rewrite the generated blocks of the docs from the code, and say which files changed.

Three blocks in docs/ are generated, never edited by hand: the rule catalog in docs/rules.md
(`servops rules list --markdown`), every rule's page in docs/rule-pages.md (`servops rules list
--pages`) and the `servops ramp` options in docs/loadtest.md (`python -m advisor.cli.commands.ramp`).
Tests fail when any is stale (tests/unit/rules/test_rules_command.py,
tests/unit/advisor/cli/test_ramp_options.py). Why a
script: the fix used to be pasting a command's output between two marker lines by hand, a step
every recipe in docs/contributing.md needs and the one most easily done wrong.

Run: .venv/bin/python scripts/generated_docs.py
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def blocks() -> list[tuple[str, re.Pattern[str], Callable[[re.Match[str]], str]]]:
    """(doc path under the repository, the generated block's pattern, its replacement from the code)."""
    from advisor.cli.commands.ramp import options_markdown
    from advisor.cli.commands.rules import (
        MARKDOWN_BEGIN,
        MARKDOWN_END,
        PAGES_BEGIN,
        PAGES_END,
        catalog_markdown,
        pages_markdown,
    )

    return [
        (
            "docs/rules.md",
            re.compile(re.escape(MARKDOWN_BEGIN) + r".*?" + re.escape(MARKDOWN_END) + r"\n", re.DOTALL),
            lambda match: catalog_markdown(),
        ),
        (
            "docs/rule-pages.md",
            re.compile(re.escape(PAGES_BEGIN) + r".*?" + re.escape(PAGES_END) + r"\n", re.DOTALL),
            lambda match: pages_markdown(),
        ),
        (
            "docs/loadtest.md",
            re.compile(r"(<!-- ramp-options:begin[^>]*-->\n).*?(<!-- ramp-options:end -->)", re.DOTALL),
            lambda match: match.group(1) + options_markdown() + match.group(2),
        ),
    ]


def regenerate(path: str, text: str, pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str]) -> str:
    """`text` with its one generated block replaced; SystemExit naming the file when the markers are gone."""
    new, count = pattern.subn(replace, text, count=1)
    if count != 1:
        raise SystemExit(f"{path}: the generated block's marker lines are missing; restore them from git")
    return new


def main() -> int:
    for path, pattern, replace in blocks():
        file = ROOT / path
        text = file.read_text(encoding="utf-8")
        new = regenerate(path, text, pattern, replace)
        if new != text:
            file.write_text(new, encoding="utf-8")
        print(f"{path}: {'updated' if new != text else 'up to date'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
