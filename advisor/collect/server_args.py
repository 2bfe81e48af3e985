"""What the server was started with: from a `vllm serve …` command line, a log's
`non-default args: {…}` line, or the `vllm:cache_config_info` metric's labels.

All three are reduced to one spelling — flags exactly as `vllm serve` takes them
(`--max-model-len`) — so a proposed change can be applied to the user's own command and
pasted back into a shell. When several sources say something, the user's explicit
`--server-args` wins over the log, which wins over the metric labels.
"""

from __future__ import annotations

import shlex

from pydantic import BaseModel, Field

from advisor.collect.launch_text import ENV_ASSIGNMENT, split_launch
from advisor.errors import UserError

# `vllm:cache_config_info` label → the flag that sets it (vLLM 0.32: `kv_cache_memory_bytes` is
# `--kv-cache-memory-bytes`, engine/arg_utils.py; there is no `--kv-cache-memory`).
CACHE_CONFIG_FLAGS: dict[str, str] = {
    "block_size": "--block-size",
    "gpu_memory_utilization": "--gpu-memory-utilization",
    "cache_dtype": "--kv-cache-dtype",
    "enable_prefix_caching": "--enable-prefix-caching",
    "swap_space": "--swap-space",
    "num_gpu_blocks_override": "--num-gpu-blocks-override",
    "cpu_offload_gb": "--cpu-offload-gb",
    "kv_cache_memory_bytes": "--kv-cache-memory-bytes",
}
# cache_config_info's label saying whether the block size was the user's (vLLM 0.32+); "False"
# means the platform chose it (128 on CPU), so it is read back as a value, never as a flag.
USER_BLOCK_SIZE_LABEL = "user_specified_block_size"

# Flags whose presence alone means "on" (argparse store_true / BooleanOptionalAction).
BOOLEAN_FLAGS: frozenset[str] = frozenset(
    {
        "--enable-prefix-caching",
        "--enable-chunked-prefill",
        "--enforce-eager",
        "--trust-remote-code",
        "--disable-log-stats",
        "--disable-log-requests",
        "--enable-log-requests",
        "--disable-custom-all-reduce",
        "--enable-expert-parallel",
        "--enable-lora",
        "--async-scheduling",
        "--enable-prompt-tokens-details",
    }
)

# Namespace(...) (vLLM ≤0.9) prints every argument, defaults included; keep the ones triage reads.
TRIAGE_FLAGS: frozenset[str] = frozenset(
    {
        "--model",
        "--served-model-name",
        "--max-model-len",
        "--max-num-seqs",
        "--max-num-batched-tokens",
        "--gpu-memory-utilization",
        "--block-size",
        "--enable-prefix-caching",
        "--enable-chunked-prefill",
        "--kv-cache-dtype",
        "--enforce-eager",
        "--tensor-parallel-size",
        "--pipeline-parallel-size",
        "--data-parallel-size",
        "--quantization",
        "--dtype",
        "--speculative-config",
        "--device-memory-gib",
        "--num-gpu-blocks-override",
        "--kv-cache-memory-bytes",
        "--swap-space",
        "--cpu-offload-gb",
    }
)


# vLLM's short spellings of the flags servops reads (`vllm serve -tp 2`).
SHORT_FLAGS = {
    "-tp": "--tensor-parallel-size",
    "-pp": "--pipeline-parallel-size",
    "-dp": "--data-parallel-size",
    "-q": "--quantization",
}
_SHORT_OF = {long: short for short, long in SHORT_FLAGS.items()}


class ServerArgsError(UserError):
    """A --server-args text that cannot be split like a shell would; names the fix."""


class ServeCommand(BaseModel):
    """A server command split into program words, the model and its flags in order.

    `flags` maps a flag (`--max-model-len`) to its value text, or None for a bare boolean
    flag. `origin` says, per flag, where it was learned (server-args, log, metrics). `env`
    holds the environment assignments written before the program: vLLM's CPU backend takes
    its KV space from `VLLM_CPU_KVCACHE_SPACE`, so that setting is part of the command.
    """

    env: dict[str, str] = Field(default_factory=dict)
    program: list[str] = Field(default_factory=list)
    model: str | None = None
    flags: dict[str, str | None] = Field(default_factory=dict)
    origin: dict[str, str] = Field(default_factory=dict)

    def value(self, flag: str) -> str | None:
        """The flag's value text (under its short spelling too, `-tp 2`); 'true' for a bare boolean, 'false'
        for its `--no-` form."""
        if flag in self.flags:
            return self.flags[flag] if self.flags[flag] is not None else "true"
        if _SHORT_OF.get(flag) in self.flags:
            return self.value(_SHORT_OF[flag])
        negated = "--no-" + flag[2:]
        if negated in self.flags:
            return "false"
        return None

    def merged_under(self, stronger: ServeCommand) -> ServeCommand:
        """This command's flags overridden by `stronger`'s (which also supplies program/model)."""
        flags = dict(self.flags)
        origin = dict(self.origin)
        for flag, value in stronger.flags.items():
            flags.pop("--no-" + flag[2:], None)
            if flag.startswith("--no-"):
                flags.pop("--" + flag[5:], None)
            flags[flag] = value
            origin[flag] = stronger.origin.get(flag, "")
        return ServeCommand(
            env={**self.env, **stronger.env},
            program=stronger.program or self.program,
            model=stronger.model or self.model,
            flags=flags,
            origin=origin,
        )

    def with_changes(self, changes: dict[str, str], env: dict[str, str] | None = None) -> ServeCommand:
        """A copy with `{flag: proposed value}` applied (booleans as 'true'/'false'; an empty value removes the
        flag), and `env` set in its environment (an empty value unsets the variable)."""
        flags = dict(self.flags)
        for flag, proposed in changes.items():
            if proposed == "":  # a flag proposed empty is taken off the command (vLLM does not take it)
                flags = {f: v for f, v in flags.items() if f not in (flag, "--no-" + flag[2:], _SHORT_OF.get(flag))}
                continue
            bare = flag in BOOLEAN_FLAGS and proposed.lower() in ("true", "false")
            new_flag = "--no-" + flag[2:] if bare and proposed.lower() == "false" else flag
            rebuilt: dict[str, str | None] = {}
            for existing, value in flags.items():  # replace in place, so the diff reads easily
                if existing in (flag, "--no-" + flag[2:], _SHORT_OF.get(flag)):
                    rebuilt.setdefault(new_flag, None if bare else proposed)
                else:
                    rebuilt[existing] = value
            rebuilt.setdefault(new_flag, None if bare else proposed)
            flags = rebuilt
        environment = {**self.env, **(env or {})}
        environment = {name: value for name, value in environment.items() if value != ""}
        return ServeCommand(
            env=environment, program=list(self.program), model=self.model, flags=flags, origin=dict(self.origin)
        )

    def render(self) -> str:
        """A shell command line (quoted where needed) that can be pasted back."""
        words = [f"{name}={value}" for name, value in self.env.items()] + list(self.program)
        if self.model and "--model" not in self.flags:
            words.append(self.model)
        for flag, value in self.flags.items():
            words.append(flag)
            if value is not None:
                words.append(value)
        return shlex.join(words)


def parse_command(text: str, origin: str = "server-args", flag: str = "--server-args") -> ServeCommand:
    """Split `vllm serve MODEL --flag v …`, `python -m vllm.entrypoints.openai.api_server …`,
    `python -m engine serve …`, or just `--flag v …` into a `ServeCommand`."""
    return command_from_words(launch_text_words(text, flag), origin)


def launch_text_words(text: str, flag: str = "--server-args") -> list[str]:
    """The words of the vLLM launch in a user's text (advisor/collect/launch_text.py), quotes that do not close
    refused in one line naming `flag`."""
    try:
        return split_launch(text)
    except ValueError as exc:
        raise ServerArgsError(f"{flag} {text[:60]!r}: cannot split it like a shell ({exc}); check its quotes") from None


def command_from_words(words: list[str], origin: str = "server-args") -> ServeCommand:
    """A `ServeCommand` of a launch's words: its `NAME=value` variables, its program, its model, its flags."""
    words = list(words)
    env: dict[str, str] = {}
    while words and ENV_ASSIGNMENT.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    end = next((i + 1 for i, word in enumerate(words[:6]) if word == "serve" or word.endswith("api_server")), 0)
    if not end and len(words) > 1 and words[0].startswith("python") and words[1].endswith(".py"):
        end = 2  # a script of the user's own (`python3 offline_inference.py --max_tokens=128`): no model word
    command = ServeCommand(env=env, program=words[:end])
    rest = words[end:]
    if rest and not rest[0].startswith("-"):
        command.model, rest = rest[0], rest[1:]
    return _with_flags(command, rest, origin)


def args_from_repr(text: str, separator: str = "=", drop_defaults: bool = False) -> dict[str, str]:
    """`max_model_len=4096, enforce_eager=True, model='x'` → {'--max-model-len': '4096', …}.

    Used for vLLM's `non-default args: {…}` (as key=repr pairs) and `Namespace(…)`.
    `drop_defaults` keeps only the flags triage reads and drops None/False values,
    since a Namespace prints every argument.
    """
    flags: dict[str, str] = {}
    for part in _split_top_level(text):
        key, found, value = part.partition(separator)
        if not found:
            continue
        key = key.strip().strip("'\"")
        value = value.strip()
        value = _unquote_repr(value)
        if key == "model_tag":
            key = "model"
        flag = "--" + key.replace("_", "-")
        if value == "None" or (drop_defaults and (value in ("False", "[]", "{}", "") or flag not in TRIAGE_FLAGS)):
            continue
        flags[flag] = {"True": "true", "False": "false"}.get(value, value)
    return flags


def command_from_args(args: dict[str, str], origin: str) -> ServeCommand:
    """A `ServeCommand` (no program words) from a {flag: value} dict such as a log's args."""
    command = ServeCommand(model=args.get("--model"))
    for flag, value in args.items():
        if flag == "--model":
            continue
        if value == "true" and flag in BOOLEAN_FLAGS:
            command.flags[flag] = None
        elif value == "false" and flag in BOOLEAN_FLAGS:
            command.flags["--no-" + flag[2:]] = None
        else:
            command.flags[flag] = value
        command.origin[flag] = origin
    return command


def command_from_cache_config(labels: dict[str, str]) -> ServeCommand:
    """Flags recoverable from `vllm:cache_config_info` labels (the engine's effective values)."""
    args = {
        flag: labels[label] for label, flag in CACHE_CONFIG_FLAGS.items() if labels.get(label) not in (None, "", "None")
    }
    if labels.get(USER_BLOCK_SIZE_LABEL) == "False":
        args.pop("--block-size", None)  # chosen by the platform: pinning it would change nothing but the text
    if "--enable-prefix-caching" in args:
        args["--enable-prefix-caching"] = args["--enable-prefix-caching"].lower()
    if args.get("--kv-cache-dtype") == "auto":
        args.pop("--kv-cache-dtype")
    return command_from_args(args, origin="metrics")


def _with_flags(command: ServeCommand, words: list[str], origin: str) -> ServeCommand:
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if not word.startswith("-") or _is_number(word):
            continue  # a stray positional: not a flag we can change
        flag, equals, inline = word.partition("=")
        if equals:
            command.flags[flag] = inline
        elif (
            index < len(words)
            and (not words[index].startswith("-") or _is_number(words[index]))
            and (flag not in BOOLEAN_FLAGS and not flag.startswith("--no-"))
        ):
            command.flags[flag] = words[index]
            index += 1
        else:
            command.flags[flag] = None
        command.origin[flag] = origin
    if "--model" in command.flags and command.model is None:
        command.model = command.flags["--model"]
    return command


def _unquote_repr(value: str) -> str:
    """A Python repr as the flag's value text: `'x'` → x, and a list (`['smol']`, from an
    nargs flag such as --served-model-name) → its items joined by spaces, so the flag
    renders back as `--served-model-name smol`, not as the list's repr."""
    if value.startswith("[") and value.endswith("]"):
        return " ".join(_unquote_repr(item.strip()) for item in _split_top_level(value[1:-1]) if item.strip())
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are outside quotes and brackets."""
    parts, depth, quote, current = [], 0, "", []
    for char in text:
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    if current:
        parts.append("".join(current))
    return parts
