"""Build advisor/catalog/vllm_messages.json: every message vLLM raises, logs at warning level or above, or
answers a request with.

Why it exists: triage matches a user's pasted error against vLLM's own words. Hand-written rules
cover the failures we have seen; this catalog covers the rest, straight from vLLM's released
source. For each vLLM minor release from 0.4 to 0.34, and within it every patch PyPI has (each patch by its
newest build: 0.6.1.post2, 0.10.1.1), the script downloads the wheel with pip into a temporary folder under /tmp,
reads only its `vllm/**/*.py` files, parses them with `ast`, and deletes the download before the next release.
Every patch, not only a minor's newest: vLLM adds and rewords messages within a minor (0.5.1's `Pipeline
parallelism is not supported yet with multiprocessing.` is gone by 0.5.5; SamplingParams took `use_beam_search`
until 0.6.2), and a user pastes the words of the patch they run.
Every `raise SomeError(<message>)`, every `logger.<warning|error|critical|exception|
warning_once|error_once>(<message>, *args)`, every `create_error_response(<message>, err_type=…)` (the
OpenAI server's HTTP error body, `kind: response`) and every `assert <check>, <message>` (an internal check
that fails as AssertionError, `kind: assert`) becomes a regular expression, and so does every wordless
`assert <check>` written on one line in at most four files of every release that has it (`kind: check`: its
statement, which is all a traceback shows of it above a bare AssertionError; not a check of one plain name, `assert x
is not None`, and not vLLM's vendored FlashAttention's). Literal text is escaped,
each variable part a named group (`{self.max_model_len}` -> `(?P<max_model_len>.+?)`; the last
group is greedy, `.+`, so re.search over a pasted line does not cut that value short). Each entry
records the exception class or log level, the file and line within vllm/, the CLI flags and
environment variables the message names, a phase guessed from the path, and the minor versions
that have it, with `first_release` / `last_release` where its first (last) patch is not the first (newest) one
read of that minor. Beside the messages, `engine_args` lists every field of EngineArgs and AsyncEngineArgs, and every
keyword of SamplingParams, with the minors that declare it: what a caller could pass each release; `extras` the
packages each of vLLM's extras installs (`video`: decord), from the wheel's METADATA; `architectures` the model
architectures each release's registry builds (the releases an architecture `not supported for now` needs). What
it misses: docs/vllm-messages.md.

Regenerate (7 to 27 minutes on 2 cores with a near PyPI mirror, parsing most of it; 69 wheels of 70-510 MB, about 20 GB
downloaded in all, one on disk at a time; the wheel, not the sdist, because pip cannot fetch vLLM's sdist without
building it):

    .venv/bin/python scripts/extract_vllm_messages.py

A subset: `--versions 0.6 0.8` (a minor's every patch, or an exact release such as 0.8.4); `--newest-only` reads one
patch per minor (31 wheels, what the catalog read before it read every patch); `--out PATH` writes
elsewhere (a subset written to the default path replaces the full catalog). Exit 2 when a
download failed (the other versions are still extracted and the failure is in the header).
Source: vLLM's released packages on PyPI (package `vllm`, Apache-2.0); only messages are kept.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import string
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Container, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "advisor" / "catalog" / "vllm_messages.json"
COMMAND = ".venv/bin/python scripts/extract_vllm_messages.py"
MINORS = [f"0.{minor}" for minor in range(4, 35)]
PACKAGE = "vllm"
MIN_LITERAL_CHARS = 12  # a message with less literal text than this (a bare `{e}` re-raise) is not kept
MAX_INLINE_DEPTH = 4  # how deep `msg = ...; raise X(msg)` chains are followed
# vendored code that is not vLLM's own (pynvml and the like)
EXCLUDED_PREFIXES = ("vllm/third_party/",)

# logger method -> (level, once)
LOG_METHODS: dict[str, tuple[str, bool]] = {
    "warning": ("warning", False),
    "warn": ("warning", False),
    "warning_once": ("warning", True),
    "error": ("error", False),
    "error_once": ("error", True),
    "critical": ("critical", False),
    "fatal": ("critical", False),
    "exception": ("exception", False),
}
LOGGER_NAMES = re.compile(r"^_?(logger|log|LOGGER|LOG|logging)$")
# The OpenAI server's refusals: `self.create_error_response("…", err_type=…)` answers a request with an HTTP
# error body instead of raising, so a client sees the message and the log may never hold it.
ERROR_RESPONSE_CALLS = frozenset({"create_error_response", "_create_error_response", "create_streaming_error_response"})
DEFAULT_ERROR_TYPE = "BadRequestError"  # create_error_response's err_type default in every release

FLAG_RE = re.compile(r"(?<![\w-])--([a-zA-Z][a-zA-Z0-9]*(?:[-_][a-zA-Z0-9]+)*)")
FIELD_TOKEN_RE = re.compile(r"(?<![\w-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![\w-])")
QUOTED_TOKEN_RE = re.compile(r"[`'\"]([a-z][a-z0-9_]*)[`'\"]|(?<![\w.-])([a-z][a-z0-9_]*)=")
# environment variables named in a message's text: these prefixes always count...
ENV_PREFIXES = (
    "VLLM HF HUGGING_FACE NCCL CUDA NVIDIA PYTORCH TORCHINDUCTOR RAY HIP HSA ROCR OMP MKL KMP GLOO UCX NVSHMEM "
    "TRANSFORMERS TOKENIZERS OPENAI LD MASTER WORLD LOCAL"
).split()
# ...and these only beside "env"/"environment" or followed by "=": TRITON_ATTN, ROCM_AITER_MLA, TORCH_SDPA
# and FLASHINFER_MLA are attention backends, not variables
WEAK_ENV_PREFIXES = "TORCH TRITON ROCM FLASHINFER TPU XLA PJRT NEURON CCL ONEAPI ZE AMD".split()
ENV_RE = re.compile(r"(?<![A-Za-z0-9_])((?:" + "|".join(ENV_PREFIXES) + r")_[A-Z0-9_]*[A-Z0-9])(?![A-Za-z0-9_])")
WEAK_ENV_RE = re.compile(
    r"(?<![A-Za-z0-9_])((?:" + "|".join(WEAK_ENV_PREFIXES) + r")_[A-Z0-9_]*[A-Z0-9])(?![A-Za-z0-9_])"
)
ENV_CONTEXT_RE = re.compile(r"env", re.IGNORECASE)
REGEX_SPECIAL = re.compile(r"[\\.^$*+?{}\[\]|()]")
CONTROL = {"\n": r"\n", "\r": r"\r", "\t": r"\t"}
PERCENT_RE = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?[#0\- +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?(?P<conv>[diouxXeEfFgGcrsa%])"
)

# phase by path: the first prefix that matches wins, so the specific ones come first
PHASE_RULES: list[tuple[str, str]] = [
    ("vllm/config", "config"),  # vllm/config.py (<= 0.9) and the vllm/config/ package
    ("vllm/engine/arg_utils.py", "config"),
    ("vllm/v1/engine/core.py", "startup"),
    ("vllm/v1/engine/core_client.py", "startup"),
    ("vllm/v1/engine/utils.py", "startup"),
    ("vllm/v1/engine/coordinator.py", "startup"),
    ("vllm/v1/engine/", "serving"),  # output processing, detokenizer, input processing, async_llm
    ("vllm/engine/output_processor/", "serving"),
    ("vllm/model_executor/layers/sampler.py", "serving"),
    ("vllm/model_executor/sampling_metadata.py", "serving"),
    ("vllm/model_executor/guided_decoding/", "serving"),
    ("vllm/worker/", "startup"),
    ("vllm/v1/worker/", "startup"),
    ("vllm/executor/", "startup"),
    ("vllm/v1/executor/", "startup"),
    ("vllm/model_executor/", "startup"),
    ("vllm/distributed/", "startup"),
    ("vllm/platforms/", "startup"),
    ("vllm/attention/", "startup"),
    ("vllm/v1/attention/", "startup"),
    ("vllm/compilation/", "startup"),
    ("vllm/v1/core/kv_cache", "startup"),
    ("vllm/entrypoints/", "serving"),
    ("vllm/sampling_params.py", "serving"),
    ("vllm/v1/sample/", "serving"),
    ("vllm/v1/structured_output/", "serving"),
]

# ("lit", text) | ("var", name) | ("alt", [parts, parts])
Part = tuple[str, Any]


def phase_for(path: str) -> str:
    """config, startup, serving or other, guessed from where in vllm/ the message is."""
    for prefix, phase in PHASE_RULES:
        if path.startswith(prefix):
            return phase
    return "other"


# ---------------------------------------------------------------- scopes: `msg = f"..."; raise X(msg)`


class Scope:
    """The simple assignments of one function (or the module), to inline a message built in a variable.

    They are collected on the first look-up: most scopes hold no message built in a variable.
    """

    def __init__(self, body: list[ast.AST], params: list[str], parent: Scope | None) -> None:
        self.body = body
        self.params = params
        self.parent = parent
        self._assigns: dict[str, list[tuple[int, ast.expr | None]]] | None = None
        self._extended: dict[str, set[int]] = {}

    def resolve(self, name: str, before_line: int) -> ast.expr | None:
        """The one string-valued expression assigned to `name` before `before_line`, or None.

        A message extended with `+=` on some paths (`msg = f"At most {limit} …"`, then `if …: msg += " Set …"`,
        vllm/multimodal/processing/context.py of 0.32) resolves to its first assignment: every path prints it, and a
        pasted line that carries the extension still matches the base's pattern from its start."""
        if self._assigns is None:
            self._assigns = collect_assigns(self.body, self.params, self._extended)
        found = self._assigns.get(name)
        if found is not None:
            extensions = self._extended.get(name, set())
            base = [(line, value) for line, value in found if line not in extensions]
            if len(base) == 1:
                line, value = base[0]
                if value is not None and (self.parent is None or line < before_line) and is_stringish(value):
                    if all(line < extended for extended in extensions):
                        return value
            return None  # assigned more than once, a parameter, a loop variable...: its value is unknown
        return self.parent.resolve(name, before_line) if self.parent else None


def _scope_nodes(body: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """The nodes of a scope's body, without descending into nested functions, classes or lambdas."""
    stack = list(body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
                stack.append(child)


def collect_assigns(
    body: Iterable[ast.AST], params: Iterable[str] = (), extended: dict[str, set[int]] | None = None
) -> dict[str, list[tuple[int, ast.expr | None]]]:
    """Every write to each name of a scope, with the value of a simple assignment; the lines where a name is extended
    with a string (`msg += "…"`) go into `extended` as well."""
    assigns: dict[str, list[tuple[int, ast.expr | None]]] = {name: [(0, None)] for name in params}
    for node in _scope_nodes(body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigns.setdefault(node.targets[0].id, []).append((node.lineno, node.value))
            continue
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            assigns.setdefault(node.target.id, []).append((node.lineno, node.value))
            continue
        if isinstance(node, ast.Assign | ast.AnnAssign):
            continue  # tuple targets are reached as Name(Store) below
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            assigns.setdefault(node.id, []).append((node.lineno, None))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            assigns.setdefault(node.target.id, []).append((node.lineno, None))
            if extended is not None and isinstance(node.op, ast.Add) and is_stringish(node.value):
                extended.setdefault(node.target.id, set()).add(node.lineno)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            assigns.setdefault(node.name, []).append((node.lineno, None))
    # a Name(Store) of a single-target Assign is walked too: drop that duplicate
    for name, found in assigns.items():
        lines_with_value = {line for line, value in found if value is not None}
        assigns[name] = [(line, value) for line, value in found if value is not None or line not in lines_with_value]
    return assigns


def _params(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[str]:
    args = node.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return names


def is_stringish(node: ast.AST) -> bool:
    """Whether an expression visibly builds a string (so a variable holding it can be inlined)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return is_stringish(node.left) or (isinstance(node.op, ast.Add) and is_stringish(node.right))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return is_stringish(node.func.value)
    if isinstance(node, ast.IfExp):
        return is_stringish(node.body) and is_stringish(node.orelse)
    return False


# ---------------------------------------------------------------- message expression -> parts

_PASS_THROUGH_CALLS = {"str", "repr", "int", "float", "type", "list", "tuple", "set", "sorted", "bool", "round", "abs"}
_ARG_METHODS = {"join", "strip", "lower", "upper", "replace", "format"}


def name_for(node: ast.AST) -> str:
    """A group name for a variable part, after the expression: `self.max_model_len` -> max_model_len."""
    raw = _raw_name(node)
    name = re.sub(r"\W+", "_", raw).strip("_")
    if not name or not (name[0].isalpha()):
        name = "value" if not name else "v_" + name
    return name[:60]


def _raw_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        if node.attr.startswith("__") and node.attr.endswith("__"):
            return _raw_name(node.value)
        return node.attr
    if isinstance(node, ast.Subscript):
        base = _raw_name(node.value)
        index = node.slice
        if isinstance(index, ast.Constant) and isinstance(index.value, str | int):
            return f"{base}_{index.value}"
        return base
    if isinstance(node, ast.Call):
        return _call_name(node)
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.BinOp):
        return _raw_name(node.left)
    if isinstance(node, ast.IfExp):
        return _raw_name(node.body)
    if isinstance(node, ast.Starred):
        return _raw_name(node.value)
    return "value"


def _call_name(node: ast.Call) -> str:
    """`str(x)` -> x, `len(x)` -> len_x, `", ".join(names)` -> names, `self.get_num_layers()` -> get_num_layers."""
    func = node.func
    if isinstance(func, ast.Name):
        if func.id in _PASS_THROUGH_CALLS and node.args:
            return _raw_name(node.args[0])
        if func.id == "len" and node.args:
            return "len_" + _raw_name(node.args[0])
        return func.id
    if isinstance(func, ast.Attribute):
        if func.attr in _ARG_METHODS:
            return _raw_name(node.args[0]) if node.args else _raw_name(func.value)
        if func.attr == "get" and node.args:
            return _raw_name(node.args[0]) if isinstance(node.args[0], ast.Constant) else _raw_name(func.value)
        return func.attr
    return "value"


@dataclass
class Builder:
    """Turns a message expression into parts, inlining string variables it can see."""

    scope: Scope | None
    line: int
    inlined: list[ast.AST] = field(default_factory=list)  # expressions pulled in from assignments

    def parts(self, node: ast.AST, depth: int = 0) -> list[Part]:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return [("lit", node.value)]
            if isinstance(node.value, bytes):
                return [("lit", node.value.decode("utf-8", "replace"))]
            return [("var", name_for(node))]
        if isinstance(node, ast.JoinedStr):
            return self.fstring(node, depth)
        if isinstance(node, ast.BinOp) and is_stringish(node):
            return self.binop(node, depth)
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        if isinstance(node, ast.IfExp) and (is_stringish(node.body) or is_stringish(node.orelse)):
            return [("alt", [self.value_parts(node.body, depth), self.value_parts(node.orelse, depth)])]
        if isinstance(node, ast.Name) and self.scope is not None and depth < MAX_INLINE_DEPTH:
            value = self.scope.resolve(node.id, self.line)
            if value is not None:
                self.inlined.append(value)
                return self.parts(value, depth + 1)
        return [("var", name_for(node))]

    def fstring(self, node: ast.JoinedStr, depth: int) -> list[Part]:
        out: list[Part] = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                out.append(("lit", str(value.value)))
            elif isinstance(value, ast.FormattedValue):
                if value.conversion == -1 and value.format_spec is None:
                    out += self.value_parts(value.value, depth)
                else:
                    out.append(("var", name_for(value.value)))
        return out

    def binop(self, node: ast.BinOp, depth: int) -> list[Part]:
        """`"a" + x + "b"` and `"... %s" % args`."""
        if isinstance(node.op, ast.Add):
            return self.value_parts(node.left, depth) + self.value_parts(node.right, depth)
        right = node.right
        if isinstance(right, ast.Tuple):
            return self.percent(self.parts(node.left, depth), list(right.elts), None, depth)
        if isinstance(right, ast.Dict):
            return self.percent(self.parts(node.left, depth), [], right, depth)
        return self.percent(self.parts(node.left, depth), [right], None, depth)

    def call(self, node: ast.Call, depth: int) -> list[Part]:
        """`"...".format(...)` and `str("...")`; any other call is one variable part."""
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "format" and is_stringish(func.value):
            return self.format_call(self.parts(func.value, depth), node, depth)
        if isinstance(func, ast.Name) and func.id == "str" and len(node.args) == 1 and is_stringish(node.args[0]):
            return self.parts(node.args[0], depth)
        return [("var", name_for(node))]

    def value_parts(self, node: ast.AST, depth: int) -> list[Part]:
        """An interpolated value: inlined when it is a visible string, else one variable part."""
        if is_stringish(node) or isinstance(node, ast.Name):
            return self.parts(node, depth)
        return [("var", name_for(node))]

    def percent(self, fmt: list[Part], args: list[ast.expr], mapping: ast.Dict | None, depth: int) -> list[Part]:
        """`"... %s ..." % args` (and a logger's message with its args)."""
        keyed: dict[str, ast.expr] = {}
        if mapping is not None:
            for key, value in zip(mapping.keys, mapping.values, strict=False):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    keyed[key.value] = value
        remaining = list(args)
        out: list[Part] = []
        for kind, value in fmt:
            if kind != "lit":
                out.append((kind, value))
                continue
            pos = 0
            for match in PERCENT_RE.finditer(value):
                out.append(("lit", value[pos : match.start()]))
                pos = match.end()
                conv, key = match.group("conv"), match.group("key")
                if conv == "%":
                    out.append(("lit", "%"))
                    continue
                arg: ast.expr | None
                if key is not None:
                    arg = keyed.get(key)
                    if arg is None:
                        out.append(("var", name_for(ast.Name(id=key))))
                        continue
                else:
                    arg = remaining.pop(0) if remaining else None
                if arg is None:
                    out.append(("var", "arg"))
                elif conv == "s" and (is_stringish(arg) or isinstance(arg, ast.Name)):
                    out += self.parts(arg, depth)
                else:
                    out.append(("var", name_for(arg)))
            out.append(("lit", value[pos:]))
        return out

    def format_call(self, fmt: list[Part], call: ast.Call, depth: int) -> list[Part]:
        """`"... {} ... {name} ...".format(args, name=...)`."""
        keywords = {kw.arg: kw.value for kw in call.keywords if kw.arg}
        auto = 0
        out: list[Part] = []
        for kind, value in fmt:
            if kind != "lit":
                out.append((kind, value))
                continue
            try:
                pieces = list(string.Formatter().parse(value))
            except ValueError:
                out.append(("lit", value))
                continue
            for literal, field_name, spec, conversion in pieces:
                out.append(("lit", literal))
                if field_name is None:
                    continue
                base = re.split(r"[.\[]", field_name, maxsplit=1)[0]
                arg: ast.expr | None = None
                if base == "":
                    arg = call.args[auto] if auto < len(call.args) else None
                    auto += 1
                elif base.isdigit():
                    index = int(base)
                    arg = call.args[index] if index < len(call.args) else None
                else:
                    arg = keywords.get(base)
                plain = base == field_name and not spec and not conversion
                if arg is None:
                    out.append(("var", name_for(ast.Name(id=base or "arg"))))
                elif plain:
                    out += self.value_parts(arg, depth)
                else:
                    out.append(("var", name_for(arg)))
        return out


# ---------------------------------------------------------------- parts -> pattern


def normalize(parts: list[Part]) -> list[Part]:
    """Adjacent literals joined, empty ones dropped."""
    out: list[Part] = []
    for kind, value in parts:
        if kind == "alt":
            value = [normalize(branch) for branch in value]
        elif kind == "lit" and value == "":
            continue
        if kind == "lit" and out and out[-1][0] == "lit":
            out[-1] = ("lit", out[-1][1] + value)
        else:
            out.append((kind, value))
    return out


def literal_text(parts: list[Part]) -> str:
    text = []
    for kind, value in parts:
        if kind == "lit":
            text.append(value)
        elif kind == "alt":
            text.append(" ".join(literal_text(branch) for branch in value))
        else:
            text.append(" ")
    return "".join(text)


def escape(text: str) -> str:
    """Literal text as a pattern, escaping only what a regular expression reads as syntax (not spaces)."""
    text = REGEX_SPECIAL.sub(lambda m: "\\" + m.group(0), text)
    return "".join(CONTROL.get(ch, ch) for ch in text)


def render(parts: list[Part]) -> tuple[str, str]:
    """(regular expression, readable template with {name} placeholders) for the parts."""
    used: dict[str, int] = {}

    def group(name: str) -> str:
        used[name] = used.get(name, 0) + 1
        return name if used[name] == 1 else f"{name}_{used[name]}"

    def walk(items: list[Part], top: bool) -> tuple[str, str]:
        pattern, template = [], []
        last_var = max((i for i, (kind, _) in enumerate(items) if kind == "var"), default=-1)
        for i, (kind, value) in enumerate(items):
            if kind == "lit":
                pattern.append(escape(value))
                template.append(value)
            elif kind == "var":
                name = group(value)
                greedy = top and i == last_var
                pattern.append(f"(?P<{name}>.+)" if greedy else f"(?P<{name}>.+?)")
                template.append("{" + name + "}")
            else:
                branches = [walk(branch, False) for branch in value]
                pattern.append("(?:" + "|".join(p for p, _ in branches) + ")")
                template.append("[" + "|".join(t for _, t in branches) + "]")
        return "".join(pattern), "".join(template)

    return walk(parts, True)


# ---------------------------------------------------------------- names of flags and environment variables


def flags_named(text: str, engine_fields: frozenset[str]) -> list[str]:
    """`--foo-bar` in the text, and EngineArgs field names (`max_model_len`, `` `dtype` ``) as their flag."""
    flags = {"--" + m.group(1).replace("_", "-").lower() for m in FLAG_RE.finditer(text)}
    for match in FIELD_TOKEN_RE.finditer(text):
        if match.group(1) in engine_fields:
            flags.add("--" + match.group(1).replace("_", "-"))
    for match in QUOTED_TOKEN_RE.finditer(text):
        token = match.group(1) or match.group(2)
        if token in engine_fields:
            flags.add("--" + token.replace("_", "-"))
    return sorted(flags)


def envs_named(text: str, nodes: Iterable[ast.AST]) -> list[str]:
    """Environment variables in the text, and `envs.X` / `os.environ["X"]` / `os.getenv("X")` in the statement."""
    names = {m.group(1) for m in ENV_RE.finditer(text)}
    for match in WEAK_ENV_RE.finditer(text):
        before = text[max(0, match.start() - 40) : match.start()]
        if text[match.end() : match.end() + 1] == "=" or ENV_CONTEXT_RE.search(before):
            names.add(match.group(1))
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "envs":
                if re.fullmatch(r"[A-Z][A-Z0-9_]+", node.attr):
                    names.add(node.attr)
            key: ast.AST | None = None
            if isinstance(node, ast.Subscript) and _is_environ(node.value):
                key = node.slice
            elif isinstance(node, ast.Call) and node.args:
                func = node.func
                if (isinstance(func, ast.Attribute) and func.attr == "getenv") or (
                    isinstance(func, ast.Attribute) and func.attr == "get" and _is_environ(func.value)
                ):
                    key = node.args[0]
            if (
                isinstance(key, ast.Constant)
                and isinstance(key.value, str)
                and re.fullmatch(r"[A-Z][A-Z0-9_]+", key.value)
            ):
                names.add(key.value)
    return sorted(names)


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ"


# ---------------------------------------------------------------- one file


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _message_arg(call: ast.Call) -> ast.expr | None:
    if call.args:
        return call.args[0] if not isinstance(call.args[0], ast.Starred) else None
    for kw in call.keywords:
        if kw.arg in ("msg", "message", "detail", "reason"):
            return kw.value
    return None


def _log_call(node: ast.Call) -> str | None:
    """The logger method of `logger.warning(...)` and the like, or None."""
    func = node.func
    if not isinstance(func, ast.Attribute) or func.attr not in LOG_METHODS:
        return None
    receiver = func.value
    if isinstance(receiver, ast.Name) and LOGGER_NAMES.match(receiver.id):
        return func.attr
    if isinstance(receiver, ast.Attribute) and receiver.attr in ("logger", "_logger"):
        return func.attr
    return None


def _response_call(node: ast.Call) -> bool:
    """`create_error_response(...)` and its variants, called as a method or a function."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return name in ERROR_RESPONSE_CALLS


def _error_type(call: ast.Call) -> str:
    """The `err_type` an error response names (the error body's `type`), else the default BadRequestError."""
    candidates = [kw.value for kw in call.keywords if kw.arg == "err_type"] + call.args[1:2]
    for value in candidates:
        if isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value:
            return value.value
    return DEFAULT_ERROR_TYPE


def _walk_with_scopes(tree: ast.Module) -> Iterator[tuple[ast.AST, Scope]]:
    """Every node with the scope (function or module) it belongs to."""
    module_scope = Scope(list(tree.body), [], None)
    stack: list[tuple[ast.AST, Scope]] = [(child, module_scope) for child in tree.body]
    while stack:
        node, scope = stack.pop()
        yield node, scope
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inner = Scope(list(node.body), _params(node), scope)
            stack += [(child, inner) for child in node.body]
            stack += [(child, scope) for child in node.decorator_list]
        elif isinstance(node, ast.Lambda):
            inner = Scope([node.body], _params(node), scope)
            stack.append((node.body, inner))
        else:
            stack += [(child, scope) for child in ast.iter_child_nodes(node)]


def extract_from_source(source: str, path: str, engine_fields: Iterable[str] = ()) -> list[dict[str, Any]]:
    """The catalog entries (without versions) of one vLLM source file; `path` is its path from vllm/."""
    fields = frozenset(engine_fields)
    entries: dict[tuple[str, str, str], dict[str, Any]] = {}
    raised: set[int] = set()  # the exception calls raise statements hold: read with their raise, not again alone
    for node, scope in _walk_with_scopes(ast.parse(source)):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            raised.add(id(node.exc))
        site = _message_site(node, raised) or (None if path.startswith(VENDORED) else _bare_check(node, source))
        if site is None:
            continue
        entry, message, extra_args = site
        builder = Builder(scope, node.lineno)
        parts = builder.parts(message)
        if extra_args:  # logging formats with % only when it has arguments
            parts = builder.percent(parts, extra_args, None, 0)
        parts = normalize(parts)
        text = literal_text(parts)
        if len(re.sub(r"\s+", " ", text).strip()) < MIN_LITERAL_CHARS:
            continue
        pattern, template = render(parts)
        entry.update(
            pattern=pattern,
            message=template,
            file=path,
            line=node.lineno,
            phase=phase_for(path),
            flags=[] if entry["kind"] == "check" else flags_named(text, fields),
            env=[] if entry["kind"] == "check" else envs_named(text, [node, *builder.inlined]),
        )
        key = (pattern, path, entry.get("exception") or entry["level"])
        entries.setdefault(key, entry)  # the same message twice in a file: the first line
    return sorted(entries.values(), key=lambda e: (e["line"], e["kind"]))


def _bare_check(node: ast.AST, source: str) -> tuple[dict[str, Any], ast.expr, list[ast.expr]] | None:
    """An assert without words (`assert token_lora_mapping.size(0) == M`): when it fails, the traceback shows only
    its statement above a bare AssertionError, and that statement is what a person pastes. Its source text, as
    written on one line, is the entry (kind `check`); its names are code, not a setting the user chose, so no flag
    or environment variable is read from them. A statement written over several lines is left out: a traceback
    prints it cut wherever the failing part starts."""
    if not isinstance(node, ast.Assert) or node.msg is not None:
        return None
    statement = ast.get_source_segment(source, node)
    if statement is None or "\n" in statement or ANYONES_CHECK.match(statement):
        return None
    return {"kind": "check", "exception": "AssertionError"}, ast.Constant(statement), []


# A check of one plain name (`assert x is not None`, `assert not success`): anyone's code says the same, so the
# statement says nothing of where it failed.
ANYONES_CHECK = re.compile(r"^assert\s+(?:not\s+)?\(?\w+\)?(?:\s+is\s+(?:not\s+)?None)?$")
# vLLM's vendored FlashAttention (vllm/vllm_flash_attn/): its asserts are upstream flash-attn's, which other programs
# run word for word.
VENDORED = ("vllm/vllm_flash_attn/",)


# The names of exception classes by Python's convention: what a call builds when it builds an exception to raise.
BUILT_EXCEPTION = re.compile(r"^(?:[A-Z]\w*)?(?:Error|Exception)$")


def _built_exception(call: ast.Call) -> str | None:
    """The class a call of an exception class builds (`Exception`, `EngineDeadError`), else None."""
    cls = (_dotted(call.func) or "").split(".")[-1]
    return cls if BUILT_EXCEPTION.match(cls) else None


def _message_site(
    node: ast.AST, raised: Container[int] = frozenset()
) -> tuple[dict[str, Any], ast.expr, list[ast.expr]] | None:
    """What a node says to the user, if anything: the entry's kind (a raise of a named exception, an assert with
    its words, an HTTP error response, a log call at warning or above), the message expression and, for a log
    call, the arguments its % formats with. An exception built apart from its raise (`e = Exception("WorkerProc
    initialization failed …")` raised after cleaning up, one handed to a future's set_exception) is a raise too:
    a call of a class named …Error or …Exception that no raise statement in `raised` holds."""
    if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
        cls = _dotted(node.exc.func)
        if not cls or not cls.split(".")[-1][:1].isupper():
            return None
        message, entry, extra_args = _message_arg(node.exc), {"kind": "raise", "exception": cls.split(".")[-1]}, []
    elif isinstance(node, ast.Call) and id(node) not in raised and (cls := _built_exception(node)):
        message, entry, extra_args = _message_arg(node), {"kind": "raise", "exception": cls}, []
    elif isinstance(node, ast.Assert) and node.msg is not None:
        # an internal check with its words: raised as AssertionError when it fails
        message, entry, extra_args = node.msg, {"kind": "assert", "exception": "AssertionError"}, []
    elif isinstance(node, ast.Call) and _response_call(node):
        message, entry, extra_args = _message_arg(node), {"kind": "response", "exception": _error_type(node)}, []
    elif isinstance(node, ast.Call) and (method := _log_call(node)):
        level, once = LOG_METHODS[method]
        message, entry, extra_args = _message_arg(node), {"kind": "log", "level": level}, list(node.args[1:])
        if once:
            entry["once"] = True
    else:
        return None
    return None if message is None else (entry, message, extra_args)


# The argument dataclasses a caller builds an engine from: `EngineArgs(...)` and, for the async server,
# `AsyncEngineArgs(...)` (its own fields only; it inherits EngineArgs').
ENGINE_ARG_CLASSES = ("EngineArgs", "AsyncEngineArgs")


def engine_arg_classes(source: str) -> dict[str, list[str]]:
    """The field names each engine-argument dataclass declares in a vllm/engine/arg_utils.py: what a caller may
    pass as a keyword in that release (`EngineArgs.__init__() got an unexpected keyword argument` otherwise)."""
    found: dict[str, list[str]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name in ENGINE_ARG_CLASSES:
            found[node.name] = [
                stmt.target.id
                for stmt in node.body
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
            ]
    return found


# The keywords a caller builds a request's sampling with, `SamplingParams(...)` in vllm/sampling_params.py: a plain
# class whose __init__ takes them up to 0.5 ("SamplingParams.__init__() got an unexpected keyword argument 'k'"
# otherwise), a msgspec.Struct of annotated fields from 0.6 (msgspec refuses an unknown one as "Unexpected keyword
# argument 'k'"). Its private fields (`_real_n`) are no caller's keywords.
SAMPLING_PARAMS_FILE = "vllm/sampling_params.py"


def sampling_params_fields(source: str) -> dict[str, list[str]]:
    """{"SamplingParams": the keywords it takes} for a vllm/sampling_params.py, {} when it has no such class."""
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.ClassDef) and node.name == "SamplingParams"):
            continue
        init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
        if init is not None:
            names = [arg.arg for arg in (*init.args.args[1:], *init.args.kwonlyargs)]
        else:
            names = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
        return {"SamplingParams": [name for name in names if not name.startswith("_")]}
    return {}


def engine_args_fields(source: str) -> list[str]:
    """The field names of the EngineArgs dataclass in a vllm/engine/arg_utils.py."""
    return engine_arg_classes(source).get("EngineArgs", [])


def _extract_file(job: tuple[str, str, frozenset[str]]) -> tuple[str, list[dict[str, Any]] | str]:
    path, source, fields = job
    try:
        return path, extract_from_source(source, path, fields)
    except (SyntaxError, ValueError, RecursionError) as exc:
        return path, f"{type(exc).__name__}: {exc}"


# ---------------------------------------------------------------- releases and downloads


class DownloadError(Exception):
    pass


def _version_key(version: str) -> tuple[int, ...] | None:
    """A sortable key for a final or post release (0.8.5.post1), None for a pre- or dev release."""
    match = re.fullmatch(r"(\d+(?:\.\d+)*)(?:\.?post(\d+))?", version)
    if not match:
        return None
    numbers = [int(n) for n in match.group(1).split(".")]
    numbers += [0] * (4 - len(numbers))
    return (*numbers, int(match.group(2) or 0))


def available_releases(python: str) -> list[str] | None:
    """Every vllm release PyPI lists (`pip index versions`), or None when pip cannot say."""
    try:
        result = subprocess.run(
            [python, "-m", "pip", "index", "versions", PACKAGE], capture_output=True, text=True, timeout=300
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in result.stdout.splitlines():
        if line.strip().startswith("Available versions:"):
            return [v.strip() for v in line.split(":", 1)[1].split(",") if v.strip()]
    return None


def latest_of_minor(minor: str, releases: list[str]) -> str | None:
    """The newest final (or post) release of a minor such as 0.8, None when there is none."""
    patches = patches_of_minor(minor, releases)
    return patches[-1] if patches else None


def patches_of_minor(minor: str, releases: list[str]) -> list[str]:
    """Every patch release of a minor, oldest first, each patch by its newest build (0.6.1.post2 for 0.6.1,
    0.10.1.1 for 0.10.1); no pre- or dev releases. Why every patch: vLLM rewords and adds messages within a minor
    (0.5.1's `Pipeline parallelism is not supported yet with multiprocessing.` is gone by 0.5.5), and a user
    pastes the wording of whichever patch they run."""
    newest: dict[tuple[int, ...], tuple[tuple[int, ...], str]] = {}
    for version in releases:
        if version == minor or version.startswith(minor + "."):
            key = _version_key(version)
            if key is not None and (key[:3] not in newest or key > newest[key[:3]][0]):
                newest[key[:3]] = (key, version)
    return [version for _, version in sorted(newest.values())]


def download_wheel(python: str, requirement: str, dest: Path) -> Path:
    """pip-download one vllm wheel (no dependencies) into dest; DownloadError with pip's last line on failure."""
    base = [python, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-q", "-d", str(dest)]
    # a wheel for this interpreter first; an old release may only have wheels for other Pythons
    other_pythons = ["--python-version", "3.11", "--implementation", "cp", "--abi", "cp311", "--abi", "abi3"]
    for tag in ("manylinux1_x86_64", "manylinux2014_x86_64", "manylinux_2_28_x86_64", "manylinux_2_31_x86_64"):
        other_pythons += ["--platform", tag]
    last = ""
    for extra in ([], other_pythons):
        result = subprocess.run([*base, *extra, requirement], capture_output=True, text=True, timeout=1800)
        wheels = sorted(dest.glob("vllm-*.whl"))
        if result.returncode == 0 and wheels:
            return wheels[0]
        lines = [ln.strip() for ln in result.stderr.splitlines() if ln.strip() and "WARNING" not in ln]
        last = lines[-1] if lines else f"pip exited {result.returncode}"
    raise DownloadError(last)


def wheel_sources(wheel: Path) -> Iterator[tuple[str, str]]:
    """(path, text) of the wheel's vllm/**/*.py files, read from the archive (nothing else is unpacked)."""
    with zipfile.ZipFile(wheel) as archive:
        for name in sorted(archive.namelist()):
            if name.startswith("vllm/") and name.endswith(".py") and not name.startswith(EXCLUDED_PREFIXES):
                yield name, archive.read(name).decode("utf-8", "replace")


# `Requires-Dist: decord; extra == "video"` in the wheel's METADATA: a package an extra of vLLM installs.
_EXTRA_REQUIREMENT = re.compile(
    r"^Requires-Dist: (?P<package>[A-Za-z0-9][A-Za-z0-9._-]*)[^;]*;.*\bextra == ['\"](?P<extra>[\w-]+)['\"]"
)


def wheel_extras(wheel: Path) -> dict[str, list[str]]:
    """The packages each of vLLM's extras installs (`pip install 'vllm[video]'`), from the wheel's METADATA:
    vLLM imports them only when a feature needs them, so a missing one fails at that feature's first use."""
    extras: dict[str, list[str]] = {}
    with zipfile.ZipFile(wheel) as archive:
        metadata = next((n for n in archive.namelist() if n.endswith(".dist-info/METADATA")), None)
        text = archive.read(metadata).decode("utf-8", "replace") if metadata else ""
    for line in text.splitlines():
        found = _EXTRA_REQUIREMENT.match(line)
        if found:
            extras.setdefault(found["extra"], []).append(found["package"].lower().replace("_", "-"))
    return extras


# The model registry's tables (`_TEXT_GENERATION_MODELS = {"LlamaForCausalLM": ("llama", …), …}` in
# vllm/model_executor/models/registry.py; `_MODELS` in models/__init__.py before 0.6): the architectures a release
# builds. Not the tables of architectures it no longer builds (`_PREVIOUSLY_SUPPORTED_MODELS`: until which release;
# `_OOT_SUPPORTED_MODELS`: which plugin has them now) nor ROCm's partial-support notes.
REGISTRY_FILES = ("vllm/model_executor/models/registry.py", "vllm/model_executor/models/__init__.py")
_REGISTRY_TABLE = re.compile(r"_\w*MODELS")
_NOT_BUILT_TABLES = ("PREVIOUSLY", "OOT", "ROCM")


def registry_architectures(sources: dict[str, str]) -> dict[str, list[str]]:
    """table (`text_generation_models`) -> the architectures its literal keys name, for one release: when a
    release first lists an architecture is the smallest upgrade that runs a model vLLM refused as `not supported
    for now` (Qwen3_5MoeForConditionalGeneration: 0.17.0)."""
    tables: dict[str, list[str]] = {}
    for path in REGISTRY_FILES:
        for node in ast.parse(sources.get(path, "")).body:
            target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
            target = node.target if isinstance(node, ast.AnnAssign) else target
            name = target.id if isinstance(target, ast.Name) else ""
            value = getattr(node, "value", None)
            if not _REGISTRY_TABLE.fullmatch(name) or any(word in name for word in _NOT_BUILT_TABLES):
                continue
            if isinstance(value, ast.Dict):
                keys = [k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
                tables.setdefault(name.strip("_").lower(), []).extend(keys)
    return {table: sorted(set(names)) for table, names in tables.items() if names}


# ---------------------------------------------------------------- one version, all versions


@dataclass
class VersionResult:
    minor: str
    release: str
    files: int
    entries: list[dict[str, Any]]
    unparsed: dict[str, str]
    engine_fields: int
    engine_args: dict[str, list[str]] = field(default_factory=dict)  # class -> its fields
    extras: dict[str, list[str]] = field(default_factory=dict)  # extra -> the packages it installs
    architectures: dict[str, list[str]] = field(default_factory=dict)  # registry table -> the architectures in it


def extract_version(minor: str, release: str, wheel: Path, jobs: int) -> VersionResult:
    sources = dict(wheel_sources(wheel))
    classes = engine_arg_classes(sources.get("vllm/engine/arg_utils.py", ""))
    fields = frozenset(classes.get("EngineArgs", []))
    classes.update(sampling_params_fields(sources.get(SAMPLING_PARAMS_FILE, "")))
    work = [(path, text, fields) for path, text in sources.items()]
    entries: list[dict[str, Any]] = []
    unparsed: dict[str, str] = {}
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(_extract_file, work, chunksize=32))
    else:
        results = [_extract_file(job) for job in work]
    for path, found in results:
        if isinstance(found, str):
            unparsed[path] = found
        else:
            entries += found
    return VersionResult(
        minor,
        release,
        len(sources),
        entries,
        unparsed,
        len(fields),
        classes,
        wheel_extras(wheel),
        registry_architectures(sources),
    )


# A wordless check written in more files of one release than this (`assert intermediate_tensors is not None`, in 111
# model files of 0.32) tells a person nothing about where it failed: not kept in any release, so an early release
# where three files held it does not claim it either. Counted per release, not per minor, and four, not fewer: 0.8's
# LoRA kernels held `assert token_lora_mapping.size(0) == M` in lora_expand.py, lora_shrink.py and their renamed
# lora_expand_op.py and lora_shrink_op.py at once, one component (three threads pasted it alone).
MAX_CHECK_FILES = 4


def placeable_checks(results: list[VersionResult]) -> None:
    """Drop from every release the wordless checks (kind `check`) that more than MAX_CHECK_FILES files of any one
    release hold."""
    files_of: dict[tuple[str, str], set[str]] = {}
    for result in results:
        for entry in result.entries:
            if entry["kind"] == "check":
                files_of.setdefault((result.release, entry["pattern"]), set()).add(entry["file"])
    crowded = {pattern for (_, pattern), files in files_of.items() if len(files) > MAX_CHECK_FILES}
    for result in results:
        result.entries = [e for e in result.entries if e["kind"] != "check" or e["pattern"] not in crowded]


def entry_key(entry: dict[str, Any]) -> tuple[str, str, str]:
    return entry["pattern"], entry["file"], entry.get("exception") or entry["level"]


def _by_release(results: list[VersionResult]) -> list[VersionResult]:
    return sorted(results, key=lambda r: _version_key(r.release) or _version_key(r.minor) or ())


def releases_read(results: list[VersionResult]) -> dict[str, list[str]]:
    """minor -> the releases of it that were read, oldest first."""
    read: dict[str, list[str]] = {}
    for result in _by_release(results):
        read.setdefault(result.minor, []).append(result.release)
    return read


def merge(results: list[VersionResult]) -> list[dict[str, Any]]:
    """One entry per (pattern, file, class or level) with the minors that have it, in version order. Where more
    than one patch of a minor was read and the entry's first (or last) release is not the first (or newest) patch
    read of its first (or last) minor, `first_release` (`last_release`) names that patch: a wording that came in
    0.8.3, or went after 0.5.2."""
    merged: dict[tuple[str, str, str], dict[str, Any]] = {}
    seen_in: dict[tuple[str, str, str], list[str]] = {}
    for result in _by_release(results):
        for entry in result.entries:
            key = entry_key(entry)
            if key not in merged:
                merged[key] = {**entry, "versions": []}
                seen_in[key] = []
            kept = merged[key]
            if result.release not in seen_in[key]:
                seen_in[key].append(result.release)
            if result.minor not in kept["versions"]:
                kept["versions"].append(result.minor)
            kept["line"] = entry["line"]  # the line in the newest version that has it
            kept["flags"] = sorted(set(kept["flags"]) | set(entry["flags"]))
            kept["env"] = sorted(set(kept["env"]) | set(entry["env"]))
    read = releases_read(results)
    for key, entry in merged.items():
        entry["first"], entry["last"] = entry["versions"][0], entry["versions"][-1]
        _name_bounding_patches(entry, seen_in[key], read)
    return sorted(merged.values(), key=lambda e: (e["file"], e["line"], e["pattern"], e["kind"]))


def _name_bounding_patches(row: dict[str, Any], seen_in: list[str], read: dict[str, list[str]]) -> None:
    """`first_release` (`last_release`) on a row whose first (last) release is not the first (newest) patch read of
    its first (last) minor: the patch a wording or keyword came in, or the last one that had it."""
    if seen_in[0] != read[row["first"]][0]:
        row["first_release"] = seen_in[0]
    if seen_in[-1] != read[row["last"]][-1]:
        row["last_release"] = seen_in[-1]


def merge_engine_args(results: list[VersionResult]) -> list[dict[str, Any]]:
    """One row per (class, field) with the minors whose EngineArgs or AsyncEngineArgs declares it: when a caller's
    keyword argument was taken (`worker_use_ray`: until the release that removed it)."""
    return _merge_pairs(results, lambda result: result.engine_args, ("class", "field"))


def merge_extras(results: list[VersionResult]) -> list[dict[str, Any]]:
    """One row per (extra, package) with the minors whose extra installs it (`video`, `decord`: 0.6–0.7)."""
    return _merge_pairs(results, lambda result: result.extras, ("extra", "package"))


def merge_architectures(results: list[VersionResult]) -> list[dict[str, Any]]:
    """One row per (registry table, architecture) with the minors whose registry lists it, and the first (last)
    patch where that is not the first (newest) patch read of its minor."""
    return _merge_pairs(results, lambda result: result.architectures, ("table", "architecture"))


def _merge_pairs(
    results: list[VersionResult], groups_of: Callable[[VersionResult], dict[str, list[str]]], keys: tuple[str, str]
) -> list[dict[str, Any]]:
    """Rows of (group, member) pairs a version lists (a class and its fields, an extra and its packages), each with
    the minors that list it, oldest first, and the first and last of them."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    seen_in: dict[tuple[str, str], list[str]] = {}
    for result in _by_release(results):
        for group, members in groups_of(result).items():
            for member in members:
                row = merged.setdefault((group, member), {keys[0]: group, keys[1]: member, "versions": []})
                if result.minor not in row["versions"]:
                    row["versions"].append(result.minor)
                seen = seen_in.setdefault((group, member), [])
                if result.release not in seen:
                    seen.append(result.release)
    read = releases_read(results)
    for pair, row in merged.items():
        row["first"], row["last"] = row["versions"][0], row["versions"][-1]
        _name_bounding_patches(row, seen_in[pair], read)
    return sorted(merged.values(), key=lambda row: (row[keys[0]], row[keys[1]]))


CATALOG_ABOUT = (
    "Messages vLLM raises (raise X(...)), logs at warning, error, critical or exception level, or "
    "answers a request with (create_error_response(...), an HTTP error body), and the asserts it checks "
    "(kind assert: with words; kind check: a wordless one-line assert, its statement as the message), "
    "extracted from vLLM's released wheels on PyPI (package vllm, Apache-2.0). file and line are "
    "within the wheel's vllm/ tree (line: in the newest version that has the entry). versions are minors; "
    "first_release / last_release name the first (last) patch where it is not the first (newest) patch read "
    "of that minor (each minor's patches read: versions[].releases)."
)
PATTERN_SYNTAX = (
    "Python re; literal text escaped, each variable part a named group (?P<name>.+?), the last "
    "one greedy (.+) so re.search over a pasted line captures all of its value; [a|b] in message "
    "is a conditional part. Groups do not span lines: search line by line, or join a wrapped message."
)


def minor_summary(minor: str, releases: list[str], results: list[VersionResult]) -> dict[str, Any]:
    """One minor's line of the header: its newest patch's files and fields, and counts over all its patches'
    distinct entries, so a message only an older patch has still counts for that minor."""
    of_minor = [result for result in results if result.minor == minor]
    newest = next(result for result in of_minor if result.release == releases[-1])
    keys = {entry_key(e): e for result in of_minor for e in result.entries}
    return {
        "minor": minor,
        "release": newest.release,
        "releases": releases,
        "files": newest.files,
        "engine_args_fields": newest.engine_fields,
        "entries": len(keys),
        "with_flag": sum(1 for e in keys.values() if e["flags"]),
        "with_env": sum(1 for e in keys.values() if e["env"]),
        "unparsed_files": {path: why for result in of_minor for path, why in result.unparsed.items()},
    }


def catalog_totals(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The merged catalog's counts, by kind and phase, as docs/vllm-messages.md quotes them."""
    phases: dict[str, int] = {}
    for entry in entries:
        phases[entry["phase"]] = phases.get(entry["phase"], 0) + 1
    totals: dict[str, Any] = {
        "entries": len(entries),
        "with_flag": sum(1 for e in entries if e["flags"]),
        "with_env": sum(1 for e in entries if e["env"]),
    }
    for kind in ("raise", "log", "response", "assert", "check"):
        totals[kind] = sum(1 for e in entries if e["kind"] == kind)
    totals["phases"] = dict(sorted(phases.items()))
    return totals


def build_header(
    results: list[VersionResult], entries: list[dict[str, Any]], skipped: dict[str, str], failed: dict[str, str]
) -> dict[str, Any]:
    return {
        "about": CATALOG_ABOUT,
        "command": COMMAND,
        "generated_by": "scripts/extract_vllm_messages.py",
        "pattern_syntax": PATTERN_SYNTAX,
        "versions": [minor_summary(minor, releases, results) for minor, releases in releases_read(results).items()],
        "skipped": skipped,
        "failed": failed,
        "totals": catalog_totals(entries),
    }


def write_catalog(
    path: Path,
    header: dict[str, Any],
    entries: list[dict[str, Any]],
    engine_args: list[dict[str, Any]],
    extras: list[dict[str, Any]],
    architectures: list[dict[str, Any]],
) -> None:
    """JSON with sorted keys: the header indented, then one message per line, one engine argument per line, one
    extra's package per line, and one registry table's architecture per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    header_text = json.dumps(header, sort_keys=True, indent=1, ensure_ascii=False)

    def lines(rows: list[dict[str, Any]]) -> str:
        return ",\n".join(json.dumps(r, sort_keys=True, ensure_ascii=False, separators=(",", ":")) for r in rows)

    text = (
        '{"header": '
        + header_text
        + ',\n"messages": [\n'
        + lines(entries)
        + '\n],\n"engine_args": [\n'
        + lines(engine_args)
        + '\n],\n"extras": [\n'
        + lines(extras)
        + '\n],\n"architectures": [\n'
        + lines(architectures)
        + "\n]}\n"
    )
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--versions",
        nargs="+",
        default=None,
        help="minors (0.6: its every patch) or exact releases (0.8.4), space- or comma-separated; default 0.4 ... 0.34",
    )
    parser.add_argument(
        "--newest-only",
        action="store_true",
        help="read only the newest patch of each minor (31 wheels instead of every patch's); the committed catalog "
        "reads every patch",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output JSON (default {DEFAULT_OUT})")
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1), help="parsing processes")
    parser.add_argument("--python", default=sys.executable, help="the Python whose pip downloads")
    args = parser.parse_args(argv)
    if args.versions:
        args.versions = [v for item in args.versions for v in item.split(",") if v]
        bad = [v for v in args.versions if not re.fullmatch(r"\d+\.\d+(\.\d+)*(\.?post\d+)?", v)]
        if bad:
            parser.error(f"not a version: {', '.join(bad)}")
    else:
        args.versions = list(MINORS)
    return args


def planned_releases(
    wanted: str, releases: list[str] | None, newest_only: bool, skipped: dict[str, str]
) -> list[tuple[str, str | None]]:
    """(minor, release) pairs to read for one `--versions` item: an exact release as given; a minor's every patch
    (or only its newest with --newest-only); (minor, None) when pip could not list the releases, so pip picks the
    newest. Empty, with `skipped` filled in, when PyPI has no release of that minor."""
    minor = ".".join(wanted.split(".")[:2])
    if wanted.count(".") >= 2 or "post" in wanted:
        return [(minor, wanted)]
    if releases is None:
        return [(minor, None)]
    patches = patches_of_minor(minor, releases)
    if not patches:
        print(f"[{minor}] vllm has no release for {minor} on PyPI: skipped", flush=True)
        skipped[minor] = "no release on PyPI"
        return []
    return [(minor, patches[-1])] if newest_only else [(minor, patch) for patch in patches]


def run_version(
    minor: str, release: str | None, args: argparse.Namespace, skipped: dict[str, str], failed: dict[str, str]
) -> VersionResult | None:
    """Download, extract and delete one release; None (with skipped or failed filled in) when there is none."""
    requirement = f"{PACKAGE}=={release}" if release else f"{PACKAGE}=={minor}.*"
    tick = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="vllm-messages-", dir="/tmp"))
    try:
        try:
            wheel = download_wheel(args.python, requirement, tmp)
        except (DownloadError, subprocess.TimeoutExpired) as exc:
            reason = str(exc) or type(exc).__name__
            if release is None and "No matching distribution" in reason:
                print(f"[{minor}] vllm has no release for {minor} on PyPI: skipped", flush=True)
                skipped[minor] = "no release on PyPI"
                return None
            print(f"error: {requirement}: download failed: {reason}", file=sys.stderr, flush=True)
            failed[release or minor] = f"{requirement}: download failed: {reason}"
            return None
        actual = wheel.name.split("-")[1]
        size_mb = wheel.stat().st_size / 1e6
        downloaded = time.monotonic() - tick
        result = extract_version(minor, actual, wheel, args.jobs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # the download is gone before the next version
    with_flag = sum(1 for e in result.entries if e["flags"])
    with_env = sum(1 for e in result.entries if e["env"])
    unparsed = f", {len(result.unparsed)} files unparsed" if result.unparsed else ""
    print(
        f"[{minor}] vllm=={actual}: {size_mb:.0f} MB in {downloaded:.0f}s, {result.files} files, "
        f"{len(result.entries)} messages ({with_flag} name a flag, {with_env} an env var){unparsed}, "
        f"{time.monotonic() - tick:.0f}s",
        flush=True,
    )
    return result


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    releases = available_releases(args.python)
    if releases is None:
        print("note: pip could not list vllm's releases; asking pip for the newest of each minor instead", flush=True)
    results: list[VersionResult] = []
    skipped: dict[str, str] = {}
    failed: dict[str, str] = {}
    plan = [pair for wanted in args.versions for pair in planned_releases(wanted, releases, args.newest_only, skipped)]
    print(f"reading {len(plan)} releases of {len({minor for minor, _ in plan})} minors", flush=True)
    for minor, release in plan:
        result = run_version(minor, release, args, skipped, failed)
        if result is not None:
            results.append(result)
    if not results:
        print("error: no version was extracted; nothing written", file=sys.stderr)
        return 2
    placeable_checks(results)
    entries = merge(results)
    engine_args = merge_engine_args(results)
    header = build_header(results, entries, skipped, failed)
    extras = merge_extras(results)
    header["totals"]["engine_args"] = len(engine_args)
    architectures = merge_architectures(results)
    header["totals"]["extras"] = len(extras)
    header["totals"]["architectures"] = len({row["architecture"] for row in architectures})
    write_catalog(args.out, header, entries, engine_args, extras, architectures)
    totals = header["totals"]
    print(
        f"wrote {args.out}: {totals['entries']} entries ({totals['with_flag']} name a flag, "
        f"{totals['with_env']} an env var) from {len(results)} versions in {time.monotonic() - started:.0f}s",
        flush=True,
    )
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
