"""The errors of a server that was running: fatal engine errors, hangs, RPC timeouts, dead workers, NCCL."""

from __future__ import annotations

import re

from advisor.collect.log_patterns.pattern import NUM, SHELL_JOB, Fields, Pattern, to_float, to_int, wording
from rules.catalog.health import V0_LOOP_CALLBACK
from rules.catalog.op7_cuda_errors import ERRORS as CUDA_ERRORS
from rules.events import (
    ABSEIL_REPORTED,
    DECODE_STREAM_INPUT,
    DECODE_STREAM_PREFIX,
    DECODE_STREAM_PREFIX_LONGER,
    DETOKENIZER_NONE,
    DETOKENIZER_TEKKEN,
    FLASHINFER_SAMPLER,
    SHELL_REPORTED,
    SUBPROCESS_REPORTED,
    SYSTEMD_REPORTED,
    TRITON_REPORTED,
    TVM_FFI_REPORTED,
)
from rules.events import LogEventKind as K

# The CUDA runtime's words for the error codes of a kernel that faulted (cudaGetErrorString), which PyTorch's CUDA error
# names by code on the line after them.
KERNEL_FAULT_WORDS = {
    "cudaErrorIllegalAddress": "an illegal memory access was encountered",
    "cudaErrorMisalignedAddress": "misaligned address",
    "cudaErrorIllegalInstruction": "an illegal instruction was encountered",
    "cudaErrorLaunchFailure": "unspecified launch failure",
}


# cudaErrorStreamCaptureUnsupported's words, and the rest of the capture family (cudaErrorStreamCaptureInvalidated …
# cudaErrorCapturedEvent, 901-907): work outside the captured stream, or an event of it queried, while a graph was
# captured; PyTorch's "CUDA error: …" and NCCL's own check ("Cuda failure '…'") print them the same
_CAPTURE = r"operation not permitted when stream is capturing"
_CAPTURE_OTHER = (
    r"operation failed due to a previous error during capture|operation would result in a merge of separate capture "
    r"sequences|capturing stream has unjoined work|dependency created on uncaptured work in another stream|operation "
    r"would make the legacy stream depend on a capturing blocking stream|operation not permitted on an event last "
    r"recorded in a capturing stream"
)


# CUDA runtime error codes by name (`cudaErrorAssert`), for the errors OP-7.46 explains: the key it reads them by
CUDA_ERROR_KEYS = {error.name: key for key, error in CUDA_ERRORS.items() if re.fullmatch(r"cudaError\w+", error.name)}
_CUDA_CODES = "|".join(CUDA_ERROR_KEYS)


def _cuda_runtime_error(match: re.Match[str]) -> Fields:
    """Which CUDA error: cuBLAS failing to allocate is the GPU out of memory (as Triton's driver call failing so,
    loading or launching a kernel); an index assertion, a device-side assert."""
    kind = match.lastgroup or ""
    if kind in ("index", "bare") or match.groupdict().get("bound"):
        return {"message": "assert", "index_bound": to_int(match.groupdict().get("bound"))}
    return {"message": {"cublas": "oom"}.get(kind, kind)}


# systemd's short names of the signals that mean a crash in native code, as faulthandler and the shell word them
_SYSTEMD_SIGNALS = {
    "SEGV": "Segmentation fault",
    "BUS": "Bus error",
    "ABRT": "Aborted",
    "FPE": "Floating point exception",
    "ILL": "Illegal instruction",
}
# The signals Triton Inference Server's handler is installed for (triton_signal.cc: SIGSEGV and SIGABRT), by the
# numbers it prints (signal(7) on Linux)
_TRITON_SIGNALS = {"11": _SYSTEMD_SIGNALS["SEGV"], "6": _SYSTEMD_SIGNALS["ABRT"]}


# zsh's words for those signals, as the shell's (bash's) names the rules read
_ZSH_SIGNALS = {
    "segmentation fault": "Segmentation fault",
    "bus error": "Bus error",
    "abort": "Aborted",
    "floating point exception": "Floating point exception",
    "illegal hardware instruction": "Illegal instruction",
}


PATTERNS: tuple[Pattern, ...] = (
    wording(  # the detokenizer on a sampled id its tokenizer has no token for: tokenizers' Rust binding refusing the
        # None convert_ids_to_tokens gave (with or without Python's `TypeError: `: vllm#2104 pasted it without), or
        # the Mistral tokenizer's tekken lookup of the empty bytes such an id became (vllm#9557, vLLM PR #9625)
        ("cannot be converted to 'PyString'", "KeyError: b''"),
        K.DETOKENIZER_UNKNOWN_ID,
        r"argument 'tokens': 'NoneType' object cannot be converted to 'PyString'(?P<none>)|(?:^|\s)KeyError: b''\s*$",
        lambda m: {"message": DETOKENIZER_NONE if m["none"] is not None else DETOKENIZER_TEKKEN},
    ),
    wording(  # tokenizers' DecodeStream, which vLLM V1's fast incremental detokenizer steps once per token: its state
        # broken by output that is not valid UTF-8 (vllm#17448, PR #19449), or an id it cannot take (vllm#26071,
        # PR #26445: a negative id, a TypeError from tokenizers 0.22.1 where it had been an OverflowError)
        # (tokenizers 0.22.0 made the first longer, `… while decoding stream. Token ID: …`, which vLLM's exact match
        # missed until PR #24159: the longer words say a tokenizers that new)
        ("Invalid prefix encountered", "StreamInput must be either an integer"),
        K.DECODE_STREAM_FAILED,
        r"Invalid prefix encountered(?P<prefix>)(?P<longer> while decoding stream\b.*)?(?![\w ])"
        r"|StreamInput must be either an integer or a list of integers",
        lambda m: {
            "message": (DECODE_STREAM_PREFIX_LONGER if m["longer"] else DECODE_STREAM_PREFIX)
            if m["prefix"] is not None
            else DECODE_STREAM_INPUT
        },
    ),
    wording(  # Ray's header of an exception raised in a task or an actor's method: the class and the method; a Serve
        # replica's start is read as its actor's death (environment.py), so it is left to that reading
        ("RayTaskError(",),
        K.RAY_TASK_RAISED,
        # (the header alone, with Ray's details of the worker after it: a line that goes on with the message is read
        # by that message's wording)
        r"RayTaskError\((?P<exc>[\w.]+)\): ray::(?P<target>[\w.:<>-]+?)\(\)(?=\s*(?:\(pid=|$))",
        lambda m: (
            None if "initialize_and_get_metadata" in m["target"] else {"message": m["exc"], "component": m["target"]}
        ),
    ),
    wording(  # multiprocessing's spawn bootstrap check (multiprocessing/spawn.py's _check_not_importing_main)
        ("An attempt has been made to start a new process before",),
        K.SPAWN_BEFORE_MAIN,
        r"An attempt has been made to start a new process before",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # logging's handleError: the record's format string on its "Message:" line, when it holds a placeholder
        ("Message: ",),
        K.LOGGING_ERROR,
        r"^\s*Message: (?P<q>['\"])(?P<format>.*%[-+ #0-9.]*[sdrifxXeEgG].*)(?P=q)\s*$",
        lambda m: {"message": m["format"]},
    ),
    wording(  # what every exiting process prints, whatever stopped it (HL-7 reads it only when nothing else is there)
        (
            "destroy_process_group() was not called",
            "objects to clean up at shutdown",
            "Exception ignored in: <",
            "Python is likely shutting down",
        ),
        K.EXIT_NOISE,
        r"(?P<pg>destroy_process_group\(\) was not called before program exit)"
        r"|(?P<shm>There appear to be \d+ leaked \w+ objects to clean up at shutdown)"
        r"|(?P<del>^Exception ignored in: <(?:function|bound method) [\w.]*__del__)"
        # an import a destructor tried while the interpreter tore itself down (run-llama/llama_index#13019: LlamaIndex's
        # Vllm wrapper's __del__ after the call had run; the maintainer: noise at shutdown, not a failure)
        r"|(?P<meta>sys\.meta_path is None, Python is likely shutting down)",
        lambda m: {
            "message": {
                "pg": "an undestroyed process group",
                "shm": "leaked shared memory",
                "del": "a finaliser",
                "meta": "an import during the interpreter's shutdown",
            }[m.lastgroup or "pg"]
        },
    ),
    wording(  # vLLM 0.32's shutdown (v1/engine/core.py): the signal, the mode (--shutdown-timeout: 0 aborts), the count
        ("[shutdown] EngineCore: ",),
        K.SERVER_SHUTDOWN,
        r"\[shutdown\] EngineCore: (?:trigger received signal=(?P<signal>SIG\w+)"
        r"|start mode=(?P<mode>abort|drain) timeout=(?P<timeout>\d+)s"
        r"|(?P<verb>aborting|draining) in-flight requests count=(?P<count>\d+)(?: timeout=(?P<dtimeout>\d+)s)?)",
        lambda m: {
            "component": m["signal"],
            "message": m["mode"] or {"aborting": "abort", "draining": "drain"}.get(m["verb"] or ""),
            "timeout_ms": int(m["timeout"] or m["dtimeout"]) * 1000 if (m["timeout"] or m["dtimeout"]) else None,
            "in_flight": to_int(m["count"]),
        },
    ),
    wording(  # a request's lifecycle, when vLLM logs requests: its start (AsyncLLM, async_llm.py; V0's AsyncLLMEngine)
        ("Added request ",),
        K.REQUEST_ADDED,
        r"^Added request (?P<id>[\w.:-]+?)\.?\s*$",
        lambda m: {"message": m["id"]},
    ),
    wording(  # … and its abort when its client went away: one id (V0, early V1) or several (V1 0.9 on)
        ("Aborted request",),
        K.REQUEST_ABORTED,
        r"^Aborted request(?:\(s\))? (?P<ids>[\w.:,-]+?)\.?\s*$",
        lambda m: {"message": m["ids"]},
    ),
    wording(  # Python's faulthandler when a signal kills the process in native code (vLLM's workers enable it)
        ("Fatal Python error: ",),
        K.NATIVE_CRASH,
        r"Fatal Python error: (?P<signal>Segmentation fault|Bus error|Aborted|Floating point exception|Illegal "
        r"instruction)",
        lambda m: {"message": m["signal"]},
    ),
    wording(  # apache-tvm-ffi's SIGSEGV handler (src/ffi/backtrace.cc), installed by any process that loads it
        # (xgrammar and FlashInfer do): its banner stands for a segfault anywhere in the process, its frames follow
        ("Segfault encountered",),
        K.NATIVE_CRASH,
        r"!{3,} Segfault encountered !{3,}",
        lambda m: {"message": "Segmentation fault", "component": TVM_FFI_REPORTED},
    ),
    wording(  # abseil's failure signal handler (failure_signal_handler.cc), which Ray's worker processes install: its
        # banner for the signal (vllm#6918: a RayWorkerWrapper's SIGSEGV in NCCL's proxy), its frames follow
        ("received at time=",),
        K.NATIVE_CRASH,
        # (its `***` on either side reach this line as `*`: the paste's reader takes a pair of them for Markdown bold)
        r"\*{1,3} SIG(?P<signal>SEGV|BUS|ABRT|FPE|ILL) received at time=\d+",
        lambda m: {"message": _SYSTEMD_SIGNALS[m["signal"]], "component": ABSEIL_REPORTED},
    ),
    wording(  # Triton Inference Server's handler for a fatal signal (triton-inference-server/server#7332, #7400: its
        # vLLM backend's server crashing so), its numbered native frames after it; only the two signals its handler
        # is installed for are read (another number is another program's words)
        ("Signal (",),
        K.NATIVE_CRASH,
        r"^Signal \((?P<number>\d+)\) received\.\s*$",
        lambda m: (
            {"message": _TRITON_SIGNALS[m["number"]], "component": TRITON_REPORTED}
            if m["number"] in _TRITON_SIGNALS
            else None
        ),
    ),
    wording(  # the shell reporting the signal that killed its child: `Segmentation fault (core dumped)`, bash's
        # `line 5:    42 Aborted (core dumped) python3 -m vllm…`, a job's `[1]+  Bus error  vllm serve …`
        ("Segmentation fault", "Bus error", "Aborted", "Floating point exception", "Illegal instruction"),
        K.NATIVE_CRASH,
        SHELL_JOB + r"(?P<signal>Segmentation fault|Bus error|Aborted|Floating point exception|Illegal instruction)"
        r"(?: \(core dumped\))?(?:\s{2,}.*)?$",
        lambda m: {"message": m["signal"], "component": SHELL_REPORTED},
    ),
    wording(  # zsh's words for the same (its job report `[1]    3981644 illegal hardware instruction (core dumped)
        # vllm serve …`, vllm PR #35466; or `zsh: segmentation fault  python …`), in lower case
        ("illegal hardware instruction", "segmentation fault", "bus error", "floating point exception"),
        K.NATIVE_CRASH,
        r"^(?:\[\d+\][+-]?\s+\d+\s+|zsh: )(?P<signal>segmentation fault|illegal hardware instruction|bus error"
        r"|abort|floating point exception)(?: \(core dumped\))?(?:\s{2,}.*)?$",
        lambda m: {"message": _ZSH_SIGNALS[m["signal"]], "component": SHELL_REPORTED},
    ),
    wording(  # systemd's journal for a unit whose main process a signal killed (core dumped or not), by the signal's
        # short name as systemd prints it (src/core/service.c: "Main process exited, code=%s, status=%i/%s")
        ("Main process exited, code=",),
        K.NATIVE_CRASH,
        r"Main process exited, code=(?:dumped|killed), status=\d+/(?P<signal>SEGV|BUS|ABRT|FPE|ILL)\b",
        lambda m: {"message": _SYSTEMD_SIGNALS[m["signal"]], "component": SYSTEMD_REPORTED},
    ),
    wording(  # Python's subprocess module on a child a signal killed, by the signal's name (vllm#32554: vLLM's model
        # inspection subprocess, `python3 -m vllm.model_executor.models.registry`, `died with <Signals.SIGILL: 4>.`)
        ("died with <Signals.SIG",),
        K.NATIVE_CRASH,
        r"Command '(?P<command>.*)' died with <Signals\.SIG(?P<signal>SEGV|BUS|ABRT|FPE|ILL): \d+>",
        lambda m: {"message": _SYSTEMD_SIGNALS[m["signal"]], "component": SUBPROCESS_REPORTED},
    ),
    wording(  # faulthandler's frame: `File "…", line N in f` (a Python traceback's has a comma: `line N, in f`)
        ('File "',),
        K.NATIVE_FRAME,
        r'^\s*File "(?P<path>[^"]+)", line \d+ in (?P<func>[\w<>.]+)\s*$',
        lambda m: {"code_file": m["path"], "function": m["func"]},
    ),
    wording(  # tvm-ffi's native frame under its banner: a C++ symbol, its source file or `<unknown>` (a Python
        # traceback's frames have the same comma, so only a non-Python file is read as one)
        ('File "',),
        K.NATIVE_FRAME,
        r'^\s*File "(?P<path><unknown>|[^"]+\.(?:cc|cpp|cxx|cu|cuh|c|h|hpp))", line \d+, in (?P<func>\S.*?)\s*$',
        lambda m: {"code_file": m["path"], "function": m["func"]},
    ),
    wording(
        (
            "EngineCore encountered a fatal error",
            "Engine background task failed",
            "Exception in callback functools",
            *(f"Exception in callback {name}" for name in V0_LOOP_CALLBACK),
        ),
        K.FATAL_ERROR,
        # the second: V0's AsyncLLMEngine (engine/async_llm_engine.py, 0.4-0.10), before the loop's traceback; the
        # third: asyncio's words when that loop's done-callback raised (`_raise_exception_on_finish` before 0.4.1,
        # `_log_task_completion` after), the same death as asyncio logs it, its traceback below
        r"EngineCore encountered a fatal error|Engine background task failed"
        # (the callback without functools.partial's repr in vLLM 0.2's engine: `Exception in callback
        # _raise_exception_on_finish(request_tracker=<…>)(<Task finishe…>)`, vllm#1188)
        rf"|Exception in callback (?:functools\.partial\(<function )?(?:{'|'.join(V0_LOOP_CALLBACK)})\b",
        lambda m: {"message": m.group(0)},
    ),
    wording(
        ("WorkerProc hit an exception",),
        K.WORKER_EXCEPTION,
        r"WorkerProc hit an exception",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # kvcached (ovg-project/kvcached), the elastic KV pool several vLLM engines can share: fewer free blocks
        # than the scheduler's allocation needs (kvcached#262)
        ("available_size()=",),
        K.KVCACHED_POOL_SHORT,
        r"kv_cache_manager\.py:\d+ available_size\(\)=(?P<free>\d+) < need_size=(?P<need>\d+)",
        lambda m: {"num_gpu_blocks": int(m["free"]), "blocks_needed": int(m["need"])},
    ),
    wording(
        ("EngineDeadError", "AsyncLLM output_handler failed", "EngineCore encountered an issue"),
        K.ENGINE_DEAD,
        # V0's AsyncLLMEngine raised AsyncEngineDeadError ("Background loop is stopped."); V1's engine EngineDeadError,
        # whose words (v1/engine/exceptions.py, 0.8-0.34) a client gets as the body of an HTTP 500
        r"(?:Async)?EngineDeadError.*|AsyncLLM output_handler failed\.?"
        r"|EngineCore encountered an issue\. See stack trace \(above\) for the root cause\.",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # an answer that is `!` alone, after a label or as a JSON string's whole content, as a person quotes the
        # output they got (allenai/olmo-cookbook#60: OLMo in float16, `vLLM output: !!!!!!!!!!!!!!!!`)
        ("!!!!!!!!",),
        K.BANG_ANSWER,
        r"""(?:^|[:=]\s*)["'`]?(?P<bangs>!{8,})["'`]?,?\s*$""",
        lambda m: {"message": m["bangs"]},
    ),
    wording(  # torch.multinomial's other check: a distribution with no probability left (all zero), which only a cut
        # made after the softmax gives (vllm#719: top_k=0.4 on vLLM 0.1.3, whose sampler cut the probabilities)
        ("invalid multinomial distribution",),
        K.ZERO_PROBABILITIES,
        r"invalid multinomial distribution \(sum of probabilities <= 0\)",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # torch.multinomial's own check (ATen), on a sampling distribution holding inf, NaN or a negative entry:
        # early vLLM samplers and frameworks around vLLM sample with it; the words may sit inside a RayTaskError's repr
        ("probability tensor contains either",),
        K.NAN_PROBABILITIES,
        r"probability tensor contains either `?inf`?, `?nan`? or element < 0",
        lambda m: {"message": m.group(0)},
    ),
    wording(
        ("RPC call to ",),
        K.RPC_TIMEOUT,
        r"RPC call to (?P<method>\w+) timed out",
        lambda m: {"rpc_method": m["method"]},
    ),
    wording(  # vLLM's JIT monitor: a kernel compiled (or autotuned) after warm-up, for a shape warm-up did not cover
        ("during inference",),
        K.JIT_DURING_INFERENCE,
        r"(?P<runtime>Triton|CuTeDSL|TileLang)\b[\w /-]*? during inference: (?P<kernel>[\w.]+)",
        # (the kernel's name ends before the sentence's full stop: `… inference: _zero_kv_blocks_kernel. This causes`)
        lambda m: {"message": m["runtime"], "function": m["kernel"].rstrip(".")},
    ),
    wording(  # distributed/device_communicators/shm_broadcast.py; 0.5-0.6 worded it without the queue's name
        # (`No available block found in 60 second.`)
        ("No available shared memory broadcast block", "No available block found in"),
        K.SHM_BROADCAST_HANG,
        r"No available (?:shared memory broadcast )?block found in (?P<s>[\d.]+) seconds?",
        lambda m: {"hang_seconds": to_float(m["s"])},
    ),
    wording(
        ("died unexpectedly",),
        K.WORKER_DIED,
        r"(?P<who>Worker proc|Engine core proc(?:ess)?) (?P<name>\S+) died unexpectedly"
        r"(?:.*?exit code:? (?P<code>-?\d+))?",
        lambda m: {"process": m["name"], "exit_code": to_int(m["code"])},
    ),
    # V0's multiprocessing executor (0.5-0.10, vllm/executor/multiproc_worker_utils.py):
    # "Worker VllmWorkerProcess pid 82 died, exit code: -15"
    wording(
        ("died, exit code",),
        K.WORKER_DIED,
        r"Worker (?P<name>\S+) pid (?P<pid>\d+) died, exit code: (?P<code>-?\d+)",
        lambda m: {"process": f"{m['name']} pid {m['pid']}", "exit_code": to_int(m["code"])},
    ),
    # V1's executor once a worker is gone (0.8.5 to 0.34: v1/executor/multiproc_executor.py's collective_rpc when
    # `is_failed`, which only its worker monitor sets; v1/engine/core.py on the executor's failure callback): the
    # death it follows is the worker's, its cause in that worker's lines, not a refusal of anything (vllm-omni#2224).
    wording(
        ("Executor failed.",),
        K.WORKER_DIED,
        r"(?<![\w.])Executor failed\.",
        lambda m: {"process": None},
    ),
    wording(  # V0's SpecDecodeWorker._vocab_size (spec_decode/spec_decode_worker.py, 0.4-0.9), by its source line
        ("assert all(vocab_sizes[0] == vocab_size",),
        K.DRAFT_VOCAB_MISMATCH,
        r"assert all\(vocab_sizes\[0\] == vocab_size for vocab_size in vocab_sizes\)",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # MambaSpec.page_size_bytes (v1/kv_cache_interface.py), by its source line: vLLM PR #47635
        ("assert self.page_size_padded >=",),
        K.MAMBA_PAGE_TOO_SMALL,
        r"assert self\.page_size_padded >= (?:page_size|self\.\w+)",
        lambda m: {"message": m.group(0)},
    ),
    wording(
        ("Watchdog caught collective operation timeout",),
        K.NCCL_WATCHDOG_TIMEOUT,
        # WorkHCCL: torch_npu's watchdog on Ascend, in the same words (vllm-ascend#382)
        r"\[Rank (?P<rank>\d+)\] Watchdog caught collective operation timeout: Work(?P<lib>NCCL|HCCL)\(.*?"
        r"OpType=(?P<op>\w+).*?Timeout\(ms\)=(?P<t>\d+)\) ran for (?P<ran>\d+) milliseconds"
        # the line cut after its colon, as a paste often is (vllm#42354): the rank, nothing of the collective
        r"|\[Rank (?P<cut_rank>\d+)\] Watchdog caught collective operation timeout:?\s*$"
        # a person's abbreviation without the rank's prefix and the figures (huggingface/trl#7103, AsyncGRPO's weight
        # sync: `Watchdog caught collective operation timeout: WorkNCCL(..., OpType=COALESCED, ...)`)
        r"|^Watchdog caught collective operation timeout: Work(?P<short_lib>NCCL|HCCL)\("
        r"(?:.*?OpType=(?P<short_op>\w+))?",
        lambda m: {
            "rank": int(m["rank"] or m["cut_rank"]) if (m["rank"] or m["cut_rank"]) else None,
            "op_type": m["op"] or m["short_op"],
            "timeout_ms": int(m["t"]) if m["t"] else None,
            "ran_ms": int(m["ran"]) if m["ran"] else None,
            "component": m["lib"] or m["short_lib"],
        },
    ),
    wording(  # torch's words for an NCCL result; its system error is NCCL_SYSTEM_ERROR's (OP-7.5 answers it)
        ("NCCL error in: ",),
        K.NCCL_ERROR,
        r"NCCL error in: .*",
        lambda m: None if "unhandled system error" in m.group(0) else {"message": m.group(0)},
    ),
    wording(  # vLLM's own NCCL wrapper (PyNcclCommunicator: `raise RuntimeError(f"NCCL error: {error_str}")`,
        # vllm/distributed/device_communicators/pynccl_wrapper.py, 0.4-0.33) with ncclGetErrorString's words; its
        # system error is NCCL_SYSTEM_ERROR's
        ("NCCL error: ",),
        K.NCCL_ERROR,
        r"NCCL error: (?!in: ).*",
        lambda m: None if "unhandled system error" in m.group(0) else {"message": m.group(0)},
    ),
    wording(  # torch's other NCCL check (torch/csrc/cuda/nccl.cpp `throw_nccl_error`, behind torch.cuda.nccl and the
        # vLLM 0.1-0.5 collectives that called it): `NCCL Error <result number>: <ncclGetErrorString's words>`
        ("NCCL Error ",),
        K.NCCL_ERROR,
        r"NCCL Error \d+: .*",
        lambda m: None if "unhandled system error" in m.group(0) else {"message": m.group(0)},
    ),
    wording(  # torch's detail under an NCCL error, alone when a paste keeps only it (getNcclErrorDetailStr,
        # NCCLUtils.cpp): the result's name and NCCL's documentation of it (vllm#3722); its system error is OP-7.5's
        (
            "ncclUnhandledCudaError:",
            "ncclInternalError:",
            "ncclInvalidArgument:",
            "ncclInvalidUsage:",
            "ncclRemoteError:",
        ),
        K.NCCL_ERROR,
        r"nccl(?:UnhandledCudaError|InternalError|InvalidArgument|InvalidUsage|RemoteError): .*",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # NCCL's own check at init (init.cc), the "Last error:" under `invalid usage`: two ranks on one GPU
        ("Duplicate GPU detected",),
        K.NCCL_ERROR,
        r"Duplicate GPU detected ?: rank \d+ and rank \d+ both on CUDA device \w+",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # NCCL finding no network interface: its bootstrap's WARN and its socket transport's, alone (NCCL_DEBUG's
        # line) or as the "Last error:" under torch's error
        ("no socket interface found", "No usable listening interface found"),
        K.NCCL_ERROR,
        r"Bootstrap ?: no socket interface found|NET/Socket ?: No usable listening interface found",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # the worker's account of a /sleep, an INFO line: OP-7.163 reads one that freed nothing
        ("Sleep mode freed ",),
        K.SLEEP_FREED,
        rf"Sleep mode freed (?P<freed>{NUM}) GiB memory, (?P<kept>{NUM}) GiB memory is still in use",
        lambda m: {"sleep_freed_gib": to_float(m["freed"]), "sleep_kept_gib": to_float(m["kept"])},
    ),
    wording(  # vLLM's sleep-mode allocator (csrc/cumem_allocator.cpp) failing a driver call, with cuGetErrorString's
        # words and its own file: re-mapping memory on wake_up, where `Call to wake_up method failed: ` wraps it
        ("cumem_allocator.cpp", "Call to wake_up method failed: "),
        K.SLEEP_WAKE_FAILED,
        # (a reporter's retyping may change the case and space the line number: `Cuda error: out of memory at
        # /workspace/csrc/cumem_allocator.cpp: 62`, TideDra/lmm-r1#42)
        r"(?i:CUDA Error): (?P<words>[\w ]+?) at \S*cumem_allocator\.cpp: ?\d+"
        r"|Call to wake_up method failed: (?:Worker failed with error ')?CUDA Error: (?P<wrapped>[\w ]+?) at ",
        lambda m: {"message": m["words"] or m["wrapped"]},
    ),
    wording(  # the mlx5 verbs provider's own line for a transfer that completed with an error, under NCCL's
        # InfiniBand transport (`mlx5: host_unknown: got completion with error:`); NCCL's own WARN lines about it
        # (`Call to ibv_modify_qp failed …`, `NET/IB : Got completion … with error 12`) are read as NCCL's log lines
        ("got completion with error",),
        K.NCCL_ERROR,
        r"mlx5: \S+: got completion with error.*",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # NCCL's own CUDA check on a call inside CUDA-graph capture: its collective captured in vLLM's graph
        # (`enqueue.cc:267 NCCL WARN Cuda failure 'dependency created on uncaptured work in another stream'`, vllm#4432)
        ("Cuda failure ",),
        K.CUDA_RUNTIME_ERROR,
        rf"Cuda failure (?:\d+ )?'(?:(?P<capture>{_CAPTURE})|(?P<capture_other>{_CAPTURE_OTHER}))'",
        _cuda_runtime_error,
    ),
    wording(  # NCCL's own CUDA check, the "Last error:" under `unhandled cuda error`: what the call failed with
        # (NCCL 2.2x prints CUDA's error number before its words: `Cuda failure 217 'peer access is not …'`)
        ("Cuda failure ",),
        K.NCCL_ERROR,
        r"Cuda failure (?:\d+ )?'[^']+'.*",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # NCCL's NVLS transport failing to bind its multicast memory, NCCL_DEBUG's WARN (`transport/nvls.cc:287
        # NCCL WARN Failed to bind NVLink SHARP (NVLS) Multicast memory of size …`; on a p5en.48xlarge every TP=8
        # start failed until NCCL_NVLS_ENABLE=0: aarora79/agentic-coding-harness-benchmarks PR #173)
        ("Failed to bind NVLink SHARP",),
        K.NCCL_ERROR,
        r"Failed to bind NVLink SHARP \(NVLS\) Multicast memory.*",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # the rest of CUDA's runtime errors by cudaGetErrorString's words (and the driver API's, which PyTorch
        # prints as "CUDA driver error: …", c10/cuda/driver_api.h), cuBLAS failing to allocate its workspace, and the
        # assertion line a kernel prints before a device-side assert
        (
            "CUDA error: ",
            "CUDA error (",
            "CUDA driver error: ",
            "HIP error: ",
            "CUBLAS_STATUS_ALLOC_FAILED",
            "CUBLAS_STATUS_NOT_INITIALIZED",
            "Triton Error [CUDA]: ",
            "CUDNN_STATUS_NOT_INITIALIZED",
            "] Assertion `",
            "] Assertion `index out of bounds",
            "Assertion `",
        ),
        K.CUDA_RUNTIME_ERROR,
        # Triton's launcher words a CUDA driver error as `Triton Error [CUDA]: <cuGetErrorString's words>`
        # a kernel library's own check names its source file: `CUDA error (…/mla_combine.cu:201): …`
        r"(?:(?:CUDA|HIP) (?:driver )?error(?: \([^()\s]+?:\d+\))?|Triton Error \[CUDA\]): "
        r"(?:(?P<oom>out of memory)|(?P<assert>device-side assert triggered)"
        r"|(?P<launch_timeout>the launch timed out and was terminated)"
        r"|(?P<busy>CUDA-capable device\(s\) is/are busy or unavailable)|(?P<invalid_device>invalid device ordinal)"
        rf"|(?P<capture>{_CAPTURE})|(?P<capture_other>{_CAPTURE_OTHER})"
        r"|(?P<not_ready>system not yet initialized)"
        r"|(?P<peer_access>peer access is not supported between these two devices)"
        r"|(?P<os_call>OS call failed or operation not supported on this OS)"
        r"|(?P<invalid_config>invalid configuration argument))"
        r"|(?P<cublas>CUBLAS_STATUS_ALLOC_FAILED)|(?P<cublas_init>CUBLAS_STATUS_NOT_INITIALIZED)"
        r"|cuDNN error: (?P<cudnn_init>CUDNN_STATUS_NOT_INITIALIZED)"
        # a CUDA kernel's assertion (`….cu:N: … block: [..], thread: [..] Assertion `…` failed`), and a Triton kernel's,
        # torch.compile's among them, whose check states the bound (`….py:37: unknown: block: [9,0,0], thread:
        # [81,0,0] Assertion `index out of bounds: 0 <= tl.broadcast_to(tmp10, [XBLOCK]) < 2048` failed`, vllm#21986)
        r"|\.py:\d+: unknown: block: \[[\d,]+\], thread: \[[\d,]+\] Assertion `index out of bounds: 0 <= .*? < "
        r"(?P<bound>\d+)` failed"
        r"|(?P<index>\.cu:\d+: .*block: \[[\d,]+\], thread: \[[\d,]+\] Assertion `[^`]+` failed)"
        # the assertion alone, its block and thread cut off (zai-org/GLM-OCR#112: `Assertion `ind >=0 && ind <
        # ind_dim_size && "vectorized gather kernel index out of bounds"` failed.`): CUDA's device assert closes the
        # condition with a backtick, glibc's host assert with a quote, so only the device's is read
        r"|^\s*(?P<bare>Assertion `[^`']+` failed)",
        _cuda_runtime_error,
    ),
    wording(  # an index past the dimension it indexes, with both numbers: Ascend's IndexCheck kernel, torch's own
        # and an Ascend gather kernel's own assertion (`Assertion `(0 <= val && val < this->gxSize_)' Index 5330 out of
        # range[0 4096)!`, vllm-ascend#866)
        ("exceeds bounds", "is out of bounds for dimension", "out of range[0 "),
        K.INDEX_OUT_OF_BOUNDS,
        r"index value (?P<i>\d+) exceeds bounds (?P<n>\d+)|index (?P<i2>\d+) is out of bounds for dimension \d+ "
        r"with size (?P<n2>\d+)|Index (?P<i3>\d+) out of range\[0 (?P<n3>\d+)\)",
        lambda m: {
            "index": to_int(m["i"] or m["i2"] or m["i3"]),
            "index_bound": to_int(m["n"] or m["n2"] or m["n3"]),
        },
    ),
    wording(  # a kernel read or wrote outside its memory: reported by the next CUDA call, often much later (by
        # PyTorch as "CUDA error: …", or by Triton's launcher as "Triton Error [CUDA]: …", cuGetErrorString's words)
        # a kernel library's own check names the launch's source file: flash-attn's `CUDA error (…/hopper/
        # flash_fwd_combine_launch_template.h:60): an illegal memory access was encountered` (vllm#25032)
        ("illegal memory access", "misaligned address", "illegal instruction", "unspecified launch failure"),
        K.CUDA_KERNEL_FAULT,
        # ROCm's PyTorch words its HIP checks the same (`HIP error: an illegal memory access was encountered`), and
        # torch 2.8 on raises both as torch.AcceleratorError instead of RuntimeError
        # Triton's HIP launcher adds the code: `Triton Error [HIP]:  Code: 700, Message: an illegal memory access was
        # encountered` (vllm#50347)
        r"(?P<who>CUDA error|HIP error|Triton Error \[(?:CUDA|HIP)\])(?: \((?P<file>[^()\s]+?):\d+\))?:"
        r"(?:\s*Code: \d+, Message:)? (?P<words>(?:an )?"
        r"(?:illegal memory access|misaligned address|illegal instruction|unspecified launch failure)"
        r"(?: was encountered)?)",
        lambda m: {
            "message": f"{m['who']}: {m['words']}",
            "code_file": m["file"],
            "component": "rocm" if "HIP" in m["who"] else None,
        },
    ),
    wording(  # PyTorch's line after a CUDA error, naming the runtime's error code rather than its words (`Search for
        # `cudaErrorIllegalAddress' in https://docs.nvidia.com/…/group__CUDART__TYPES.html for more information.`):
        # pasted alone, or the only line of the error a log shipper kept (christopherowen/spark-vllm-mxfp4-docker#5)
        ("Search for `cudaError",),
        K.CUDA_KERNEL_FAULT,
        r"Search for `(?P<code>cudaError(?:IllegalAddress|MisalignedAddress|IllegalInstruction|LaunchFailure))' in "
        r"https://docs\.nvidia\.com/",
        lambda m: {"message": f"CUDA error: {KERNEL_FAULT_WORDS[m['code']]}"},
    ),
    wording(  # the same line for the runtime's other errors OP-7.46 knows by name (`Search for `cudaErrorAssert' …`,
        # vllm#31709: the only line of a device-side assert its reporter's log kept whole)
        ("Search for `cudaError",),
        K.CUDA_RUNTIME_ERROR,
        rf"Search for `(?P<code>{_CUDA_CODES})' in https://docs\.nvidia\.com/",
        lambda m: {"message": CUDA_ERROR_KEYS[m["code"]]},
    ),
    wording(  # the error named by its code in a person's summary of a failure, its words after it or none
        # (xencon/aixcl#681: "- **Primary Error**: `cudaErrorStreamCaptureUnsupported` - operation not permitted when
        # stream is capturing", CUDA graph capture failing under WSL2): the code is CUDA's own name for the error
        ("cudaError",),
        K.CUDA_RUNTIME_ERROR,
        # (only as a summary names it: quoted as code, or first on its line after list or bold markup, with its words
        # after a dash or a colon, or nothing after it; a sentence or code that mentions the name is not the error)
        rf"(?:`(?P<quoted>{_CUDA_CODES})`|^(?:[-*+]\s+)?(?:\*\*[^*]+\*\*:?\s*)?(?P<code>{_CUDA_CODES}))"
        r"(?=\s*(?:[-:–]\s|$))",
        lambda m: {"message": CUDA_ERROR_KEYS[m["quoted"] or m["code"]]},
    ),
    wording(  # a HIP kernel's own assertion, printed by the device with the kernel's source file (ROCm/vllm#527: vLLM's
        # skinny GEMM: `csrc/rocm/skinny_gemms.hip:497: void wvSplitK_hf_sml_(…): Device-side assertion `false'
        # failed.`)
        ("Device-side assertion",),
        K.CUDA_KERNEL_FAULT,
        r"(?P<file>\S+\.hip):\d+: .*?(?P<kernel>\w+)\(.*: Device-side assertion `[^']*' failed",
        lambda m: {
            "message": f"HIP device-side assertion in {m['kernel']}",
            "code_file": m["file"],
            "component": "rocm",
        },
    ),
    wording(  # FlashInfer's sampling kernels check their own launch and name themselves (vllm#20177: "RuntimeError:
        # TopPSamplingFromProbs failed with error code an illegal memory access was encountered")
        ("SamplingFromProbs failed with error code", "FromProbs failed with error code"),
        K.CUDA_KERNEL_FAULT,
        r"(?P<op>\w+FromProbs) failed with error code (?P<words>(?:an )?(?:illegal memory access|misaligned address"
        r"|illegal instruction|unspecified launch failure)(?: was encountered)?)",
        lambda m: {"message": f"{m['op']}: {m['words']}", "component": FLASHINFER_SAMPLER},
    ),
    wording(  # ROCm's HSA runtime on a GPU page fault (a kernel touched memory outside its allocations): the process
        # aborts with no Python traceback (vllm#35169, vllm#43605)
        ("Memory access fault by GPU node",),
        K.CUDA_KERNEL_FAULT,
        # the handle and address may be left out of a paste (`node-8 ... Reason: Unknown.`, ROCm/aiter#2187)
        r"Memory access fault by GPU node-\d+\b(?:.*? Reason: (?P<reason>[^.]+))?",
        lambda m: {
            "message": f"memory access fault ({m['reason'].strip()})" if m["reason"] else "memory access fault",
            "component": "rocm",
        },
    ),
    wording(  # the HSA runtime's queue callback on the same faults (ROCm/aiter#1143: `Callback: Queue 0x… aborting with
        # error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest
        # legal address.`, inside AITER's fused-MoE kernel)
        ("aborting with error : HSA_STATUS_ERROR_",),
        K.CUDA_KERNEL_FAULT,
        r"aborting with error : HSA_STATUS_ERROR_(?P<code>MEMORY_APERTURE_VIOLATION|ILLEGAL_INSTRUCTION|MEMORY_FAULT)",
        lambda m: {"message": f"HSA: {m['code'].lower().replace('_', ' ')}", "component": "rocm"},
    ),
)
