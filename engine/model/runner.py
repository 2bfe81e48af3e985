"""ModelRunner: loads the model, owns the KV cache, turns a SchedulerOutput into tokens.

Per step it builds the flattened batch (input ids, positions, slot mapping, block tables,
context lengths) with numpy — one vectorised call per request, never one per token — runs
the model once, computes logits only for the rows that sample, and samples.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence

import numpy as np
import torch
from transformers import AutoConfig

from engine.core.errors import EngineStartupError
from engine.core.scheduler import ScheduledRequest, SchedulerOutput
from engine.model.cpu_memory import advise_huge_pages, tune_glibc_malloc
from engine.model.llama import (
    SUPPORTED_ARCHITECTURES,
    AttentionMetadata,
    Linear,
    LlamaForCausalLM,
    PrefillSplit,
    rope_cos_sin,
)
from engine.model.sampler import sample
from servops_kernels import cpu_prepack
from servops_kernels.attention import dense_prefill_min_tokens, pinned_backend, plan_decode

WEIGHT_PASS_REPEATS = 5  # best of five rounds: what the pass costs when nothing interferes


def cache_slots(table: np.ndarray, positions: np.ndarray, block_size: int) -> np.ndarray:
    """The KV cache slot of each of a sequence's `positions`, given its block table: the block's id
    times the block size plus the offset in the block."""
    return table[positions // block_size].astype(np.int64, copy=False) * block_size + positions % block_size


def load_hf_config(model_dir: str):
    """The model's HF config; a user-facing error if the dir is not a supported checkpoint."""
    if not os.path.isfile(os.path.join(model_dir, "config.json")):
        raise EngineStartupError(
            f"--model {model_dir!r} is not a model directory with a config.json; pass a local Hugging Face "
            f"model dir (this engine never downloads)."
        )
    config = AutoConfig.from_pretrained(model_dir)
    arch = (getattr(config, "architectures", None) or ["?"])[0]
    if arch not in SUPPORTED_ARCHITECTURES:
        raise EngineStartupError(
            f"Model architectures ['{arch}'] are not supported by this engine; supported: "
            f"{', '.join(SUPPORTED_ARCHITECTURES)}."
        )
    return config


def checkpoint_dtype(model_dir: str) -> torch.dtype | None:
    with open(os.path.join(model_dir, "config.json")) as f:
        raw = json.load(f)
    name = raw.get("torch_dtype") or raw.get("dtype")
    return getattr(torch, name, None) if isinstance(name, str) else None


class ModelRunner:
    def __init__(
        self, model_dir: str, hf_config, device: torch.device, dtype: torch.dtype, block_size: int, max_model_len: int
    ) -> None:
        self.device = device
        self.dtype = dtype
        if device.type == "cpu":
            tune_glibc_malloc()  # keep step activations' pages mapped (see engine.model.cpu_memory)
        self.block_size = block_size
        with torch.device("meta"):
            model = LlamaForCausalLM(hf_config)
        model = model.to_empty(device=device).to(dtype)
        model.load_weights(model_dir)
        self.model = model.eval()
        self.num_layers = hf_config.num_hidden_layers
        self.num_kv_heads = model.num_kv_heads
        self.head_dim = model.head_dim
        cos, sin = rope_cos_sin(hf_config, max_model_len + 1, device)
        self.cos, self.sin = cos.to(dtype), sin.to(dtype)
        self.kv_caches: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.dense_prefill_min_tokens = dense_prefill_min_tokens(device, dtype, self.head_dim)
        # Pad each step's rows to oneDNN's row buckets (servops_kernels.cpu_prepack.bucket_rows) once, here,
        # rather than in each of the ~120 packed GEMMs of a step: set where the weights are packed.
        self.pad_to_buckets = False

    def weights_bytes(self) -> int:
        """The checkpoint's parameters as loaded: what the memory plan counts against the device budget."""
        return sum(p.numel() * p.element_size() for p in self.model.parameters())

    def packing_bytes(self) -> int:
        """What `pack_weights` adds: a copy of every linear weight and of the LM head."""
        return sum(cpu_prepack.packed_bytes(weight) for weight in self._linear_weights())

    def pack_weights(self) -> None:
        """Reorder every linear weight and the LM head once for oneDNN's GEMM, or copy them to float32
        (servops_kernels.cpu_prepack); the caller decides whether the host has the memory
        (engine/core/llm_engine.py)."""
        for module in self.model.modules():
            if isinstance(module, Linear):
                module.packed = cpu_prepack.pack(module.weight)
        self.model.head_packed = cpu_prepack.pack(self._head_weight())
        # oneDNN builds a GEMM per row count of a reordered (opaque) weight; F.linear on a plain copy does not
        self.pad_to_buckets = self.model.head_packed.is_mkldnn

    def _head_weight(self) -> torch.Tensor:
        model = self.model
        return model.embed_tokens.weight if model.lm_head is None else model.lm_head.weight

    def _linear_weights(self) -> list[torch.Tensor]:
        layers = [m.weight for m in self.model.modules() if isinstance(m, Linear)]
        return [*layers, self._head_weight()]

    def weight_pass_s(self, thread_counts: Sequence[int], repeats: int = WEIGHT_PASS_REPEATS) -> dict[int, float]:
        """Seconds for one row through every linear layer and the LM head at each of `thread_counts`
        CPU threads (best of `repeats` after a warm-up): a one-sequence decode step without its attention.

        Why: how much a second core speeds that pass up depends on the machine (on one 2-core VM a
        core reads the weights at 6-8 GB/s and two at twice that; on another one core already
        saturates the channels), and the CPU thread policy (engine/api/threads.py) needs it. Why the
        counts take turns, round by round, rather than one after the other: a VM's cores slow down for
        seconds at a time, and a slow stretch that fell on one count's passes only flipped the policy
        on one start in sixteen of a benchmark run (BENCHMARKS.md, "Performance model").
        """
        layers = [m for m in self.model.modules() if isinstance(m, Linear)]
        rows = {k: torch.zeros(1, k, dtype=self.dtype, device=self.device) for k in {m.in_features for m in layers}}
        hidden = torch.zeros(1, self.model.config.hidden_size, dtype=self.dtype, device=self.device)
        before = torch.get_num_threads()
        best = {threads: float("inf") for threads in thread_counts}
        try:
            with torch.inference_mode():
                for attempt in range(repeats + 1):
                    for threads in thread_counts:
                        torch.set_num_threads(threads)
                        start = time.perf_counter()
                        for layer in layers:
                            layer(rows[layer.in_features])
                        self.model.compute_logits(hidden)
                        if attempt:  # the first round pages the weights in and starts the thread pools
                            best[threads] = min(best[threads], time.perf_counter() - start)
        finally:
            torch.set_num_threads(before)
        return best

    def kv_bytes_per_block(self) -> int:
        """All layers, keys and values: block_size × kv_heads × (2 × head_dim) × dtype bytes × layers."""
        element = torch.empty((), dtype=self.dtype).element_size()
        return self.block_size * self.num_kv_heads * 2 * self.head_dim * element * self.num_layers

    def allocate_kv_cache(self, num_blocks: int) -> None:
        """Allocate uninitialised, never zeroed.

        Why not torch.zeros: touching gigabytes at startup costs seconds on a CPU. Why no
        zeroing at all: no attention path reads a slot past a sequence's context (the decode
        twin clamps its gather to the context, the native decode kernel stops at it, the
        prefill twin zeroes past it in its own copy, the Triton kernels mask their loads),
        so a never-written slot holding NaN is harmless;
        the kernel tests poison every unused slot with NaN to hold them to that.
        """
        shape = (num_blocks, self.block_size, self.num_kv_heads, self.head_dim)
        self.kv_caches = [
            (
                torch.empty(shape, dtype=self.dtype, device=self.device),
                torch.empty(shape, dtype=self.dtype, device=self.device),
            )
            for _ in range(self.num_layers)
        ]
        if self.device.type == "cpu":  # huge pages for the scattered decode gathers (engine.model.cpu_memory)
            for k_cache, v_cache in self.kv_caches:
                advise_huge_pages(k_cache)
                advise_huge_pages(v_cache)

    @torch.inference_mode()
    def execute(self, out: SchedulerOutput, block_ids: dict[str, list[int]]) -> list[int]:
        """Run one step; returns one sampled token per scheduled request with `samples` True, in order."""
        if not out.scheduled:
            return []
        with pinned_backend(self.device):  # the kernels' backend read once per step, not per call
            input_ids, meta, logits_rows = self._prepare(out.scheduled, out.num_decodes, block_ids)
            hidden = self.model(input_ids, meta, self.kv_caches)
            sampling = [s.request for s in out.scheduled if s.samples]
            if not sampling:
                return []
            logits = self.model.compute_logits(hidden[logits_rows])
            return sample(logits, sampling)

    def _prefill_split(
        self, scheduled: list[ScheduledRequest], num_decodes: int, block_tables: np.ndarray, context_lens: list[int]
    ) -> PrefillSplit | None:
        """Which prompt chunks attend directly (at least `dense_prefill_min_tokens` new tokens behind a
        cached prefix no longer than themselves) and which through the paged cache; None where every
        chunk goes to the paged kernel (on CUDA the Triton prefill kernel takes every chunk at once; on a
        CPU, steps without a long chunk). See engine.model.llama.PrefillSplit."""
        least = self.dense_prefill_min_tokens
        if least is None or num_decodes == len(scheduled):
            return None
        dense, prefixes, paged, paged_rows, start = [], [], [], [], num_decodes
        for i, s in enumerate(scheduled[num_decodes:], start=num_decodes):
            end = start + s.num_new_tokens  # absolute token rows (decodes come first)
            prefix = s.num_computed_tokens
            if s.num_new_tokens >= least and prefix <= s.num_new_tokens:
                dense.append((start, end))
                slots = cache_slots(block_tables[i], np.arange(prefix, dtype=np.int64), self.block_size)
                prefixes.append(torch.from_numpy(slots).to(self.device) if prefix else None)
            else:
                paged.append(i)
                paged_rows.append(np.arange(start, end, dtype=np.int64))
            start = end
        if not dense:
            return None
        split = PrefillSplit(dense_spans=dense, dense_prefix_slots=prefixes)
        if paged:
            q_lens = [scheduled[i].num_new_tokens for i in paged]
            cu = np.zeros(len(paged) + 1, dtype=np.int64)
            cu[1:] = np.cumsum(q_lens)
            split.paged_rows = torch.from_numpy(np.concatenate(paged_rows)).to(self.device)
            split.paged_block_tables = torch.from_numpy(block_tables[paged]).to(self.device)
            split.paged_context_lens = torch.tensor(
                [context_lens[i] for i in paged], dtype=torch.int32, device=self.device
            )
            split.paged_cu_seqlens_q = torch.from_numpy(cu).to(self.device)
            split.paged_max_query_len = max(q_lens)
        return split

    def _prepare(self, scheduled: list[ScheduledRequest], num_decodes: int, block_ids: dict[str, list[int]]):
        ids, positions, slots, tables, context_lens, q_lens, logits_rows = [], [], [], [], [], [], []
        offset = 0
        for s in scheduled:
            start, n = s.num_computed_tokens, s.num_new_tokens
            table = np.asarray(block_ids[s.request.request_id], dtype=np.int64)
            pos = np.arange(start, start + n, dtype=np.int64)
            ids.append(np.asarray(s.request.all_token_ids[start : start + n], dtype=np.int64))
            positions.append(pos)
            slots.append(cache_slots(table, pos, self.block_size))
            tables.append(table)
            context_lens.append(start + n)
            q_lens.append(n)
            offset += n
            if s.samples:
                logits_rows.append(offset - 1)
        padding = cpu_prepack.bucket_rows(offset) - offset if self.pad_to_buckets else 0
        if padding:  # rows attention ignores: slot -1 (nothing written), position 0
            ids.append(np.zeros(padding, dtype=np.int64))
            positions.append(np.zeros(padding, dtype=np.int64))
            slots.append(np.full(padding, -1, dtype=np.int64))
        max_blocks = max(len(t) for t in tables)
        block_tables = np.zeros((len(tables), max_blocks), dtype=np.int32)
        for row, table in enumerate(tables):
            block_tables[row, : len(table)] = table
        pos_t = torch.from_numpy(np.concatenate(positions)).to(self.device)
        cu = np.zeros(len(q_lens) - num_decodes + 1, dtype=np.int64)
        cu[1:] = np.cumsum(q_lens[num_decodes:])
        block_tables_t = torch.from_numpy(block_tables).to(self.device)
        context_lens_t = torch.tensor(context_lens, dtype=torch.int32, device=self.device)
        meta = AttentionMetadata(
            slot_mapping=torch.from_numpy(np.concatenate(slots)).to(self.device),
            num_decodes=num_decodes,
            block_tables=block_tables_t,
            context_lens=context_lens_t,
            cu_seqlens_q_prefill=torch.from_numpy(cu).to(self.device),
            cos=self.cos[pos_t],
            sin=self.sin[pos_t],
            max_decode_context_len=max(context_lens[:num_decodes], default=0),
            max_prefill_query_len=max(q_lens[num_decodes:], default=0),
            prefill_split=self._prefill_split(scheduled, num_decodes, block_tables, context_lens),
            num_padding=padding,
            decode_plan=plan_decode(block_tables_t[:num_decodes], context_lens_t[:num_decodes], self.kv_caches[0][0])
            if num_decodes
            else None,
        )
        input_ids = torch.from_numpy(np.concatenate(ids)).to(self.device)
        return input_ids, meta, torch.tensor(logits_rows, dtype=torch.long, device=self.device)
