"""OP-7.194: a source build of vLLM missed a compiled extension at setuptools' copy step (CMake 3.26.0, or an earlier
compile error)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.events import LogEventKind
from tests.unit.rules.factories import top_finding


def test_the_missing_abi3_extension_names_cmake_3_26_0_and_the_earlier_compile_error():
    # vllm#18748, verbatim (backticks and all): vLLM's maintainer named CMake 3.26.0, which drops the abi3 suffix
    top = top_finding(
        "`error: can't copy 'build/lib.linux-x86_64-cpython-310/vllm/_C.abi3.so': doesn't exist or not a regular file`"
    )
    assert top.rule == "OP-7.194" and top.title.startswith("building vLLM from source: _C.abi3.so was not where")
    assert "cmake>=3.26.1" in top.actions[0] and "first compile error" in top.actions[1]
    assert not top.changes
    # a name that never had the abi3 suffix: only the earlier compile error
    other = top_finding(
        "error: can't copy 'build/lib/vllm/_C.cpython-310-x86_64-linux-gnu.so': doesn't exist or not a regular file"
    )
    assert "CMake 3.26.0" not in other.title and other.actions[0].startswith("Find the first compile error")


def test_another_packages_file_is_not_vllms_build():
    for line in (
        "error: can't copy 'build/lib/foo/_ext.so': doesn't exist or not a regular file",
        "error: can't copy 'build/lib/my_vllm/_C.so': doesn't exist or not a regular file",
    ):
        assert not parse_lines([line]).of_kind(LogEventKind.BUILD_EXTENSION_MISSING)
