"""OP-7.157: Ray's version check refused a process joining a cluster started by another Ray or Python."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_ray_version
from rules.evaluate import evaluate
from rules.facts import Facts

# gpustack/gpustack#1640, verbatim: a custom vLLM 0.7.2 environment (Ray 2.44.1) joining GPUStack's Ray 2.43.0 cluster
FIRST_LINE = "RuntimeError: Version mismatch: The cluster was started with:"


def test_the_first_line_alone_is_the_version_check_and_says_how_to_match_them():
    top = evaluate(Facts(events=parse_lines([FIRST_LINE]).events)).top
    assert top.rule == "OP-7.157" and top.title.endswith("different Ray or Python versions")
    assert "ray==<the cluster's version>" in top.actions[0] and "ray start" in top.actions[0]


def test_both_sides_versions_flattened_onto_one_line_are_named():
    line = (
        f"{FIRST_LINE}     Ray: 2.43.0     Python: 3.10.12 This process on node 10.0.0.5 was started with:     "
        "Ray: 2.44.1     Python: 3.10.12"
    )
    [finding] = op7_ray_version.RULE.evaluate(Facts(events=parse_lines([line]).events))
    assert "the cluster runs Ray 2.43.0 on Python 3.10.12, this process (node 10.0.0.5) Ray 2.44.1" in finding.title
    assert "pip install ray==2.43.0" in finding.actions[0]
