"""OP-3.8: a Marlin kernel's tile that does not divide each tensor-parallel rank's slice of a weight."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op3_kernel_tile
from rules.evaluate import evaluate
from rules.facts import Facts, ServerConfig

# zai-org/GLM-4.5#94, verbatim: GLM-4.5-Air-FP8 on eight RTX 3090s (FP8 through Marlin on Ampere)
LINE = "RuntimeError: size_n = 2736 is not divisible by tile_n_size = 64"


def test_the_tile_shrinks_the_tensor_parallel_size_by_the_factor_the_slice_lacks():
    top = evaluate(Facts(events=parse_lines([LINE]).events)).findings[0]
    assert top.rule == "OP-3.8" and "tile (64)" in top.title and "slice of a weight (2736)" in top.title
    assert (top.changes[0].flag, top.changes[0].proposed) == ("--tensor-parallel-size", "<the current size ÷ 4>")
    served = Facts(events=parse_lines([LINE]).events, config=ServerConfig(tensor_parallel_size=8))
    [finding] = op3_kernel_tile.RULE.evaluate(served)
    assert (finding.changes[0].current, finding.changes[0].proposed) == ("8", "2")
    assert "a multiple of it" in finding.changes[0].reason


def test_other_divisibility_errors_are_not_read_as_the_kernels_tile():
    line = "ValueError: Total number of attention heads (12) must be divisible by tensor parallel size (8)."
    assert op3_kernel_tile.RULE.evaluate(Facts(events=parse_lines([line]).events)) == []
