"""vLLM 0.34's extensible KV cache, read from its own lines (docs/reference.md §4.1, "From 0.34").

From 0.34, vLLM on CUDA and ROCm sizes the KV cache from the memory measured after warmup and CUDA graph capture
(vllm/v1/worker/extensible_kv_cache.py), takes the whole GPU when --gpu-memory-utilization is left out
(CacheConfig.resolved_gpu_memory_utilization: 1.0) and skips the startup check of free memory against the share
(v1/worker/utils.py request_memory). Triage must therefore not call a share near 1.0 a refused start, must not
propose a share that would shrink the cache, and must take the pool from the measured line, not from the earlier
"Available KV cache memory" (the reservation's estimate). The lines are vLLM 0.34.0's format strings
(extensible_kv_cache.py, executor/abstract.py, v1/core/kv_cache_planning.py); their numbers are ours: a Qwen3-8B
block of 64 tokens is 9 MiB (36 layers x 8 KV heads x 128 x 2 x 2 bytes x 64).
"""

from __future__ import annotations

from advisor.collect.facts import effective_command, memory_from_log, server_config
from advisor.collect.logs import parse_lines
from advisor.collect.server_args import parse_command
from rules import vllm_defaults as D
from rules.catalog import ap_sizing
from rules.catalog import common as c
from rules.evaluate import evaluate
from rules.events import LogEventKind as K
from rules.facts import Facts

VERSION_034 = (
    "(APIServer pid=1) INFO 12-01 10:00:00 [startup.py:38] vLLM server version 0.34.0, serving model Qwen/Qwen3-8B"
)
VERSION_033 = (
    "(APIServer pid=1) INFO 12-01 10:00:00 [startup.py:38] vLLM server version 0.33.0, serving model Qwen/Qwen3-8B"
)
ARGS_099 = (
    "(APIServer pid=1) INFO 12-01 10:00:00 [utils.py:233] non-default args: {'model': 'Qwen/Qwen3-8B', "
    "'max_model_len': 32768, 'gpu_memory_utilization': 0.99}"
)
ESTIMATE = "(EngineCore pid=50) INFO 12-01 10:00:40 [gpu_worker.py:795] Available KV cache memory: 112.40 GiB"
EXTENDED = (
    "(EngineCore pid=50) INFO 12-01 10:01:10 [extensible_kv_cache.py:536] Extended KV cache to 12320 blocks "
    "(108.28 GiB)."
)
SIZE = (
    "(EngineCore pid=50) INFO 12-01 10:01:10 [kv_cache_utils.py:1168] GPU KV cache size: 788,480 tokens, "
    "Maximum concurrency for 32,768 tokens per request: 24.06x"
)
DISABLED = (
    "(EngineCore pid=50) WARNING 12-01 10:00:20 [abstract.py:178] Disabling the extensible KV cache: the model has "
    "no KV cache. The KV cache will be sized from profiling estimates instead of measured memory."
)


def _facts(*lines: str, server_args: str | None = None) -> Facts:
    events = parse_lines(list(lines)).events
    command = effective_command(parse_command(server_args) if server_args else None, events, None)
    config = server_config(command, events, None)
    return Facts(events=events, config=config, memory=memory_from_log(events))


def test_the_measured_pool_replaces_the_reservations_estimate():
    facts = _facts(VERSION_034, ESTIMATE, EXTENDED, SIZE)
    assert [e.kind for e in facts.events] == [K.VERSION, K.AVAILABLE_KV_MEMORY, K.KV_CACHE_EXTENDED, K.KV_CACHE_SIZE]
    assert (facts.memory.available_kv_gib, facts.memory.num_blocks) == (108.28, 12320)
    assert c.kv_pool(facts) == (788_480, 108.28)


def test_a_034_gpu_server_takes_the_whole_gpu_unless_it_said_the_cache_is_off():
    assert c.extensible_kv_cache(_facts(VERSION_034)) and c.gpu_memory_utilization(_facts(VERSION_034)) == 1.0
    off = _facts(VERSION_034, DISABLED)
    assert not c.extensible_kv_cache(off) and c.gpu_memory_utilization(off) == D.GPU_MEMORY_UTILIZATION
    assert off.events[-1].message.startswith("the model has no KV cache")
    assert c.gpu_memory_utilization(_facts(VERSION_033)) == 0.92 and not c.extensible_kv_cache(_facts(VERSION_033))


def test_a_kv_size_given_outright_turns_the_extensible_cache_off():
    # vllm/config/vllm.py _resolve_extensible_kv_cache: kv_cache_memory_bytes and num_gpu_blocks_override win
    flags = ("--kv-cache-memory-bytes 20000000000", "--num-gpu-blocks-override 4000", "--no-enable-extensible-kv-cache")
    for flag in flags:
        facts = _facts(VERSION_034, server_args=f"vllm serve Qwen/Qwen3-8B {flag}")
        assert not c.extensible_kv_cache(facts) and c.max_share(facts) == c.SAFE_MAX_GPU_MEMORY_UTILIZATION


def test_elastic_ep_a_kv_connector_and_platforms_other_than_cuda_keep_the_cache_estimated():
    """_resolve_extensible_kv_cache (0.34) keeps it off off CUDA and ROCm ("it is only supported on CUDA and ROCm"),
    with elastic EP (scale-up skips the warmup that measures) and with most KV connectors (legacy IPC, a custom pool,
    ROCm's registration, no IMEX channel within a host); a connector's own "Extended KV cache" line says otherwise."""
    for flag in ("--enable-elastic-ep", '--kv-transfer-config \'{"kv_connector":"NixlConnector"}\''):
        facts = _facts(VERSION_034, server_args=f"vllm serve Qwen/Qwen3-8B {flag}")
        assert not c.extensible_kv_cache(facts) and c.gpu_memory_utilization(facts) == 0.92, flag
    connected = _facts(VERSION_034, EXTENDED, server_args="vllm serve Qwen/Qwen3-8B --kv-transfer-config '{}'")
    assert c.extensible_kv_cache(connected)
    tpu = (
        "INFO 12-01 10:00:05 [core.py:93] Initializing a V1 LLM engine (v0.34.0) with config: model='Qwen/Qwen3-8B', "
        "dtype=torch.bfloat16, max_seq_len=32768, device_config=tpu, seed=0"
    )
    assert not c.extensible_kv_cache(_facts(VERSION_034, tpu))
    assert c.extensible_kv_cache(_facts(VERSION_034, tpu.replace("device_config=tpu", "device_config=cuda")))
    plugin = "INFO 12-01 10:00:01 [__init__.py:278] Platform plugin ascend is activated"
    assert not c.extensible_kv_cache(_facts(VERSION_034, plugin))


def test_a_share_near_one_is_not_a_refused_start_on_034_but_is_on_033_and_with_the_cache_off():
    assert ap_sizing.RULE_UTIL.evaluate(_facts(VERSION_034, ARGS_099, ESTIMATE, EXTENDED, SIZE)) == []
    [older] = ap_sizing.RULE_UTIL.evaluate(_facts(VERSION_033, ARGS_099))
    assert older.changes[0].proposed == "0.92"
    assert ap_sizing.RULE_UTIL.evaluate(_facts(VERSION_034, ARGS_099, DISABLED))


def test_a_034_kv_refusal_at_the_whole_gpu_proposes_a_shorter_context_never_a_smaller_share():
    # v1/core/kv_cache_planning.py 0.34: the hint says the extensible cache already takes all the memory left
    refusal = (
        "ValueError: To serve at least one request with the model's max seq len (131072), (18.00 GiB KV cache is "
        "needed, which is larger than the available KV cache memory (9.50 GiB). Based on the available memory, the "
        "estimated maximum model length is 69152. The extensible KV cache already takes all device memory left "
        "after the model and its activations; decrease `max_model_len` or `max_num_seqs`, or the model needs a "
        "device with more memory. Decreasing `max_model_len` also reduces what is needed."
    )
    facts = _facts(refusal)
    assert c.extensible_kv_cache(facts)
    top = evaluate(facts).findings[0]
    flags = {change.flag: change.proposed for change in [*top.changes, *top.alternatives]}
    # vLLM's estimate, 69152, rounded down to a whole block: only 0.34 speaks of the extensible cache, so the paste
    # is from 0.34 or later, whose block size left out is 64 (1080 blocks), not the 16 of an undated paste
    assert top.rule == "OP-1.1" and flags["--max-model-len"] == "69120"
    assert c.defaults_release(facts) == D.EXTENSIBLE_KV_CACHE_FROM and c.block_size(facts) == 64
    assert "--gpu-memory-utilization" not in flags


def test_block_size_and_share_defaults_by_release():
    assert D.block_size("cuda", version=(0, 34, 0)) == 64 and D.block_size("cuda", version=(0, 33, 0)) == 16
    assert D.block_size("cuda") == 16 and D.block_size("cpu", version=(0, 34, 0)) == D.CPU_DEFAULT_BLOCK_SIZE
    assert D.gpu_memory_utilization((0, 34, 0), "cuda", extensible=False) == 0.92
    assert D.gpu_memory_utilization((0, 34, 0), "cpu") == 0.92 and D.gpu_memory_utilization(None) == 0.90
    # an excerpt without its version line that holds 0.34's own Extended line is still such a server
    assert c.gpu_memory_utilization(_facts(EXTENDED)) == 1.0 and D.gpu_memory_utilization(None, extensible=True) == 1.0


def test_034s_warning_that_a_share_caps_the_cache_proposes_the_whole_gpu_and_says_when_to_keep_it():
    # v1/worker/extensible_kv_cache.py 0.34: logged when a share below 1.0 keeps free memory out of the KV cache
    warning = (
        "(EngineCore pid=50) WARNING 12-01 10:01:10 [extensible_kv_cache.py:662] gpu_memory_utilization=0.9 caps this "
        "instance at 126.94 GiB, keeping 12.41 GiB of free device memory out of the KV cache. The extensible KV cache "
        "is sized from the memory measured after warmup and CUDA graph capture, so vLLM's own use needs no headroom "
        "below 1.0. Leave gpu_memory_utilization unset unless it leaves room for memory vLLM does not measure: other "
        "processes sharing the GPU (including ones that allocate on it later), the CPU on a unified-memory device, "
        "weight transfer buffers for weight updates, or a KV connector's own device buffers."
    )
    top = evaluate(_facts(warning)).findings[0]
    assert top.rule == "VC-1"
    assert [(c.flag, c.current, c.proposed) for c in top.changes] == [("--gpu-memory-utilization", "0.9", "1.0")]
    assert top.actions[0].startswith("Keep the lower share only if something vLLM does not measure needs that memory")
