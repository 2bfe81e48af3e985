"""The twenty-first probe's classes: OP-7.154, OP-7.155 and the readings widened for it, each from the verbatim line
its thread quoted, with a near miss left alone."""

from __future__ import annotations

import pytest

from advisor.catalog.vllm_interface import is_model_type
from tests.unit.rules.factories import top_finding


def test_harmonys_vocabulary_download_names_the_local_file_variables():
    line = (  # vllm PR #22259, verbatim
        "(APIServer pid=16) openai_harmony.HarmonyError: error downloading or loading vocab file: failed to download "
        "or load vocab file `"
    )
    top = top_finding(line)
    assert top.rule == "OP-7.154" and "o200k_base.tiktoken" in top.title
    assert "TIKTOKEN_ENCODINGS_BASE" in top.actions[0] and "TIKTOKEN_RS_CACHE_DIR" in top.actions[1]


def test_flashinfers_workspace_overflow_proposes_a_larger_buffer():
    top = top_finding(
        "RuntimeError: Error in function 'aligned_alloc' at /workspace/include/flashinfer/allocator.h:49:"
    )
    assert top.rule == "OP-7.155"  # vllm#40023, verbatim
    [change] = top.changes
    assert change.flag == "VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE" and int(change.proposed) == 2 * int(change.current)
    named = top_finding(  # the same error with its message on one line (FlashInfer's FLASHINFER_ERROR joins them)
        "RuntimeError: Error in function 'aligned_alloc' at /x/flashinfer/allocator.h:49: Buffer overflow when "
        "allocating memory for batch_prefill_tmp_v with size 283115520 and alignment 16, but only 268435456 bytes "
        "available in AlignedAllocator. Increase the workspace buffer size."
    )
    assert named.rule == "OP-7.155" and "batch_prefill_tmp_v" in named.title


@pytest.mark.parametrize("key", ["gemma3", "qwen2_5_omni"])  # gpustack/gpustack#1510 verbatim; vllm#15685
def test_a_bare_keyerror_on_a_model_type_is_transformers_predating_the_model(key: str):
    top = top_finding(f"KeyError: '{key}'")
    assert top.rule == "OP-7.7" and key in top.title


@pytest.mark.parametrize("key", ["type", "opt", "choices", "chat_template"])
def test_a_keyerror_on_another_word_is_not_a_model_type(key: str):
    top = top_finding(f"KeyError: '{key}'")
    assert top is None or top.rule != "OP-7.7"


def test_the_interface_table_holds_transformers_and_vllms_model_types():
    assert is_model_type("llama") and is_model_type("kimi_k2") and not is_model_type("choices")


def test_content_parts_where_a_string_is_taken_is_named_so():
    line = (  # vllm PR #18729, verbatim (pytest's E prefix)
        "E         Input should be a valid string [type=string_type, input_value=[{'type': 'text', 'text': 'Rainy'}], "
        "input_type=list]"
    )
    top = top_finding(line)
    assert top.rule == "OP-5.28" and "list of text parts" in top.title and "PR #18729" in top.actions[1]


def test_an_access_line_cut_before_its_quote_is_still_a_route_the_server_lacks():
    top = top_finding('POST /generate HTTP/1.1" 404 Not Found')  # GoogleCloudPlatform/ai-on-gke#777, verbatim
    assert top.rule == "OP-5.30" and "/generate" in top.title


def test_a_connection_closed_before_headers_is_the_server_closing_it():
    top = top_finding("> ConnectionResetError: ConnectionResetError('Connection closed before headers received')")
    assert top.rule == "OP-5.37"  # mlcommons/endpoints#381, verbatim


def test_vllms_sleep_mode_allocator_retyped_is_still_its_wake_up():
    top = top_finding("Runtime Error: Cuda error: out of memory at /workspace/csrc/cumem_allocator.cpp: 62")
    assert top.rule == "OP-7.100"  # TideDra/lmm-r1#42, verbatim: the reporter's case and spacing
