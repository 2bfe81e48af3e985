"""OP-7.156: oneCCL's library not found by the loader on an Intel GPU server."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.evaluate import evaluate
from rules.facts import Facts


@pytest.mark.parametrize(
    "line",
    [
        # vllm#54766, verbatim, both lines of the paste (TP=2 on Intel GPUs; LD_LIBRARY_PATH=/opt/venv/lib fixed it)
        "oneCCL could not be initialized! Could not load any plugin.",
        "Cannot open plugin library: libccl.so.1: cannot open shared object file",
    ],
)
def test_oneccl_not_loaded_is_the_library_path_and_names_the_variable(line: str):
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "OP-7.156" and "libccl.so.1" in top.title
    assert top.changes[0].flag == "LD_LIBRARY_PATH" and "setvars.sh" in top.actions[0]


def test_another_library_missing_is_not_onecclss():
    line = "ImportError: libnuma.so.1: cannot open shared object file: No such file or directory"
    assert evaluate(Facts(events=parse_lines([line]).events)).top.rule != "OP-7.156"
