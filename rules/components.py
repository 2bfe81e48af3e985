"""Which part of vLLM a source path is in, as an on-call engineer would name it.

Why in `rules`: the reader names the component of a traceback's deepest vLLM frame (advisor/collect), and the rules
name the component of a catalog message from the file vLLM logs it in (VC-5); one table serves both, so a traceback
and a log line from the same file are said to come from the same place.
"""

from __future__ import annotations

# Where in vLLM a traceback's deepest vLLM frame was, as the component an on-call engineer would name;
# the first fragment found in the path wins, so the specific ones come first.
COMPONENTS: tuple[tuple[str, str], ...] = (
    ("/lora/", "LoRA adapters"),
    ("/sample/", "sampler"),
    ("/sampler", "sampler"),
    ("structured_output", "structured output (guided decoding)"),
    ("guided_decoding", "structured output (guided decoding)"),
    ("/compilation/", "torch.compile"),
    ("torch/_inductor", "torch.compile"),
    ("torch/_dynamo", "torch.compile"),
    ("detokenizer", "detokenizer"),
    ("tokenizer", "tokenizer"),
    ("shm_broadcast", "the shared-memory message queue between the engine and its workers"),
    ("tool_parsers", "tool-call parser"),
    ("_tool_parser.py", "tool-call parser"),  # a log line's header names the file alone: hermes_tool_parser.py:148
    ("/reasoning/", "reasoning parser"),
    ("_reasoning_parser.py", "reasoning parser"),
    ("kv_transfer", "KV transfer connector"),
    ("kv_offload", "KV cache offloading"),
    ("/distributed/", "distributed communication (NCCL)"),
    ("fused_moe", "fused MoE (expert) layer"),
    ("/layers/quantization/", "quantization method"),
    ("spec_decode", "speculative decoding"),
    ("/attention/", "attention backend"),
    ("/multimodal/", "multimodal processor"),
    ("model_loader", "model loading"),
    ("/model_executor/models/", "model code"),
    ("kv_cache", "KV cache manager"),
    ("/core/sched", "scheduler"),
    ("/entrypoints/", "API server"),
    ("serving_chat.py", "API server"),  # a log line's header names the file alone: [serving_chat.py:193]
    ("serving_completion.py", "API server"),
    ("/worker/", "worker"),
    ("/engine/", "engine"),
)
# vLLM's configuration: its config classes are pydantic dataclasses (vllm/config/, 0.32; ModelConfig was one by 0.9),
# validated as the engine's arguments are turned into them at start-up, so pydantic names the class in its header
# (`1 validation error for ModelConfig`) and wraps each refusal as `Value error, <words> [type=value_error,
# input_value=ArgsKwargs(…)]`.
CONFIGURATION = "vLLM's configuration (validated as it starts)"
# vLLM's own config classes (vllm/config/*.py in the 0.32 wheel, and earlier releases' DecodingConfig,
# TokenizerPoolConfig, PromptAdapterConfig; `Config` is the base of some): one list for every reader of them, the
# pydantic headers here, OP-7.69's dating of a field and OP-7.159's exclusion of vLLM's own classes.
VLLM_CONFIG_CLASSES = frozenset(
    "AttentionConfig AuxOutputConfig CacheConfig CompilationConfig DeviceConfig DiffusionConfig DynamicShapesConfig "
    "ECTransferConfig EPLBConfig EncoderCacheManagerConfig EngramConfig FaultToleranceConfig HiSparseConfig "
    "IrOpPriorityConfig KVEventsConfig KVTransferConfig KernelConfig LoRAConfig LoadConfig LoggingConfig MambaConfig "
    "ModelArchitectureConfig ModelConfig MultiModalConfig ObservabilityConfig OffloadConfig ParallelConfig PassConfig "
    "PoolerConfig PrefetchOffloadConfig ProfilerConfig ReasoningConfig SchedulerConfig SpeculativeConfig "
    "SpeechToTextConfig StructuredOutputsConfig UVAOffloadConfig VllmConfig WatermarkConfig WeightTransferConfig "
    "DecodingConfig TokenizerPoolConfig PromptAdapterConfig Config".split()
)
# Without a frame, the message's own words (a bare `RuntimeError: NCCL error …`).
MESSAGE_COMPONENTS: tuple[tuple[str, str], ...] = (
    *(
        (f"{error} for {name.lower()}", CONFIGURATION)
        for name in sorted(VLLM_CONFIG_CLASSES - {"Config"})
        for error in ("error", "errors")
    ),
    *((f"[type={kind}, input_value=argskwargs(", CONFIGURATION) for kind in ("value_error", "assertion_error")),
    ("transformers.", "transformers"),  # an exception class of its own: `transformers.integrations.….…Error`
    ("nccl", "distributed communication (NCCL)"),
    ("deepgemm", "DeepGEMM kernels"),  # its asserts name their source (`…/deepgemm-src/csrc/apis/attention.hpp`)
    ("deep_gemm", "DeepGEMM kernels"),  # installed as a package (`site-packages/deep_gemm/…`)
    ("flashinfer", "FlashInfer kernels"),
    ("cuda", "CUDA runtime"),
    ("triton", "Triton kernels"),
    ("lora", "LoRA adapters"),
    ("tokenizer", "tokenizer"),
    ("chat template", "chat template"),
)


def component_of_path(path: str) -> str | None:
    """The component a path inside vLLM (or a vLLM plugin, or torch) lies in; the first fragment found wins."""
    normalised = path.replace("\\", "/")
    return next((component for fragment, component in COMPONENTS if fragment in normalised), None)
