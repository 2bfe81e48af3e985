"""OP-7.176: a wheel built or installed as UNKNOWN: the build's setuptools read no project name."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_a_wheel_named_unknown_asks_for_a_newer_setuptools():
    # vllm PR #19035, verbatim: a ROCm image's build of vLLM 0.8.6 with an older setuptools beside setuptools_scm 8
    top = top_finding("creating 'dist/UNKNOWN-0.8.6-cp310-cp310-linux_x86_64.whl' ")
    assert top.rule == "OP-7.176" and top.title.startswith("the build named its wheel UNKNOWN")
    assert any("setuptools>=77.0.3,<80" in action for action in top.actions)
    assert top.evidence[0].value == "UNKNOWN-0.8.6-cp310-cp310-linux_x86_64.whl"


def test_pip_installing_unknown_reads_the_same_wherever_it_sorts_among_the_others():
    assert top_finding("Successfully installed UNKNOWN-0.0.0").rule == "OP-7.176"
    assert top_finding("Successfully installed Jinja2-3.1.4 UNKNOWN-0.0.0 numpy-1.26.4").rule == "OP-7.176"
    assert top_finding("Successfully built flash-attn UNKNOWN").rule == "OP-7.176"


def test_a_package_installed_under_its_own_name_is_not_this():
    assert getattr(top_finding("Successfully installed vllm-0.8.6"), "rule", None) != "OP-7.176"
