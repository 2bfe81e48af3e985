"""The exact startup-failure texts vLLM prints, by version (docs/reference.md §2.6).

Why exact: triage matches these texts in real logs, and a user who pastes the advisor's
prediction next to their own log should see the same sentence. Checked against real logs:
0.15 (#34076) and 0.22+ (public logs quoting "model's max seq len (49152), (1.82 GiB … is
45472. Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU
backend) …" and "… when initializing the engine (this flag also controls CPU memory
reservation on the CPU backend, despite its name). See …"). Not pinned by any source: where
between 0.8.x (two spaces before "Try") and 0.22 (one) the spacing changed; we switch at 0.14.
"""

from __future__ import annotations

from advisor.catalog.vllm_versions import Version, format_gib
from rules.vllm_defaults import FREE_MEMORY_CHECK_FROM

DOCS_URL = "https://docs.vllm.ai/en/latest/configuration/conserving_memory/"


def no_cache_blocks(version: Version) -> str:
    """Available KV memory ≤ 0 (weights + activation + overheads ≥ requested memory)."""
    text = (
        "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine"
    )
    if version >= (0, 22, 0):
        text += " (this flag also controls CPU memory reservation on the CPU backend, despite its name)"
    text += "."
    if version >= (0, 14, 0):
        text += f" See {DOCS_URL} for more details."
    return text


def max_seq_len_does_not_fit(
    version: Version, max_model_len: int, needed_gib: float, available_gib: float, estimated_max_len: int
) -> str:
    """One request at max_model_len needs more KV than is available (`check_enough_kv_cache_memory`)."""
    fixed = version >= (0, 22, 0)
    owner = "model's" if fixed else "models's"
    if version < (0, 14, 0):
        needed, available = f"{needed_gib:.2f}", f"{available_gib:.2f}"
    else:
        needed, available = format_gib(needed_gib, version), format_gib(available_gib, version)
    text = (
        f"To serve at least one request with the {owner} max seq len ({max_model_len}), "
        f"({needed} GiB KV cache is needed, which is larger than the available KV cache "
        f"memory ({available} GiB)."
    )
    if estimated_max_len > 0 and version >= (0, 8, 5):
        text += f" Based on the available memory, the estimated maximum model length is {estimated_max_len}."
    advice = "`gpu_memory_utilization`"
    if fixed:
        advice += " (which also controls CPU memory on the CPU backend)"
    gap = "  " if version < (0, 14, 0) else " "  # 0.8.x text has two spaces; real 0.22+ logs one
    text += f"{gap}Try increasing {advice} or decreasing `max_model_len` when initializing the engine."
    if version >= (0, 13, 0):
        text += f" See {DOCS_URL} for more details."
    return text


def free_memory_below_requested(
    version: Version, free_gib: float, total_gib: float, utilization: float, requested_gib: float
) -> str | None:
    """The startup free-memory check (0.9.1+); None for versions that do not make it."""
    if version < FREE_MEMORY_CHECK_FROM:
        return None
    device = " cuda:0" if version >= (0, 33, 0) else ""
    return (
        f"Free memory on device{device} ({free_gib:.2f}/{total_gib:.2f} GiB) on startup is less than "
        f"desired GPU memory utilization ({utilization}, {requested_gib:.2f} GiB). Decrease GPU memory "
        "utilization or reduce GPU memory used by other processes."
    )


def weights_do_not_fit(version: Version, weights_gib: float, total_gib: float) -> str:
    """Weights larger than the device: a CUDA OOM while loading (vLLM wraps it from 0.14).

    The torch part is abridged ("…"): its allocation sizes depend on the shard being loaded.
    """
    torch_text = (
        f"CUDA out of memory. Tried to allocate … GiB. GPU 0 has a total capacity of {total_gib:.2f} GiB "
        f"(model weights need {weights_gib:.2f} GiB per GPU)"
    )
    if version >= (0, 14, 0):
        return (
            "Failed to load model - not enough GPU memory. Try lowering --gpu-memory-utilization to "
            "free memory for weights, increasing --tensor-parallel-size, or using --quantization. "
            f"See {DOCS_URL} for more tips. (original error: {torch_text})"
        )
    return f"torch.OutOfMemoryError: {torch_text}"


# ---------------------------------------------------------------- launch checks (config validation)
# vLLM's words for the launches it refuses while validating its config, before any memory is touched
# (vllm/config/model.py, vllm/config/parallel.py and vllm/config/scheduler.py in 0.10-0.33; vllm/config.py
# before). Each is the leading sentences of the catalog entry (vllm_messages.json), which is what a
# match needs; the rest of the message is advice the finding gives in its own words.


def heads_not_divisible(heads: int, tensor_parallel: int) -> str:
    return f"Total number of attention heads ({heads}) must be divisible by tensor parallel size ({tensor_parallel})."


def max_model_len_above_derived(max_model_len: int, key: str, derived: int) -> str:
    return (
        f"User-specified max_model_len ({max_model_len}) is greater than the derived max_model_len "
        f"({key}={derived} or model_max_length=None in model's config.json). To allow overriding this "
        "maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1."
    )


def batched_tokens_below_max_model_len(max_num_batched_tokens: int, max_model_len: int) -> str:
    return (
        f"max_num_batched_tokens ({max_num_batched_tokens}) is smaller than max_model_len ({max_model_len}). "
        "This effectively limits the maximum sequence length to max_num_batched_tokens and makes vLLM reject "
        "longer sequences. Please increase max_num_batched_tokens or decrease max_model_len."
    )
