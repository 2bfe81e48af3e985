"""EngineConfig: the engine's one small config, fields named after vLLM's flags.

`--max-model-len` → `max_model_len`, and so on, so that a launch line for vLLM and one for
this engine read the same. Defaults follow vLLM 0.33's OpenAI server on a small device
(gpu_memory_utilization 0.92, block_size 16, prefix caching and chunked prefill on,
max_num_batched_tokens 2048, max_num_seqs 256). `validate()` checks what can be checked
without the model; `resolve_max_model_len()` fills what needs the model's config.
"""

from __future__ import annotations

import dataclasses
import os

import torch

from engine.core.errors import EngineStartupError
from servops_kernels import cpu_attention, cpu_gemm, cpu_layer_ops

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
DTYPE_ALIASES = {"float": "float32", "fp32": "float32", "bf16": "bfloat16", "half": "float16", "fp16": "float16"}

# The CPU has no "total device memory" that means anything for a KV pool, so the budget is
# stated: 4 GiB unless --device-memory-gib says otherwise (documented in docs/engine.md).
DEFAULT_CPU_DEVICE_MEMORY_GIB = 4.0


def native_bf16_kernels() -> bool:
    """Whether the native CPU kernels that take every bf16 op on a CPU without bf16 arithmetic (linear
    layers, norms and activations, attention) are built here: without them bf16 runs PyTorch's
    software path there, several times slower than float32."""
    return cpu_gemm.available() and cpu_layer_ops.available() and cpu_attention.available()


@dataclasses.dataclass
class EngineConfig:
    model: str = ""  # HF model dir; "" means the embedded default (SmolLM2-135M-Instruct)
    tokenizer: str | None = None  # defaults to `model`
    served_model_name: str | None = None  # defaults to `model`
    max_model_len: int | None = None  # defaults to the model's max_position_embeddings
    max_num_seqs: int = 256
    max_num_batched_tokens: int | None = None  # 2048 with chunked prefill, else max_model_len
    gpu_memory_utilization: float = 0.92
    device_memory_gib: float | None = None  # CUDA: total memory; CPU: DEFAULT_CPU_DEVICE_MEMORY_GIB
    block_size: int = 16
    enable_prefix_caching: bool = True
    enable_chunked_prefill: bool = True
    dtype: str = "auto"  # auto | float32 | bfloat16 | float16
    seed: int = 0
    device: str = "auto"  # auto | cpu | cuda
    num_gpu_blocks_override: int | None = None
    kv_cache_dtype: str = "auto"
    enforce_eager: bool = True  # accepted for vLLM compatibility; the engine is always eager

    def validate(self) -> None:
        """Raise EngineStartupError naming the flag and the fix for values that can never work."""
        if not 0.0 < self.gpu_memory_utilization <= 1.0:
            _fail(f"--gpu-memory-utilization must be in (0, 1]; got {self.gpu_memory_utilization}. Use e.g. 0.92.")
        if self.block_size not in (1, 2, 4, 8, 16, 32, 64, 128):
            _fail(f"--block-size must be a power of two between 1 and 128; got {self.block_size}. Use 16.")
        if self.max_num_seqs < 1:
            _fail(f"--max-num-seqs must be at least 1; got {self.max_num_seqs}.")
        if self.max_num_batched_tokens is not None and self.max_num_batched_tokens < 1:
            _fail(f"--max-num-batched-tokens must be at least 1; got {self.max_num_batched_tokens}.")
        if self.max_model_len is not None and self.max_model_len < 2:
            _fail(f"--max-model-len must be at least 2; got {self.max_model_len}.")
        if self.device_memory_gib is not None and self.device_memory_gib <= 0:
            _fail(f"--device-memory-gib must be positive; got {self.device_memory_gib}.")
        if self.num_gpu_blocks_override is not None and self.num_gpu_blocks_override < 1:
            _fail(f"--num-gpu-blocks-override must be at least 1; got {self.num_gpu_blocks_override}.")
        if self.kv_cache_dtype != "auto":
            _fail(f"--kv-cache-dtype {self.kv_cache_dtype!r} is not supported by this engine; use 'auto'.")
        dtype = DTYPE_ALIASES.get(self.dtype, self.dtype)
        if dtype != "auto" and dtype not in DTYPES:
            _fail(f"--dtype {self.dtype!r} is not supported; use one of auto, {', '.join(DTYPES)}.")
        if self.device not in ("auto", "cpu", "cuda") and not self.device.startswith("cuda:"):
            _fail(f"--device {self.device!r} is not supported; use auto, cpu or cuda.")
        if self.device.startswith("cuda") and not torch.cuda.is_available():
            _fail(f"--device {self.device} was requested but CUDA is not available; use --device cpu.")

    # ---- resolution (needs the model's config) --------------------------------------
    def torch_device(self) -> torch.device:
        if self.device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return torch.device(self.device)

    def torch_dtype(self, model_dtype: torch.dtype | None) -> torch.dtype:
        """`auto`: on CUDA the checkpoint's half dtype. On CPU what the CPU computes fastest:
        bfloat16 where it has bf16 arithmetic (AVX512-BF16 or AMX), as vLLM's CPU backend chooses;
        without it (AVX2 only) bfloat16 for a half-precision checkpoint where the native kernels are
        built, since they take every bf16 op there and a decode step reads half the bytes (1.5-1.9x
        float32's decode rate, prompts on a float32 copy of the weights: docs/engine.md), and float32
        otherwise. float16 becomes bfloat16 on CPU."""
        name = DTYPE_ALIASES.get(self.dtype, self.dtype)
        half_checkpoint = model_dtype in (torch.bfloat16, torch.float16)
        if name != "auto":
            dtype = DTYPES[name]
        elif half_checkpoint and self.torch_device().type == "cuda":
            dtype = model_dtype
        elif self.torch_device().type == "cpu" and (
            cpu_gemm.has_bf16_arithmetic() or (half_checkpoint and native_bf16_kernels())
        ):
            dtype = torch.bfloat16
        else:
            dtype = torch.float32
        if dtype == torch.float16 and self.torch_device().type == "cpu":
            dtype = torch.bfloat16
        return dtype

    def resolve_max_model_len(self, max_position_embeddings: int) -> int:
        if self.max_model_len is None:
            self.max_model_len = int(max_position_embeddings)
        elif self.max_model_len > max_position_embeddings and not os.environ.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN"):
            _fail(
                f"User-specified max_model_len ({self.max_model_len}) is greater than the derived "
                f"max_model_len (max_position_embeddings={max_position_embeddings} in model's config.json). "
                f"Lower --max-model-len to at most {max_position_embeddings}."
            )
        if self.max_num_batched_tokens is None:
            self.max_num_batched_tokens = 2048 if self.enable_chunked_prefill else max(self.max_model_len, 2048)
        if not self.enable_chunked_prefill and self.max_num_batched_tokens < self.max_model_len:
            _fail(
                f"max_num_batched_tokens ({self.max_num_batched_tokens}) is smaller than max_model_len "
                f"({self.max_model_len}). This effectively limits the maximum sequence length to "
                f"max_num_batched_tokens and makes vLLM reject longer sequences. Please increase "
                f"max_num_batched_tokens or decrease max_model_len."
            )
        return self.max_model_len

    def device_memory_bytes(self) -> int:
        device = self.torch_device()
        if self.device_memory_gib is not None:
            return int(self.device_memory_gib * (1 << 30))
        if device.type == "cuda":
            return int(torch.cuda.get_device_properties(device).total_memory)
        return int(DEFAULT_CPU_DEVICE_MEMORY_GIB * (1 << 30))

    def device_name(self) -> str:
        """What vLLM prints before `KV cache size`: `GPU` on CUDA, the device type upper-cased otherwise."""
        return "GPU" if self.torch_device().type == "cuda" else self.torch_device().type.upper()


def _fail(message: str) -> None:
    raise EngineStartupError(message)
