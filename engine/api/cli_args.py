"""Command-line flags of `python -m engine serve`, spelt exactly as `vllm serve` spells them.

Why vLLM's spelling: a ConfigChange from the advisor names a flag as vLLM does, and the
same line must paste into either engine. So the parser accepts vLLM's names, says clearly
when a vLLM flag is known but not supported by this single-device engine (naming the flag
and why), and rejects unknown flags in one line with exit code 2, never a traceback.

Engine flags default to None here: only what the user typed reaches `EngineConfig`, so the
engine core keeps owning its defaults, and `non-default args: {…}` lists exactly what was
given (as vLLM's log line does).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

PROG_ENV = "SERVOPS_PROG"  # set by `servops serve`, so messages name the command the user ran
EXIT_USAGE = 2


class CliArgsError(Exception):
    """A bad or unsupported flag; the message names the flag and the fix."""

    user_facing = True


@dataclass(frozen=True, slots=True)
class UnsupportedFlag:
    """A vLLM flag this engine knows but cannot honour for some values."""

    flag: str
    rejects: Callable[[str], bool]  # given the raw value, True when it cannot be honoured
    why: str
    takes_value: bool = True


def _not_in(*accepted: str) -> Callable[[str], bool]:
    return lambda value: value.strip().lower() not in accepted


_ALWAYS: Callable[[str], bool] = lambda _value: True  # noqa: E731

UNSUPPORTED_FLAGS: tuple[UnsupportedFlag, ...] = (
    UnsupportedFlag(
        "--tensor-parallel-size",
        _not_in("1"),
        "the bundled engine runs on one device; use vLLM for tensor parallelism or pass 1",
    ),
    UnsupportedFlag(
        "--pipeline-parallel-size",
        _not_in("1"),
        "the bundled engine runs on one device; use vLLM for pipeline parallelism or pass 1",
    ),
    UnsupportedFlag(
        "--data-parallel-size",
        _not_in("1"),
        "the bundled engine runs one engine per process; start several servers instead",
    ),
    UnsupportedFlag(
        "--api-server-count", _not_in("1"), "the bundled engine has one API server process; pass 1 or drop the flag"
    ),
    UnsupportedFlag(
        "--quantization", _not_in("none"), "the bundled engine runs unquantized weights only; drop the flag"
    ),
    UnsupportedFlag(
        "--kv-cache-dtype",
        _not_in("auto"),
        "the KV cache uses the model dtype only (fp8 KV is not implemented); pass auto",
    ),
    UnsupportedFlag(
        "--speculative-config", _ALWAYS, "speculative decoding is not implemented in the bundled engine; drop the flag"
    ),
    UnsupportedFlag(
        "--enable-lora",
        _ALWAYS,
        "LoRA adapters are not implemented in the bundled engine; drop the flag",
        takes_value=False,
    ),
    UnsupportedFlag(
        "--cpu-offload-gb",
        _not_in("0", "0.0"),
        "weight offloading is not implemented in the bundled engine; drop the flag",
    ),
    UnsupportedFlag(
        "--kv-transfer-config", _ALWAYS, "disaggregated prefill / KV transfer is not implemented; drop the flag"
    ),
    UnsupportedFlag(
        "--max-num-queued-tokens", _ALWAYS, "only --max-num-queued-reqs is implemented for admission control; use that"
    ),
)

# Flags vLLM has that change nothing here; accepted so a vLLM command line runs unchanged.
IGNORED_FLAGS_WITH_VALUE: tuple[str, ...] = (
    "--swap-space",
    "--uvicorn-log-level",
    "--tokenizer-mode",
    "--load-format",
    "--distributed-executor-backend",
    "--max-seq-len-to-capture",
)
IGNORED_SWITCHES: tuple[str, ...] = (
    "--enforce-eager",
    "--trust-remote-code",
    "--disable-frontend-multiprocessing",
    "--enable-log-requests",
    "--disable-fastapi-docs",
    "--disable-uvicorn-access-log",
)

# Fields that map 1:1 onto EngineConfig (same name as the flag's dest).
ENGINE_CONFIG_FIELDS: tuple[str, ...] = (
    "model",
    "served_model_name",
    "num_gpu_blocks_override",
    "max_model_len",
    "max_num_seqs",
    "max_num_batched_tokens",
    "gpu_memory_utilization",
    "device_memory_gib",
    "block_size",
    "enable_prefix_caching",
    "enable_chunked_prefill",
    "dtype",
    "seed",
    "device",
    "tokenizer",
)


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are one line and exit 2, naming the flag and the fix."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def prog_name() -> str:
    """`servops serve` when launched through servops, else `python -m engine serve`."""
    return os.environ.get(PROG_ENV) or "python -m engine serve"


def build_serve_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The `serve` parser; every flag carries help text."""
    parser = _Parser(
        prog=prog or prog_name(),
        description=(
            "Serve a model over vLLM's OpenAI-compatible API (/v1/completions, "
            "/v1/chat/completions, /v1/models, /health, /version, /metrics, /load) with vLLM's "
            "flag names, Prometheus metric names and log lines."
        ),
    )
    parser.add_argument(
        "model",
        nargs="?",
        default=None,
        help="Hugging Face model directory, .gguf file, or name (default: the embedded SmolLM2-135M-Instruct)",
    )
    _add_server(parser)
    _add_engine(parser)
    _add_vllm_compat(parser)
    return parser


def _add_server(parser: argparse.ArgumentParser) -> None:
    """The HTTP server: where it listens, what it logs, who may call it and how it stops."""
    net = parser.add_argument_group("server")
    net.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    net.add_argument(
        "--port", type=_port, default=8000, help="TCP port to listen on (default: 8000; 0 picks a free one)"
    )
    net.add_argument(
        "--served-model-name",
        default=None,
        help="model name the API answers to and the metrics' model_name label (default: the model argument)",
    )
    net.add_argument("--disable-log-requests", action="store_true", help="do not log a line per received request")
    net.add_argument(
        "--disable-log-stats",
        action="store_true",
        help="do not log the periodic stats line (every VLLM_LOG_STATS_INTERVAL s, default 10)",
    )
    net.add_argument(
        "--cpu-threads",
        type=_positive_int,
        default=None,
        help="threads the engine computes with on a CPU, fixed (default: $OMP_NUM_THREADS, else every usable "
        "core for a step of more than 4 tokens (a prompt chunk, a batch of more than 4) and, for a decode of up "
        "to 4 sequences, every core or one less, leaving a core to HTTP and the tokenizer unless the last core "
        "makes a weight pass timed at start-up faster by engine.api.threads.ALL_CORES_MIN_SPEEDUP)",
    )
    _add_server_policy(net)


def _add_server_policy(net: argparse._ArgumentGroup) -> None:
    """What the server refuses, adds and waits for: its queue's limit, forced usage, API keys, the drain on stop."""
    net.add_argument(
        "--max-num-queued-reqs",
        type=_positive_int,
        default=None,
        help="reject new requests with HTTP 503 when this many are already waiting (default: unlimited)",
    )
    net.add_argument(
        "--enable-force-include-usage",
        action="store_true",
        help="send the usage chunk at the end of every stream, as if stream_options.include_usage were set",
    )
    net.add_argument(
        "--api-key",
        nargs="+",
        default=None,
        metavar="KEY",
        help="require `Authorization: Bearer KEY` on /v1 routes (several keys allowed; "
        "default: $VLLM_API_KEY, else none); /health and /metrics stay open, as in vLLM",
    )
    net.add_argument(
        "--shutdown-timeout",
        type=_non_negative_float,
        default=30.0,
        help="on SIGTERM, seconds to let in-flight requests finish before aborting them (default: 30)",
    )


def _add_engine(parser: argparse.ArgumentParser) -> None:
    """The engine's batch, memory and model flags, under vLLM's names and defaults."""
    eng = parser.add_argument_group("engine")
    eng.add_argument(
        "--max-model-len",
        type=_positive_int,
        default=None,
        help="context length (prompt + output tokens) per request (default: from the model config)",
    )
    eng.add_argument(
        "--max-num-seqs", type=_positive_int, default=None, help="maximum number of sequences in one batch"
    )
    eng.add_argument(
        "--max-num-batched-tokens",
        type=_positive_int,
        default=None,
        help="maximum number of tokens scheduled in one engine step",
    )
    _add_engine_memory(eng)
    _add_engine_model(eng)


def _add_engine_memory(eng: argparse._ArgumentGroup) -> None:
    """How much memory the engine takes and how its KV cache is cut and shared."""
    eng.add_argument(
        "--gpu-memory-utilization",
        type=_fraction,
        default=None,
        help="fraction (0-1] of device memory the engine may use, KV cache included",
    )
    eng.add_argument(
        "--device-memory-gib",
        type=_positive_float,
        default=None,
        help="device memory budget in GiB (default: the GPU's memory; 4 on CPU); sizes the KV pool",
    )
    eng.add_argument("--block-size", type=_positive_int, default=None, help="tokens per KV-cache block")
    eng.add_argument(
        "--num-gpu-blocks-override",
        type=_positive_int,
        default=None,
        help="use this many KV-cache blocks instead of the number the memory budget gives",
    )
    eng.add_argument(
        "--enable-prefix-caching",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="reuse KV blocks of shared prompt prefixes (default: on, as in vLLM V1)",
    )
    eng.add_argument(
        "--enable-chunked-prefill",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="split long prefills across engine steps (default: on, as in vLLM V1)",
    )


def _add_engine_model(eng: argparse._ArgumentGroup) -> None:
    """The model's precision, the device, the seed and the tokenizer."""
    eng.add_argument(
        "--dtype",
        default=None,
        choices=["auto", "float32", "float16", "bfloat16", "half", "float"],
        help="weight and activation dtype (default: auto)",
    )
    eng.add_argument("--seed", type=int, default=None, help="random seed for sampling")
    eng.add_argument(
        "--device", default=None, help="torch device: auto, cpu, cuda or cuda:N (default: auto = cuda when available)"
    )
    eng.add_argument("--tokenizer", default=None, help="tokenizer directory or name (default: the model's)")


def _add_vllm_compat(parser: argparse.ArgumentParser) -> None:
    """vLLM flags the engine knows but does not serve with: refused with the reason, or accepted and ignored,
    so a vLLM launch command runs here unchanged or fails on the one flag that matters."""
    unsupported = parser.add_argument_group("vLLM flags this engine rejects (other than the values shown)")
    for item in UNSUPPORTED_FLAGS:
        if item.takes_value:
            unsupported.add_argument(item.flag, default=None, help=f"not supported: {item.why}")
        else:
            unsupported.add_argument(item.flag, action="store_true", default=None, help=f"not supported: {item.why}")
    ignored = parser.add_argument_group("vLLM flags accepted and ignored (no effect here)")
    for flag in IGNORED_FLAGS_WITH_VALUE:
        ignored.add_argument(flag, default=None, help="accepted for vLLM compatibility; no effect")
    for flag in IGNORED_SWITCHES:
        ignored.add_argument(flag, action="store_true", default=None, help="accepted for vLLM compatibility; no effect")


def parse_serve_args(argv: Sequence[str], prog: str | None = None) -> argparse.Namespace:
    """Parse and validate; raises CliArgsError for known-but-unsupported values."""
    parser = build_serve_parser(prog)
    args = parser.parse_args(list(argv))
    check_supported(args)
    return args


def check_supported(args: argparse.Namespace) -> None:
    """Reject the vLLM flags this engine cannot honour, naming the flag and why."""
    for item in UNSUPPORTED_FLAGS:
        value = getattr(args, _dest(item.flag))
        if value is None:
            continue
        raw = "" if value is True else str(value)
        if item.rejects(raw):
            shown = item.flag if value is True else f"{item.flag} {value}"
            raise CliArgsError(f"{shown}: {item.why}")


def engine_config_kwargs(args: argparse.Namespace) -> dict[str, object]:
    """The EngineConfig fields the user set (None means: keep the engine's default)."""
    return {name: getattr(args, name) for name in ENGINE_CONFIG_FIELDS if getattr(args, name, None) is not None}


# Never logged verbatim (vLLM's _SENSITIVE_ARG_FIELDS): shown as "***".
SENSITIVE_ARGS: frozenset[str] = frozenset({"api_key", "hf_token"})


def non_default_args(args: argparse.Namespace, prog: str | None = None) -> dict[str, object]:
    """What differs from the parser's defaults, for vLLM's `non-default args: {…}` line (keys as ***)."""
    defaults = build_serve_parser(prog).parse_args([])
    return {
        key: "***" if key in SENSITIVE_ARGS else value
        for key, value in vars(args).items()
        if not key.startswith("_") and getattr(defaults, key, None) != value
    }


def api_keys(args: argparse.Namespace) -> list[str]:
    """The keys the server accepts: --api-key, else $VLLM_API_KEY (vLLM's order); empty: open."""
    return [key for key in (args.api_key or [os.environ.get("VLLM_API_KEY", "")]) if key]


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer; pass a whole number > 0") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} must be > 0")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number; pass 0-65535") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port number; pass 0-65535")
    return value


def _positive_float(text: str) -> float:
    value = _float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} must be > 0")
    return value


def _non_negative_float(text: str) -> float:
    value = _float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} must be >= 0")
    return value


def _fraction(text: str) -> float:
    value = _float(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{value} must be a fraction in (0, 1], e.g. 0.9")
    return value


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number; pass a number such as 30")
    return value


def main_error(message: str, prog: str | None = None) -> int:
    """Print the one-line error and return the usage exit code."""
    print(f"{prog or prog_name()}: error: {message}", file=sys.stderr)
    return EXIT_USAGE
