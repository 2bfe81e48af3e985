"""A `vllm serve` launch checked against the model the way vLLM validates its config at startup.

Why one place: `servops advise` must never print "starts: yes" for a launch vLLM refuses, and
`servops triage --server-args` with no log must report what vLLM would refuse; both ask this module, and
both get vLLM's own words (advisor/catalog/vllm_failures.py), so triage reads the refusal with the same
catalog match and rule (VC-1) as one a user pasted. Checked here, before memory: attention heads against
the tensor-parallel size, `--max-model-len` against the model's position limit (unless
VLLM_ALLOW_LONG_MAX_MODEL_LEN=1), and `--max-num-batched-tokens` against `--max-model-len` when chunked
prefill is off. Dtype and quantization against compute capability are not checked: the GPU catalog holds
no GPU older than Ampere, where those refusals happen.
"""

from __future__ import annotations

from advisor.catalog import vllm_failures
from advisor.catalog.models import ModelSpec
from advisor.memory.budget import LaunchConfig, MemoryBreakdown

ALLOW_LONG_ENV = "VLLM_ALLOW_LONG_MAX_MODEL_LEN"
POSITION_LIMIT_KEY = "max_position_embeddings"


def launch_refusals(
    model: ModelSpec,
    launch: LaunchConfig,
    *,
    env: dict[str, str] | None = None,
    chunked_prefill: bool = True,
) -> list[str]:
    """vLLM's messages for every config check this launch fails, in the order vLLM checks them."""
    refusals = []
    tp = launch.tensor_parallel_size
    if model.num_attention_heads % tp:
        refusals.append(vllm_failures.heads_not_divisible(model.num_attention_heads, tp))
    allow_long = (env or {}).get(ALLOW_LONG_ENV, "").strip().lower() in ("1", "true")
    if launch.max_model_len and launch.max_model_len > model.max_position_embeddings and not allow_long:
        refusals.append(
            vllm_failures.max_model_len_above_derived(
                launch.max_model_len, POSITION_LIMIT_KEY, model.max_position_embeddings
            )
        )
    max_len = launch.max_model_len or model.max_position_embeddings
    if not chunked_prefill and launch.max_num_batched_tokens and launch.max_num_batched_tokens < max_len:
        refusals.append(vllm_failures.batched_tokens_below_max_model_len(launch.max_num_batched_tokens, max_len))
    return refusals


def checked(memory: MemoryBreakdown, model: ModelSpec, launch: LaunchConfig) -> MemoryBreakdown:
    """The memory estimate of `launch`, marked as not starting with vLLM's first refusal when its config
    checks refuse it (a launch vLLM refuses never "fits", whatever its memory)."""
    refusals = launch_refusals(model, launch)
    if not refusals or not memory.fits:
        return memory
    return memory.model_copy(update={"fits": False, "failure": refusals[0]})
