"""Typed log events: what the log collector recognised in vLLM's (or our engine's) log lines.

Rules read events, never raw text (docs/design.md): the collector matches vLLM's wording of every
version (docs/reference.md §2) and fills one `LogEvent` per recognised line. A single
flat model with optional fields keeps collectors and rules simple; `FIELDS_BY_KIND` says which
fields each kind carries, and every event keeps the raw line, its line number and file, so a
finding can quote its evidence exactly.

Units are normalised by the collector: fractions 0–1 (the stats line prints KV usage and hit
rate ×100 with a `%`; store /100), GiB as floats, token counts as ints (commas removed).

Stability contract: kinds and fields are only ever added, never renamed.
"""

from __future__ import annotations

import re
from enum import Enum

from pydantic import BaseModel, Field

from rules.components import VLLM_CONFIG_CLASSES


class LogEventKind(str, Enum):
    """Every log signature the rules understand."""

    VERSION = "version"  # vLLM API server version X / vLLM server version X, serving model M
    NON_DEFAULT_ARGS = "non_default_args"  # non-default args: {...} / args: Namespace(...)
    CHUNKED_PREFILL = "chunked_prefill"  # Chunked prefill is enabled with max_num_batched_tokens=N
    MODEL_LOADING = "model_loading"  # Model loading took X GiB [memory] and Y seconds
    # Filesystem type for checkpoints: NFS. Checkpoint size: X GiB. Available RAM: Y GiB. (0.32's weight loader)
    CHECKPOINT_FILESYSTEM = "checkpoint_filesystem"
    AVAILABLE_KV_MEMORY = "available_kv_memory"  # Available KV cache memory: X GiB (V0: … reserved for KV Cache is X)
    # Extended KV cache to N blocks (X GiB). (0.34's extensible KV cache: the pool measured after warmup, which
    # replaces the earlier "Available KV cache memory" estimate)
    KV_CACHE_EXTENDED = "kv_cache_extended"
    # Disabling the extensible KV cache: <reason>. / Extensible KV cache off: … (0.34: sized by the estimate instead)
    EXTENSIBLE_KV_OFF = "extensible_kv_off"
    MEMORY_BUDGET = "memory_budget"  # V0: total_gpu_memory (T) x gpu_memory_utilization (U) = R GiB; 0.32: its summary
    KV_CACHE_SIZE = "kv_cache_size"  # GPU KV cache size: N tokens[, Maximum concurrency …]
    MAX_CONCURRENCY = "max_concurrency"  # Maximum concurrency for L tokens per request: C x
    V0_GPU_BLOCKS = "v0_gpu_blocks"  # # cuda blocks: N, # CPU blocks: M (V0 only)
    CUDA_GRAPH_MEMORY = "cuda_graph_memory"  # Graph capturing finished in S secs, took X GiB / CUDA graph pool memory
    CUDAGRAPH_PROFILING = "cudagraph_profiling"  # CUDA graph memory profiling is enabled (…) / is disabled (…)
    STATS_LINE = "stats_line"  # Engine 000: Avg prompt throughput … (periodic)
    # Engine 000: Iteration(N): C context requests, … iteration elapsed time: T ms (0.32+, one per engine step,
    # only with --enable-logging-iteration-details): a step's own make-up and time, never an interval's rates
    ITERATION_LINE = "iteration_line"
    SPEC_DECODE_METRICS = "spec_decode_metrics"  # SpecDecoding metrics: … acceptance …
    V0_PREEMPTION_WARNING = "v0_preemption_warning"  # Sequence group … is preempted by PreemptionMode…
    # To serve at least one request with the model(s)'s max seq len …
    MAX_MODEL_LEN_TOO_LARGE = "max_model_len_too_large"
    V0_MAX_SEQ_LEN_TOO_LARGE = "v0_max_seq_len_too_large"  # The model's max seq len (N) is larger than … (M)
    NO_CACHE_BLOCKS = "no_cache_blocks"  # No available memory for the cache blocks
    # Free memory on device (F/T GiB) … (U, R GiB); CPU: Available memory on node …
    FREE_MEMORY_BELOW_REQUESTED = "free_memory_below_requested"
    CUDA_OOM = "cuda_oom"  # CUDA out of memory / Failed to load model - not enough GPU memory / warming up sampler
    MEMORY_PROFILING_ERROR = "memory_profiling_error"  # Error in memory profiling. Initial free memory …
    ENGINE_CORE_FAILED = "engine_core_failed"  # Engine core initialization failed / EngineCore failed to start.
    ENGINE_DEAD = "engine_dead"  # EngineDeadError / AsyncLLM output_handler failed.
    ZERO_PROBABILITIES = "zero_probabilities"  # torch.multinomial: invalid multinomial distribution (sum <= 0), OP-5.64
    NAN_PROBABILITIES = "nan_probabilities"  # torch.multinomial: probability tensor contains either `inf`, `nan` …
    # an answer made of `!` only, as a person quotes it (`vLLM output: !!!!!!!!!!!!!!!!`, allenai/olmo-cookbook#60):
    # token 0 of GPT-2-style vocabularies, what sampling picks from NaN logits; message: the run of `!`
    BANG_ANSWER = "bang_answer"
    FATAL_ERROR = "fatal_error"  # EngineCore encountered a fatal error.
    WORKER_EXCEPTION = "worker_exception"  # WorkerProc hit an exception. (a worker's traceback, before the fatal error)
    RPC_TIMEOUT = "rpc_timeout"  # RPC call to execute_model timed out.
    # vLLM's JIT monitor (vllm/utils/jit_monitor.py, 0.21 on): "CuTeDSL JIT compilation during inference: <kernel>";
    # message: the runtime (Triton, CuTeDSL, TileLang), function: the kernel
    JIT_DURING_INFERENCE = "jit_during_inference"
    SHM_BROADCAST_HANG = "shm_broadcast_hang"  # No available shared memory broadcast block found in N second(s)
    WORKER_DIED = "worker_died"  # Worker proc … died unexpectedly / Engine core proc … died unexpectedly
    NCCL_WATCHDOG_TIMEOUT = "nccl_watchdog_timeout"  # Watchdog caught collective operation timeout …
    NCCL_ERROR = "nccl_error"  # torch.distributed.DistBackendError: NCCL error in: …
    # CUDA error: an illegal memory access was encountered (code_file: the launch's source file when a kernel library's
    # check names it); ROCm's `Memory access fault by GPU node-N … Reason: …` (component "rocm")
    CUDA_KERNEL_FAULT = "cuda_kernel_fault"
    STATS_DISABLED = "stats_disabled"  # AsyncLLM created with api_server_count more than 1; disabling stats …
    REQUEST_TOO_LONG = "request_too_long"  # This model's maximum context length is L tokens. However …
    PROMPT_OVER_LIMIT = "prompt_over_limit"  # V0 scheduler: Input prompt (N tokens) is too long and exceeds limit of L
    AUTO_FIT = "auto_fit"  # Auto-fit max_model_len: reduced from A to B …
    # the engine finished starting: init engine (profile, create kv cache, warmup model) took N s; Core engine
    # process N ready (0.8.5's API server hearing it)
    ENGINE_READY = "engine_ready"
    # V1's compilation monitor (vllm/compilation/monitor.py): "torch.compile takes 2222.52 s in total"; init_seconds:
    # the seconds
    COMPILE_TOTAL = "compile_total"
    # the HTTP server listens: Starting vLLM (API) server [N] on URL (listen_address); uvicorn's startup complete
    SERVER_LISTENING = "server_listening"
    # the weights' progress bar: "Loading safetensors checkpoint shards:  65% Completed | 106/163 [09:36<05:20, …]";
    # message: shards done/total, load_seconds: elapsed, load_expected_s: elapsed + what the bar says is left
    WEIGHT_LOAD_PROGRESS = "weight_load_progress"
    # an API server process of a multi-API-server start (`--api-server-count`, data parallel) dying: Python's
    # multiprocessing prints "Process ApiServer_5:" before its traceback; message: the process
    API_SERVER_PROCESS_FAILED = "api_server_process_failed"
    # the API server's wait for the engine cores' first message running out: "Timed out waiting for engines to send
    # initial message on input socket." (0.9–0.16), "Timed out waiting for engine core processes to start. … Waited
    # 600s (configured by VLLM_ENGINE_READY_TIMEOUT_S) …" (0.17 on); timeout_ms: the wait, where the text says
    ENGINE_READY_TIMEOUT = "engine_ready_timeout"
    PLATFORM_PLUGIN = "platform_plugin"  # Platform plugin metal is activated (an out-of-tree platform runs the model)
    CPU_THREADS_BIND = "cpu_threads_bind"  # CPU backend's OpenMP binding: local_rank=0, core ids=[0, 1]
    # Setting attention block size to N tokens to ensure that attention page size is >= mamba page size.
    ATTENTION_BLOCK_SIZE = "attention_block_size"
    # Around vLLM (advisor/collect/log_patterns/environment.py): the container, CUDA, libraries
    SHM_TOO_SMALL = "shm_too_small"  # Error while creating shared memory segment /dev/shm/… / /dev/shm has only N bytes
    CUDA_FORKED = "cuda_forked"  # Cannot re-initialize CUDA in forked subprocess
    # Python's multiprocessing refusing a daemon process a child (process.py: "daemonic processes are not allowed
    # to have children"): vLLM started its workers or engine core from inside a daemon process
    DAEMON_NO_CHILDREN = "daemon_no_children"
    # libnuma printing a NUMA system call the kernel refused (`get_mempolicy: Operation not permitted`): a container's
    # default seccomp profile and capabilities deny them to vLLM's CPU backend (vllm#24016); function: the call
    NUMA_CALL_DENIED = "numa_call_denied"
    # GNU OpenMP (libgomp) refusing an OpenMP environment variable's value (`libgomp: Invalid value for environment
    # variable OMP_NUM_THREADS`: OMP_NUM_THREADS=0); env_variable: its name
    OMP_ENV_INVALID = "omp_env_invalid"
    # vLLM's FlashAttention backend refusing the version it was to use on this GPU (`Cannot use FA version 2 is not
    # supported due to FA2 is only supported on devices with compute capability >= 8`, also pasted without `Cannot
    # use`); version: the FA version, message: flash-attention's reason
    FA_VERSION_UNSUPPORTED = "fa_version_unsupported"
    # an Ascend MoE dispatch/combine operator's tiling check: the HCCL window its all-to-all needs is larger than
    # HCCL_BUFFSIZE (`HCCL_BUFFSIZE is too SMALL, maxBs = 512, … NEEDED_HCCL_BUFFSIZE(…) = 609MB,
    # HCCL_BUFFSIZE=200MB.`); resource_required and resource_limit: the two sizes in MB, when the line holds them
    HCCL_BUFFER_TOO_SMALL = "hccl_buffer_too_small"
    # AMD's AITER finding no tuned configuration for a GEMM's shape and running its default one (`[aiter] shape is
    # M:72, N:512, K:7168, not found tuned config in /tmp/aiter_configs/a8w8_blockscale_tuned_gemm.csv, will use
    # default config!`): a note on speed, printed per shape; message: the shape, code_file: the table it looked in
    AITER_UNTUNED_SHAPE = "aiter_untuned_shape"
    # vLLM's sleep-mode allocator (csrc/cumem_allocator.cpp: "CUDA Error: %s at %s:%d", from cuGetErrorString) failing
    # to map memory back on wake_up; message: the driver's words ("out of memory", "invalid argument")
    SLEEP_WAKE_FAILED = "sleep_wake_failed"
    # the worker's account of a /sleep (0.7-0.9 worker.py, later gpu_worker.py: "Sleep mode freed 0.00 GiB memory,
    # 63.15 GiB memory is still in use."); sleep_freed_gib and sleep_kept_gib: the two amounts, code_file: the
    # worker's file as the header names it (vllm-ascend's NPU worker is worker_v1.py)
    SLEEP_FREED = "sleep_freed"
    # Ascend's kernel package refusing the device (`the socversion Ascend910B1 of bin package does not match the
    # current device socverison Ascend310P3`); message: the device's SoC, component: the SoC it was built for
    ASCEND_SOC_MISMATCH = "ascend_soc_mismatch"
    # the C/C++ compiler not knowing the CPU instructions vLLM's CPU build asks for: an intrinsic not declared
    # (`‘_mm512_cvtpbh_ps’ was not declared in this scope`), a -march feature or -m option it rejects; message: the
    # intrinsic or the flag
    COMPILER_TOO_OLD = "compiler_too_old"
    WINDOWS_HOST = "windows_host"  # vLLM's package (or its module run) from a Windows Python: C:\…\vllm\…
    CUSTOM_ALL_REDUCE_FAILED = "custom_all_reduce_failed"  # …custom_all_reduce.cuh:310 'invalid argument'
    REMOTE_CODE_REFUSED = "remote_code_refused"  # … requires you to execute the configuration file … trust_remote_code
    NCCL_SYSTEM_ERROR = "nccl_system_error"  # NcclError: NCCL_ERROR_SYSTEM_ERROR: unhandled system error
    # …/vllm/_C.abi3.so: undefined symbol: _ZN3c10… (a compiled extension built against another PyTorch)
    EXTENSION_UNDEFINED_SYMBOL = "extension_undefined_symbol"
    # … has model type `qwen3_5_moe` but Transformers does not recognize this architecture …
    MODEL_TYPE_UNKNOWN = "model_type_unknown"
    # a frame in vllm/model_executor/models/transformers…, or "Using Transformers (modeling) backend."
    TRANSFORMERS_BACKEND = "transformers_backend"
    # a chat template's own refusal: "Conversation roles must alternate user/assistant/…", "System role not supported"
    CHAT_TEMPLATE_REFUSED = "chat_template_refused"
    # vLLM's request log with an empty prompt: "Received request X: prompt: '', params: …"
    EMPTY_PROMPT = "empty_prompt"
    # vLLM's request schema (pydantic, FastAPI's validation) refused a field: "'loc': ('body', 'messages', 2,
    # 'function_call'), 'msg': 'Input should be a valid string'"; request_field: messages[2].function_call
    REQUEST_SCHEMA_REFUSED = "request_schema_refused"
    # pydantic refusing a response vLLM built ("3 validation errors for PoolingResponseData\ndata.list[list[float]]
    # …"): its own output off its schema; message: the response model, request_field: the first field named
    RESPONSE_SCHEMA_FAILED = "response_schema_failed"
    # vLLM dropped request fields its models do not have (0.6.5 on, warning until 0.17, debug later): "The following
    # fields were present in the request but ignored: {'stream_otpions'}"; request_field: the first that misspells a
    # known one, nearest_field: that one (only such fields are kept: other extras are often deliberate)
    REQUEST_FIELD_IGNORED = "request_field_ignored"
    # the openai Python package's create() refusing a keyword before any request is sent ("Completions.create() got
    # an unexpected keyword argument 'top_k'"); request_field: the keyword; component: VLLM_REQUEST_FIELD or
    # REMOVED_REQUEST_FIELD when vLLM's request models (0.32) have it or had it, else None
    CLIENT_KEYWORD_REFUSED = "client_keyword_refused"
    # token ids a request carried, from its JSON body or vLLM's request log: "stop_token_ids": [151645]
    REQUEST_TOKEN_IDS = "request_token_ids"
    # a device kernel's index past its tensor: "index value 151645 exceeds bounds 129280" (Ascend's IndexCheck),
    # torch's "index 151645 is out of bounds for dimension 1 with size 129280"
    INDEX_OUT_OF_BOUNDS = "index_out_of_bounds"
    # a kernel compiled at engine start (FlashInfer's JIT) found no CUDA compiler: "Could not find nvcc and default
    # cuda_home='/usr/local/cuda' doesn't exist"
    JIT_NO_NVCC = "jit_no_nvcc"
    # a kernel compiled at engine start failed to build: torch's `_run_ninja_build` frame, "Ninja build failed",
    # "Error building extension", "CUDA compiler and CUDA toolkit headers are incompatible"
    JIT_BUILD_FAILED = "jit_build_failed"
    # Triton could not build the small C launcher it compiles at a kernel's first use: "Failed to find C compiler",
    # or gcc's "cuda_utils.c:9:10: fatal error: Python.h: No such file or directory"; message: what was missing
    TRITON_BUILD_FAILED = "triton_build_failed"
    # a source build's own tools stopping (no level, no exception: a compiler's or CMake's words): gcc's and clang's
    # missing header, CMake's and PyTorch's failed probe of the GPU architectures, ROCm's offload-arch; message: the
    # words, which OP-7.146 and OP-7.147 read
    SOURCE_BUILD_STOPPED = "source_build_stopped"
    # the loader found no CUDA library of the major version a binary needs: "libcudart.so.12: cannot open shared
    # object file"; component: the library, version: its major version
    CUDA_LIBRARY_MISSING = "cuda_library_missing"
    # what PyTorch was built with, from `python collect_env.py` ("CUDA used to build PyTorch: 11.8") or its version
    # suffix ("2.4.0+cu118"); version: the CUDA release
    TORCH_CUDA_BUILD = "torch_cuda_build"
    # the NVIDIA driver older than the CUDA release a build needs: torch's "The NVIDIA driver on your system is too old
    # (found version 12040)" (version: the CUDA release the driver supports, "12.4"), CUDA's "CUDA driver version is
    # insufficient for CUDA runtime version" (error 35), the NVIDIA container runtime's "requirement error: unsatisfied
    # condition: cuda>=12.8" (cuda_required: the CUDA release the image declares); message: the words
    DRIVER_TOO_OLD = "driver_too_old"
    # PyTorch without CUDA: torch's "Torch not compiled with CUDA enabled" (message "assert"), and beside it what says
    # which build is installed: a CPU build's version ("PyTorch version: 2.5.1+cpu", `pip list`'s "torch 2.5.1+cpu";
    # message "cpu_build", version: it) or another accelerator's PyTorch package (torch_npu, torch_xla; message
    # "platform", component: the package)
    TORCH_WITHOUT_CUDA = "torch_without_cuda"
    # torch.compile failing where vLLM compiles the model: Dynamo's BackendCompilerFailed, Unsupported or internal
    # error, Inductor's InductorError or LoweringException (component "dynamo", "backend" or "inductor"), or vLLM's own
    # words for a broken compile cache ("failed to get the hash of the compiled graph", "a previous compilation failed,
    # leading to a corrupted compilation artifact"; component "cache"); message: the error's words
    TORCH_COMPILE_FAILED = "torch_compile_failed"
    # Triton refusing to launch a kernel that needs more of a per-block resource than the GPU has: "out of resource:
    # shared memory, Required: 98304, Hardware limit: 65536" (message: the resource; resource_required and
    # resource_limit: the numbers); component, function and code_file: the deepest vLLM frame of its traceback
    TRITON_OUT_OF_RESOURCES = "triton_out_of_resources"
    # torchvision's compiled ops not loaded in this torch: torch's "operator torchvision::nms does not exist"
    # (message "op", component: the operator), the dispatcher's "Could not run 'torchvision::nms' with arguments from
    # the 'CUDA' backend" (a torchvision without CUDA kernels: message "cpu_build"), torchvision's "Couldn't load custom
    # C++ ops" (message "ops"), or its
    # check of the two builds' CUDA ("PyTorch has CUDA Version=13.0 and torchvision has CUDA Version=12.8": message
    # "cuda", version: torchvision's CUDA, installed: PyTorch's)
    TORCHVISION_MISMATCH = "torchvision_mismatch"
    # FlashAttention's own checks (csrc/flash_attn/flash_api.cpp, in flash-attn and vLLM's fork): "FlashAttention
    # only supports Ampere GPUs or newer." (message "gpu") and "FlashAttention only support fp16 and bf16 data type"
    # (message "dtype")
    FLASH_ATTN_OLD_GPU = "flash_attn_old_gpu"
    # the model vLLM was given is not a model it can find or read (model: the path or id as the words quote it):
    # vLLM's "Invalid repository ID or local directory specified: 'X'" (message "vllm"), huggingface_hub's "Repo id
    # must be in the form 'repo_name' or 'namespace/repo_name': 'X'" (a path taken for a Hub id: "repo_id"),
    # transformers' "X does not appear to have a file named F" ("no_file"; component: F) and "Unrecognized model in
    # X. Should have a `model_type` key in its config.json" ("no_model_type"), "Can't load tokenizer for 'X'"
    # ("no_tokenizer")
    MODEL_NOT_FOUND = "model_not_found"
    # the host refusing an allocation (not killing for one): PyTorch's CPU allocator ("DefaultCPUAllocator: can't
    # allocate memory: you tried to allocate N bytes"; memory_gib: N in GiB) or the OS's ENOMEM ("[Errno 12] Cannot
    # allocate memory"); message: the words
    HOST_ALLOC_REFUSED = "host_alloc_refused"
    # pip finding nothing to install for a requirement: "Could not find a version that satisfies the requirement R
    # (from versions: …)" and "No matching distribution found for R" (message: R; component: its package; version: the
    # version it pins, if any; versions_offered: pip's list, "none" when the index offers nothing installable here)
    PIP_NO_DISTRIBUTION = "pip_no_distribution"
    # transformers refusing a config name vLLM (or a plugin) registers because it now defines that name itself:
    # "'aimv2' is already used by a Transformers config, pick another name." (model: the name)
    TRANSFORMERS_NAME_TAKEN = "transformers_name_taken"
    # the tokenizers library failing to read a section of tokenizer.json: "data did not match any variant of untagged
    # enum ModelWrapper at line 1251003 column 3" (component: the section's type, ModelWrapper for the model's
    # vocabulary and merges)
    TOKENIZER_FILE_UNREADABLE = "tokenizer_file_unreadable"
    # a line of an Alertmanager notification of servops's alerts, as its default templates write it: the subject
    # ("[FIRING:1] VllmKvCacheFull (10.0.0.5:8000 OP-5.2 warning)": label "subject", message the label values,
    # alert_status firing or resolved), one label or annotation of its body (" - rule = OP-5.2": label its name,
    # message its value), its "Source:" link to Prometheus (label "source", message Prometheus' address), a chat
    # template's "Alerts Resolved:" heading (label "section", alert_status), or one of the pack's alert names on any
    # other line (label "alertname"); AL-1 puts an alert's lines back together
    ALERT_NOTICE = "alert_notice"
    # the loader finding no system (not CUDA) library a package's binary needs: "libGL.so.1: cannot open shared
    # object file" (component: the library)
    SYSTEM_LIBRARY_MISSING = "system_library_missing"
    # transformers' check of a remote-code module's imports (dynamic_module_utils.check_imports): "This modeling file
    # requires the following packages that were not found in your environment: flash_attn. Run `pip install …`"
    # (message: the packages, as it lists them)
    REMOTE_CODE_IMPORTS = "remote_code_imports"
    # pip building a package from its source and failing: "Failed building wheel for vllm" (pip 26's wording), older
    # pips' "Could not build wheels for vllm" (component: the package)
    PIP_BUILD_FAILED = "pip_build_failed"
    # vLLM's setup.py finding no target to build for, `RuntimeError: Unknown runtime environment` (get_vllm_version):
    # VLLM_TARGET_DEVICE says cuda (its default) while the PyTorch the build runs with has neither CUDA nor ROCm, or
    # names a target that setup.py does not know
    VLLM_BUILD_NO_DEVICE = "vllm_build_no_device"
    # a CUDA runtime error no other wording names, as torch prints cudaGetErrorString's words after "CUDA error: "
    # (out of memory, device-side assert triggered, the launch timed out and was terminated, CUDA-capable device(s)
    # is/are busy or unavailable, invalid device ordinal, operation not permitted when stream is capturing), cuBLAS'
    # CUBLAS_STATUS_ALLOC_FAILED, and a kernel's failed assertion line (`Indexing.cu:…: Assertion `srcIndex <
    # srcSelectDimSize` failed.`); message: oom, assert, launch_timeout, busy, invalid_device, capture
    CUDA_RUNTIME_ERROR = "cuda_runtime_error"
    # pip's list of the conflicts an install left ("vllm 0.6.3 requires torch==2.4.0, but you have torch 2.5.1 which is
    # incompatible.", "… requires nvidia-ml-py>=12.560.30, which is not installed.", the older "… has requirement …,
    # but you'll have …"); component: the package that requires, version: its version, message: the requirement
    # (without its environment marker), installed: the version installed (None when none is)
    PACKAGE_CONFLICT = "package_conflict"
    # the dynamic loader finding a system library older than a binary was built against: "/lib/x86_64-linux-gnu/
    # libc.so.6: version `GLIBC_2.32' not found (required by …/vllm/_C.abi3.so)"; component: glibc or libstdc++
    # (from the symbol version's name), version: the version asked for, message: the binary that asked
    SYSTEM_LIBRARY_TOO_OLD = "system_library_too_old"
    # FlashInfer's check that its prebuilt-kernel packages are its own release ("flashinfer-cubin version (0.6.13) does
    # not match flashinfer version (0.6.14)."); component: the package, message: its version, version: flashinfer's
    FLASHINFER_VERSION_SKEW = "flashinfer_version_skew"
    # a gateway's answer, not vLLM's (vLLM's server never answers 502 or 504): "Error: 502", "504 Gateway Time-out",
    # nginx's "upstream timed out"; component: the gateway its log format names (nginx, ingress-nginx), timeout_ms:
    # how long the request ran there (ingress-nginx's access log)
    GATEWAY_ERROR = "gateway_error"
    # a URL of the local host the text shows (http://localhost:8000/v1/…): the client meant a server beside it
    LOCAL_ENDPOINT = "local_endpoint"
    # a client's words for a connection that never reached a server, naming where it went: curl's "(7) Failed to
    # connect to localhost port 8000", urllib3's "HTTPConnectionPool(host=…, port=…): Max retries exceeded",
    # aiohttp's "Cannot connect to host", Node's "connect ECONNREFUSED", Go's "dial tcp …: connect:", reqwest's
    # "error sending request for url (…)"; component: the client library, address: host:port, url_path: the route
    # asked when the words name it, connect_result: refused, timeout, unresolved, unreachable or None when they do
    # not say
    SERVER_UNREACHABLE = "server_unreachable"
    # a client that reached the server and gave up waiting for its answer: the OpenAI SDK's "APITimeoutError:
    # Request timed out.", httpx's "ReadTimeout", urllib3's "HTTPConnectionPool(host=…, port=…): Read timed out.
    # (read timeout=60)"; component: the client library, address and timeout_ms when its words name them
    CLIENT_TIMEOUT = "client_timeout"
    # HTTP met something that does not speak it: uvicorn's "Invalid HTTP request received." in vLLM's log (component
    # "server"), or a client's words for an answer that is not HTTP, curl's "Received HTTP/0.9 when not allowed",
    # h11's "illegal status line" (component: the client); message: the words
    PROTOCOL_MISMATCH = "protocol_mismatch"
    # vLLM's request lifecycle lines: "Added request <id>." and, for one whose client went away, "Aborted request
    # <id>." (V0) or "Aborted request(s) <id>,<id>." (V1); message: the id(s), comma-separated
    REQUEST_ADDED = "request_added"
    # what every exiting process prints, whatever stopped it: PyTorch's "destroy_process_group() was not called
    # before program exit", the resource tracker's "There appear to be N leaked shared_memory objects to clean up at
    # shutdown", "Exception ignored in: <function … __del__ …>"; message: which
    EXIT_NOISE = "exit_noise"
    # vLLM 0.32's shutdown lines (v1/engine/core.py): "[shutdown] EngineCore: trigger received signal=SIGTERM"
    # (component: the signal), "start mode=abort timeout=0s" (message: the mode, timeout_ms), "aborting in-flight
    # requests count=N" (abort, in_flight), "draining in-flight requests count=N timeout=Ts" (drain, in_flight,
    # timeout_ms)
    SERVER_SHUTDOWN = "server_shutdown"
    REQUEST_ABORTED = "request_aborted"
    # the server closed a client's connection without answering: curl's "(52) Empty reply from server", http.client's
    # "Remote end closed connection without response" (requests), httpx's "Server disconnected without sending a
    # response", aiohttp's "ServerDisconnectedError"; component: the client library
    SERVER_DISCONNECTED = "server_disconnected"
    # aiohttp's InvalidURL naming an address without a scheme ("InvalidURL: 172.25.239.45:33080"): a proxy
    # variable written as host:port, read by the client session vLLM fetches media with (trust_env)
    PROXY_URL_INVALID = "proxy_url_invalid"
    # an orchestrator's health check gave up on the server: Ray Serve's "Didn't receive health check response for
    # replica … after 10.0s, marking it unhealthy", Kubernetes' "Liveness probe failed"
    HEALTH_CHECK_FAILED = "health_check_failed"
    # CUDA error 803: "system has unsupported display driver / cuda driver combination"
    CUDA_DRIVER_MISMATCH = "cuda_driver_mismatch"
    # the host's NVIDIA driver libraries and its loaded kernel module of different versions (most often a driver
    # upgraded without a reboot): NVML's "Failed to initialize NVML: Driver/library version mismatch" (nvidia-smi;
    # nvidia-container-cli's "nvml error: driver/library version mismatch"), pynvml's "RM has detected an NVML/RM
    # version mismatch" (component: nvml); the kernel's "NVRM: API mismatch: the client has the version X, but" and
    # "NVRM: this kernel module has the version Y." (component: kernel; version X, kernel_module_version Y); the
    # versions printed beside them, nvidia-smi's "NVML library version: X", /proc/driver/nvidia/version's "NVRM
    # version: NVIDIA UNIX … Kernel Module  Y" and the kernel's "NVRM: loading NVIDIA UNIX … Kernel Module  Y"
    # (component: versions), which say nothing wrong alone
    NVIDIA_DRIVER_MISMATCH = "nvidia_driver_mismatch"
    # a Ray actor died: the caller's `RayActorError: The actor died unexpectedly before finishing this task.` with
    # its class_name, actor_id and pid lines (actor_class, actor_id, pid), and the GCS's reason on the next line
    # (or joined to it): "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR
    # Worker exit detail: …", "… its owner has died …", "… its node has died …", "… it was killed by `ray.kill`";
    # component: worker, owner, node, killed or unreferenced; exit_type: Ray's; message: its exit detail
    RAY_ACTOR_DIED = "ray_actor_died"
    # Ray's header of an exception raised inside a task or an actor's method (`ray.exceptions.RayTaskError(
    # ModuleNotFoundError): ray::WorkerDict.actor_rollout_init_model() (pid=…)`), whose message and traceback follow
    # it; message: the exception's class, component: the task or method
    RAY_TASK_RAISED = "ray_task_raised"
    # Python's multiprocessing refusing to start a process from a module being imported (spawn's bootstrap check:
    # "An attempt has been made to start a new process before the current process has finished its bootstrapping
    # phase")
    SPAWN_BEFORE_MAIN = "spawn_before_main"
    # Python's logging failing to format a record ("--- Logging error ---" and its "Message: '…%d…'" line): a log
    # statement's bug, not the program's; message: the format string
    LOGGING_ERROR = "logging_error"
    # Ray's GCS giving up on a node (its health check, every driver's warning): "The node with node id: … and
    # address: 10.0.0.3 and node name: … has been marked dead because the detector has missed too many heartbeats
    # from it."; address: the node's, message: its name
    RAY_NODE_DEAD = "ray_node_dead"
    # Ray Serve waiting to place a deployment's replica: "Deployment 'X' … has 1 replicas that have taken more than
    # 30s to be scheduled. … Resources required for each replica: [{"CPU": 1.0, "GPU": 1.0}], total resources
    # available: {…}" (message: the deployment; gpus_required: a replica's GPUs over its bundles; gpus_available:
    # the GPUs Ray has free, 0 when it lists none; component: the other resources it lacks, joined)
    RAY_REPLICA_UNPLACED = "ray_replica_unplaced"
    # a weights file that is not a whole safetensors file, in safetensors' words ("Error while deserializing header:
    # HeaderTooLarge", newer releases "header too large"; HeaderTooSmall; MetadataIncompleteBuffer / "incomplete
    # metadata, file not fully covered"; InvalidHeaderDeserialization / "invalid JSON in header"); message:
    # not_safetensors (text where the data should be: a Git LFS pointer, an HTML page), empty, truncated or corrupt
    WEIGHTS_FILE_DAMAGED = "weights_file_damaged"
    # code built for other GPUs: CUDA's "no kernel image is available for execution on the device"; torch's warning
    # "<GPU> with CUDA capability sm_<cc> is not compatible with the current PyTorch installation" (component: the
    # GPU, version: its sm_<cc>) and its next line "The current PyTorch install supports CUDA capabilities sm_50 …"
    # (component: PyTorch, message: the capabilities); vLLM 0.1-0.3's build refusing a GPU, "GPUs with compute
    # capability below 7.0 are not supported." (component: VLLM_BUILD, message: the floor)
    GPU_ARCH_UNSUPPORTED = "gpu_arch_unsupported"
    # the process out of file descriptors: "OSError: [Errno 24] Too many open files" (EMFILE), and vLLM's start-up
    # warning that it could not raise its own limit ("Found ulimit of 1024 and failed to automatically increase …":
    # fd_limit, the soft limit it found)
    FD_LIMIT = "fd_limit"
    # the model's files neither in the local cache nor fetchable: huggingface_hub's "… and outgoing traffic has been
    # disabled" (message: offline, HF_HUB_OFFLINE or local_files_only) or transformers' "We couldn't connect to
    # 'https://huggingface.co' to load …, and couldn't find … in the cached files" (message: unreachable)
    HUB_NOT_CACHED = "hub_not_cached"
    # VLLM_USE_MODELSCOPE turned on where the text shows it set (advisor/collect/env_switches.py: `export
    # VLLM_USE_MODELSCOPE=True`, `-e VLLM_USE_MODELSCOPE=true`): vLLM is to fetch the model from ModelScope, not the
    # Hugging Face Hub; message: the assignment
    MODELSCOPE_ON = "modelscope_on"
    # pynvml's NVMLError_NotSupported in vLLM's processes (`vllm.third_party.pynvml.NVMLError_NotSupported: Not
    # Supported`): NVML refused a call it does not support where that process runs; message: the line's error
    NVML_NOT_SUPPORTED = "nvml_not_supported"
    # the Hub's TLS certificate not trusted where the client runs: "[SSL: CERTIFICATE_VERIFY_FAILED] certificate
    # verify failed: self-signed certificate in certificate chain" on a line naming huggingface.co (or hf.co,
    # hf-mirror.com); message: OpenSSL's reason
    HUB_TLS_UNTRUSTED = "hub_tls_untrusted"
    # the Hub answering a download with a rate limit or an error of its own: "429 Client Error: Too Many Requests for
    # url: https://huggingface.co/…" (huggingface_hub 1.2: "429 Too Many Requests for url: …"), "504 Server Error:
    # Gateway Time-out for url: https://huggingface.co/…"; status: the HTTP status
    HUB_UNAVAILABLE = "hub_unavailable"
    # a port to listen on already taken (EADDRINUSE): the API server's bind (`OSError: [Errno 98] Address already in
    # use`, uvicorn's `[Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in
    # use`; component None) or torch.distributed's store (`… name: EADDRINUSE …`; component torch.distributed);
    # address: host:port when the words name it
    PORT_IN_USE = "port_in_use"
    # a bind to an IP no interface of the process's machine or container holds (EADDRNOTAVAIL): pyzmq's `ZMQError:
    # Cannot assign requested address (addr='tcp://10.27.91.102:13345')`, Python's `[Errno 99] error while attempting
    # to bind on address ('10.0.0.5', 8000): cannot assign requested address`; and pyzmq's `No such device` for an
    # IPv6 address written without brackets; component zmq or None; address host:port
    BIND_ADDRESS_NOT_LOCAL = "bind_address_not_local"
    # vLLM's platform detection at VLLM_LOGGING_LEVEL=DEBUG (vllm/platforms/__init__.py, 0.7 on): `ROCm platform is not
    # available because: No module named 'amdsmi'` (component: the platform, message: the reason), and its verdict,
    # `Confirmed ROCm platform is available.` / `Automatically detected platform rocm.` (PLATFORM_DETECTED, component:
    # the platform) or `No platform detected, vLLM is running on UnspecifiedPlatform` (component None)
    PLATFORM_UNAVAILABLE = "platform_unavailable"
    PLATFORM_DETECTED = "platform_detected"
    # transformers' tokenizer warning (tokenization_utils_base.py, _eventual_warn_about_too_long_sequence): `Token
    # indices sequence length is longer than the specified maximum sequence length for this model (39682 > 16384)`;
    # prompt_tokens: the sequence's length, prompt_limit: the tokenizer's model_max_length
    TOKENIZER_LENGTH_WARNING = "tokenizer_length_warning"
    # Python's `NameError: name 'LLM' is not defined` for one of vLLM's top-level names (vllm/__init__.py's __all__):
    # a caller's guarded `from vllm import …` failed and was swallowed; message: the name
    VLLM_NAME_UNBOUND = "vllm_name_unbound"
    # a framework reporting vLLM as not installed after its own guarded import of it failed: Ray Serve LLM's
    # "ImportError: Neither vLLM nor SGLang is installed. At least one is required for Ray Serve LLM protocol
    # models."; message: the framework
    VLLM_IMPORT_HIDDEN = "vllm_import_hidden"
    # XLA on a TPU out of high-bandwidth memory (HBM): loading a compiled program ("Error loading program 'jit_x':
    # Attempting to reserve 6.14G at the bottom of memory. That was not possible. There are 3.19G free"), allocating a
    # buffer ("Error allocating device buffer: Attempting to allocate 8.00G. …"), or compiling a program larger than
    # the chip ("Ran out of memory in memory space hbm. Used 21.95G of 15.48G hbm."); message: the words,
    # component: the program, requested_gib: what it asked for (or used), free_gib: what was free, total_gib: the
    # chip's HBM when XLA says
    TPU_HBM_EXHAUSTED = "tpu_hbm_exhausted"
    # xFormers finding no attention kernel for the inputs (ops/fmha/dispatch.py: "No operator found for
    # `memory_efficient_attention_forward` with inputs:"), and the reasons it lists under each kernel; message: which
    # line ("no_operator", "no_cuda_build", "dtype", "capability"), component: the dtype or the GPU's capability
    XFORMERS_NO_KERNEL = "xformers_no_kernel"
    # PyTorch's dispatcher refusing a call to one of vLLM's compiled ops (`_moe_C::topk_softmax() expected at most 6
    # argument(s) but received 7 argument(s). Declaration: …`, `… is missing value for argument 'x'`, `No such
    # operator _C::x`); component: the op, message: what the dispatcher said of the call
    VLLM_OP_SCHEMA_MISMATCH = "vllm_op_schema_mismatch"
    # vLLM's KV-cache planner padding a layer group of a hybrid model (v1/core/kv_cache_utils.py 0.9-0.32,
    # kv_cache_planning.py 0.33 on): "Add 6 padding layers, may waste at most 60.00% KV cache memory"; padding_layers
    # and waste_share (0-1, of that kind's layers)
    KV_PADDING_LAYERS = "kv_padding_layers"
    # "Overriding num_gpu_blocks=P with num_gpu_blocks_override=O" (V0's llm_engine.py, V1's kv_cache_utils.py, INFO):
    # num_gpu_blocks: the blocks the memory profile left room for; num_gpu_blocks_override: what
    # --num-gpu-blocks-override makes the KV cache hold instead
    KV_BLOCKS_OVERRIDDEN = "kv_blocks_overridden"
    # TRL's vLLM client (trl/extras/vllm_client.py) polling its server: "Server is not up yet. Retrying in 2.0
    # seconds...", and its ConnectionError "The vLLM server can't be reached at <url> after <n> seconds"; message: the
    # URL, when the line names it
    TRL_SERVER_UNREACHED = "trl_server_unreached"
    # TRL 0.14-0.15's GRPO trainer refusing the GPU it was to put vLLM on (trl/trainer/grpo_trainer.py): "The requested
    # device for vllm (cuda:1) is not available. … In your case: `--num_processes 0`."; device: the device it asked
    # for, message: the --num_processes value TRL suggests
    TRL_VLLM_DEVICE = "trl_vllm_device"
    # TRL's command line without its `vllm-serve` command (TRL before 0.16 had none): "TRL CLI: error: argument
    # command: invalid choice: 'vllm-serve' (choose from 'chat', 'dpo', …)"; message: the commands it listed
    TRL_NO_VLLM_SERVE = "trl_no_vllm_serve"
    # a framework's in-process vLLM wrapper in an environment without vLLM: LiteLLM's `vllm/` route ("VLLMError: No
    # module named 'vllm'", "VLLMException - No module named 'vllm'"), LangChain's VLLM and LlamaIndex's Vllm classes
    # ("Could not import vllm python package. Please install it with `pip install vllm`."); component: "litellm" or
    # "wrapper class"
    VLLM_IN_PROCESS_MISSING = "vllm_in_process_missing"
    # Unsloth's GRPO trainer reaching for the vLLM engine its model loader attaches (unsloth_compiled_cache's
    # UnslothGRPOTrainer: `self.llm = model.vllm_engine`): "'Qwen2ForCausalLM' object has no attribute 'vllm_engine'";
    # model: the model class named
    UNSLOTH_NO_VLLM_ENGINE = "unsloth_no_vllm_engine"
    # a program that starts vLLM for the user and waits for it: Lemonade's "Waiting for vllm-server to be ready
    # (timeout: 0s)..." (its "(WrappedServer) vllm-server failed to start within timeout" is an UNPLACED_LINE),
    # InstructLab's "vLLM failed to start.  Retry with --enable-serving-output to learn more about the failure.";
    # component: "lemonade" or "instructlab", message: "waiting" or "failed", engine: the server it started,
    # timeout_ms: the wait it announced
    LAUNCHER_GAVE_UP = "launcher_gave_up"
    # NVIDIA Dynamo's runtime without its control plane: "Failed to connect to etcd server with config ClientOptions {
    # etcd_url: ["http://localhost:2379"], …" (dynamo_runtime), NATS JetStream's "nats: ServiceUnavailableError" and
    # NATS' "nats: no servers available for connection"; component: "etcd", "jetstream" or "nats", address: the URL
    DYNAMO_CONTROL_PLANE = "dynamo_control_plane"
    # AMD's AITER kernel library (vLLM on ROCm with VLLM_ROCM_USE_AITER=1) refusing the GPU ("One of GPU archs of
    # ['gfx1201'] is invalid or not supported") or a shape its Composable Kernel instances lack ("ck_moe_stage2 …
    # device_gemm does not support this GEMM problem", "[aiter] Fmoe tuning not support for …"); message: the words,
    # component: "arch" or "shape", device: the gfx target refused, function: "moe" for a fused-MoE kernel
    AITER_REFUSED = "aiter_refused"
    # a device's collectives refusing the launch's setup: Intel Gaudi's HPU graphs capturing a collective without lazy
    # collectives ("collective nonSFG is not supported during hpu graph capturing"), Ascend's HCCL unable to listen on
    # its port ("[HcclSocket][Listen] … listen on ip[…] and specific port[16666] fail"), torch's CUDA IPC on a kernel
    # without pidfd_open under expandable segments; message: the words, component: "hpu", "hccl" or "pidfd",
    # address: the ip:port HCCL could not listen on
    COLLECTIVE_SETUP = "collective_setup"
    # PyTorch's XPU backend unable to say how much device memory is free, which vLLM's XPU worker asks before sizing
    # the KV cache: "The device (Intel(R) Graphics [0x674c]) doesn't support querying the available free memory.",
    # SYCL's "The device does not have the ext_intel_free_memory aspect"; device: the device it names
    XPU_FREE_MEMORY_UNKNOWN = "xpu_free_memory_unknown"
    # torch_npu and CANN on an Ascend NPU refusing an ACL call: "NPU function error: <call>, error code is <n>",
    # "ERR00100 PTA call acl api failed", "build op model failed, result = <n>", and CANN's op compiler failing to
    # start (SetPrecisionMode, GEInitialize failed); message: the words, error_code: its number, component: "compiler"
    # for the op compiler's start
    ASCEND_ACL_FAILED = "ascend_acl_failed"
    # AWS Neuron (Inferentia, Trainium): its runtime refusing a call ("nrt_tensor_allocate status=4 message=\"Allocation
    # Failure\"", "Failure: NRT_RESOURCE in nrt_load()"), its driver out of device memory ("TDRV:dmem_alloc_internal
    # Failed to alloc DEVICE memory"), or its compiler failing ("Failed compilation with ['neuronx-cc', …",
    # "neuronx-cc failed with -9"); message: the words, error_code: the runtime's status number or the compiler's exit
    # status, component: "runtime", "device memory" or "compiler"
    NEURON_FAILED = "neuron_failed"
    # Triton's compiler aborting on a tensor-core layout conversion before Ampere (lib/Analysis/Allocation.cpp:
    # "Unexpected mma -> mma layout conversion", "mma -> mma layout conversion is only supported on Ampere");
    # message: its words
    TRITON_MMA_LAYOUT = "triton_mma_layout"
    # Triton's compiler failing on a kernel, in LLVM's words (`LLVM ERROR: Cannot select: intrinsic
    # %llvm.amdgcn.fdot2.bf16.bf16`, `LLVM ERROR: Fatal pipeliner error`), its pass manager's (`PassManager::run
    # failed`), or an MLIR diagnostic on a Triton op with the kernel's Python line (`…/kernel_utils.py:73:16: error:
    # 'tt.elementwise_inline_asm' op …`), and the module it dumps (`tt.func public @_lora_expand_kernel(`);
    # message: the words, component: the instruction LLVM could not select, function: the kernel, code_file: its file
    TRITON_COMPILE_ABORT = "triton_compile_abort"
    # the GPU itself failing: the NVIDIA driver's Xid in the kernel log ("NVRM: Xid (PCI:0000:3b:00): 79, pid=…,
    # GPU has fallen off the bus."), or CUDA's error for a hardware fault ("CUDA error: uncorrectable ECC error
    # encountered"); xid: the Xid's number (None for CUDA's words), device: the PCI address, message: the words
    GPU_FAULT = "gpu_fault"
    # a write the file system refused for space (ENOSPC): "OSError: [Errno 28] No space left on device:
    # '/root/.cache/huggingface/hub/…'"; message: the path (never /dev/shm's, which OP-7.1 and OP-7.23 read)
    DISK_FULL = "disk_full"
    # vLLM's benchmark result, pasted: `[Before: ]Throughput: X requests/s, Y [total ]tokens/s`
    BENCHMARK_THROUGHPUT = "benchmark_throughput"
    # one figure of a serving benchmark's run or result block (`vllm bench serve`, benchmarks/benchmark_serving.py):
    # "Mean TTFT (ms):  98234.12", "Benchmark duration (s):  210.34", "Traffic request rate: inf" (label: the
    # figure's name as printed, message: its value as printed, figure: the number, None for inf or None)
    BENCHMARK_FIGURE = "benchmark_figure"
    # one refresh of the offline `LLM.generate` progress bar (vllm/entrypoints/common/offline.py, 0.32; the same
    # words since 0.2): "Processed prompts:  33%|███▍ | 769/2343 [00:07<00:12, 124.65it/s, est. speed input: 3431.00
    # toks/s, output: 1062.00 toks/s]" (prompts_done/prompts_total, elapsed_s, requests_per_s: tqdm's rate; the
    # est. speed in prompt_throughput_tps and generation_throughput_tps, in later releases)
    OFFLINE_PROGRESS = "offline_progress"
    # a profiler's row, pasted: `py-spy top`'s "88.00%  88.00%  61.00s  61.44s  apply_penalties (vllm/…/utils.py)"
    PROFILE_HOTSPOT = "profile_hotspot"
    # V0's attention selector (0.4-0.7) gave up FlashAttention-2 for XFormers: "Cannot use FlashAttention-2 backend
    # because the vllm_flash_attn package is not found"; message: the reason ("for FP8 KV cache", "due to …")
    ATTENTION_FALLBACK = "attention_fallback"
    # the attention backend vLLM chose, by VLLM_ATTENTION_BACKEND's name ("Using FlashInfer backend on V1 engine.")
    ATTENTION_BACKEND = "attention_backend"
    # the Hugging Face Hub refused a model's files (huggingface_hub's or requests' words): "403 Client Error: Forbidden
    # for url: https://huggingface.co/<repo>/resolve/main/config.json", "Access to model <repo> is restricted …";
    # message: why ("no_access", "no_token", "fine_grained", "bad_token", "not_found", "gated"), model: the repo
    HUB_ACCESS_REFUSED = "hub_access_refused"
    # the Hub answered 404 for one file of a repository: "404 Client Error: Not Found for url: https://huggingface.co/
    # <repo>/resolve/<revision>/<file>"; message: the file, model: the repo, label: the revision, component: "entry"
    # (huggingface_hub: the file is missing), "revision" (the revision is) or "status" (requests: the repository may be)
    HUB_FILE_MISSING = "hub_file_missing"
    # Python's pwd module has no user for the process's uid (OpenShift's random UIDs, `docker run --user N`):
    # "KeyError: 'getpwuid(): uid not found: 1000910000'"; message: the uid
    UID_WITHOUT_USER = "uid_without_user"
    PASSWD_LOCKED = "passwd_locked"  # `useradd: cannot lock /etc/passwd; try again later` (a start script's)
    # a cache directory the process may not write: "PermissionError: [Errno 13] Permission denied: '/app/.cache/vllm'"
    # or a read-only file system (Errno 30); message: the path, component: "read_only" for Errno 30
    CACHE_NOT_WRITABLE = "cache_not_writable"
    # any other path on a read-only file system: "OSError: [Errno 30] Read-only file system: '/scratch/…/env'" (a
    # container's image or a volume mounted read-only); message: the path
    PATH_READ_ONLY = "path_read_only"
    # a shared library the loader found and may not open: "python3: error while loading shared libraries: /root/…/
    # libpython3.12.so.1.0: cannot open shared object file: Permission denied"; message: the library's path
    LIBRARY_UNREADABLE = "library_unreadable"
    # NumPy 2 importing a compiled module built against NumPy 1: "A module that was compiled using NumPy 1.x cannot be
    # run in NumPy 2.0.0 as it may crash." (numpy/core/_multiarray_umath.py's warning); message: the NumPy it names
    NUMPY_ABI_MISMATCH = "numpy_abi_mismatch"
    # argparse refusing vLLM's command line: "vllm: error: unrecognized arguments: --enable-metrics"; message: the
    # arguments, component: the first of them vLLM's command line does not take (a program when the arguments are
    # a command), nearest_flag: the flag it misspells. Ray Serve LLM's refusal of an engine_kwargs key ("Unknown
    # engine argument: task") too: message its words, component the key as a flag (the same engine argument)
    ARGS_UNRECOGNIZED = "args_unrecognized"
    # argparse stopping for arguments it requires: "vllm serve: error: the following arguments are required:
    # model_tag"; message: the arguments it names, component: the program (its prog, before ": error:")
    ARGS_REQUIRED = "args_required"
    # argparse refusing an abbreviation several flags start with: "vllm serve: error: ambiguous option: --model could
    # match --model-impl, --model-loader-extra-config"; message: the option given, component: the flags it could be
    ARGS_AMBIGUOUS = "args_ambiguous"
    # the program a container or a shell was told to start is not on its PATH: Go's os/exec words as runc prints them
    # (`exec: "vllm": executable file not found in $PATH`, Docker's and the kubelet's StartError), bash's `vllm: command
    # not found`, dash's `vllm: not found`, zsh's `command not found: vllm`; message: the program, component: who
    # said it (the container runtime, the shell)
    COMMAND_NOT_FOUND = "command_not_found"
    # vLLM's kernel dispatch finding no kernel compiled or selectable for the GPU's compute capability: "No compiled
    # cutlass_scaled_mm for CUDA device capability: 120. Required capability: 90 or 100" (csrc's scaled_mm entry),
    # "FlashInfer-CUTLASS MoE kernel does not support current device sm_120"; message: the kernel, version: "sm_120",
    # component: COMPILED_KERNEL when the build holds no compiled variant (the first words), else None
    KERNEL_NOT_FOR_CAPABILITY = "kernel_not_for_capability"
    # uv (its command line, clap) refusing --torch-backend, which vLLM's install guide passes it: "error: unexpected
    # argument '--torch-backend' found"; message: the flag
    UV_FLAG_UNKNOWN = "uv_flag_unknown"
    # Triton's kernel cache raced between processes compiling the same kernel: a temporary file it had just written
    # gone (`FileNotFoundError: [Errno 2] No such file or directory: '/root/.triton/cache/<key>/fused_moe_kernel.json
    # .tmp.pid_72_…'`); message: the kernel, component: the cache directory
    TRITON_CACHE_RACE = "triton_cache_race"
    # NIXL (vLLM's NixlConnector for disaggregated prefill) failing in its backend, and the UCX lines that say why:
    # "nixl._bindings.nixlBackendError: NIXL_ERR_BACKEND", UCX's "transports 'cuda_ipc','cuda_copy' are not
    # available", "UCP version is incompatible, required: 1.18, actual: 1.12"; message: backend | ucx_no_cuda |
    # ucx_version, version: "required 1.18, loaded 1.12"
    NIXL_BACKEND_ERROR = "nixl_backend_error"
    # argparse refusing a flag's value: "argument --max-model-len: invalid int value: '32k'" (message: invalid_value,
    # argument_value: the value, accepted_instead: the type asked for), "argument --dtype: invalid choice: 'bf16'
    # (choose from …)" (invalid_choice; accepted_instead: the choices), "argument --tensor-parallel-size/-tp:
    # expected one argument" (missing_value); component: the flag's first spelling
    ARG_VALUE_REFUSED = "arg_value_refused"
    # a process killed by a signal in native code, as Python's faulthandler prints it: "Fatal Python error:
    # Segmentation fault"; message: the signal's name
    NATIVE_CRASH = "native_crash"
    # a frame of faulthandler's dump (no comma before "in"): `File ".../flashinfer/decode.py", line 514 in
    # begin_forward`; code_file: the path, function: the function
    NATIVE_FRAME = "native_frame"
    # Python's `-m` failing to find a module: "/usr/bin/python3: Error while finding module specification for
    # 'vllm.entrypoints.openai.api_server' (ModuleNotFoundError: No module named 'vllm')"; message: the module not
    # found, component: the module `-m` asked for, exception: the error's class
    MODULE_NOT_FOUND = "module_not_found"
    # vllm/version.py's warning that vllm/_version.py (setuptools-scm writes it when the package is built) is missing:
    # "…/vllm/__init__.py:5: RuntimeWarning: Failed to read commit hash:"; component: the file that imported it
    VLLM_VERSION_UNBUILT = "vllm_version_unbuilt"
    # vLLM-Omni's import-time check (vllm_omni/version.py, its 0.19 builds on): "RuntimeWarning: vLLM and vLLM-Omni
    # appear to have mismatched major/minor versions:"; message: the plugin's name as the warning gives it
    PLUGIN_VERSION_MISMATCH = "plugin_version_mismatch"
    # a streamed OpenAI response pasted as its server-sent events (`data: {"object": "chat.completion.chunk", …}`), read
    # as one answer (advisor/collect/streamed_chunks.py): chunks, those without a finish_reason key, the characters of
    # the answer (content, text, tool calls) and of delta.reasoning(_content), the last finish_reason, and the lines
    # the paste left between chunks
    STREAMED_ANSWER = "streamed_answer"
    # a non-streamed OpenAI response body pasted whole (advisor/collect/answer_body.py): answer_chars (content and tool
    # calls), reasoning_chars (message.reasoning or reasoning_content), finish_reason, generated_tokens (usage's
    # completion_tokens)
    ANSWER_BODY = "answer_body"
    # vLLM's Python objects an offline user printed (advisor/collect/offline_outputs.py): a `SamplingParams(…)` repr
    # (min_tokens, requested_tokens: its max_tokens, stop_strings) …
    OFFLINE_SAMPLING_PARAMS = "offline_sampling_params"
    # … and what one request generated: a `RequestOutput(…)` / `CompletionOutput(…)` repr, or the fields a serving
    # adapter answered with (`"generated_token_count": 2`, `"stop_reason": "stop"`): generated_tokens, token_ids (the
    # output's), prompt_token_ids, finish_reason; message: the output's text as printed
    OFFLINE_OUTPUT = "offline_output"
    # kvcached's pool short of the KV blocks vLLM's scheduler asked for (kvcached's kv_cache_manager.py:
    # "[kvcached][WARNING] kv_cache_manager.py:174 available_size()=71 < need_size=76"); num_gpu_blocks: blocks free,
    # blocks_needed: blocks asked for
    KVCACHED_POOL_SHORT = "kvcached_pool_short"
    # transformers reading a .gguf file as a config: "It looks like the config file at '….gguf' is not a valid JSON
    # file."; message: the file
    GGUF_READ_AS_CONFIG = "gguf_read_as_config"
    # the same words for a file that is no GGUF: the model's config.json (or another JSON file) does not parse;
    # message: the file
    CONFIG_NOT_JSON = "config_not_json"
    # transformers' GGUF reader looking up a metadata field the file lacks: "KeyError: 'general.name'"; message: the key
    GGUF_METADATA_MISSING = "gguf_metadata_missing"
    # vLLM's CPU KV offload creating its shared region: "Created mmap file /dev/shm/vllm_offload_<id>.mmap (17.18 GB)";
    # message: the path, shm_bytes: its size
    KV_OFFLOAD_REGION = "kv_offload_region"
    # torch.distributed's TCP store not reaching the rendezvous address vLLM gave its processes: "DistNetworkError: The
    # client socket has timed out after 600s while trying to connect to (10.60.2.1, 53591)", "The client socket has
    # failed to connect to [host]:port"; message: host:port, timeout_ms: how long it tried, where the text says
    RENDEZVOUS_UNREACHABLE = "rendezvous_unreachable"
    # the other side: the rank that opened torch.distributed's TCP store waited for the others in vain, "Timed out
    # after 601 seconds waiting for clients. 1/2 clients joined." (DistStoreError); message: joined/expected,
    # timeout_ms: how long it waited
    RENDEZVOUS_WAITING = "rendezvous_waiting"
    # Gloo's TCP transport could not connect its full mesh of ranks (vLLM's CPU-side process groups): "RuntimeError:
    # Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error"; message: Gloo's
    # reason after the source location
    GLOO_MESH_FAILED = "gloo_mesh_failed"
    # HAMi-core (HAMi's GPU-sharing library preloaded into a pod) rejecting the device id its cuMemCreate hook read:
    # "[HAMI-core ERROR (pid:2244 … multiprocess_memory_limit.c:1255)]: Illegal device id: 31069"; message: the id
    HAMI_ILLEGAL_DEVICE = "hami_illegal_device"
    # Mooncake's transfer engine asked for a metadata backend its build did not compile in: "Unable to find metadata
    # storage plugin etcd with conn string: etcd://10.72.12.100:2379"; message: the scheme (etcd, redis, http),
    # address: the connection string when the line prints it (newer Mooncake)
    MOONCAKE_METADATA_PLUGIN = "mooncake_metadata_plugin"
    # vLLM 0.4.0's own NCCL wrapper torn down after its start failed before it held a communicator:
    # "AttributeError: 'NCCLCommunicator' object has no attribute 'comm'" (its __del__ destroys self.comm)
    PYNCCL_NEVER_STARTED = "pynccl_never_started"
    # The source line of a bare assertion on the key-value heads and the tensor-parallel size, as a traceback prints
    # it: "assert self.total_num_kv_heads % tp_size == 0" (OP-3.9); message: the assertion
    KV_HEADS_INDIVISIBLE = "kv_heads_indivisible"
    # torchao's assertion that FP8 activations need compute capability 8.9 or an MI300: "Float8 dynamic activation
    # quantization is only supported on CUDA>=8.9 and MI300+" (OP-2.5); message: its words
    TORCHAO_FP8_UNSUPPORTED = "torchao_fp8_unsupported"
    # oneCCL's library not found by the dynamic loader: "oneCCL could not be initialized! Could not load any plugin."
    # and "Cannot open plugin library: libccl.so.1: cannot open shared object file" (OP-7.156); message: the words
    ONECCL_LIBRARY_MISSING = "oneccl_library_missing"
    # HIP/ROCr refusing to export GPU memory for IPC: ":1:rocmemory.cpp :1043: Failed to create memory for IPC, failed
    # with hsa_status: 4097", "IPC memory creation failed for memory: 0x…", "hipIpcGetMemHandle -> 1 (invalid
    # argument)" (OP-7.160); message: the words
    ROCM_IPC_EXPORT_FAILED = "rocm_ipc_export_failed"
    # vLLM of mid-2024 capping Gemma 2 at its sliding window: "Gemma 2 uses sliding window attention for every odd
    # layer, which is currently not supported by vLLM. Disabling sliding window and capping the max length to the
    # sliding window size (4096)." (OP-5.59); max_model_len: the window
    SLIDING_WINDOW_CAPPED = "sliding_window_capped"
    # Gloo told an interface that has no address on this host: "[enforce fail at …/gloo/transport/tcp/device.cc:83]
    # ifa != nullptr. Unable to find address for: eth0"; message: the interface
    GLOO_INTERFACE_MISSING = "gloo_interface_missing"
    # JAX could not open the TPU because another process holds it: "Unable to initialize backend 'tpu':
    # FAILED_PRECONDITION: TPU initialization failed: open(/dev/vfio/0): Device or resource busy"; message: the device
    TPU_BUSY = "tpu_busy"
    # Habana's runtime refusing module ids the process cannot see: "Invalid HABANA_VISIBLE_MODULES=5. Module IDs should
    # be between 0 and 0."; message: the value, index_bound: the highest id it can see
    GAUDI_MODULES_INVALID = "gaudi_modules_invalid"
    # vllm-ascend's compiled extension not loaded: its allocator's warning "Failed to import vllm_ascend_C:<error>.
    # Sleep mode will be disabled."; message: the import's error
    ASCEND_EXTENSION_MISSING = "ascend_extension_missing"
    # Python's int() refusing a GPU's UUID where vLLM reads CUDA_VISIBLE_DEVICES as indices: "ValueError: invalid
    # literal for int() with base 10: 'GPU-52a3a85d-…'"; message: the UUID
    VISIBLE_DEVICE_UUID = "visible_device_uuid"
    # torch's extension builder refusing a CUDA toolkit of another release than PyTorch's own: "The detected CUDA
    # version (12.1) mismatches the version that was used to compile PyTorch (11.7)."; version: the toolkit's,
    # cuda_required: PyTorch's (when the line holds it)
    BUILD_CUDA_MISMATCH = "build_cuda_mismatch"
    # setuptools failing to copy a compiled extension the CMake build should have written ("error: can't copy
    # 'build/lib…/vllm/_C.abi3.so': doesn't exist or not a regular file", OP-7.194); message: the extension's path
    BUILD_EXTENSION_MISSING = "build_extension_missing"
    # a build of CUDA code that found no CUDA toolkit: torch's extension builder ("OSError: CUDA_HOME environment
    # variable is not set. Please set it to your CUDA install root.") or vLLM's setup.py ("AssertionError: CUDA_HOME
    # is not set"); message: the words; component: whose check it was (torch, vLLM's setup.py)
    BUILD_NO_CUDA_HOME = "build_no_cuda_home"
    # a metrics scraper in front of vLLM (the Gateway API Inference Extension's endpoint picker, llm-d's scheduler)
    # finding no family it expects in vLLM's /metrics: `metric family "vllm:lora_requests_info" not found`; message:
    # the family, component: the scraper, known_releases: the releases that export it (when vLLM's metrics table
    # knows it; "0.32–" when its newest release still does), accepted_instead: the name that replaced it
    SCRAPED_METRIC_MISSING = "scraped_metric_missing"
    # a media URL whose host is a file's name (`Cannot connect to host 1.jpg:80`): the client sent a local file's name
    # where vLLM fetches an image, video or audio URL; message: the host
    MEDIA_URL_FILE_NAME = "media_url_file_name"
    # Ray refusing a runtime_env that carries an environment variable Ray reserves for itself: "The env var,
    # __RAY_WORKER_PROCESS_SETUP_HOOK_ENV_VAR, is not permitted because it is reserved for the internal use.";
    # message: the variable
    RAY_RESERVED_ENV = "ray_reserved_env"
    # oneCCL (the collective library of vLLM on Intel GPUs) failing to open the GPUs' device files:
    # "oneCCL: ze_fd_manager.cpp:144 init_device_fds: EXCEPTION: opendir failed: could not open device directory",
    # "… fill_device_fds: EXCEPTION: open failed: fd: -1, errno: No such file or directory", and its warning "pidfd is
    # not supported, fallbacks to drmfd exchange mode"; message: opendir | open | pidfd, function: oneCCL's function
    ONECCL_DEVICE_FILES = "oneccl_device_files"
    # NCCL refusing graph capture: "NCCL WARN NCCL cannot be captured in a graph if either it wasn't built with CUDA
    # runtime >= 11.3 or if the installed CUDA driver < R465." (vLLM captures its all-reduces in CUDA graphs)
    NCCL_GRAPH_UNSUPPORTED = "nccl_graph_unsupported"
    # V0's speculative decoding asserting that draft and target share a vocab size, by its source line alone: "assert
    # all(vocab_sizes[0] == vocab_size for vocab_size in vocab_sizes)" (spec_decode_worker.py: it calls nothing that
    # raises, so the line is the failure)
    DRAFT_VOCAB_MISMATCH = "draft_vocab_mismatch"
    # a hybrid model's Mamba state larger than the page planned for it, by the assertion's source line alone: "assert
    # self.page_size_padded >= page_size" (MambaSpec.page_size_bytes, v1/kv_cache_interface.py); message: the line
    MAMBA_PAGE_TOO_SMALL = "mamba_page_too_small"
    # Helm finding no chart of the name asked in a repository's index: 'Error: INSTALLATION FAILED: chart
    # "production-stack" matching not found in vllm index.'; message: the chart, component: the repository
    HELM_CHART_NOT_FOUND = "helm_chart_not_found"
    # PyTorch's extension builder finding a toolkit but no CUDA runtime in the building process: "No CUDA runtime is
    # found, using CUDA_HOME='/usr/local/cuda-11.8'"; message: the toolkit's path (Linux; Windows' is WINDOWS_HOST)
    BUILD_NO_CUDA_RUNTIME = "build_no_cuda_runtime"
    # A wheel built or installed under the name UNKNOWN (`creating 'dist/UNKNOWN-0.8.6-cp310-cp310-linux_x86_64.whl'`,
    # `Successfully installed UNKNOWN-0.0.0`): setuptools wrote no project name; message: the file or the words
    WHEEL_NAMED_UNKNOWN = "wheel_named_unknown"
    # FlashInfer's attention kernels refusing the model's head dimension (`Invalid head_dim: 512, must be divisible by
    # 16 and in range [16, 256]`; its TensorRT-LLM kernels' `Expect (32 <= headDim <= 2048) && …`); message: the
    # words, with the head dimension where they give it
    ATTENTION_HEAD_DIM_REFUSED = "attention_head_dim_refused"
    # xFormers' compiled kernels not loading: "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was
    # built for:" and, on the next line, "PyTorch 2.6.0+cu124 with CUDA 1204 (you have 2.5.1+cu121)"; message: the
    # PyTorch it was built for, version: the installed one, when the text holds them
    XFORMERS_BUILD_MISMATCH = "xformers_build_mismatch"
    # oneCCL unable to start the worker thread its collectives run on: "RuntimeError: oneCCL: exec.cpp:122
    # start_workers: EXCEPTION: failed to start worker # 0", oneCCL's own "|CCL_ERROR| base_thread.cpp:36 start: error
    # while creating worker thread #0 pthread_create returns 22"; message: pthread_create's code where printed, else ""
    ONECCL_WORKER_START = "oneccl_worker_start"
    # the kernel killing the server for host memory: Kubernetes' `Reason: OOMKilled` (kubectl describe, get pods),
    # Docker's `"OOMKilled": true`, the kernel's `Memory cgroup out of memory: Killed process 4172 (python3) …
    # anon-rss:31457280kB` (dmesg), Ray's memory monitor (`ray.exceptions.OutOfMemoryError: Task was killed due to
    # the node running low on memory.`, `Memory on the node (IP: …) … was 59.84GB / 62.51GB (0.957347), which exceeds
    # the memory usage threshold of 0.95`, the raylet's `N Workers (tasks / actors) killed due to memory pressure
    # (OOM)`); message: the words, component: who reported it (Kubernetes, Docker, the kernel, Ray's memory
    # monitor), rss_gib: the memory the killed process held, where the words say (the kernel's anon-rss, Ray's
    # `memory used=`); Ray's node figures: node_used_gb, node_total_gb (GB as Ray prints them), memory_threshold
    HOST_OOM_KILLED = "host_oom_killed"
    # Kubernetes' status for a pod whose container does not run: `kubectl get pods`' STATUS (CrashLoopBackOff,
    # ImagePullBackOff, ErrImagePull, CreateContainerConfigError, Pending, ContainerCreating …), `kubectl describe
    # pod`'s `Reason:` and its events (`Back-off restarting failed container`, `Failed to pull image "…": …`,
    # `Error: secret "…" not found`, the kubelet's eviction message); pod_status: the status, message: what the event
    # adds, insufficient: the resource an eviction was for; the Docker daemon's failed pull reads as ErrImagePull
    # (component: Docker); the Kubernetes monitoring mixin's alerts on a pod (kube-prometheus-stack's
    # KubePodCrashLooping, KubeContainerWaiting, KubePodNotReady: `Pod ns/pod (container) is in waiting state (reason:
    # "CrashLoopBackOff").`) read as the status they state, with namespace and container (component: the alert's name;
    # pod_status NotReady for KubePodNotReady)
    POD_STATUS = "pod_status"
    # a process row of nvidia-smi's table (`|    0   N/A  N/A     12345      C   python3      72332MiB |`): which
    # process holds how much memory on which GPU; component: its name
    GPU_PROCESS = "gpu_process"
    # Kubernetes' scheduler placing the pod on no node: "0/4 nodes are available: 1 node(s) had untolerated taint
    # {…}, 3 Insufficient nvidia.com/gpu. preemption: …"; message: the reasons, nodes_total: the nodes it tried,
    # insufficient: the resources nodes lacked (nvidia.com/gpu, memory), taints: the taints the pod does not tolerate;
    # the cluster autoscaler's "pod didn't trigger scale-up: 2 Insufficient nvidia.com/gpu, 1 max node group size
    # reached" (component: cluster-autoscaler; message: its reasons per node group)
    POD_UNSCHEDULABLE = "pod_unschedulable"
    # a container's probe as `kubectl describe pod` shows it: "Liveness:  http-get http://:8000/health delay=60s
    # timeout=1s period=10s #success=1 #failure=3"; probe: liveness/readiness/startup, timeout_ms, probe_delay_s,
    # probe_period_s, probe_failures
    PROBE_SETTINGS = "probe_settings"
    # the exit code `kubectl describe pod` shows for a container's last run ("Exit Code:    1"); exit_code
    CONTAINER_EXIT_CODE = "container_exit_code"
    # the container cannot use the host: Docker with no GPU runtime (`could not select device driver "" with
    # capabilities: [[gpu]]`), no GPU visible to the process (`No CUDA GPUs are available`, `Found no NVIDIA driver on
    # your system`), the GPUs lost under a running container (`Failed to initialize NVML: Unknown Error`), an image of
    # another CPU architecture (`exec format error`), Docker's `unknown or invalid runtime name: nvidia`, nvidia-smi's
    # `No devices were found` (and the kernel's `RmInitAdapter failed`, device: the GPU's bus id) …; message: the
    # words, component: which (docker_runtime, docker_no_nvidia_runtime, no_devices, no_gpu_visible, nvml_lost,
    # exec_format …)
    CONTAINER_HOST_MISMATCH = "container_host_mismatch"
    # a kernel's architecture guard (vLLM's CUTLASS kernels print it, then trap): "This kernel only supports sm120.";
    # message: the architecture it names (sm120, sm100f, sm[100,120))
    KERNEL_ARCH_GUARD = "kernel_arch_guard"
    # a hub client waiting on its download lock (filelock's words under huggingface_hub or ModelScope): "Still waiting
    # to acquire lock on /root/.cache/modelscope/hub/.lock/<model>"; message: the lock file
    DOWNLOAD_LOCK_WAIT = "download_lock_wait"
    # Docker giving up stopping a container whose PID 1 is a zombie: "container <id> PID <n> is zombie and can not be
    # killed. Use the --init option when creating containers …" (quoted also without the id and PID); no fields
    CONTAINER_ZOMBIE = "container_zombie"
    # pydantic's detail line for a value outside a field's fixed list, pasted alone, whose values no flag of vLLM's
    # takes ("  Input should be 'native' or 'vllm-server' [type=literal_error, input_value='vllm', …]", VC-6):
    # argument_value the value refused, accepted_instead the listed values
    FIELD_CHOICE_REFUSED = "field_choice_refused"
    # transformers' processor warning that it ignores a keyword it was given ("Keyword argument `max_pixels` is not a
    # valid argument for this processor and will be ignored", OP-7.193); message: the keyword
    PROCESSOR_KWARG_IGNORED = "processor_kwarg_ignored"
    # the Gateway API inference extension's endpoint picker finding no pod for a request
    # ("InferencePoolResourceExhausted - failed to find target pod: <reason>", OP-5.65); message: its reason
    EPP_NO_TARGET_POD = "epp_no_target_pod"
    # the detokenizer failing on a sampled id its tokenizer has no token for (OP-7.70): tokenizers' None refused as a
    # string ("argument 'tokens': 'NoneType' object cannot be converted to 'PyString'"), or the Mistral tokenizer's
    # tekken lookup of the empty bytes such an id became (`KeyError: b''`); message: DETOKENIZER_NONE or
    # DETOKENIZER_TEKKEN
    DETOKENIZER_UNKNOWN_ID = "detokenizer_unknown_id"
    # tokenizers' DecodeStream (vLLM V1's fast incremental detokenizer) refusing a step: "Invalid prefix encountered"
    # (its state broken by output that is not valid UTF-8) or "StreamInput must be either an integer or a list of
    # integers" (an id no token has, negative); message: DECODE_STREAM_PREFIX(_LONGER) or DECODE_STREAM_INPUT
    DECODE_STREAM_FAILED = "decode_stream_failed"
    # the CUTLASS TMA warp-specialized grouped GEMM of the fused-MoE kernels (TensorRT-LLM's, in FlashInfer) refusing
    # to initialize: "Failed to initialize cutlass TMA WS grouped gemm. Error: Error Internal (…sm120….cu:60)";
    # message: the architecture its kernel file names (sm120), when the words hold it
    MOE_GROUPED_GEMM_INIT_FAILED = "moe_grouped_gemm_init_failed"
    # the server's access log answering 404 to a path it has no route for: `"POST /generate HTTP/1.1" 404 Not Found`;
    # message: the path, component: the method
    ROUTE_NOT_FOUND = "route_not_found"
    # a request refused for its API key: vLLM's own 401 body `{"error": "Unauthorized"}` (its --api-key middleware),
    # the access log's `"POST /v1/… HTTP/1.1" 401`, the OpenAI SDK's AuthenticationError; message: the path when the
    # access log names it, component: the method or the client library
    UNAUTHORIZED = "unauthorized"
    # HTTP 405 Method Not Allowed: the server's access log (`"GET /v1/chat/completions HTTP/1.1" 405`; message: the
    # path, component: the method) or a client's error (`Error code: 405 - {'detail': 'Method Not Allowed'}`)
    METHOD_NOT_ALLOWED = "method_not_allowed"
    # the server's access log answering 500 to a request it failed: `"POST /v1/chat/completions HTTP/1.1" 500 Internal
    # Server Error`; message: the path, component: the method (uvicorn's `Exception in ASGI application`: no path,
    # component "uvicorn")
    SERVER_ERROR_RESPONSE = "server_error_response"
    # the server's access log answering 400 to a request it refused as invalid: `"POST /v1/chat/completions HTTP/1.1"
    # 400 Bad Request`; message: the path, component: the method
    BAD_REQUEST_RESPONSE = "bad_request_response"
    # openai_harmony's parser refusing gpt-oss's output: "Unexpected token 200002 while expecting start token 200006",
    # HarmonyError('Unknown role: …'), "channel marker present but no channel value found in header"; message: its
    # words, token_ids: [the token it got, the token it expected] for the first
    HARMONY_ERROR = "harmony_error"
    # libsndfile refusing an uploaded audio file as vLLM's transcription endpoint decodes it: "Error opening
    # <_io.BytesIO object at 0x…>: Format not recognised."; message: libsndfile's reason
    AUDIO_UNDECODABLE = "audio_undecodable"
    # a line holding a reasoning model's <think> or </think>; message: "open", "close" or "both"
    REASONING_TAG = "reasoning_tag"
    # Any message vLLM itself raises or logs at warning and above, found in its own catalog (advisor/catalog/
    # vllm_messages.json): a refused launch, a rejected request, a warning; `catalog` says which and where.
    VLLM_MESSAGE = "vllm_message"
    # A traceback the text ends inside, before its exception line (a paste cut short): message: the deepest vLLM
    # frame as `file.py:N in f`, function and code_file: that frame's, component and phase: from its frames
    CUT_TRACEBACK = "cut_traceback"
    # The root exception of a traceback (or a bare error line) that neither the wording table nor vLLM's
    # catalog knows: named with the component and phase it failed in, and the nearest catalog entries.
    UNPLACED_ERROR = "unplaced_error"
    # An error-level line (vLLM's `ERROR` header, a native library's glog `E0904 … file.cc:N]`) or a warning whose
    # words say something failed, that names no exception and that neither the wording table nor vLLM's catalog
    # knows: message: its words, code_file: the file its header names, component: whose logger wrote it (vLLM's,
    # a native library's, another program's), nearest: vLLM's nearest messages (for vLLM's logger's line only),
    # repeats: the lines that said the same
    UNPLACED_LINE = "unplaced_line"


# Who wrote a line, as its header tells (an unplaced line's `component`): vLLM's logger (its `LEVEL MM-DD …`
# header or a process prefix), a native library's (glog's `W0904 … file.cc:62]`), another program's (`[Error]`).
VLLM_LOGGER = "vLLM's logger"
NATIVE_LOG = "a native library's log"
NCCL_LOG = "NCCL's log"  # NCCL_DEBUG's lines: `host:pid:tid [0] transport/net_ib.cc:1295 NCCL WARN …`
OTHER_LOGGER = "another program's logger"
# Who reported a kill the shell saw (`Killed`): SIGKILL, most often the kernel's OOM killer (OP-7.30 hedges it).
SHELL_SIGKILL = "the shell (SIGKILL)"
# CHAT_TEMPLATE_REFUSED's message when there was no template to apply (transformers: "Cannot use chat template
# functions because tokenizer.chat_template is not set …"): a tokenizer without one, a base model's
NO_CHAT_TEMPLATE = "no chat template"
# Values the collector writes and a rule tells apart, declared once here: DISK_FULL's component for an ENOSPC that
# names no path; SERVER_DISCONNECTED's connect_result for an answer cut after it began; TRITON_BUILD_FAILED's message
# when the launcher found no unversioned libcuda.so to link, or no libcuda.so.1 at all where ldconfig said
NO_PATH = "no_path"
CUT_MID_ANSWER = "cut"
# PROTOCOL_MISMATCH's component when vLLM's own server logged it (a client's otherwise)
NOT_HTTP_AT_SERVER = "server"
NO_LIBCUDA_LINK = "no libcuda.so to link against"
NO_LIBCUDA_LIBRARY = "no libcuda.so.1 where ldconfig says"
LAUNCHER_COMPILE_FAILED = "the C compiler failed on it"  # TRITON_BUILD_FAILED: its command failed, cause above
VLLM_BUILD = "vLLM's build"  # GPU_ARCH_UNSUPPORTED's component when vLLM's own setup.py refused the GPU
UV_RESOLVER = "resolver:uv"  # versions_offered of PIP_NO_DISTRIBUTION and PACKAGE_CONFLICT when uv's resolver said it
# versions_offered of PIP_NO_DISTRIBUTION when pip's resolver gave up on conflicting requirements (`Cannot install …
# because these package versions have conflicting dependencies`), followed by the requirer and its version where pip
# named them (`conflict:outlines 0.0.46` for `outlines 0.0.46 depends on pyairports`)
PIP_CONFLICT = "conflict:"
# RAY_NODE_DEAD's message when the node's own raylet was seen dying (`Raylet is terminated. Termination is unexpected`)
RAYLET_TERMINATED = "raylet terminated"
# VLLM_OP_SCHEMA_MISMATCH's message for an op the loaded extension does not register (`No such operator _C::x`,
# torch.ops' `'_OpNamespace' '_C' object has no attribute 'x'`): the extension may not have loaded at all
NOT_REGISTERED = "is not registered by the loaded extension"
# RAY_REPLICA_UNPLACED's message when what waits is vLLM's own placement group (its Ray executor), not a Serve replica
VLLM_PLACEMENT_GROUP = "vLLM's placement group"
# … and when a framework that runs vLLM on Ray checked the cluster's GPUs against its request first (NeMo-RL's
# `Not enough GPUs available. Requested 16 GPUs, but only 8 are available in the cluster.`)
FRAMEWORK_GPU_REQUEST = "a framework's GPU request"
# GPU_ARCH_UNSUPPORTED's components when ptxas refused an instruction the target lacks ("Feature '.bf16' requires
# .target sm_80 or higher"): nvcc building vLLM from source (its tmpxft_ files), or Triton compiling at run time
PTX_BUILD = "nvcc's ptxas"
PTX_TRITON = "Triton's ptxas"
# … and when Triton's front end refused an FP8 type the GPU's backend lacks, naming one other than NVIDIA's E4M3
# before Ada (`type fp8e4b8 not supported in this architecture. The supported fp8 dtypes are ('fp8e5',)`): message:
# the type asked for, accepted_instead: the types Triton listed, when the line holds them
TRITON_FP8_TYPE = "Triton's FP8 types"
# … and when ptxas does not know the GPU's architecture at all ("Value 'sm_121a' is not defined for option
# 'gpu-name'"): a ptxas older than the GPU, most often the one Triton ships
PTX_TOO_OLD = "a ptxas older than the GPU"
# GPU_ARCH_UNSUPPORTED's component when ptxas knows the GPU but the PTX it was given is of an older version (`PTX
# .version 8.4 does not support .target sm_120a`): the code generator (Triton's LLVM) is older than the GPU
PTX_CODEGEN_TOO_OLD = "PTX written for an older GPU generation"
# CUDA_KERNEL_FAULT's component when FlashInfer's sampling kernel reported the fault by its own name
# ("TopPSamplingFromProbs failed with error code an illegal memory access was encountered")
FLASHINFER_SAMPLER = "FlashInfer's sampling kernel"
# HOST_OOM_KILLED's component when Ray's memory monitor killed the worker: the raylet kills the most recently
# scheduled task or actor once the node's memory passes its threshold, before the kernel would
RAY_MEMORY_MONITOR = "Ray's memory monitor"
# apache-tvm-ffi's SIGSEGV handler printed the crash (`!!!!!!! Segfault encountered !!!!!!!`, HL-6): a segfault
# anywhere in a process that loaded tvm-ffi (xgrammar and FlashInfer do), its C++ frames below it
TVM_FFI_REPORTED = "tvm-ffi's signal handler"
# Triton Inference Server's signal handler (`Signal (11) received.`, then its native frames ` 0# … in tritonserver`),
# around the vLLM backend it runs in its Python backend's stub (HL-6)
TRITON_REPORTED = "Triton Inference Server's signal handler"
# abseil's failure signal handler printed the crash (`*** SIGSEGV received at time=1722289279 on cpu 61 ***`, HL-6):
# Ray's worker processes install it, and its `PC: @ … <function>` lines below name the native frames
ABSEIL_REPORTED = "abseil's failure signal handler"
# CUDA_OOM's message when the OOM arrived as PyTorch's assertion on NVML (`NVML_SUCCESS == r INTERNAL ASSERT FAILED at
# …/CUDACachingAllocator.cpp`): a failed cudaMalloc whose message needed NVML, which failed (pytorch#112377)
NVML_ASSERT_OOM = "NVML assert"
# The message of V0's front end polling the sockets it closed after its engine process failed (OP-1.9): pyzmq's
# refusal to poll a closed socket, which carries no cause of its own
ZMQ_CLOSED_SOCKET = "ZMQError: Operation not supported"
# ARGS_UNRECOGNIZED's message when Ray Serve LLM refused an engine_kwargs key (OP-7.20): it checks each key against the
# installed vLLM's engine and front-end argument fields before it starts the engine, so no argparse is involved
RAY_UNKNOWN_ENGINE_ARGUMENT = "Unknown engine argument: "
# KERNEL_NOT_FOR_CAPABILITY's component when the build compiled no variant for the GPU (csrc's `No compiled …`), which
# a source build's arch list decides, as against a backend's own device check
COMPILED_KERNEL = "compiled"
# DETOKENIZER_UNKNOWN_ID's messages: which detokenizer refused the id (tokenizers' binding, the Mistral tokenizer's)
DETOKENIZER_NONE = "tokenizers' None"
DETOKENIZER_TEKKEN = "tekken's empty bytes"
# DECODE_STREAM_FAILED's messages: the decode stream's own state (in tokenizers' words before 0.22.0, or in 0.22.0's
# longer ones), or the id it was given
DECODE_STREAM_PREFIX = "invalid prefix"
DECODE_STREAM_PREFIX_LONGER = "invalid prefix (tokenizers 0.22 words)"
DECODE_STREAM_INPUT = "invalid id"
# Who reported a crash the shell saw (`Segmentation fault (core dumped)`), without faulthandler's dump (HL-6).
SHELL_REPORTED = "the shell"
# HCCL (Ascend's collectives) timing out on a socket to another rank (`Get_Socket_Timeout(EI0006)`, OP-7.25)
HCCL_SOCKET = "HCCL's socket (Ascend's collectives)"
# Python's subprocess module reporting a child a signal killed (`subprocess.CalledProcessError: Command '[…, '-m',
# 'vllm.model_executor.models.registry']' died with <Signals.SIGILL: 4>.`, HL-6): the child's own output has the dump
SUBPROCESS_REPORTED = "Python's subprocess module"
# systemd reporting a unit's main process killed by a signal (HL-6: `Main process exited, code=dumped,
# status=11/SEGV`) or by the OOM killer (OP-7.30: `A process of this unit has been killed by the OOM killer`,
# `Failed with result 'oom-kill'`; the event's message is then the unit's name)
SYSTEMD_REPORTED = "systemd"
# The exception an HTTP error body is named by when it carries no type of its own (`{"error": "…"}`).
HTTP_ERROR_EXCEPTION = "HTTP error"
# Python's words for a keyword a function does not take (`EngineArgs.__init__() got an unexpected keyword argument
# 'worker_extension_cls'`): the collector asks which release takes it, OP-7.26 names the caller that passed it.
# the keyword may hold hyphens: a command line's spelling passed through a dict (`**{'tool-call-parser': …}`)
UNEXPECTED_KEYWORD = re.compile(
    r"(?P<function>[\w.]+)\(\) got an unexpected keyword argument '(?P<keyword>\w+(?:-\w+)*)'"
)
# msgspec's words for a Struct given a keyword it has no field for (`TypeError: Unexpected keyword argument
# 'use_beam_search'`): no class named. vLLM's SamplingParams is such a Struct from 0.6, so the collector reads the
# keyword as SamplingParams' when a release's SamplingParams took it (lm-sys/FastChat#3600: vLLM dropped
# use_beam_search; the thread's fix was to stop passing it).
STRUCT_UNEXPECTED_KEYWORD = re.compile(r"(?:^|: )Unexpected keyword argument '(?P<keyword>\w+)'")
SAMPLING_PARAMS_INIT = "SamplingParams.__init__"
# vLLM's classes whose keywords per release the catalog holds, as Python names them in that refusal
# (`EngineArgs.__init__()`), and the class: the refusing function is vLLM's own. SamplingParams' keywords are what a
# caller builds a request's sampling with, not engine arguments.
ENGINE_ARG_CLASSES = {
    "EngineArgs.__init__": "EngineArgs",
    "AsyncEngineArgs.__init__": "AsyncEngineArgs",
    SAMPLING_PARAMS_INIT: "SamplingParams",
}
# vLLM's classes that serving frameworks construct themselves (KServe's and BentoML's OpenAI front ends, FastChat's
# worker, RL trainers): a refusal naming one is vLLM's, even on a line pasted without its traceback. Each is a class
# of vLLM 0.32's source, or of the releases whose catalog files hold it (AsyncLLMEngine 0.4-0.10,
# OpenAIServingEmbedding 0.4-0.9, OpenAIServingTokenization in openai/serving_tokenization.py 0.5-0.12; 0.32's pooling
# front ends under vllm/entrypoints/pooling/, ServingEmbedding among them, which KServe's huggingfaceserver
# constructs: kserve/kserve#5399).
VLLM_CONSTRUCTED_CLASSES = frozenset(
    {
        "LLM",
        "LLMEngine",
        "AsyncLLM",
        "AsyncLLMEngine",
        "SamplingParams",
        "PoolingParams",
        "LoRARequest",
        "OpenAIServingChat",
        "OpenAIServingCompletion",
        "OpenAIServingModels",
        "OpenAIServingEmbedding",
        "OpenAIServingTranscription",
        "OpenAIServingTokenization",
        "OpenAIServingResponses",
        "ServingEmbedding",
        "ServingScores",
        "ServingClassification",
        "ServingPooling",
    }
)
# vLLM's functions (and a class's static constructors) that code built on vLLM calls by name, whose keywords changed
# between releases: a refusal naming one is vLLM's on a line pasted without frames too. resolve_chat_template_
# content_format (vllm/entrypoints/chat_utils.py) lost trust_remote_code in vllm PR #17805, which Ray Serve LLM still
# passed (ray-project/ray#52975); Pooler.for_embed (vllm/model_executor/layers/pooler.py) changed its keywords, which
# a hardware plugin's embedding models still passed (torch-spyre/sendnn-inference, vLLM's Spyre plugin).
# Each with the file it was in when those callers broke (the message catalog's files: chat_utils.py to 0.31,
# pooler.py 0.10 to 0.13); later releases moved both.
VLLM_CALLED_FUNCTIONS = {
    "resolve_chat_template_content_format": "vllm/entrypoints/chat_utils.py (to 0.31)",
    "Pooler.for_embed": "vllm/model_executor/layers/pooler.py (0.10 to 0.13)",
}


def named_as_vllms(function: str) -> bool:
    """Whether a function, as Python's refusal names it (`OpenAIServingChat.__init__`, `resolve_chat_template_…`), is
    vLLM's own on a line pasted without frames: a method of a class frameworks construct, or a function they call."""
    return function.split(".")[0] in VLLM_CONSTRUCTED_CLASSES or function in VLLM_CALLED_FUNCTIONS


# vLLM's configuration classes, and its engine arguments, that code built on vLLM reads fields of
# (`llm.llm_engine.vllm_config.lora_config`, `engine_args.task`): most of their fields are engine arguments of the same
# name, whose releases the catalog holds, so an AttributeError naming one of them can say which releases had the field.
CONFIG_OWNERS = frozenset((VLLM_CONFIG_CLASSES - {"Config"}) | {"EngineArgs", "AsyncEngineArgs"})
# What CLIENT_KEYWORD_REFUSED's component says of the keyword: a field of vLLM's request models, or one only older
# releases' had (the guided_* fields)
VLLM_REQUEST_FIELD = "vLLM's request field"
REMOVED_REQUEST_FIELD = "a request field older vLLM releases read"
OPENAI_PARAMETER = "a parameter of OpenAI's own API"
# OpenAI's own request parameters (its API reference: chat completions, completions, embeddings, responses): refused
# by the openai package, they mean a package older than the parameter or the call on the other endpoint, not a field
# of vLLM's to move into extra_body
OPENAI_PARAMETERS = frozenset(
    {
        "model", "messages", "prompt", "input", "suffix", "echo", "best_of", "frequency_penalty", "presence_penalty",
        "logit_bias", "logprobs", "top_logprobs", "max_tokens", "max_completion_tokens", "n", "seed", "stop",
        "stream", "stream_options", "temperature", "top_p", "user", "tools", "tool_choice", "parallel_tool_calls",
        "functions", "function_call", "response_format", "metadata", "modalities", "audio", "prediction",
        "reasoning_effort", "service_tier", "store", "web_search_options", "dimensions", "encoding_format",
        "instructions", "max_output_tokens", "reasoning", "text", "previous_response_id", "include", "background",
        "truncation",
    }
)  # fmt: skip
# Python's words for a missing attribute of one of them: the class and the field
CONFIG_ATTRIBUTE = re.compile(
    rf"'(?P<owner>{'|'.join(sorted(CONFIG_OWNERS))})' object has no attribute '(?P<name>\w+)'"
)
# A warning's words that say something failed (UCX logs `Unexpected UCX error: Request canceled` at W; vLLM's
# `Failed to close mmap_obj`): the collector keeps such a warning no wording knows (VC-4), and VC-5 names such a
# warning of vLLM's catalog; other warnings are advice, context only.
FAILURE_WORDS = re.compile(
    # an exception reported where it happened (vLLM's KV offloading: `Exception in ('CPU', 'GPU') transfer 235:
    # AssertionError()`, vllm#28950), not one a warning says may come
    r"\b(?:error|fail(?:ed|ure|s)?|cannot|unable|refused|timed out|timeout"
    r"|exception (?:in|while|during|raised|occurred))\b",
    re.IGNORECASE,
)
# Python's words for a module that is not installed, with the module's dotted name as Python wrote it (quoted; vLLM's
# own lazy importer since 0.11 writes it bare). Its top-level name is the package's for the packages vLLM's extras
# install (decord, librosa, soundfile, av): the collector looks that up, OP-7.29 names it; VC-2 and OP-7.121 read
# the whole name. One pattern for all three, so a bare or dotted name is read alike everywhere.
MISSING_MODULE = re.compile(r"No module named '?(?P<module>[A-Za-z_][\w.]*\w)")
# one of vLLM's own modules missing (`No module named 'vllm.utils.argparse_utils'`): the collector dates it, OP-7.16
# reads it
VLLM_MODULE_MISSING = re.compile(r"No module named '?(?P<module>vllm(?:\.\w+)+)'?")


class OomPhase(str, Enum):
    """Where a CUDA out-of-memory happened; the remedy depends on it."""

    WEIGHT_LOAD = "weight_load"
    SAMPLER_WARMUP = "sampler_warmup"
    CUDAGRAPH_CAPTURE = "cudagraph_capture"
    RUNTIME = "runtime"
    UNKNOWN = "unknown"


class CatalogRef(BaseModel):
    """A vLLM message as its catalog records it (advisor/catalog/vllm_messages.json), and what its
    fields captured in the user's line: the evidence that vLLM itself said this, and where."""

    template: str  # vLLM's wording, fields as {name}
    file: str  # within vllm/, in the newest release that prints it
    line: int
    first: str  # the first and last minor releases that print it there (file, line)
    last: str
    # the first (last) patch that prints it there, where that is not the first (newest) patch read of its minor:
    # a wording that came in 0.8.3 or went after 0.5.2
    first_release: str | None = None
    last_release: str | None = None
    # the first and last releases that print these words anywhere (any file, any line): what dates a paste; a
    # patch (0.5.1) where only some patches of the minor print them
    wording_first: str | None = None
    wording_last: str | None = None
    exception: str | None = None  # raised as (ValueError …); None for a logged message
    level: str | None = None  # logged at (warning, error …); None for a raised one
    phase: str = "other"  # config | startup | serving | other, from where in vLLM it is raised
    flags: list[str] = Field(default_factory=list)  # `vllm serve` flags the message names
    env: list[str] = Field(default_factory=list)  # environment variables it names
    captured: dict[str, str] = Field(default_factory=dict)  # field name -> the user's value
    partial: bool = False  # only its leading sentences matched (a cut paste)
    predicted: bool = False  # not read from a log: servops' launch check says vLLM would print it
    # raise | log | response | assert (an internal check's words, failing as AssertionError) | check (a wordless
    # assert: its statement is the template)
    kind: str | None = None
    # other files of vLLM that hold the same words: a wordless check written in two or three places
    also_in: list[str] = Field(default_factory=list)
    # the level some release logs these words at, where the entry kept is a raise of them (None: never logged)
    logged_at: str | None = None

    def location(self) -> str:
        first, last = self.first_release or self.first, self.last_release or self.last
        releases = first if first == last else f"{first}–{last}"  # "0.34", not "0.34–0.34"
        return f"vllm/{self.file.removeprefix('vllm/')}:{self.line} (vLLM {releases})"


class LogEvent(BaseModel):
    """One recognised log line; only the fields of its kind are set (see FIELDS_BY_KIND)."""

    kind: LogEventKind
    raw: str = ""
    line_no: int | None = None
    source_file: str | None = None
    level: str | None = None  # INFO, WARNING, ERROR …
    process: str | None = None  # APIServer, EngineCore_DP0, Worker_TP1 … when the prefix says
    timestamp: str | None = None  # as printed (`07-28 06:40:59`); vLLM prints no year
    time_s: float | None = None  # seconds since the log's first line, when the collector can tell

    # version / args
    version: str | None = None  # the banner's; on a stats line, the release the text says it came from
    model: str | None = None  # the served model; for MODEL_TYPE_UNKNOWN the model type transformers lacks
    args: dict[str, str] = Field(default_factory=dict)  # flag spelled as `vllm serve` -> value text

    # sizing
    kv_cache_tokens: int | None = None
    max_model_len: int | None = None
    max_concurrency: float | None = None
    available_kv_gib: float | None = None
    weights_gib: float | None = None
    non_torch_gib: float | None = None  # V0's memory profile: NCCL, CUDA context … outside torch's allocator
    activation_peak_gib: float | None = None  # V0's memory profile: torch's peak over the weights while profiling
    load_seconds: float | None = None
    load_expected_s: float | None = None  # the weights' progress bar: elapsed plus what it says is left
    num_gpu_blocks: int | None = None
    max_num_batched_tokens: int | None = None
    cudagraph_gib: float | None = None
    cudagraph_estimated_gib: float | None = None  # 0.20+: the profiler's estimate beside the actual pool
    capture_s: float | None = None  # how long capturing the CUDA graphs took ("Graph capturing finished in 18 secs")
    cudagraph_profiling: bool | None = None  # whether the KV budget subtracts an estimate of graph memory
    equivalent_utilization: float | None = None  # the util that, without that estimate, gives the same KV budget
    device: str | None = None  # "GPU", "CPU", "cuda:0" …
    cpu_cores: int | None = None  # cores one CPU worker's OpenMP threads are bound to
    block_size: int | None = None  # the attention block size vLLM set itself (over --block-size)
    mamba_aligned: bool | None = None  # set so an attention page holds a Mamba state page (hybrid models)

    # startup failures
    kv_needed_gib: float | None = None
    estimated_max_model_len: int | None = None
    max_seq_len_tokens: int | None = None  # V0: tokens that fit in the KV cache
    free_gib: float | None = None
    total_gib: float | None = None
    gpu_memory_utilization: float | None = None
    requested_gib: float | None = None
    oom_phase: OomPhase | None = None
    tried_to_allocate_gib: float | None = None
    torch_allocated_gib: float | None = (
        None  # torch's OOM text: "Of the allocated memory N GiB is allocated by PyTorch"
    )
    other_processes: bool | None = None  # torch's OOM text names another process holding memory on the GPU
    other_processes_gib: float | None = None  # what those processes hold, summed ("Process N has X MiB memory in use")
    this_process_gib: float | None = None  # torch's "this process has X GiB memory in use" (non-PyTorch included)
    num_dummy_requests: int | None = None
    initial_free_gib: float | None = None
    current_free_gib: float | None = None
    shm_bytes: int | None = None  # what /dev/shm holds, when the text says (Ray does)

    # stats line (fractions 0–1; throughputs tokens/s; preemptions = count in the interval)
    engine: str | None = None
    prompt_throughput_tps: float | None = None
    generation_throughput_tps: float | None = None
    running: int | None = None
    waiting: int | None = None
    deferred: int | None = None
    corrupted: int | None = None  # stats line: requests finished with NaN in their logits this interval
    preemptions: int | None = None
    swapped: int | None = None  # V0: requests preempted by swapping their KV blocks to CPU, not yet swapped back
    kv_usage: float | None = None
    prefix_hit_rate: float | None = None
    total_preemptions: int | None = None  # V0 warning: cumulative count

    # one engine step (--enable-logging-iteration-details); also engine and kv_usage above
    iteration: int | None = None  # the engine's step counter
    context_requests: int | None = None  # requests with a prompt chunk in this step (no output token yet)
    context_tokens: int | None = None  # prompt tokens this step computed (a cached prefix is not among them)
    generation_requests: int | None = None  # requests that decoded in this step
    generation_tokens: int | None = None  # their tokens (more than the requests with speculative decoding)
    step_ms: float | None = None  # the step's time, scheduling to output
    dummy: bool | None = None  # a data-parallel engine's padding step, which served nobody

    # speculative decoding (fractions 0–1)
    acceptance_rate: float | None = None
    mean_acceptance_length: float | None = None
    accepted_tps: float | None = None
    drafted_tps: float | None = None
    accepted_tokens: int | None = None
    drafted_tokens: int | None = None
    position_acceptance: list[float] = Field(default_factory=list)  # per draft position, 0-1 (0.7+ logs it)

    # runtime failures
    rpc_method: str | None = None
    hang_seconds: float | None = None
    during_startup: bool | None = None  # shm wait before the engine finished initialising (compilation)
    init_seconds: float | None = None  # engine start: profile, KV cache, warm-up (compilation included)
    listen_address: str | None = None  # where the API server says it listens: http://0.0.0.0:8000
    exit_code: int | None = None
    rank: int | None = None
    timeout_ms: int | None = None
    ran_ms: int | None = None
    op_type: str | None = None
    prompt_tokens: int | None = None
    requested_tokens: int | None = None
    prompt_limit: int | None = None  # V0's scheduler limit: --max-model-len, or the token budget below it
    message: str | None = None  # the error text for kinds without typed fields
    # vLLM's own messages and unplaced errors
    # the exception class the line names (ValueError, torch.OutOfMemoryError …); on a fatal error or a worker's
    # exception, the class its traceback ends in, once read
    exception: str | None = None
    catalog: CatalogRef | None = None  # the catalog entry the message matched
    component: str | None = None  # where an unplaced error was raised: sampler, torch.compile, NCCL …
    code: str | None = None  # the source line of an unplaced error's last frame: what was being called
    error_code: str | None = None  # a runtime's numbered error, as it prints it (CANN's 500001)
    symbol: str | None = None  # the symbol a compiled library could not resolve
    env_variable: str | None = None  # an environment variable a library refused the value of (OMP_ENV_INVALID)
    requests_per_s: float | None = None  # a benchmark's result
    tokens_per_s: float | None = None
    prompts_done: int | None = None  # the offline progress bar's finished prompts, of prompts_total
    prompts_total: int | None = None
    elapsed_s: float | None = None  # the progress bar's own clock: seconds since that bar started
    # what a person wrote before a benchmark's result ("Before", "After", "v0.4.1"); an alert notification's label
    label: str | None = None
    phase: str | None = None  # startup | serving | unknown, from the log around it
    nearest: list[CatalogRef] = Field(default_factory=list)  # catalog entries closest to an unplaced error
    # a vLLM message that quotes the unplaced error's own value ('embed&token_classify'): vLLM's words for it
    naming_message: CatalogRef | None = None
    request_field: str | None = None  # a request parameter: the one carrying token ids, or the one refused
    nearest_field: str | None = None  # the request field vLLM knows that a refused, unknown one misspells
    nearest_flag: str | None = None  # the flag vLLM's command line takes that a refused one misspells
    # a newer vLLM release that knows the name a message refused (a quantization method): an upgrade accepts it
    known_in_release: str | None = None
    # the releases whose source had a refused quantization method the newest one no longer has ("0.5–0.27"), or
    # that took an engine argument an installed vLLM refused (`worker_use_ray`: "0.4–0.6", removed after)
    known_releases: str | None = None
    # the releases read (vLLM's released packages, "0.4–0.34") none of which takes the engine argument refused: it
    # was never vLLM's (a framework's own patched build passed it)
    absent_from_releases: str | None = None
    # a keyword no release's EngineArgs took that is a flag of vLLM's command line (`--tool-call-parser`): the
    # OpenAI server's (or a subcommand's) option, passed to the engine
    server_flag: str | None = None
    # vLLM's extra that installs a module Python could not find (`decord`: "video"), in the releases `extra_releases`
    # names ("0.7–0.10"): an optional dependency a feature imports only when it is used
    vllm_extra: str | None = None
    extra_releases: str | None = None
    # the name vLLM's interface takes where a message refused one (a chat content part `image` -> `image_url`)
    accepted_instead: str | None = None
    # the installed package whose code called into vLLM in an unplaced error's traceback (trl, lm_eval)
    caller: str | None = None
    # the vLLM plugin package (vllm_ascend, vllm_kunlun) whose code raised an unplaced error: its words are the
    # plugin's, which vLLM's message catalog cannot hold
    plugin: str | None = None
    # the source line printed under each frame of an unplaced error's traceback, outermost first
    calls: list[str] = Field(default_factory=list)
    # an unplaced error's innermost frame that made a call rather than pass one on (torch's module dispatch and
    # Python's wrappers skipped), as `path:line in function`: where a call Python refused the arguments of was made
    call_site: str | None = None
    token_ids: list[int] = Field(default_factory=list)  # the ids it carried
    index: int | None = None  # an index a kernel was given …
    index_bound: int | None = None  # … and the size of the dimension it indexed
    function: str | None = None  # a profiled function (or the function an unplaced error was raised in) …
    code_file: str | None = None  # … the source file it is in (an unplaced error's: its traceback's last frame) …
    own_share: float | None = None  # … and the share of samples spent in it (0-1)
    rss_gib: float | None = None  # the anonymous memory a process the kernel killed held
    nodes_total: int | None = None  # the nodes Kubernetes' scheduler tried …
    insufficient: list[str] = Field(default_factory=list)  # … the resources they lacked (or a node evicted for) …
    taints: list[str] = Field(default_factory=list)  # … and the taints the pod does not tolerate
    status: int | None = None  # an HTTP status a gateway (or the server's health route, to a probe) answered with
    # Kubernetes' probe that failed (liveness, readiness, startup) and what it met: refused (nothing listening),
    # timeout, status (an error status, in `status`), reset (the connection closed under it)
    probe: str | None = None
    probe_result: str | None = None
    gpu_index: int | None = None  # a GPU's index as nvidia-smi numbers it (GPU_PROCESS) …
    pid: int | None = None  # … a process on it …
    memory_gib: float | None = None  # … and the device memory that process holds
    sleep_freed_gib: float | None = None  # the GPU memory a /sleep released …
    sleep_kept_gib: float | None = None  # … and what stayed in use after it
    padding_layers: int | None = None  # placeholder layers vLLM's KV planner added to a layer group …
    waste_share: float | None = None  # … and the share of that kind's KV memory they may waste (0-1)
    num_gpu_blocks_override: int | None = None  # the KV blocks --num-gpu-blocks-override sets, over the profile's
    pod: str | None = None  # a Kubernetes pod's name (POD_STATUS) …
    pod_status: str | None = None  # … its container's status (CrashLoopBackOff, ImagePullBackOff …) …
    restarts: int | None = None  # … how often the kubelet restarted it …
    image: str | None = None  # … the image it could not pull …
    namespace: str | None = None  # … and, where the text names them (a Kubernetes alert's description), its namespace …
    container: str | None = None  # … and the container
    in_flight: int | None = None  # requests vLLM held when its shutdown began (SERVER_SHUTDOWN)
    address: str | None = None  # host:port a client's connection went to (SERVER_UNREACHABLE) …
    url_path: str | None = None  # … the route it asked for …
    connect_result: str | None = None  # … and what the connection met: refused, timeout, unresolved, unreachable
    chunks: int | None = None  # a pasted stream's chunks (STREAMED_ANSWER) …
    chunks_without_finish_reason: int | None = None  # … those with a choice that leaves finish_reason out …
    answer_chars: int | None = None  # … the characters of its answer (delta.content, a completion's text, tool calls) …
    reasoning_chars: int | None = None  # … and of delta.reasoning or delta.reasoning_content …
    finish_reason: str | None = None  # … how it ended (its last non-null finish_reason) …
    stream_gaps: int | None = None  # … and the lines between its chunks that are no part of a stream (a paste's `...`)
    min_tokens: int | None = None  # a printed SamplingParams' min_tokens (OFFLINE_SAMPLING_PARAMS) …
    stop_strings: list[str] = Field(default_factory=list)  # … and its stop strings
    generated_tokens: int | None = None  # tokens one printed output holds (OFFLINE_OUTPUT) …
    prompt_token_ids: list[int] = Field(default_factory=list)  # … and its prompt's ids, as printed
    blocks_needed: int | None = None  # KV blocks an allocation asked kvcached's pool for (of num_gpu_blocks free)
    probe_delay_s: float | None = None  # a probe's settings: initialDelaySeconds …
    probe_period_s: float | None = None  # … periodSeconds …
    probe_failures: int | None = None  # … failureThreshold
    xid: int | None = None  # the NVIDIA driver's Xid number a GPU fault was logged with
    repeats: int | None = None  # how many lines of the text said the same as this one (an unplaced line's repeats)
    fd_limit: int | None = None  # the open-files (soft) limit vLLM found and could not raise (FD_LIMIT)
    kernel_module_version: str | None = None  # the NVIDIA kernel module loaded (NVRM), beside its libraries' `version`
    # what Ray's memory monitor printed when it killed a worker: the node's memory used and total (GB as Ray prints
    # them) and the share of it past which it kills (RAY_memory_usage_threshold)
    cuda_required: str | None = None  # the CUDA release an image declares it needs (DRIVER_TOO_OLD)
    argument_value: str | None = None  # a value argparse refused for a flag (ARG_VALUE_REFUSED)
    versions_offered: str | None = None  # the versions pip's index offered for a requirement it could not meet
    resource_required: int | None = None  # what a kernel asked of a per-block resource (TRITON_OUT_OF_RESOURCES) …
    resource_limit: int | None = None  # … and what the GPU has
    installed: str | None = None  # the version of a package installed where another requires it (PACKAGE_CONFLICT)
    exit_type: str | None = None  # Ray's worker exit type for an actor that died (RAY_ACTOR_DIED) …
    actor_class: str | None = None  # … the actor's class (vLLM's workers are RayWorkerWrapper) …
    actor_id: str | None = None  # … and its id
    node_used_gb: float | None = None
    node_total_gb: float | None = None
    memory_threshold: float | None = None
    alert_status: str | None = None  # an Alertmanager notification's status: firing or resolved (ALERT_NOTICE)
    figure: float | None = None  # a serving benchmark's figure (BENCHMARK_FIGURE)
    gpus_required: float | None = None  # the GPUs one Ray Serve replica asks for (RAY_REPLICA_UNPLACED) …
    gpus_available: float | None = None  # … and the GPUs the Ray cluster has free

    def where(self) -> str | None:
        """Where the event was read, as evidence cites it: `file:line`, or the source alone when it has no
        line (servops' launch check says `--server-args`), or None when neither is known."""
        if self.line_no is not None:
            return f"{self.source_file or 'log'}:{self.line_no}"
        return self.source_file


#: The startup failures whose cause OP-1 names (the KV cache or memory at start). The log reader keeps one of each
#: (several processes print them, and tracebacks again); a process death printed after one is the shutdown (OP-3.3).
STARTUP_FAILURE_KINDS = (
    LogEventKind.MAX_MODEL_LEN_TOO_LARGE,
    LogEventKind.V0_MAX_SEQ_LEN_TOO_LARGE,
    LogEventKind.NO_CACHE_BLOCKS,
    LogEventKind.FREE_MEMORY_BELOW_REQUESTED,
    LogEventKind.CUDA_OOM,
    LogEventKind.MEMORY_PROFILING_ERROR,
)


#: which optional fields each kind carries (documentation for collectors; checked in tests).
FIELDS_BY_KIND: dict[LogEventKind, tuple[str, ...]] = {
    LogEventKind.VERSION: ("version", "model"),
    LogEventKind.NON_DEFAULT_ARGS: ("args",),
    LogEventKind.CHUNKED_PREFILL: ("max_num_batched_tokens",),
    LogEventKind.MODEL_LOADING: ("weights_gib", "load_seconds"),
    LogEventKind.CHECKPOINT_FILESYSTEM: ("message", "weights_gib", "free_gib"),
    LogEventKind.WEIGHT_LOAD_PROGRESS: ("message", "load_seconds", "load_expected_s"),
    LogEventKind.API_SERVER_PROCESS_FAILED: ("message",),
    LogEventKind.ENGINE_READY_TIMEOUT: ("message", "timeout_ms"),
    LogEventKind.AVAILABLE_KV_MEMORY: ("available_kv_gib", "weights_gib", "non_torch_gib", "activation_peak_gib"),
    LogEventKind.KV_CACHE_EXTENDED: ("num_gpu_blocks", "available_kv_gib"),
    LogEventKind.EXTENSIBLE_KV_OFF: ("message",),
    LogEventKind.MEMORY_BUDGET: (
        "total_gib",
        "gpu_memory_utilization",
        "requested_gib",
        "free_gib",
        "activation_peak_gib",
        "cudagraph_gib",
    ),
    LogEventKind.KV_CACHE_SIZE: ("kv_cache_tokens", "device", "max_model_len", "max_concurrency"),
    LogEventKind.MAX_CONCURRENCY: ("max_model_len", "max_concurrency"),
    LogEventKind.V0_GPU_BLOCKS: ("num_gpu_blocks", "device"),
    LogEventKind.CUDA_GRAPH_MEMORY: ("cudagraph_gib", "cudagraph_estimated_gib", "capture_s"),
    LogEventKind.CUDAGRAPH_PROFILING: ("cudagraph_profiling", "gpu_memory_utilization", "equivalent_utilization"),
    LogEventKind.STATS_LINE: (
        "engine",
        "prompt_throughput_tps",
        "generation_throughput_tps",
        "running",
        "waiting",
        "deferred",
        "corrupted",
        "preemptions",
        "swapped",
        "kv_usage",
        "prefix_hit_rate",
        "version",
    ),
    LogEventKind.ITERATION_LINE: (
        "engine",
        "iteration",
        "context_requests",
        "context_tokens",
        "generation_requests",
        "generation_tokens",
        "step_ms",
        "dummy",
        "kv_usage",
    ),
    LogEventKind.SPEC_DECODE_METRICS: (
        "acceptance_rate",
        "mean_acceptance_length",
        "accepted_tps",
        "drafted_tps",
        "accepted_tokens",
        "drafted_tokens",
        "position_acceptance",
    ),
    LogEventKind.V0_PREEMPTION_WARNING: ("total_preemptions",),
    LogEventKind.MAX_MODEL_LEN_TOO_LARGE: (
        "max_model_len",
        "kv_needed_gib",
        "available_kv_gib",
        "estimated_max_model_len",
    ),
    LogEventKind.V0_MAX_SEQ_LEN_TOO_LARGE: ("max_model_len", "max_seq_len_tokens"),
    LogEventKind.NO_CACHE_BLOCKS: (),
    LogEventKind.FREE_MEMORY_BELOW_REQUESTED: (
        "free_gib",
        "total_gib",
        "gpu_memory_utilization",
        "requested_gib",
        "device",
    ),
    LogEventKind.CUDA_OOM: (
        "message",  # NVML_ASSERT_OOM when PyTorch's allocator asserted on NVML while wording its OOM
        "device",  # "NPU" for torch_npu's allocator (Ascend); None for CUDA
        "oom_phase",
        "tried_to_allocate_gib",
        "total_gib",
        "free_gib",
        "torch_allocated_gib",
        "other_processes",
        "other_processes_gib",
        "this_process_gib",
        "num_dummy_requests",
    ),
    LogEventKind.MEMORY_PROFILING_ERROR: ("initial_free_gib", "current_free_gib"),
    LogEventKind.ENGINE_CORE_FAILED: ("message",),
    LogEventKind.ENGINE_DEAD: ("message",),
    LogEventKind.NAN_PROBABILITIES: ("message",),
    LogEventKind.ZERO_PROBABILITIES: ("message",),
    LogEventKind.BANG_ANSWER: ("message",),
    LogEventKind.FATAL_ERROR: ("message",),
    LogEventKind.WORKER_EXCEPTION: ("message",),
    LogEventKind.RPC_TIMEOUT: ("rpc_method",),
    LogEventKind.JIT_DURING_INFERENCE: ("message", "function"),
    LogEventKind.SHM_BROADCAST_HANG: ("hang_seconds", "during_startup"),
    LogEventKind.WORKER_DIED: ("exit_code", "process"),
    LogEventKind.NCCL_WATCHDOG_TIMEOUT: ("rank", "timeout_ms", "ran_ms", "op_type", "component"),
    LogEventKind.NCCL_ERROR: ("message",),
    LogEventKind.CUDA_KERNEL_FAULT: ("message", "code_file", "component"),
    LogEventKind.STATS_DISABLED: (),
    LogEventKind.REQUEST_TOO_LONG: ("max_model_len", "prompt_tokens", "requested_tokens"),
    LogEventKind.PROMPT_OVER_LIMIT: ("prompt_tokens", "prompt_limit"),
    LogEventKind.AUTO_FIT: ("max_model_len", "estimated_max_model_len", "available_kv_gib"),
    LogEventKind.ENGINE_READY: ("init_seconds",),
    LogEventKind.COMPILE_TOTAL: ("init_seconds",),
    LogEventKind.SERVER_LISTENING: ("listen_address",),
    LogEventKind.PLATFORM_PLUGIN: ("message",),
    LogEventKind.CPU_THREADS_BIND: ("cpu_cores",),
    LogEventKind.ATTENTION_BLOCK_SIZE: ("block_size", "mamba_aligned"),
    LogEventKind.SHM_TOO_SMALL: ("message", "shm_bytes"),
    LogEventKind.CUDA_FORKED: ("message",),
    LogEventKind.DAEMON_NO_CHILDREN: ("message",),
    LogEventKind.NUMA_CALL_DENIED: ("message", "function"),
    LogEventKind.OMP_ENV_INVALID: ("message", "env_variable"),
    LogEventKind.FA_VERSION_UNSUPPORTED: ("message", "version"),
    LogEventKind.HCCL_BUFFER_TOO_SMALL: ("message", "resource_required", "resource_limit"),
    LogEventKind.AITER_UNTUNED_SHAPE: ("message", "code_file"),
    LogEventKind.SLEEP_WAKE_FAILED: ("message",),
    LogEventKind.SLEEP_FREED: ("sleep_freed_gib", "sleep_kept_gib", "code_file"),
    LogEventKind.ASCEND_SOC_MISMATCH: ("message", "component"),
    LogEventKind.COMPILER_TOO_OLD: ("message",),
    LogEventKind.WINDOWS_HOST: ("message",),
    LogEventKind.CUSTOM_ALL_REDUCE_FAILED: ("message",),
    LogEventKind.REMOTE_CODE_REFUSED: ("message",),
    LogEventKind.NCCL_SYSTEM_ERROR: ("message",),
    LogEventKind.EXTENSION_UNDEFINED_SYMBOL: ("message", "component", "symbol"),
    LogEventKind.MODEL_TYPE_UNKNOWN: ("message", "model"),
    LogEventKind.TRANSFORMERS_BACKEND: ("message",),
    LogEventKind.REASONING_TAG: ("message",),
    LogEventKind.GGUF_READ_AS_CONFIG: ("message",),
    LogEventKind.CONFIG_NOT_JSON: ("message",),
    LogEventKind.GGUF_METADATA_MISSING: ("message",),
    LogEventKind.KV_OFFLOAD_REGION: ("message", "shm_bytes"),
    LogEventKind.RENDEZVOUS_UNREACHABLE: ("message", "timeout_ms"),
    LogEventKind.RENDEZVOUS_WAITING: ("message", "timeout_ms"),
    LogEventKind.GLOO_MESH_FAILED: ("message",),
    LogEventKind.HAMI_ILLEGAL_DEVICE: ("message",),
    LogEventKind.MOONCAKE_METADATA_PLUGIN: ("message", "address"),
    LogEventKind.PYNCCL_NEVER_STARTED: (),
    LogEventKind.KV_HEADS_INDIVISIBLE: ("message",),
    LogEventKind.TORCHAO_FP8_UNSUPPORTED: ("message",),
    LogEventKind.ONECCL_LIBRARY_MISSING: ("message",),
    LogEventKind.ROCM_IPC_EXPORT_FAILED: ("message",),
    LogEventKind.SLIDING_WINDOW_CAPPED: ("max_model_len",),
    LogEventKind.GLOO_INTERFACE_MISSING: ("message",),
    LogEventKind.TPU_BUSY: ("message",),
    LogEventKind.GAUDI_MODULES_INVALID: ("message", "index_bound"),
    LogEventKind.ASCEND_EXTENSION_MISSING: ("message",),
    LogEventKind.VISIBLE_DEVICE_UUID: ("message",),
    LogEventKind.BUILD_CUDA_MISMATCH: ("version", "cuda_required"),
    LogEventKind.BUILD_EXTENSION_MISSING: ("message",),
    LogEventKind.BUILD_NO_CUDA_HOME: ("message", "component"),
    LogEventKind.SCRAPED_METRIC_MISSING: ("message", "component", "known_releases", "accepted_instead"),
    LogEventKind.MEDIA_URL_FILE_NAME: ("message", "component"),
    LogEventKind.RAY_RESERVED_ENV: ("message",),
    LogEventKind.ONECCL_DEVICE_FILES: ("message", "function"),
    LogEventKind.NCCL_GRAPH_UNSUPPORTED: ("message",),
    LogEventKind.DRAFT_VOCAB_MISMATCH: ("message",),
    LogEventKind.MAMBA_PAGE_TOO_SMALL: ("message",),
    LogEventKind.HELM_CHART_NOT_FOUND: ("message", "component"),
    LogEventKind.BUILD_NO_CUDA_RUNTIME: ("message",),
    LogEventKind.WHEEL_NAMED_UNKNOWN: ("message",),
    LogEventKind.ATTENTION_HEAD_DIM_REFUSED: ("message",),
    LogEventKind.XFORMERS_BUILD_MISMATCH: ("message", "version"),
    LogEventKind.ONECCL_WORKER_START: ("message",),
    LogEventKind.HOST_OOM_KILLED: (
        "message",
        "component",
        "rss_gib",
        "node_used_gb",
        "node_total_gb",
        "memory_threshold",
    ),
    LogEventKind.POD_STATUS: (
        "message",
        "pod",
        "pod_status",
        "restarts",
        "image",
        "insufficient",
        "component",
        "namespace",
        "container",
    ),
    LogEventKind.GPU_PROCESS: ("gpu_index", "pid", "component", "memory_gib"),
    LogEventKind.POD_UNSCHEDULABLE: ("message", "nodes_total", "insufficient", "taints", "component"),
    LogEventKind.CONTAINER_HOST_MISMATCH: ("message", "component", "device"),
    LogEventKind.CONTAINER_EXIT_CODE: ("exit_code",),
    LogEventKind.PROBE_SETTINGS: (
        "message",
        "probe",
        "timeout_ms",
        "probe_delay_s",
        "probe_period_s",
        "probe_failures",
    ),
    LogEventKind.KERNEL_ARCH_GUARD: ("message",),
    LogEventKind.MOE_GROUPED_GEMM_INIT_FAILED: ("message",),
    LogEventKind.DOWNLOAD_LOCK_WAIT: ("message",),
    LogEventKind.CONTAINER_ZOMBIE: (),
    LogEventKind.FIELD_CHOICE_REFUSED: ("argument_value", "accepted_instead"),
    LogEventKind.PROCESSOR_KWARG_IGNORED: ("message",),
    LogEventKind.EPP_NO_TARGET_POD: ("message",),
    LogEventKind.DETOKENIZER_UNKNOWN_ID: ("message",),
    LogEventKind.DECODE_STREAM_FAILED: ("message",),
    LogEventKind.METHOD_NOT_ALLOWED: ("message", "component", "status"),
    LogEventKind.HARMONY_ERROR: ("message", "token_ids"),
    LogEventKind.AUDIO_UNDECODABLE: ("message",),
    LogEventKind.CHAT_TEMPLATE_REFUSED: ("message", "exception"),
    LogEventKind.EMPTY_PROMPT: ("message",),
    LogEventKind.REQUEST_TOKEN_IDS: ("request_field", "token_ids"),
    LogEventKind.REQUEST_SCHEMA_REFUSED: ("request_field", "message", "nearest_field"),
    LogEventKind.RESPONSE_SCHEMA_FAILED: ("message", "request_field"),
    LogEventKind.REQUEST_FIELD_IGNORED: ("request_field", "nearest_field"),
    LogEventKind.CLIENT_KEYWORD_REFUSED: ("request_field", "component", "message"),
    LogEventKind.INDEX_OUT_OF_BOUNDS: ("index", "index_bound"),
    LogEventKind.CUT_TRACEBACK: ("message", "function", "code_file", "code", "component", "phase", "exception"),
    LogEventKind.CUDA_DRIVER_MISMATCH: ("message",),
    LogEventKind.GPU_ARCH_UNSUPPORTED: ("message", "component", "version", "accepted_instead"),
    LogEventKind.NVIDIA_DRIVER_MISMATCH: ("message", "component", "version", "kernel_module_version"),
    LogEventKind.WEIGHTS_FILE_DAMAGED: ("message",),
    LogEventKind.RAY_ACTOR_DIED: ("message", "component", "exit_type", "actor_class", "actor_id", "pid"),
    LogEventKind.RAY_TASK_RAISED: ("message", "component"),
    LogEventKind.SPAWN_BEFORE_MAIN: ("message",),
    LogEventKind.LOGGING_ERROR: ("message",),
    LogEventKind.RAY_NODE_DEAD: ("message", "address"),
    LogEventKind.RAY_REPLICA_UNPLACED: ("message", "gpus_required", "gpus_available", "component", "elapsed_s"),
    LogEventKind.FD_LIMIT: ("message", "fd_limit"),
    LogEventKind.HUB_NOT_CACHED: ("message", "timeout_ms"),
    LogEventKind.MODELSCOPE_ON: ("message",),
    LogEventKind.NVML_NOT_SUPPORTED: ("message",),
    LogEventKind.HUB_TLS_UNTRUSTED: ("message",),
    LogEventKind.HUB_UNAVAILABLE: ("message", "status"),
    LogEventKind.PORT_IN_USE: ("message", "component", "address"),
    LogEventKind.BIND_ADDRESS_NOT_LOCAL: ("message", "component", "address"),
    LogEventKind.PLATFORM_UNAVAILABLE: ("message", "component"),
    LogEventKind.TOKENIZER_LENGTH_WARNING: ("prompt_tokens", "prompt_limit"),
    LogEventKind.VLLM_NAME_UNBOUND: ("message",),
    LogEventKind.VLLM_IMPORT_HIDDEN: ("message",),
    LogEventKind.TPU_HBM_EXHAUSTED: ("message", "component", "requested_gib", "free_gib", "total_gib"),
    LogEventKind.XFORMERS_NO_KERNEL: ("message", "component"),
    LogEventKind.VLLM_OP_SCHEMA_MISMATCH: ("message", "component"),
    LogEventKind.KV_PADDING_LAYERS: ("padding_layers", "waste_share"),
    LogEventKind.KV_BLOCKS_OVERRIDDEN: ("num_gpu_blocks", "num_gpu_blocks_override"),
    LogEventKind.TRL_SERVER_UNREACHED: ("message",),
    LogEventKind.TRL_VLLM_DEVICE: ("device", "message"),
    LogEventKind.TRL_NO_VLLM_SERVE: ("message",),
    LogEventKind.VLLM_IN_PROCESS_MISSING: ("message", "component"),
    LogEventKind.UNSLOTH_NO_VLLM_ENGINE: ("model",),
    LogEventKind.LAUNCHER_GAVE_UP: ("message", "component", "engine", "timeout_ms"),
    LogEventKind.DYNAMO_CONTROL_PLANE: ("message", "component", "address"),
    LogEventKind.AITER_REFUSED: ("message", "component", "device", "function"),
    LogEventKind.COLLECTIVE_SETUP: ("message", "component", "address"),
    LogEventKind.XPU_FREE_MEMORY_UNKNOWN: ("message", "device"),
    LogEventKind.ASCEND_ACL_FAILED: ("message", "error_code", "component"),
    LogEventKind.TRITON_MMA_LAYOUT: ("message",),
    LogEventKind.TRITON_COMPILE_ABORT: ("message", "component", "function", "code_file"),
    LogEventKind.NEURON_FAILED: ("message", "error_code", "component"),
    LogEventKind.PLATFORM_DETECTED: ("message", "component"),
    LogEventKind.GPU_FAULT: ("message", "xid", "device"),
    LogEventKind.DISK_FULL: ("message", "component"),
    LogEventKind.JIT_NO_NVCC: ("message",),
    LogEventKind.JIT_BUILD_FAILED: ("message", "component", "function"),
    LogEventKind.TRITON_BUILD_FAILED: ("message",),
    LogEventKind.SOURCE_BUILD_STOPPED: ("message",),
    LogEventKind.CUDA_LIBRARY_MISSING: ("message", "component", "version"),
    LogEventKind.TORCH_CUDA_BUILD: ("version",),
    LogEventKind.DRIVER_TOO_OLD: ("message", "version", "cuda_required", "component"),
    LogEventKind.TORCH_WITHOUT_CUDA: ("message", "version", "component"),
    LogEventKind.TORCH_COMPILE_FAILED: ("message", "component"),
    LogEventKind.TORCHVISION_MISMATCH: ("message", "component", "version", "installed"),
    LogEventKind.FLASH_ATTN_OLD_GPU: ("message",),
    LogEventKind.MODEL_NOT_FOUND: ("message", "model", "component"),
    LogEventKind.HOST_ALLOC_REFUSED: ("message", "memory_gib"),
    LogEventKind.PIP_NO_DISTRIBUTION: ("message", "component", "version", "versions_offered"),
    LogEventKind.TRANSFORMERS_NAME_TAKEN: ("message", "model"),
    LogEventKind.TOKENIZER_FILE_UNREADABLE: ("message", "component"),
    LogEventKind.ALERT_NOTICE: ("message", "label", "alert_status"),
    LogEventKind.SYSTEM_LIBRARY_MISSING: ("message", "component"),
    LogEventKind.REMOTE_CODE_IMPORTS: ("message",),
    LogEventKind.PIP_BUILD_FAILED: ("message", "component"),
    LogEventKind.VLLM_BUILD_NO_DEVICE: ("message",),
    LogEventKind.TRITON_OUT_OF_RESOURCES: (
        "message",
        "resource_required",
        "resource_limit",
        "component",
        "function",
        "code_file",
    ),
    LogEventKind.CUDA_RUNTIME_ERROR: ("message", "index_bound"),
    LogEventKind.PACKAGE_CONFLICT: ("message", "component", "version", "installed"),
    LogEventKind.SYSTEM_LIBRARY_TOO_OLD: ("message", "component", "version"),
    LogEventKind.FLASHINFER_VERSION_SKEW: ("message", "component", "version"),
    LogEventKind.GATEWAY_ERROR: ("message", "status", "component", "timeout_ms"),
    LogEventKind.LOCAL_ENDPOINT: ("message",),
    LogEventKind.SERVER_UNREACHABLE: ("message", "component", "address", "url_path", "connect_result"),
    LogEventKind.SERVER_DISCONNECTED: ("message", "component", "connect_result"),
    LogEventKind.CLIENT_TIMEOUT: ("message", "component", "address", "timeout_ms"),
    LogEventKind.PROTOCOL_MISMATCH: ("message", "component"),
    LogEventKind.REQUEST_ADDED: ("message",),
    LogEventKind.EXIT_NOISE: ("message",),
    LogEventKind.SERVER_SHUTDOWN: ("message", "component", "timeout_ms", "in_flight"),
    LogEventKind.REQUEST_ABORTED: ("message",),
    LogEventKind.PROXY_URL_INVALID: ("message",),
    LogEventKind.HEALTH_CHECK_FAILED: ("message", "component", "timeout_ms", "probe", "probe_result", "status"),
    LogEventKind.BENCHMARK_THROUGHPUT: ("requests_per_s", "tokens_per_s", "label", "version"),
    LogEventKind.BENCHMARK_FIGURE: ("label", "message", "figure"),
    LogEventKind.OFFLINE_PROGRESS: (
        "prompts_done",
        "prompts_total",
        "elapsed_s",
        "requests_per_s",
        "prompt_throughput_tps",
        "generation_throughput_tps",
    ),
    LogEventKind.PROFILE_HOTSPOT: ("function", "code_file", "own_share"),
    LogEventKind.ATTENTION_FALLBACK: ("message",),
    LogEventKind.ATTENTION_BACKEND: ("message",),
    LogEventKind.HUB_ACCESS_REFUSED: ("message", "model"),
    LogEventKind.HUB_FILE_MISSING: ("message", "model", "label", "component"),
    LogEventKind.ARGS_AMBIGUOUS: ("message", "component"),
    LogEventKind.UID_WITHOUT_USER: ("message",),
    LogEventKind.PASSWD_LOCKED: ("message",),
    LogEventKind.CACHE_NOT_WRITABLE: ("message", "component"),
    LogEventKind.PATH_READ_ONLY: ("message",),
    LogEventKind.LIBRARY_UNREADABLE: ("message",),
    LogEventKind.NUMPY_ABI_MISMATCH: ("message",),
    LogEventKind.ARGS_UNRECOGNIZED: ("message", "component", "nearest_flag", "known_in_release", "known_releases"),
    LogEventKind.ARGS_REQUIRED: ("message", "component"),
    LogEventKind.COMMAND_NOT_FOUND: ("message", "component", "error_code"),
    LogEventKind.KERNEL_NOT_FOR_CAPABILITY: ("message", "version", "component"),
    LogEventKind.UV_FLAG_UNKNOWN: ("message",),
    LogEventKind.TRITON_CACHE_RACE: ("message", "component"),
    LogEventKind.NIXL_BACKEND_ERROR: ("message", "version"),
    LogEventKind.ARG_VALUE_REFUSED: ("message", "component", "argument_value", "accepted_instead"),
    LogEventKind.NATIVE_CRASH: ("message", "component"),
    LogEventKind.NATIVE_FRAME: ("code_file", "function"),
    LogEventKind.MODULE_NOT_FOUND: ("message", "component", "exception"),
    LogEventKind.PLUGIN_VERSION_MISMATCH: ("message",),
    LogEventKind.KVCACHED_POOL_SHORT: ("num_gpu_blocks", "blocks_needed"),
    LogEventKind.STREAMED_ANSWER: (
        "message",
        "chunks",
        "chunks_without_finish_reason",
        "answer_chars",
        "reasoning_chars",
        "finish_reason",
        "stream_gaps",
    ),
    LogEventKind.ANSWER_BODY: ("message", "answer_chars", "reasoning_chars", "finish_reason", "generated_tokens"),
    LogEventKind.OFFLINE_SAMPLING_PARAMS: ("min_tokens", "requested_tokens", "stop_strings"),
    LogEventKind.OFFLINE_OUTPUT: ("message", "generated_tokens", "token_ids", "prompt_token_ids", "finish_reason"),
    LogEventKind.VLLM_VERSION_UNBUILT: ("component",),
    LogEventKind.ROUTE_NOT_FOUND: ("message", "component"),
    LogEventKind.UNAUTHORIZED: ("message", "component"),
    LogEventKind.SERVER_ERROR_RESPONSE: ("message", "component"),
    LogEventKind.BAD_REQUEST_RESPONSE: ("message", "component"),
    LogEventKind.VLLM_MESSAGE: (
        "message",
        "exception",
        "catalog",
        "phase",
        "known_in_release",
        "known_releases",
        "accepted_instead",
    ),
    LogEventKind.UNPLACED_ERROR: (
        "message",
        "exception",
        "component",
        "phase",
        "nearest",
        "naming_message",
        "code",
        "code_file",
        "function",
        "caller",
        "plugin",
        "known_in_release",
        "known_releases",
        "absent_from_releases",
        "server_flag",
        "vllm_extra",
        "extra_releases",
        "calls",
    ),
    LogEventKind.UNPLACED_LINE: ("message", "code_file", "component", "nearest", "repeats"),
}
