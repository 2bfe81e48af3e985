"""`servops advise` against a live vLLM on CPU: the KV tokens it predicts are the ones vLLM logged.

The shared `vllm_serving` server runs with vLLM's defaults and VLLM_CPU_KVCACHE_SPACE set; advise
gets the same model directory and KV space through the real CLI, and its `kv_cache_tokens` must
equal the number in the live log's `CPU KV cache size: N tokens` line (its concurrency the
line's `Maximum concurrency … Xx`).
"""

from __future__ import annotations

import json
import re

from advisor.collect.kv_space import CPU_KV_SPACE_ENV
from engine.model.default_model import default_model_dir
from tests.helpers import vllm_situations as vs
from tests.integration.vllm.test_triage_live import servops

CAPACITY_LINE = re.compile(
    r"CPU KV cache size: (?P<tokens>[\d,]+) tokens, Maximum concurrency for "
    r"(?P<len>[\d,]+) tokens per request: (?P<x>[\d.]+)x"
)


def test_advise_predicts_the_live_servers_kv_tokens_and_concurrency(vllm_serving: vs.VllmServer) -> None:
    space_gib = vllm_serving.command.env.get(CPU_KV_SPACE_ENV)
    assert space_gib, f"the shared server was started without {CPU_KV_SPACE_ENV}: {vllm_serving.shown_command}"
    done = servops(
        "advise",
        "--model",
        str(default_model_dir()),
        "--device",
        "cpu",
        "--cpu-kvcache-space-gib",
        space_gib,
        # the dtype the server runs in (float32 where the CPU has no bf16 arithmetic; vllm_launch)
        *(["--dtype", vllm_serving.command.flags["--dtype"]] if "--dtype" in vllm_serving.command.flags else []),
        "--json",
        "-",
        timeout_s=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    predicted = json.loads(done.stdout)["vllm_cpu"]
    logged = CAPACITY_LINE.search(vllm_serving.log_text())
    assert logged, "the live vLLM log has no 'CPU KV cache size' line"
    assert predicted["kv_cache_tokens"] == int(logged["tokens"].replace(",", "")), logged[0]
    assert predicted["max_model_len"] == int(logged["len"].replace(",", "")), logged[0]
    assert f"{predicted['max_concurrency']:.2f}" == logged["x"], logged[0]
    assert predicted["log_line"] == logged[0]
