"""OP-7.116: vllm-ascend's compiled extension not loaded (its camem allocator, sleep mode)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_ascend_extension
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_the_allocators_assertion_alone_proposes_building_the_kernels_and_reinstalling():
    # vllm-ascend#556, verbatim: every rank's traceback ended on this source line
    top = evaluate(_facts(['[rank12]:     assert camem_available, "camem allocator is not available"'])).findings[0]
    assert top.rule == "OP-7.116"
    assert [(ch.flag, ch.proposed, ch.kind) for ch in top.changes] == [("COMPILE_CUSTOM_KERNELS", "1", "env")]


def test_a_kernels_library_missing_is_a_build_without_them():
    # vllm-ascend#1114, verbatim: an editable reinstall inside the image
    line = (
        "2025-06-07T08:10:41.790Z ERROR camem: Failed to import vllm_ascend_C:libvllm_ascend_kernels.so: cannot open "
        "shared object file: No such file or directory"
    )
    [finding] = op7_ascend_extension.RULE.evaluate(_facts([line]))
    assert "libvllm_ascend_kernels.so" in finding.summary and finding.changes


def test_an_undefined_symbol_is_left_to_the_loaders_reading_a_build_for_other_versions():
    # vllm-ascend#3998's warning, verbatim (cut at the symbol): built against another torch_npu
    warning = (
        "(RayWorkerWrapper pid=527478) WARNING 11-05 13:27:54 [camem.py:63] Failed to import vllm_ascend_C:/usr/local/"
        "python3.11.13/lib/python3.11/site-packages/vllm_ascend/vllm_ascend_C.cpython-311-aarch64-linux-gnu.so: "
        "undefined symbol: _ZN2fe13PlatFormInfos16GetCoreNumByType. Sleep mode will be disabled."
    )
    facts = _facts([warning, "AssertionError: camem allocator is not available"])
    assert op7_ascend_extension.RULE.evaluate(facts) == []
    assert evaluate(facts).findings[0].rule == "OP-7.6"
