"""OP-7.172: bitsandbytes' compiled library did not load, so its C functions are looked up on None."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_a_bitsandbytes_function_looked_up_on_none_is_its_library_not_loaded():
    # vllm#11610, verbatim (vLLM 0.6.6 with bitsandbytes 0.45.0; the reporter suspected bitsandbytes)
    top = top_finding("`AttributeError: 'NoneType' object has no attribute 'cquantize_blockwise_fp16_nf4'`.")
    assert top.rule == "OP-7.172" and top.title.startswith("bitsandbytes' compiled library did not load: ")
    assert "python -m bitsandbytes" in top.actions[0] and "bitsandbytes#1210" in top.actions[1]


def test_bitsandbytes_own_words_name_the_reason():
    # bitsandbytes#1467, verbatim: bitsandbytes built for CUDA 11 beside torch 1.13's CUDA
    line = (
        "ERROR:bitsandbytes.cextension:Could not load bitsandbytes native library: libcusparse.so.11: cannot open "
        "shared object file: No such file or directory"
    )
    top = top_finding(line)
    assert top.rule == "OP-7.172" and "(libcusparse.so.11: cannot open shared object file" in top.title


def test_another_none_attribute_is_not_bitsandbytes():
    top = top_finding("AttributeError: 'NoneType' object has no attribute 'start'")
    assert top is None or top.rule != "OP-7.172"
