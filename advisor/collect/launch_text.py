"""The words of a vLLM launch however it was pasted.

Why a module of its own: `--server-args` takes what a person has, and that is rarely one clean `vllm serve`
line. It is a shell line continued over lines (`vllm serve \\` then a flag per line), a chain that exports a
variable first (`export VLLM_X=1; vllm serve …`, `cd / && python3 -m vllm.entrypoints.openai.api_server …`),
a `docker run` line whose options are Docker's and whose words after the image are the server's, a command
given to a shell inside the container (`/bin/bash -c "… && python3 -m vllm…"`), the exec form of a
Dockerfile or a pod spec (`CMD ["python3", "-m", "vllm.entrypoints.openai.api_server", …]`), or a manifest's
YAML (`args:` with a `- --max-model-len` line per word). Each is split the
way what runs it splits it, and the part that starts vLLM is kept, with the environment set before it.
"""

from __future__ import annotations

import json
import re
import shlex

import yaml

# A shell's line continuation: a backslash that ends a line joins it to the next. shlex alone keeps the
# newline as a word of its own, which became the model.
_CONTINUATION = re.compile(r"\\\r?\n")
# The exec form: a JSON array, alone or after a Dockerfile instruction or a pod spec's key.
_EXEC_FORM = re.compile(r"^\s*(?:(?:CMD|ENTRYPOINT)\s+|-?\s*(?:command|args)\s*:\s*)?(\[.*\])\s*$", re.DOTALL)
_SEPARATORS = frozenset({";", "&&", "||", "|", "&"})
# `NAME=value` before the program, as a shell reads it (`VLLM_CPU_KVCACHE_SPACE=4 vllm serve …`).
ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_CONTAINER_TOOLS = frozenset({"docker", "podman", "nvidia-docker"})
# `docker run` / `podman run` options that take the next word as their value (unless written `--opt=value`).
_CONTAINER_VALUE_OPTIONS = frozenset(
    {
        "-p", "--publish", "-v", "--volume", "-e", "--env", "--env-file", "--name", "--gpus", "--ipc",
        "--shm-size", "--runtime", "--network", "--net", "-w", "--workdir", "--entrypoint", "--mount",
        "--device", "--ulimit", "-u", "--user", "--cpus", "--memory", "-m", "--platform", "-l", "--label",
        "--restart", "-h", "--hostname", "--add-host", "--security-opt", "--cap-add", "--cap-drop", "--pull",
        "--log-driver", "--log-opt", "--cpuset-cpus", "--group-add", "--tmpfs", "--memory-swap", "--pid",
        "--userns", "--uts", "--health-cmd", "--stop-signal", "--stop-timeout", "--expose", "--dns",
    }
)  # fmt: skip
_SHELLS = frozenset({"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/usr/bin/bash", "/usr/bin/env"})


def split_launch(text: str) -> list[str]:
    """The words that start vLLM in `text`, after the `NAME=value` assignments set before them; raises
    ValueError (from shlex) for quotes that do not close."""
    text = _CONTINUATION.sub("", text)
    listed = _exec_form(text)
    if listed is None:
        listed = _manifest_form(text)
    return _launch_of(listed if listed is not None else _split(text), depth=0)


def _exec_form(text: str) -> list[str] | None:
    match = _EXEC_FORM.match(text)
    if match is None:
        return None
    try:
        words = json.loads(match.group(1))
    except (ValueError, RecursionError):
        return None
    return [str(word) for word in words] if isinstance(words, list) else None


def _manifest_form(text: str) -> list[str] | None:
    """A pod's or a compose service's YAML: a `command:` and `args:` (lists, or a string a shell splits), or a bare
    list of words one per `- ` line, as they are copied out of a manifest."""
    if "\n" not in text.strip() or not re.search(r"^\s*(?:-\s|(?:command|args)\s*:)", text, re.MULTILINE):
        return None
    try:
        document = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError):  # not YAML, or nested past what a manifest is: a shell line then
        return None
    if isinstance(document, list):
        return _scalars(document)
    if not isinstance(document, dict) or not {"command", "args"} & set(document):
        return None
    words: list[str] = []
    for part in (document.get("command") or [], document.get("args") or []):
        read = _scalars(part) if isinstance(part, list) else _split(str(part))
        if read is None:
            return None
        words += read
    return words


def _scalars(items: list) -> list[str] | None:
    """The words of a YAML list, when every item is one (a number or a boolean as the text it was)."""
    if any(isinstance(item, dict | list) or item is None for item in items):
        return None
    return [str(item).lower() if isinstance(item, bool) else str(item) for item in items]


def _split(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    return list(lexer)


def _launch_of(words: list[str], depth: int) -> list[str]:
    """The segment of a command chain that starts vLLM (else the last), with what was exported before it."""
    segments, current = [], []
    for word in words:
        if word in _SEPARATORS:
            segments.append(current)
            current = []
        else:
            current.append(word)
    segments.append(current)
    segments = [segment for segment in segments if segment]
    if not segments:
        return []
    chosen = next((s for s in segments if _starts_vllm(s)), next((s for s in segments if _runs_container(s)), None))
    chosen = chosen if chosen is not None else segments[-1]
    exported = [
        word
        for segment in segments[: segments.index(chosen)]
        if segment[0] == "export" or all(ENV_ASSIGNMENT.match(w) for w in segment)
        for word in segment
        if ENV_ASSIGNMENT.match(word)
    ]
    return exported + _inside(chosen, depth)


def _starts_vllm(words: list[str]) -> bool:
    return any(
        word.endswith("api_server") or "vllm.entrypoints" in word or re.fullmatch(r"(?:.*/)?vllm", word)
        for word in words
    )


def _command_start(words: list[str]) -> int:
    """Where the command begins, after the `NAME=value` assignments in front of it."""
    return next((i for i, word in enumerate(words) if not ENV_ASSIGNMENT.match(word)), len(words))


def _runs_container(words: list[str]) -> bool:
    rest = words[_command_start(words) :]
    return len(rest) > 1 and rest[0].rsplit("/", 1)[-1] in _CONTAINER_TOOLS and rest[1] in ("run", "container")


def _inside(words: list[str], depth: int) -> list[str]:
    """The container's command behind `docker run … IMAGE`, and a shell's `-c` script, read in turn."""
    if depth < 3 and _runs_container(words):
        env, inner = _container_command(words)
        return env + _inside(inner, depth + 1)
    if depth < 3 and len(words) >= 3 and words[0] in _SHELLS and words[1] in ("-c", "-lc"):
        script = _split(words[2])
        if _starts_vllm(script):  # a script that starts vLLM; any other shell command is the command itself
            return _launch_of(script, depth + 1)
    return words


def _container_command(words: list[str]) -> tuple[list[str], list[str]]:
    """(the `-e NAME=value` variables, the words after the image): Docker's own options are Docker's, not the
    server's; what follows the image is the image's entrypoint's arguments (vLLM's images: the server's)."""
    start = _command_start(words)
    index = start + (3 if words[start + 1] == "container" else 2)
    env: list[str] = []
    while index < len(words) and words[index].startswith("-"):
        option, equals, value = words[index].partition("=")
        takes_value = not equals and option in _CONTAINER_VALUE_OPTIONS
        value = words[index + 1] if takes_value and index + 1 < len(words) else value
        if option in ("-e", "--env") and ENV_ASSIGNMENT.match(value):
            env.append(value)
        index += 2 if takes_value else 1
    return env, words[index + 1 :]  # the image, then its arguments
