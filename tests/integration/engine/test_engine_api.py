"""The step API the server builds on: outputs, timing, abort, stats, validation, sampling params."""

from __future__ import annotations

import re

import pytest

from engine.core.errors import EngineStartupError, RequestValidationError
from engine.core.sampling_params import SamplingParams

from .conftest import make_engine, run_to_completion


@pytest.fixture(scope="module")
def engine(tiny_model_dir):
    return make_engine(tiny_model_dir("llama"), max_model_len=128)


@pytest.fixture(autouse=True)
def _drained(request):
    yield
    if "engine" in request.fixturenames:
        eng = request.getfixturevalue("engine")
        assert not eng.has_unfinished_requests()
        assert eng.num_free_blocks() == eng.num_total_blocks()


def test_step_outputs_are_incremental_and_carry_timing(engine):
    engine.add_request("t1", [10, 20, 30, 40], SamplingParams(temperature=0, max_tokens=5, ignore_eos=True))
    seen = []
    for _ in range(50):
        if not engine.has_unfinished_requests():
            break
        for out in engine.step():
            seen.append(out)
    assert [len(o.new_token_ids) for o in seen] == [1] * 5
    assert [o.output_token_ids for o in seen][-1] == [o.new_token_ids[0] for o in seen]
    assert "".join(o.new_text for o in seen) == seen[-1].text
    final = seen[-1]
    assert final.finished and final.finish_reason == "length" and not any(o.finished for o in seen[:-1])
    m = final.metrics
    assert m.arrival_time <= m.first_scheduled_time <= m.first_token_time <= m.last_token_time <= m.finished_time


def test_abort_frees_blocks_and_reports_abort(engine):
    engine.add_request("ab", list(range(60)), SamplingParams(temperature=0, max_tokens=50, ignore_eos=True))
    engine.step()
    assert engine.num_free_blocks() < engine.num_total_blocks()
    assert engine.abort_request("ab")
    assert engine.num_free_blocks() == engine.num_total_blocks()
    outputs = engine.step()
    assert [(o.request_id, o.finished, o.finish_reason) for o in outputs] == [("ab", True, "abort")]
    assert not engine.abort_request("ab")


def test_abort_of_a_waiting_request(engine):
    engine.add_request("w", [1, 2, 3], SamplingParams(max_tokens=3))
    assert engine.abort_request("w")
    assert engine.step()[0].finish_reason == "abort"


def test_scheduler_stats_and_iteration_stats(engine):
    assert engine.reset_prefix_cache()
    engine.add_request("s1", list(range(40)), SamplingParams(temperature=0, max_tokens=3, ignore_eos=True))
    engine.add_request("s2", list(range(100, 120)), SamplingParams(temperature=0, max_tokens=3, ignore_eos=True))
    before = engine.scheduler_stats()
    engine.step()
    stats, it = engine.scheduler_stats(), engine.last_iteration_stats()
    assert (stats.num_running_reqs, stats.num_waiting_reqs) == (2, 0)
    assert 0 < stats.kv_cache_usage <= 1
    assert stats.num_gpu_blocks == engine.num_total_blocks()
    assert it.num_prompt_tokens == 60 and it.num_generation_tokens == 2 and it.num_scheduled_tokens == 60
    assert stats.prefix_cache_queries - before.prefix_cache_queries == 60
    run_to_completion(engine)


def test_on_schedule_reports_the_batch_before_the_model_runs(engine):
    seen = []
    engine.on_schedule = lambda stats: seen.append((stats.num_running_reqs, stats.num_waiting_reqs))
    try:
        engine.add_request("b1", list(range(30)), SamplingParams(temperature=0, max_tokens=1, ignore_eos=True))
        assert (engine.scheduler_stats().num_running_reqs, engine.scheduler_stats().num_waiting_reqs) == (0, 1)
        engine.step()
    finally:
        engine.on_schedule = None
    assert seen == [(1, 0)]  # admitted and running while its prefill executes
    run_to_completion(engine)


def test_prompt_longer_than_max_model_len_is_rejected_with_vllms_text(engine):
    with pytest.raises(RequestValidationError) as err:
        engine.add_request("long", list(range(200)), SamplingParams())
    assert str(err.value) == (
        "This model's maximum context length is 128 tokens. However, your prompt contains 200 input tokens, "
        "which exceeds this limit even without any output tokens. Please reduce the length of the input prompt."
    )
    assert err.value.user_facing


def test_max_tokens_beyond_max_model_len_is_rejected_and_smaller_overflow_is_clamped(engine):
    with pytest.raises(
        RequestValidationError,
        match=re.escape("max_tokens=500 cannot be greater than max_model_len=128. Please request fewer output tokens."),
    ):
        engine.add_request("mt", [1, 2], SamplingParams(max_tokens=500))
    engine.add_request("clamp", list(range(120)), SamplingParams(temperature=0, max_tokens=100, ignore_eos=True))
    final = run_to_completion(engine)["clamp"]
    assert len(final.output_token_ids) == 8 and final.finish_reason == "length"


def test_seeded_sampling_is_reproducible_and_independent_of_the_batch(engine):
    params = SamplingParams(temperature=1.0, seed=1234, max_tokens=12, ignore_eos=True)
    engine.add_request("a", [5, 6, 7], params)
    alone = run_to_completion(engine)["a"].output_token_ids
    engine.add_request("noise", [9, 9, 9, 9], SamplingParams(temperature=1.0, max_tokens=12, ignore_eos=True))
    engine.add_request("b", [5, 6, 7], SamplingParams(temperature=1.0, seed=1234, max_tokens=12, ignore_eos=True))
    assert run_to_completion(engine)["b"].output_token_ids == alone


def test_stop_token_ids_stop_with_the_token_as_stop_reason(engine):
    engine.add_request("g", [3, 1, 4, 1, 5], SamplingParams(temperature=0, max_tokens=10, ignore_eos=True))
    greedy = run_to_completion(engine)["g"].output_token_ids
    stop_at = greedy[3]
    engine.add_request(
        "st", [3, 1, 4, 1, 5], SamplingParams(temperature=0, max_tokens=10, ignore_eos=True, stop_token_ids=[stop_at])
    )
    out = run_to_completion(engine)["st"]
    assert out.finish_reason == "stop" and out.stop_reason == stop_at
    assert out.output_token_ids == greedy[: greedy.index(stop_at) + 1]


def test_min_tokens_defers_stop_tokens(engine):
    engine.add_request("g2", [2, 7, 1, 8], SamplingParams(temperature=0, max_tokens=12, ignore_eos=True))
    greedy = run_to_completion(engine)["g2"].output_token_ids
    first = greedy[0]
    engine.add_request(
        "mn",
        [2, 7, 1, 8],
        SamplingParams(temperature=0, max_tokens=12, ignore_eos=True, min_tokens=4, stop_token_ids=[first]),
    )
    out = run_to_completion(engine)["mn"]
    assert len(out.output_token_ids) >= 4 and first not in out.output_token_ids[:4]


def test_stop_strings_cut_the_text(engine):
    tok = engine.tokenizer
    engine.add_request("txt", [40, 41, 42], SamplingParams(temperature=0, max_tokens=30, ignore_eos=True))
    full = run_to_completion(engine)["txt"]
    text = full.text
    assert len(text) >= 4
    stop = text[2:4]
    engine.add_request("ss", [40, 41, 42], SamplingParams(temperature=0, max_tokens=30, ignore_eos=True, stop=[stop]))
    out = run_to_completion(engine)["ss"]
    assert out.finish_reason == "stop" and out.stop_reason == stop
    assert out.text == text[: text.index(stop)]
    assert tok.decode(full.output_token_ids).startswith(out.text)


def test_eos_stops_unless_ignore_eos(engine, tiny_model_dir):
    eos = engine.tokenizer.eos_token_id
    prompts = [[i, (i * 7) % 256, (i * 13) % 256] for i in range(64)]
    for i, prompt in enumerate(prompts):
        engine.add_request(f"e{i}", prompt, SamplingParams(temperature=0, max_tokens=40))
    finished = run_to_completion(engine)
    stopped = [o for o in finished.values() if o.finish_reason == "stop"]
    assert stopped, "the tiny model should emit EOS for some prompt"
    assert all(o.output_token_ids[-1] == eos and o.stop_reason is None for o in stopped)
    victim = stopped[0]
    engine.add_request("ign", victim.prompt_token_ids, SamplingParams(temperature=0, max_tokens=40, ignore_eos=True))
    assert run_to_completion(engine)["ign"].finish_reason == "length"


def test_duplicate_request_id_is_rejected(engine):
    engine.add_request("dup", [1, 2], SamplingParams(max_tokens=2))
    with pytest.raises(RequestValidationError, match="already running"):
        engine.add_request("dup", [1, 2], SamplingParams(max_tokens=2))
    run_to_completion(engine)


def test_too_little_memory_fails_startup_with_vllms_texts(tiny_model_dir):
    model_dir = tiny_model_dir("llama")
    with pytest.raises(EngineStartupError, match=r"^No available memory for the cache blocks\. Try increasing"):
        make_engine(model_dir, device_memory_gib=0.01)
    probe = make_engine(model_dir, max_model_len=512, max_num_batched_tokens=64).kv_budget
    needed = 512 // 16 * probe.bytes_per_block
    fixed = probe.weights_bytes + probe.activation_bytes
    with pytest.raises(EngineStartupError) as err:  # room for half of one max-length request
        make_engine(
            model_dir,
            max_model_len=512,
            max_num_batched_tokens=64,
            gpu_memory_utilization=1.0,
            device_memory_gib=(fixed + needed // 2) / (1 << 30),
        )
    assert re.fullmatch(
        r"To serve at least one request with the model's max seq len \(512\), \([\d.]+ GiB KV cache is needed, "
        r"which is larger than the available KV cache memory \([\d.]+ GiB\)\. Based on the available memory, "
        r"the estimated maximum model length is 256\. Try increasing `gpu_memory_utilization` \(which also "
        r"controls CPU memory on the CPU backend\) or decreasing `max_model_len` when initializing the engine\. "
        r"See https://docs\.vllm\.ai/en/latest/configuration/conserving_memory/ for more details\.",
        str(err.value),
    )


def test_startup_logs_vllms_lines(tiny_model_dir, capsys):
    make_engine(tiny_model_dir("llama"), max_model_len=128, num_gpu_blocks_override=40)
    out = capsys.readouterr().out
    assert re.search(r"\(EngineCore pid=\d+\) INFO .* Model loading took [\d.]+ GiB memory and [\d.]+ seconds", out)
    assert re.search(r"Available KV cache memory: [\d.]+ GiB", out)
    assert re.search(r"Overriding num_gpu_blocks=\d+ with num_gpu_blocks_override=40", out)
    assert "CPU KV cache size: 640 tokens, Maximum concurrency for 128 tokens per request: 5.00x" in out
    assert re.search(r"init engine \(profile, create kv cache, warmup model\) took [\d.]+ s", out)
