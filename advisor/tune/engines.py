"""The engines the closed loop starts, and the command each begins from.

Why apart from the demo: `servops tune` and `servops demo` start the same engines from the same flags
and apply a round's change the same way; the tune loop needs those, not the demo.
"""

from __future__ import annotations

from typing import Any, Literal

from advisor.collect.server_args import ServeCommand
from advisor.errors import UserError
from advisor.servers.process import bundled_command
from advisor.servers.vllm import reference_command

Engine = Literal["bundled", "vllm"]
POOR_FLAGS: tuple[str, ...] = ("--max-num-seqs", "1")
# float32 on both engines, whatever the CPU: the same dtype on every machine keeps the demo's rounds
# comparable with the figures BENCHMARKS.md recorded; each engine's own default follows the CPU
# (bf16 where it has bf16 arithmetic; docs/engine.md).
BASE_FLAGS: tuple[str, ...] = ("--max-model-len", "2048", "--dtype", "float32", "--disable-log-requests")
# The bundled engine's flags that vLLM 0.32 rejects as unknown (vllm/engine/arg_utils.py and
# vllm/entrypoints/launchers/cli_args.py define its flags), each with what vLLM has instead.
BUNDLED_ONLY_FLAGS: dict[str, str] = {
    "--device-memory-gib": "size its CPU KV cache with VLLM_CPU_KVCACHE_SPACE or --kv-cache-memory-bytes",
    "--device": "it picks its platform itself",
    "--disable-log-requests": "it logs no requests unless --enable-log-requests",
    "--cpu-threads": "it places its CPU threads with VLLM_CPU_OMP_THREADS_BIND",
}
# The same starting point on vLLM: BASE_FLAGS without the flags only the bundled engine has.
VLLM_BASE_FLAGS: tuple[str, ...] = ("--max-model-len", "2048", "--dtype", "float32")


def default_base_flags(engine: Engine) -> tuple[str, ...]:
    """The flags every run gets unless the user gives others: BASE_FLAGS, minus bundled-only ones on vLLM."""
    return VLLM_BASE_FLAGS if engine == "vllm" else BASE_FLAGS


def start_command(engine: Engine, flags: list[str], model: str | None = None) -> ServeCommand:
    """The command demo and tune start from: the bundled engine, or vLLM as the reference deployment.

    Why check the flags here: vLLM would reject a bundled-only flag too, but only after
    importing itself for half a minute; here it is one line naming vLLM's equivalent.
    """
    if engine == "bundled":
        return bundled_command(flags, model)
    for word in flags:
        flag = word.split("=", 1)[0]
        if flag in BUNDLED_ONLY_FLAGS:
            raise UserError(
                f"--engine vllm: {flag} is the bundled engine's flag and vLLM has none "
                f"({BUNDLED_ONLY_FLAGS[flag]}); leave it out"
            )
    return reference_command(flags, model)


def apply(command: ServeCommand, changes: list[dict[str, Any]]) -> ServeCommand:
    """The command with every change's flag set to its proposed value."""
    return command.with_changes({str(c["flag"]): str(c["proposed"]) for c in changes})
