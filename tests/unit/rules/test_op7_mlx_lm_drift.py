"""OP-7.207: the Apple-silicon ports of vLLM call mlx-lm as an older mlx-lm defined it, from the lines people
pasted."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# waybarrios/vllm-mlx PR #160, verbatim: mlx-lm 0.30.6 removed MambaCache; the port's fallback built ArraysCache()
ARRAYS_CACHE = "Engine loop error: ArraysCache.__init__() missing 1 required positional argument: 'size'"
# waybarrios/vllm-mlx#87, verbatim: the same in Python logging's default format, cut after the call
ARRAYS_CACHE_CUT = "  ERROR:vllm_mlx.engine_core:Engine loop error: ArraysCache.__init__()"
# waybarrios/vllm-mlx#293, verbatim: mlx-lm 0.31's BatchGenerator; fixed in vllm-mlx PR #294
BATCH_GENERATOR = (
    "Engine loop error: BatchGenerator.__init__() got an unexpected keyword argument 'prompt_progress_callback'"
)
# waybarrios/vllm-mlx PR #40, verbatim: the import after upgrading to mlx-lm 0.30.6
MAMBA_CACHE = "ImportError: cannot import name 'MambaCache' from 'mlx_lm.models.cache'"


def test_each_mlx_lm_change_names_the_release_that_made_it_and_the_pin_back():
    for line, change in (
        (ARRAYS_CACHE, "mlx-lm 0.30.6 removed MambaCache"),
        (ARRAYS_CACHE_CUT, "mlx-lm 0.30.6 removed MambaCache"),
        (BATCH_GENERATOR, "0.31 stopped taking prompt_progress_callback"),
        (MAMBA_CACHE, "mlx-lm 0.30.6 removed MambaCache"),
    ):
        top = top_finding(line)
        assert top.rule == "OP-7.207" and "written for an older mlx-lm" in top.title, line
        assert change in top.summary and top.changes == [], line
        assert "pip install -U vllm-mlx" in top.actions[0]


def test_the_removed_class_and_the_refused_call_are_told_apart():
    assert top_finding(MAMBA_CACHE).title.startswith("the installed mlx-lm has no MambaCache")
    assert "(missing 1 required positional argument: 'size')" in top_finding(ARRAYS_CACHE).title


def test_vllms_own_cache_classes_are_not_this_rule():
    top = top_finding("TypeError: KVCache.__init__() missing 1 required positional argument: 'num_layers'")
    assert top is None or top.rule != "OP-7.207"


def test_a_class_whose_name_ends_the_same_is_not_mlx_lms():
    top = top_finding("TypeError: DataBatchGenerator.__init__() missing 1 required positional argument: 'tokenizer'")
    assert top is None or top.rule != "OP-7.207"
