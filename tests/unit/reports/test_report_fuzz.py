"""`servops report` on hostile documents (Hypothesis): every result kind, a few of its values replaced by
NaN, infinities, 1e308, integers beyond float range, negative and zero figures, unbalanced quotes in
command fields, escape sequences and long text, or by a value of another JSON type (text for a
number, a list for an object, an object for a list, null, a boolean). Each must render (exit 0, an
HTML file) or be refused in one line naming the file (exit 2); never a traceback.

Examples per kind (FUZZ_EXAMPLES) are sized to the render's cost: a demo or tune document draws
several charts (about 3 s on the 2-core AVX2 box), a triage or advise one about 0.3 s.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from advisor.cli.main import main
from tests.helpers.hostile_json import exists, replaced, value_at, value_paths

FIXTURES = Path(__file__).parents[2] / "fixtures" / "reports"
FUZZ_EXAMPLES = {"triage": 30, "advise": 30, "ramp": 12, "demo": 6, "tune": 6}

# Values of the right JSON type but hostile content, and values of the wrong type.
HOSTILE_NUMBERS = st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e308, 10**400, -(10**30), -1, 0, 0.0])
HOSTILE_TEXT = st.sampled_from(
    ["", "a'b\"c", "vllm serve m --api-key 'unbalanced", '--max-num-seqs "8', "\x1b]8;;http://x\x07link", "é" * 300]
)


WRONG_TYPES = st.sampled_from(["text", 7, -2.5, True, None, [], [1, "x"], {}, {"a": 1}])


def _hostile_like(value: Any):
    """A hostile value of the same JSON type as `value` (a number for a number, text for text), or a
    value of another type (one draw in three)."""
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        return WRONG_TYPES
    same = HOSTILE_NUMBERS if isinstance(value, (int, float)) else HOSTILE_TEXT
    return st.one_of(same, same, WRONG_TYPES)


def _hostile_documents(kind: str):
    document = json.loads((FIXTURES / f"{kind}.json").read_text())
    paths = value_paths(document, skip_top=("kind",))

    @st.composite
    def mutated(draw):
        result = document
        for _ in range(draw(st.integers(min_value=1, max_value=4))):
            path = draw(st.sampled_from(paths))
            if exists(result, path):  # not below a value an earlier draw replaced
                result = replaced(result, path, draw(_hostile_like(value_at(document, path))))
        return result

    return mutated()


@pytest.mark.parametrize("kind", list(FUZZ_EXAMPLES))
def test_report_renders_or_refuses_in_one_line_every_hostile_document(kind, tmp_path_factory, capsys):
    @settings(
        max_examples=FUZZ_EXAMPLES[kind],
        deadline=None,
        derandomize=True,  # the same examples on every run: a failure here is reproducible, never flaky
        phases=[Phase.explicit, Phase.reuse, Phase.generate],  # no shrinking: each try is a whole render
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
    )
    @given(document=_hostile_documents(kind))
    def check(document):
        folder = tmp_path_factory.mktemp(kind)
        source = folder / "doc.json"
        source.write_text(json.dumps(document))
        out = folder / "r.html"
        code = main(["report", str(source), "-o", str(out)])
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err
        if code == 0:
            assert out.stat().st_size > 0
        else:
            lines = [line for line in captured.err.splitlines() if line.strip()]
            assert code == 2 and len(lines) == 1 and str(source) in lines[0], captured.err

    check()
