"""LLMEngine: the step-level API the server and the offline `LLM` drive.

`add_request` validates and queues; each `step()` runs one scheduler iteration and one
forward pass and returns a RequestOutput for every request that got a token (or finished,
or was aborted) in that step. Construction loads the model, sizes the KV pool from the
memory budget and logs vLLM 0.33's startup lines (see docs/engine.md for the list).
"""

from __future__ import annotations

import importlib.metadata
import time
from collections.abc import Callable

import torch
from transformers import AutoTokenizer

from engine.core.config import EngineConfig
from engine.core.errors import EngineStartupError, RequestValidationError
from engine.core.kv_cache_manager import KVCacheManager
from engine.core.outputs import RequestMetrics, RequestOutput
from engine.core.request import Request, RequestStatus
from engine.core.sampling_params import SamplingParams
from engine.core.scheduler import Scheduler
from engine.core.stats import IterationStats, SchedulerStats
from engine.model.cpu_memory import host_available_bytes
from engine.model.detokenizer import IncrementalDetokenizer
from engine.model.memory_profile import estimate_activation_bytes, max_concurrency, plan_kv_cache
from engine.model.runner import ModelRunner, checkpoint_dtype, load_hf_config
from engine.observability.logger import format_gib, init_logger
from servops_kernels import cpu_prepack
from servops_kernels.attention import describe_prefill

logger = init_logger(__name__)

# The linear weights are packed only where the host's available memory holds the copy this many
# times over (LLMEngine._pack_weights_if_room).
PREPACK_MAX_HOST_SHARE = 4


def _version() -> str:
    try:
        return importlib.metadata.version("servops")
    except importlib.metadata.PackageNotFoundError:
        return "0.0.0"


class LLMEngine:
    def __init__(self, config: EngineConfig) -> None:
        """Resolve the model, load it, size the KV pool from the memory budget, build the scheduler; each
        step logs what vLLM logs at that point of its start-up, in vLLM's order."""
        start = time.monotonic()
        config.validate()
        self.config = config
        hf_config = self._resolve_model()
        device = config.torch_device()
        dtype = config.torch_dtype(checkpoint_dtype(self.model_dir))
        self._log_engine_config(device, dtype)
        torch.manual_seed(config.seed)
        self.tokenizer = AutoTokenizer.from_pretrained(config.tokenizer or self.model_dir)

        # vLLM checks the share it asks for against the memory free before it loads anything: checked
        # after loading, our own weights would count as "used by other processes" and any model over
        # (1 - utilization) of the card would refuse to start (an 8B model on an H100 did).
        requested = int(config.device_memory_bytes() * config.gpu_memory_utilization)
        if device.type == "cuda" and config.device_memory_gib is None:
            _check_free_device_memory(device, requested, config.gpu_memory_utilization)
        weights = self._load_model(hf_config, device, dtype)
        self.kv_budget = self._plan_kv_cache(hf_config, dtype, requested, weights)
        self.runner.allocate_kv_cache(self.kv_budget.num_blocks)
        self.kv_cache_manager = KVCacheManager(
            self.kv_budget.num_blocks, config.block_size, config.enable_prefix_caching
        )
        self.scheduler = Scheduler(
            self.kv_cache_manager,
            config.max_num_seqs,
            config.max_num_batched_tokens,
            self.max_model_len,
            config.enable_chunked_prefill,
        )
        concurrency = max_concurrency(self.kv_budget.num_blocks, config.block_size, self.max_model_len)
        logger.info(
            "%s KV cache size: %s tokens, Maximum concurrency for %s tokens per request: %.2fx",
            config.device_name(),
            f"{int(concurrency * self.max_model_len):,}",
            f"{self.max_model_len:,}",
            concurrency,
        )
        self.requests: dict[str, Request] = {}
        self._pending_outputs: list[RequestOutput] = []
        self._last_iteration = IterationStats()
        # Called with scheduler_stats() right after each schedule(), before the model runs, so
        # gauges show the batch being executed (a step can last seconds on a CPU; stats taken
        # only after it would show a freshly admitted request as waiting for that whole time),
        # and the server can size the step's CPU threads to the tokens it computes.
        self.on_schedule: Callable[[SchedulerStats], None] | None = None
        logger.info("init engine (profile, create kv cache, warmup model) took %.2f s", time.monotonic() - start)

    # ---- start-up ---------------------------------------------------------------------
    def _resolve_model(self):
        """The model's folder (the embedded default when none is named), its HF config, the context
        length it serves (capped to a sliding window, which the engine does not implement) and its name."""
        config = self.config
        if config.model:
            self.model_dir = config.model
        else:
            from engine.model.default_model import ensure_default_model

            self.model_dir = str(ensure_default_model())
        hf_config = load_hf_config(self.model_dir)
        max_positions = hf_config.max_position_embeddings
        sliding_window = getattr(hf_config, "sliding_window", None)
        if sliding_window and getattr(hf_config, "use_sliding_window", True) and sliding_window < max_positions:
            logger.warning(
                "Sliding window attention is not supported; capping max_model_len to the window %d.", sliding_window
            )
            max_positions = sliding_window
        self.max_model_len = config.resolve_max_model_len(max_positions)
        self.served_model_name = config.served_model_name or (config.model or "SmolLM2-135M-Instruct")
        return hf_config

    def _log_engine_config(self, device: torch.device, dtype: torch.dtype) -> None:
        """vLLM's "Initializing a V1 LLM engine" line, which the log collector reads the launch from."""
        config = self.config
        logger.info(
            "Initializing a V1 LLM engine (v%s) with config: model=%r, tokenizer=%r, dtype=%s, max_seq_len=%d, "
            "device_config=%s, served_model_name=%s, seed=%d, enable_prefix_caching=%s, "
            "chunked_prefill_enabled=%s, block_size=%d, max_num_seqs=%d, max_num_batched_tokens=%d",
            _version(),
            self.model_dir,
            config.tokenizer or self.model_dir,
            str(dtype).removeprefix("torch."),
            self.max_model_len,
            device.type,
            self.served_model_name,
            config.seed,
            config.enable_prefix_caching,
            config.enable_chunked_prefill,
            config.block_size,
            config.max_num_seqs,
            config.max_num_batched_tokens,
        )
        if config.enable_chunked_prefill:
            logger.info("Chunked prefill is enabled with max_num_batched_tokens=%d.", config.max_num_batched_tokens)

    def _load_model(self, hf_config, device: torch.device, dtype: torch.dtype) -> int:
        """Load the weights into the model runner; their bytes."""
        config = self.config
        load_start = time.monotonic()
        self.runner = ModelRunner(self.model_dir, hf_config, device, dtype, config.block_size, self.max_model_len)
        if device.type == "cuda":
            torch.cuda.empty_cache()  # loading's temporaries (fused q/k/v, gate/up) stay reserved otherwise
        weights = self.runner.weights_bytes()
        logger.info(
            "Model loading took %s GiB memory and %.6f seconds", format_gib(weights), time.monotonic() - load_start
        )
        logger.info("Prefill attention: %s.", describe_prefill(device, dtype, self.runner.head_dim))
        self._pack_weights_if_room()
        return weights

    def _plan_kv_cache(self, hf_config, dtype: torch.dtype, requested: int, weights: int):
        """The KV pool the budget leaves after weights and activations, or the overridden block count."""
        config = self.config
        activation = estimate_activation_bytes(
            hf_config, dtype, config.max_num_batched_tokens, config.max_num_seqs, self.max_model_len
        )
        budget = plan_kv_cache(
            requested,
            weights,
            activation,
            self.runner.kv_bytes_per_block(),
            config.block_size,
            self.max_model_len,
            None,
        )
        logger.info("Available KV cache memory: %s GiB", format_gib(budget.available_bytes))
        if config.num_gpu_blocks_override is None:
            return budget
        logger.info(
            "Overriding num_gpu_blocks=%d with num_gpu_blocks_override=%d",
            budget.num_blocks,
            config.num_gpu_blocks_override,
        )
        return plan_kv_cache(
            budget.requested_bytes,
            weights,
            activation,
            budget.bytes_per_block,
            config.block_size,
            self.max_model_len,
            config.num_gpu_blocks_override,
        )

    # ---- requests ---------------------------------------------------------------------
    def _pack_weights_if_room(self) -> None:
        """Pack the linear weights for oneDNN (servops_kernels.cpu_prepack) where it applies and the host's
        available memory holds the copy PREPACK_MAX_HOST_SHARE times over.

        The copy lives outside the `--device-memory-gib` budget, as vLLM's CPU backend keeps its
        weights outside `VLLM_CPU_KVCACHE_SPACE`: the budget stays weights as loaded + activations
        + KV pool, which `servops advise --device cpu` predicts block for block. Why a share of
        what is free: the copy buys 1.3-2x on batched GEMMs, but a host pushed into swap loses more.
        """
        want, why = cpu_prepack.wanted(self.runner.device, self.runner.dtype)
        if not want:
            logger.debug("Linear weights not packed: %s.", why)
            return
        extra = self.runner.packing_bytes()
        free = host_available_bytes()
        if free is not None and extra * PREPACK_MAX_HOST_SHARE > free:
            logger.info(
                "Linear weights not packed for %s: the copy (%s GiB) is over 1/%d of the host's available "
                "memory (%s GiB); every GEMM runs on the bf16 weights as loaded.",
                why,
                format_gib(extra),
                PREPACK_MAX_HOST_SHARE,
                format_gib(free),
            )
            return
        start = time.monotonic()
        self.runner.pack_weights()
        logger.info(
            "Packed the linear weights for %s: %s GiB of host memory beside the device budget, %.2f s "
            "(%s=0 turns it off).",
            why,
            format_gib(extra),
            time.monotonic() - start,
            cpu_prepack.PREPACK_ENV,
        )

    def add_request(
        self,
        request_id: str,
        prompt_token_ids: list[int],
        params: SamplingParams | None = None,
        arrival_time: float | None = None,
    ) -> None:
        params = params or SamplingParams()
        limit, prompt_len = self.max_model_len, len(prompt_token_ids)
        if request_id in self.requests:
            raise RequestValidationError(f"Request id {request_id} already running.")
        if prompt_len == 0:
            raise RequestValidationError("The decoder prompt cannot be empty")
        if prompt_len >= limit:
            raise RequestValidationError(
                f"This model's maximum context length is {limit} tokens. However, your prompt contains "
                f"{prompt_len} input tokens, which exceeds this limit even without any output tokens. "
                f"Please reduce the length of the input prompt."
            )
        if params.max_tokens is not None and params.max_tokens > limit:
            raise RequestValidationError(
                f"max_tokens={params.max_tokens} cannot be greater than max_model_len={limit}. "
                f"Please request fewer output tokens."
            )
        vocab = self.runner.model.config.vocab_size
        if max(prompt_token_ids) >= vocab or min(prompt_token_ids) < 0:
            raise RequestValidationError(f"Token id {max(prompt_token_ids)} is out of vocabulary")
        request = Request(
            request_id=request_id,
            prompt_token_ids=list(prompt_token_ids),
            sampling_params=params,
            arrival_time=time.monotonic() if arrival_time is None else arrival_time,
            max_tokens=min(params.max_tokens or limit, limit - prompt_len),
            eos_token_id=self.tokenizer.eos_token_id,
        )
        if params.detokenize:
            request.detokenizer = IncrementalDetokenizer(self.tokenizer, request.prompt_token_ids, params)
        if params.seed is not None:
            request.generator = torch.Generator(device=self.runner.device).manual_seed(params.seed)
        self.requests[request_id] = request
        self.scheduler.add_request(request)

    def abort_request(self, request_id: str) -> bool:
        """Free the request's blocks; its final output (finish_reason "abort") comes with the next step."""
        request = self.requests.pop(request_id, None)
        if request is None or request.status.finished:
            return False
        self.scheduler.finish_request(request, RequestStatus.FINISHED_ABORTED)
        self._pending_outputs.append(self._make_output(request, []))
        return True

    def has_unfinished_requests(self) -> bool:
        return self.scheduler.has_unfinished_requests() or bool(self._pending_outputs)

    # ---- the loop ---------------------------------------------------------------------
    def step(self) -> list[RequestOutput]:
        outputs, self._pending_outputs = self._pending_outputs, []
        sched = self.scheduler.schedule()
        if self.on_schedule is not None:
            self.on_schedule(self.scheduler_stats(num_scheduled_tokens=sched.total_num_scheduled_tokens))
        block_ids = {
            s.request.request_id: self.kv_cache_manager.block_ids(s.request.request_id) for s in sched.scheduled
        }
        tokens = iter(self.runner.execute(sched, block_ids))
        now = time.monotonic()
        stats = IterationStats(sched.num_prompt_tokens, 0, sched.num_preemptions, sched.total_num_scheduled_tokens)
        for s in sched.scheduled:
            if not s.samples:
                continue
            request, token = s.request, next(tokens)
            request.append_output_token(token)
            stats.num_generation_tokens += 1
            if request.first_token_time is None:
                request.first_token_time = now
            request.last_token_time = now
            status = self._check_stop(request, token)
            if status is not None:
                self.scheduler.finish_request(request, status)
                self.requests.pop(request.request_id, None)
                stats.num_finished += 1
            outputs.append(self._make_output(request, [token]))
        self._last_iteration = stats
        return outputs

    def _check_stop(self, request: Request, token: int) -> RequestStatus | None:
        params = request.sampling_params
        status: RequestStatus | None = None
        past_min = request.num_output_tokens >= params.min_tokens
        if past_min and not params.ignore_eos and token == request.eos_token_id:
            status = RequestStatus.FINISHED_STOPPED
        elif past_min and token in params.stop_token_ids:
            status, request.stop_reason = RequestStatus.FINISHED_STOPPED, token
        if request.detokenizer is not None and (status is None or params.include_stop_str_in_output):
            matched = request.detokenizer.update(token, check_stop=past_min and status is None)
            if matched is not None:
                status, request.stop_reason = RequestStatus.FINISHED_STOPPED, matched
        if status is None and (
            request.num_output_tokens >= request.max_tokens or request.num_tokens >= self.max_model_len
        ):
            status = RequestStatus.FINISHED_LENGTH
        return status

    def _make_output(self, request: Request, new_token_ids: list[int]) -> RequestOutput:
        finished = request.status.finished
        detok = request.detokenizer
        return RequestOutput(
            request_id=request.request_id,
            prompt_token_ids=request.prompt_token_ids,
            new_token_ids=new_token_ids,
            output_token_ids=request.output_token_ids,
            new_text=detok.take_delta(finished) if detok else "",
            text=detok.text if detok else "",
            finished=finished,
            finish_reason=request.status.value if finished else None,
            stop_reason=request.stop_reason,
            num_cached_tokens=max(request.num_cached_tokens, 0),
            metrics=RequestMetrics(
                request.arrival_time,
                request.first_scheduled_time,
                request.first_token_time,
                request.last_token_time,
                request.finished_time,
                request.num_preemptions,
            ),
        )

    # ---- stats ------------------------------------------------------------------------
    def scheduler_stats(self, num_scheduled_tokens: int = 0) -> SchedulerStats:
        kv = self.kv_cache_manager
        return SchedulerStats(
            num_running_reqs=len(self.scheduler.running),
            num_waiting_reqs=len(self.scheduler.waiting),
            kv_cache_usage=kv.usage(),
            num_preemptions_total=self.scheduler.num_preemptions_total,
            prefix_cache_queries=kv.prefix_cache_queries,
            prefix_cache_hits=kv.prefix_cache_hits,
            num_gpu_blocks=kv.num_blocks,
            num_scheduled_tokens=num_scheduled_tokens,
        )

    def last_iteration_stats(self) -> IterationStats:
        return self._last_iteration

    def num_free_blocks(self) -> int:
        return self.kv_cache_manager.pool.num_free_blocks()

    def num_total_blocks(self) -> int:
        return self.kv_cache_manager.num_blocks

    def reset_prefix_cache(self) -> bool:
        return self.kv_cache_manager.reset_prefix_cache()


def _check_free_device_memory(device: torch.device, requested: int, utilization: float) -> None:
    """vLLM's startup check: the share of the GPU we ask for must be free now."""
    free, total = torch.cuda.mem_get_info(device)
    if free < requested:
        raise EngineStartupError(
            f"Free memory on device {device} ({format_gib(free)}/{format_gib(total)} GiB) on startup is less than "
            f"desired GPU memory utilization ({utilization}, {format_gib(requested)} GiB). Decrease GPU memory "
            f"utilization or reduce GPU memory used by other processes."
        )
