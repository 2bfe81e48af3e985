"""Server arguments: command lines, log args and cache_config_info all become vLLM flags."""

from __future__ import annotations

import pytest

from advisor.collect.facts import effective_command, memory_from_log, memory_from_metrics, merge_memory, server_config
from advisor.collect.logs import parse_lines
from advisor.collect.metrics import parse_exposition
from advisor.collect.server_args import ServerArgsError, args_from_repr, command_from_cache_config, parse_command
from rules.facts import ConfigSource, MemoryFacts


@pytest.mark.parametrize(
    ("text", "program", "model"),
    [
        ("vllm serve Qwen/Qwen3-8B --max-model-len 32768", ["vllm", "serve"], "Qwen/Qwen3-8B"),
        (
            "python -m vllm.entrypoints.openai.api_server --model m --max-model-len 32768",
            ["python", "-m", "vllm.entrypoints.openai.api_server"],
            "m",
        ),
        ("python -m engine serve /tmp/tiny --max-model-len 32768", ["python", "-m", "engine", "serve"], "/tmp/tiny"),
        ("--max-model-len 32768", [], None),
    ],
)
def test_command_forms_split_into_program_model_and_flags(text, program, model):
    command = parse_command(text)
    assert command.program == program and command.model == model
    assert command.flags["--max-model-len"] == "32768"


def test_flag_values_equals_form_booleans_and_negative_numbers():
    command = parse_command(
        "vllm serve m --gpu-memory-utilization=0.95 --enforce-eager --max-model-len -1 "
        '--no-enable-prefix-caching --speculative-config \'{"method": "ngram"}\''
    )
    assert command.flags == {
        "--gpu-memory-utilization": "0.95",
        "--enforce-eager": None,
        "--max-model-len": "-1",
        "--no-enable-prefix-caching": None,
        "--speculative-config": '{"method": "ngram"}',
    }
    assert command.value("--enable-prefix-caching") == "false"
    assert command.value("--enforce-eager") == "true"


def test_a_short_parallel_flag_is_read_under_its_long_name():
    command = parse_command("vllm serve m -tp 2 -pp 2")
    assert (command.value("--tensor-parallel-size"), command.value("--pipeline-parallel-size")) == ("2", "2")
    assert command.value("--data-parallel-size") is None
    changed = command.with_changes({"--tensor-parallel-size": "1"})
    assert changed.render() == "vllm serve m --tensor-parallel-size 1 -pp 2"


def test_changes_replace_flags_in_place_and_append_new_ones():
    command = parse_command("vllm serve m --max-model-len 32768 --no-enable-prefix-caching --port 8000")
    changed = command.with_changes(
        {"--max-model-len": "8192", "--enable-prefix-caching": "true", "--kv-cache-dtype": "fp8"}
    )
    assert changed.render() == (
        "vllm serve m --max-model-len 8192 --enable-prefix-caching --port 8000 --kv-cache-dtype fp8"
    )
    assert command.render() == "vllm serve m --max-model-len 32768 --no-enable-prefix-caching --port 8000"


def test_rendered_command_quotes_what_the_shell_needs():
    command = parse_command('vllm serve m --speculative-config \'{"method": "ngram"}\'')
    assert parse_command(command.render()).flags == command.flags


def test_unbalanced_quotes_are_a_user_error():
    with pytest.raises(ServerArgsError, match="quotes"):
        parse_command("vllm serve m --served-model-name 'oops")


def test_args_repr_maps_keys_to_flags():
    assert args_from_repr("model_tag='m', max_num_seqs=64, enforce_eager=True, quantization=None") == {
        "--model": "m",
        "--max-num-seqs": "64",
        "--enforce-eager": "true",
    }


def test_cache_config_labels_become_flags_with_their_source():
    command = command_from_cache_config(
        {
            "block_size": "16",
            "gpu_memory_utilization": "0.9",
            "cache_dtype": "fp8",
            "enable_prefix_caching": "True",
            "num_gpu_blocks": "10169",
        }
    )
    assert command.flags == {
        "--block-size": "16",
        "--gpu-memory-utilization": "0.9",
        "--kv-cache-dtype": "fp8",
        "--enable-prefix-caching": None,
    }
    assert set(command.origin.values()) == {"metrics"}


CACHE_INFO = (
    "# TYPE vllm:cache_config_info gauge\n"
    'vllm:cache_config_info{block_size="16",cache_dtype="auto",enable_prefix_caching="True",engine="0",'
    'gpu_memory_utilization="0.9",num_gpu_blocks="10169"} 1.0\n'
)


def test_explicit_server_args_win_over_log_args_over_metric_labels():
    snapshot = parse_exposition(CACHE_INFO, "m")
    events = parse_lines(
        [
            "INFO 01-01 00:00:00 [utils.py:1] non-default args: {'model': 'm', "
            "'gpu_memory_utilization': 0.95, 'max_model_len': 16000}"
        ]
    ).events
    typed = parse_command("vllm serve m --max-model-len 8192")
    config = server_config(effective_command(typed, events, snapshot), events, snapshot)
    assert config.max_model_len == 8192 and config.sources["--max-model-len"] == ConfigSource.ARGS
    assert config.gpu_memory_utilization == 0.95 and config.sources["--gpu-memory-utilization"] == ConfigSource.ARGS
    assert config.block_size == 16 and config.sources["--block-size"] == ConfigSource.CACHE_CONFIG_INFO
    assert config.num_gpu_blocks == 10169
    assert config.model == "m"


def test_startup_lines_fill_values_left_at_defaults():
    events = parse_lines(
        [
            "INFO 01-01 00:00:00 [x.py:1] vLLM API server version 0.10.1",
            "INFO 01-01 00:00:01 [x.py:1] Initializing a V1 LLM engine (v0.10.1) with config: model='m', "
            "dtype=torch.bfloat16, max_seq_len=40960, tensor_parallel_size=2, enforce_eager=False, "
            "quantization=None, enable_prefix_caching=True",
            "INFO 01-01 00:00:01 [x.py:1] Chunked prefill is enabled with max_num_batched_tokens=8192.",
        ]
    ).events
    config = server_config(effective_command(None, events, None), events, None)
    assert config.vllm_version == "0.10.1" and config.dtype == "bfloat16"
    assert config.max_model_len == 40960 and config.tensor_parallel_size == 2
    assert config.max_num_batched_tokens == 8192 and config.quantization is None
    assert config.sources["--max-model-len"] == ConfigSource.STARTUP_LOG


@pytest.mark.parametrize(
    ("line", "version"),
    [
        # vllm/engine/llm_engine.py of 0.2.7 (no version), 0.4.0-0.6.6, and 0.7.3's V0 beside its V1
        ("Initializing an LLM engine with config: model='m', tokenizer='m', dtype=torch.float16, ", None),
        ("Initializing an LLM engine (v0.4.0) with config: model='m', tokenizer='m', dtype=torch.float16, ", "0.4.0"),
        (
            "Initializing a V0 LLM engine (v0.7.3) with config: model='m', speculative_config=None, "
            "dtype=torch.float16, ",
            "0.7.3",
        ),
    ],
)
def test_v0_engine_config_lines_fill_the_config(line, version):
    events = parse_lines(
        [
            f"INFO 07-01 10:00:00 llm_engine.py:161] {line}max_seq_len=32768, tensor_parallel_size=2, "
            "quantization=awq, enforce_eager=False, kv_cache_dtype=auto, device_config=cuda, seed=0)",
            "INFO 07-01 10:01:00 model_runner.py:160] Loading model weights took 38.9017 GB",
        ]
    ).events
    config = server_config(effective_command(None, events, None), events, None)
    assert (config.vllm_version, config.model, config.quantization) == (version, "m", "awq")
    assert (config.max_model_len, config.tensor_parallel_size, config.dtype) == (32768, 2, "float16")
    assert memory_from_log(events).weights_gib == 38.9017  # V0 prints GiB as "GB"


def test_v0_memory_profile_lines_give_the_budget_and_each_term():
    """vllm/worker/worker.py 0.6-0.10 logs its profile as three lines under one prefix (read in the 0.6.6, 0.7.3,
    0.8.5 and 0.10.1 wheels); the KV share can be negative when the weights take the budget."""
    prefix = "INFO 02-10 08:01:10 worker.py:267] "
    events = parse_lines(
        [
            prefix + "Memory profiling takes 5.71 seconds",
            prefix + "the current vLLM instance can use total_gpu_memory (79.15GiB) x gpu_memory_utilization (0.90) "
            "= 71.24GiB",
            prefix + "model weights take 67.72GiB; non_torch_memory takes 0.21GiB; PyTorch activation peak memory "
            "takes 4.75GiB; the rest of the memory reserved for KV Cache is -1.44GiB.",
        ]
    ).events
    memory = memory_from_log(events)
    assert (memory.total_gib, memory.requested_gib, memory.weights_gib) == (79.15, 71.24, 67.72)
    assert (memory.non_torch_gib, memory.activation_peak_gib) == (0.21, 4.75)
    # a negative share is the event's (OP-1.2 reads it), never a pool size, as V1's "Available KV cache memory"
    assert events[-1].available_kv_gib == -1.44 and memory.available_kv_gib is None
    config = server_config(effective_command(None, events, None), events, None)
    assert (
        config.gpu_memory_utilization == 0.9 and config.sources["--gpu-memory-utilization"] == ConfigSource.STARTUP_LOG
    )


def test_memory_figures_come_from_the_startup_log():
    events = parse_lines(
        [
            "INFO 01-01 00:00:00 [x.py:1] Model loading took 15.2683 GiB and 6.5 seconds",
            "INFO 01-01 00:00:00 [x.py:1] Available KV cache memory: 22.34 GiB",
            "INFO 01-01 00:00:00 [x.py:1] GPU KV cache size: 162,704 tokens",
            "INFO 01-01 00:00:00 [x.py:1] Maximum concurrency for 16,000 tokens per request: 10.17x",
        ]
    ).events
    memory = memory_from_log(events)
    assert (memory.weights_gib, memory.available_kv_gib, memory.kv_cache_tokens, memory.max_concurrency) == (
        15.2683,
        22.34,
        162704,
        10.17,
    )
    assert memory.source == "startup_log"
    assert memory_from_log([]) is None


def test_a_log_claiming_more_than_any_server_holds_gives_no_figure():
    events = parse_lines(
        [
            "INFO 01-01 00:00:00 [x.py:1] Available KV cache memory: 1,000,000,000 GiB",
            "INFO 01-01 00:00:00 [x.py:1] GPU KV cache size: 10,000,000,000,000 tokens",
            "INFO 01-01 00:00:00 [x.py:1] Model loading took 15.2683 GiB and 6.5 seconds",
        ]
    ).events
    memory = memory_from_log(events)
    assert (memory.available_kv_gib, memory.kv_cache_tokens, memory.weights_gib) == (None, None, 15.2683)


def test_kv_pool_size_is_read_from_cache_config_info():
    memory = memory_from_metrics(parse_exposition(CACHE_INFO, "m"))
    assert (memory.num_blocks, memory.block_size, memory.kv_cache_tokens) == (10169, 16, 162704)
    assert memory.source == "cache_config_info"


def test_measured_memory_figures_are_never_replaced_by_modelled_ones():
    measured = MemoryFacts(available_kv_gib=3.18, source="startup_log")
    modelled = MemoryFacts(
        available_kv_gib=9.0, kv_cache_tokens=999, total_gib=24.0, weights_gib=15.0, source="advisor"
    )
    merged = merge_memory(measured, None, modelled)
    assert merged.available_kv_gib == 3.18 and merged.kv_cache_tokens is None
    assert (merged.total_gib, merged.weights_gib, merged.source) == (24.0, 15.0, "startup_log")
    assert merge_memory(None, None) is None


def test_a_command_continued_over_lines_is_one_command():
    # LMCache#1109's `vllm serve \` with the model and each flag on a tab-indented line of its own; CRLF too
    for newline in ("\n", "\r\n"):
        text = newline.join(["vllm serve \\", "\t/root/Qwen2.5-72B \\", "\t--max-num-seqs 128 \\", "\t--enforce-eager"])
        command = parse_command(text)
        assert command.model == "/root/Qwen2.5-72B"
        assert command.flags == {"--max-num-seqs": "128", "--enforce-eager": None}
