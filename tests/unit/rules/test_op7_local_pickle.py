"""OP-7.202: an object defined inside a function cannot be pickled into one of vLLM's processes, from the lines people
pasted."""

from __future__ import annotations

from rules.catalog import op7_local_pickle
from tests.unit.rules.factories import top_finding

# unslothai/unsloth#2380, verbatim (its inline-code backticks aside): FastLanguageModel with fast_inference=True on an
# A100; the maintainers fixed it in Unsloth
UNSLOTH = "RuntimeError: Can't pickle local object 'patch_vllm_compute_dtype.<locals>.BitsAndBytesConfig'"
# unslothai/unsloth#1972, verbatim: the same object, read on the other side
UNSLOTH_GET = "RuntimeError: Can't get local object 'patch_vllm_compute_dtype.<locals>.BitsAndBytesConfig'"
# noamgat/lm-format-enforcer#124, verbatim (the title): fixed in LMFE 0.10.6 with functools.partial
LMFE = "VLLM Error: AttributeError: Can't pickle local object 'build_token_enforcer_tokenizer_data.<locals>.decode_fn'"
# vllm#6953, verbatim: a json_object request's guided decoding sent to the API server's engine process (mid-2024)
CACHED_TOKENIZER = "AttributeError: Can't pickle local object 'get_cached_tokenizer.<locals>.CachedTokenizer'"


def test_unsloths_local_class_is_unsloths_release_with_the_in_process_engine_meanwhile():
    for line in (UNSLOTH, UNSLOTH_GET):
        top = top_finding(line)
        assert top.rule == "OP-7.202", line
        assert "patch_vllm_compute_dtype.<locals>.BitsAndBytesConfig" in top.title and "Unsloth" in top.title
        assert "pip install -U unsloth unsloth_zoo" in top.actions[0]
        assert top.changes == []  # the fix is Unsloth's release; the in-process engine is a stopgap beside it
        assert [(a.flag, a.proposed, a.kind) for a in top.alternatives] == [
            ("VLLM_ENABLE_V1_MULTIPROCESSING", "0", "env")
        ]


def test_lm_format_enforcers_closure_names_the_release_that_fixed_it_and_no_variable():
    top = top_finding(LMFE)
    assert top.rule == "OP-7.202" and "lm-format-enforcer" in top.title
    assert "lm-format-enforcer>=0.10.6" in top.actions[0]
    assert top.changes == top.alternatives == []  # a request's logits processor: V1's variable is no way round it


def test_vllms_own_cached_tokenizer_is_an_upgrade_of_vllm():
    top = top_finding(CACHED_TOKENIZER)
    assert top.rule == "OP-7.202" and "vLLM's own cached tokenizer" in top.title
    assert "#17048" in top.actions[0] and top.changes == top.alternatives == []


def test_an_unknown_owner_is_told_to_move_the_object_to_module_level():
    top = top_finding("_pickle.PicklingError: Can't pickle local object <function make.<locals>.proc at 0x7f3a>")
    assert top.rule == "OP-7.202" and "make" not in op7_local_pickle.OWNERS
    assert top.actions[0].startswith("Define proc at the top level of its module")
    assert top.confidence < 0.85  # whose code it is, the line alone does not say


def test_other_pickling_errors_are_not_this_rule():
    for line in (
        "TypeError: cannot pickle 'builtins.CoreBPE' object",
        "_pickle.UnpicklingError: invalid load key, 'H'.",
    ):
        top = top_finding(line)
        assert top is None or top.rule != "OP-7.202", line


def test_a_lambda_a_method_and_nested_functions_keep_the_whole_name_and_the_innermost_owner():
    lam = top_finding("AttributeError: Can't pickle local object 'make.<locals>.<lambda>'")
    assert "make.<locals>.<lambda> is defined" in lam.title and "the lambda as a named function" in lam.actions[0]
    nested = top_finding("AttributeError: Can't pickle local object 'a.<locals>.b.<locals>.c'")
    assert "a.<locals>.b.<locals>.c is defined" in nested.title and "defines b()" in nested.title
    method = top_finding("AttributeError: Can't pickle local object 'Foo.__init__.<locals>.bar'")
    assert "defines Foo.__init__()" in method.title


def test_the_words_relayed_by_vllms_worker_wrapper_are_read_too():
    line = (
        "RuntimeError: Worker failed with error 'Can't pickle local object 'foo.<locals>.bar'', please check the "
        "stack trace above for the root cause"
    )
    assert top_finding(line).rule == "OP-7.202"
