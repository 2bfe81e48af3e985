"""scripts/generated_docs.py rewrites exactly the generated blocks of docs/rules.md, docs/rule-pages.md
and docs/loadtest.md."""

import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = runpy.run_path(str(ROOT / "scripts" / "generated_docs.py"), run_name="generated_docs")
BLOCKS = SCRIPT["blocks"]()


@pytest.mark.parametrize("block", BLOCKS, ids=[path for path, _, _ in BLOCKS])
def test_a_stale_block_is_replaced_and_the_prose_around_it_is_kept(block):
    path, pattern, replace = block
    current = (ROOT / path).read_text(encoding="utf-8")  # up to date: the drift tests hold it so
    assert SCRIPT["regenerate"](path, current, pattern, replace) == current
    match = pattern.search(current)
    stale_block = match.group(0).replace("\n", "\na line the code no longer gives\n", 1)  # after the begin marker
    stale = current[: match.start()] + stale_block + current[match.end() :]
    assert stale != current
    assert SCRIPT["regenerate"](path, "prose before\n" + stale, pattern, replace) == "prose before\n" + current


def test_lost_markers_are_one_line_naming_the_file():
    path, pattern, replace = BLOCKS[0]
    with pytest.raises(SystemExit, match=path):
        SCRIPT["regenerate"](path, "no markers here\n", pattern, replace)
