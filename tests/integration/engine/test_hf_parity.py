"""Greedy outputs are token-identical to Hugging Face `generate()` on the same weights (float32),
however the engine batches, chunks, caches or preempts, and every block returns to the pool."""

from __future__ import annotations

import random

import pytest

from engine.core.sampling_params import SamplingParams
from servops_kernels.attention import CPU_DENSE_PREFILL_MIN_TOKENS

from .conftest import hf_greedy, make_engine, run_to_completion

MAX_NEW = 24


def prompts(seed: int, lengths: list[int], vocab: int = 256) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(vocab) for _ in range(n)] for n in lengths]


def generate_all(engine, batch: list[list[int]], max_new: int = MAX_NEW) -> list:
    for i, prompt in enumerate(batch):
        engine.add_request(f"r{i}", prompt, SamplingParams(temperature=0.0, max_tokens=max_new))
    finished = run_to_completion(engine)
    assert engine.num_free_blocks() == engine.num_total_blocks()
    return [finished[f"r{i}"] for i in range(len(batch))]


def assert_matches_hf(model_dir: str, batch: list[list[int]], outputs: list, max_new: int = MAX_NEW) -> None:
    for prompt, output in zip(batch, outputs, strict=False):
        assert output.output_token_ids == hf_greedy(model_dir, prompt, max_new), f"prompt of {len(prompt)} tokens"


def record_prefill_splits(runner) -> list:
    """Every PrefillSplit (or None) the runner builds from now on, appended as it is built."""
    splits = []
    build = runner._prefill_split

    def recording(*args):
        split = build(*args)
        splits.append(split)
        return split

    runner._prefill_split = recording
    return splits


@pytest.mark.parametrize("variant", ["llama", "qwen2"])
def test_single_request_matches_hf_generate(tiny_model_dir, variant):
    model_dir = tiny_model_dir(variant)
    batch = prompts(1, [37])
    assert_matches_hf(model_dir, batch, generate_all(make_engine(model_dir), batch))


@pytest.mark.parametrize("variant", ["llama", "qwen2"])
def test_batch_of_mixed_lengths_matches_hf_generate(tiny_model_dir, variant):
    model_dir = tiny_model_dir(variant)
    batch = prompts(2, [3, 16, 17, 50, 101])
    assert_matches_hf(model_dir, batch, generate_all(make_engine(model_dir), batch))


@pytest.mark.parametrize("variant", ["mistral", "llama3_rope_tied", "yarn"])
def test_other_family_members_match_hf_generate(tiny_model_dir, variant):
    model_dir = tiny_model_dir(variant)
    batch = prompts(3, [9, 70, 180])
    assert_matches_hf(model_dir, batch, generate_all(make_engine(model_dir), batch))


@pytest.mark.parametrize("variant", ["llama", "qwen2"])
def test_chunked_prefill_with_a_tiny_token_budget_matches_hf(tiny_model_dir, variant):
    model_dir = tiny_model_dir(variant)
    batch = prompts(4, [45, 90, 7])
    engine = make_engine(model_dir, max_num_batched_tokens=16)  # prompts split into 16-token chunks
    assert_matches_hf(model_dir, batch, generate_all(engine, batch))


@pytest.mark.parametrize("backend", ["torch", "cpu"])
@pytest.mark.parametrize("variant", ["llama", "qwen2"])
def test_a_step_mixing_fresh_and_continued_prompt_chunks_matches_hf(tiny_model_dir, variant, backend, monkeypatch):
    """One step carrying fresh prompt chunks, continued ones and decodes. On the torch backend the
    chunks split: fresh ones attend directly, continued ones through the paged cache
    (engine.model.llama.PrefillSplit); the native CPU kernels take these short ones all in one call."""
    from servops_kernels import cpu_attention

    if backend == "cpu" and not cpu_attention.available():
        pytest.skip(f"native CPU kernels not built here: {cpu_attention.unavailable_reason()}")
    monkeypatch.setenv("SERVOPS_ATTENTION_BACKEND", backend)
    model_dir = tiny_model_dir(variant)
    batch = prompts(6, [40, 23, 61, 12, 35])
    engine = make_engine(model_dir, max_num_batched_tokens=48)
    runner = engine.runner
    splits = record_prefill_splits(runner)
    outputs = generate_all(engine, batch)
    if backend == "torch":
        assert any(s is not None and s.dense_spans and s.paged_rows is not None for s in splits)
    else:
        assert runner.dense_prefill_min_tokens in (CPU_DENSE_PREFILL_MIN_TOKENS, None) and not any(splits)
    assert_matches_hf(model_dir, batch, outputs)


def dense_for_long_chunks(monkeypatch) -> None:
    """Long fresh chunks dense on the native backend whatever this CPU's rule (an 8-lane or AMX CPU
    sends every chunk to the native kernel), so the dense path's HF parity is held on every CPU."""
    from engine.model import runner as runner_module
    from servops_kernels import attention

    real = attention.dense_prefill_min_tokens

    def long_chunks_dense(device, dtype, head_dim):
        least = real(device, dtype, head_dim)
        return CPU_DENSE_PREFILL_MIN_TOKENS if least is None and attention.backend_for(device) == "cpu" else least

    monkeypatch.setattr(runner_module, "dense_prefill_min_tokens", long_chunks_dense)


@pytest.mark.parametrize("variant", ["llama", "qwen2"])
def test_native_cpu_attends_a_long_fresh_chunk_dense_beside_short_ones_matches_hf(tiny_model_dir, variant, monkeypatch):
    """On the native CPU kernels a fresh chunk of CPU_DENSE_PREFILL_MIN_TOKENS or more goes to dense
    SDPA while the step's short fresh chunks and continued ones stay with the paged kernel."""
    from servops_kernels import cpu_attention

    if not cpu_attention.available():
        pytest.skip(f"native CPU kernels not built here: {cpu_attention.unavailable_reason()}")
    monkeypatch.setenv("SERVOPS_ATTENTION_BACKEND", "cpu")
    dense_for_long_chunks(monkeypatch)
    model_dir = tiny_model_dir(variant)
    long = CPU_DENSE_PREFILL_MIN_TOKENS + 44
    batch = prompts(8, [long, 19, 33, long + 9])
    engine = make_engine(model_dir, max_model_len=512, max_num_batched_tokens=long + 40)  # the last prompt is chunked
    runner = engine.runner
    splits = record_prefill_splits(runner)
    outputs = generate_all(engine, batch)
    mixed = [s for s in splits if s is not None and s.paged_rows is not None]
    assert mixed and all(end - start >= CPU_DENSE_PREFILL_MIN_TOKENS for s in mixed for start, end in s.dense_spans)
    assert_matches_hf(model_dir, batch, outputs)


@pytest.mark.parametrize("backend", ["torch", "cpu"])
def test_a_long_chunk_behind_a_prefix_cache_hit_attends_dense_and_matches_hf(tiny_model_dir, backend, monkeypatch):
    """A chat template's system prompt makes every long prompt after the first a prefix-cache hit of a
    block or two: its chunk then attends dense over the prefix gathered from the cache
    (PrefillSplit.dense_prefix_slots), as a fresh prompt does, instead of through the paged kernel."""
    from servops_kernels import cpu_attention

    if backend == "cpu" and not cpu_attention.available():
        pytest.skip(f"native CPU kernels not built here: {cpu_attention.unavailable_reason()}")
    monkeypatch.setenv("SERVOPS_ATTENTION_BACKEND", backend)
    dense_for_long_chunks(monkeypatch)
    model_dir = tiny_model_dir("llama")
    shared = prompts(9, [32])[0]  # two whole blocks of 16
    first, second = (shared + tail for tail in prompts(10, [CPU_DENSE_PREFILL_MIN_TOKENS + 20, 280]))
    engine = make_engine(model_dir, max_model_len=512)
    splits = record_prefill_splits(engine.runner)
    outputs = generate_all(engine, [first]) + generate_all(engine, [second])  # the second hits the first's blocks
    prefixed = [p for s in splits if s is not None for p in s.dense_prefix_slots if p is not None]
    assert [p.numel() for p in prefixed] == [len(shared)]
    assert_matches_hf(model_dir, [first, second], outputs)


def test_chunked_prefill_disabled_matches_hf(tiny_model_dir):
    model_dir = tiny_model_dir("llama")
    batch = prompts(5, [45, 90, 7])
    engine = make_engine(model_dir, enable_chunked_prefill=False, max_num_batched_tokens=256)
    assert_matches_hf(model_dir, batch, generate_all(engine, batch))


@pytest.mark.parametrize("variant", ["llama", "qwen2"])
def test_prefix_cache_hits_give_the_same_tokens(tiny_model_dir, variant):
    model_dir = tiny_model_dir(variant)
    shared = prompts(6, [64])[0]
    batch = [shared + tail for tail in prompts(7, [5, 11, 1])] + [list(shared)]
    engine = make_engine(model_dir, block_size=16)
    first = generate_all(engine, batch[:1])
    rest = generate_all(engine, batch[1:])
    assert first[0].num_cached_tokens == 0
    assert [o.num_cached_tokens for o in rest] == [64, 64, 48]  # full-prompt hit recomputes its last block
    assert engine.scheduler_stats().prefix_cache_hits == 176
    assert_matches_hf(model_dir, batch, first + rest)


@pytest.mark.parametrize("chunked", [True, False])
def test_forced_preemption_still_completes_every_request_with_hf_tokens(tiny_model_dir, chunked):
    model_dir = tiny_model_dir("llama")
    batch = prompts(8, [40, 33, 47, 20, 38, 29])
    # 6 requests × ~5 blocks each do not fit in 12 blocks of 16 tokens: the scheduler must preempt
    engine = make_engine(
        model_dir,
        num_gpu_blocks_override=12,
        max_model_len=128,
        block_size=16,
        enable_chunked_prefill=chunked,
        max_num_batched_tokens=128,
    )
    outputs = generate_all(engine, batch, max_new=40)
    assert engine.scheduler_stats().num_preemptions_total > 0
    assert sum(o.metrics.num_preemptions for o in outputs) == engine.scheduler_stats().num_preemptions_total
    assert_matches_hf(model_dir, batch, outputs, max_new=40)


def test_forced_preemption_without_prefix_caching_matches_hf(tiny_model_dir):
    model_dir = tiny_model_dir("qwen2")
    batch = prompts(9, [40, 33, 47, 20])
    engine = make_engine(
        model_dir, num_gpu_blocks_override=9, max_model_len=128, block_size=16, enable_prefix_caching=False
    )
    outputs = generate_all(engine, batch, max_new=40)
    assert engine.scheduler_stats().num_preemptions_total > 0
    assert_matches_hf(model_dir, batch, outputs, max_new=40)


def test_a_nan_filled_cache_changes_nothing(tiny_model_dir):
    """The cache is never zeroed: every attention path must ignore slots it has not written.
    Fill the whole cache with NaN, then run chunked prompts, a shared prefix and decodes."""
    model_dir = tiny_model_dir("llama")
    shared = prompts(7, [40])[0]
    batch = [shared + p for p in prompts(8, [9, 30])] + prompts(9, [61, 12])
    engine = make_engine(model_dir, max_num_batched_tokens=48)
    for k_cache, v_cache in engine.runner.kv_caches:
        k_cache.fill_(float("nan"))
        v_cache.fill_(float("nan"))
    assert_matches_hf(model_dir, batch, generate_all(engine, batch))
