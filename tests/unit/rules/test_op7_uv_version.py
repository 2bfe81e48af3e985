"""OP-7.107: uv too old for --torch-backend."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.evaluate import evaluate
from rules.facts import Facts


def test_uvs_refusal_of_torch_backend_asks_for_a_newer_uv_or_the_index_named():
    # skypilot-org/skypilot PR #6507: a SkyServe replica's setup of vLLM
    line = "(setup pid=1293) error: unexpected argument '--torch-backend' found"
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.107" and top.title.startswith("uv refused --torch-backend")
    assert "uv self update" in top.actions[0] and "--extra-index-url" in top.actions[1]
