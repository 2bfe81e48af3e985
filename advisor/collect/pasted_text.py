"""What people paste besides vLLM's own log lines: HTTP error bodies, tracebacks, wrapped and quoted lines.

Why apart from the log reader: on call, the text at hand is rarely a clean `vllm serve` log. It is the body an
OpenAI client printed (`Error code: 404 - {'object': 'error', 'message': 'The model `x` does not exist.', ...}`),
a traceback cut out of a pod's output, a message an issue wrapped at its width, or one error line quoted in an
issue title. Each is unwrapped here to the text vLLM (or Python) wrote, so the reader can match it like any log
line. What carried the lines (kubectl, the journal, a shipper's JSON, a chat's quote bars) is already off:
advisor/collect/log_transport.py.
"""

from __future__ import annotations

import builtins
import json
import os
import re
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from rules.components import MESSAGE_COMPONENTS, component_of_path
from rules.literals import mapping_of

# A module's or class's name, ASCII: \w would take the ideographs before it as part of the name
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# What may stand just before an exception's class in a line: its start, a space, a colon, a quote, a bracket, the
# inline code's backtick, a CJK sentence's punctuation (its own block and the full-width forms: `【求助】`, `？`, `！`,
# `：`), or its last ideograph, kana or Hangul, since Chinese, Japanese and Korean put no space before a Latin word
# (`使用VLLM推理报错AttributeError: …`, eosphoros-ai/DB-GPT#1600)
_BEFORE_CLASS = (
    r"""(?:^|(?<=[\s:'"(\[>`\u3000-\u303f\u3040-\u30ff\u3130-\u318f\u4e00-\u9fff\uac00-\ud7af"""
    r"""\uff01-\uff0f\uff1a-\uff1f\uff3d\uff5d]))"""
)
# The line a Python exception ends with, anywhere in a line (after a syslog prefix, a pod name, an issue's
# "[Bug]: ", Markdown's inline code "`", a CJK sentence's full-width punctuation: `报错：KeyError: …`,
# OpenBMB/MiniCPM#141): a dotted class name ending in Error or Exception (or a bare `Exception`),
# then its message; or a class named otherwise with its module before it and a message after it (Triton's
# `triton.runtime.errors.OutOfResources:`, Dynamo's `torch._dynamo.exc.Unsupported:`), which a traceback prints in
# full.
_EXCEPTION = re.compile(
    rf"{_BEFORE_CLASS}(?P<cls>(?:{_NAME}\.)*(?:[A-Z][A-Za-z0-9_]*(?:Error|Exception)|Exception)"
    r"|(?:[a-z_][A-Za-z0-9_]*\.)+[A-Z][A-Za-z0-9]*(?=:\s))"
    r"(?::\s*(?P<msg>.*?))?\s*$"
)
# A line that begins a record of its own: a level, a date or time, a process prefix, a frame, a traceback.
_RECORD_START = re.compile(
    r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\b|\d{2,4}[-/:]\d\d|\(|File \"|Traceback|\[|During handling|The above"
)
# vLLM's periodic stats line, and how each version ends it (the KV usage, V1's prefix cache hit rate, V0's
# CPU KV usage): a stats line without its end was cut by the paste and its rest may follow.
_STATS = "Avg prompt throughput"
_STATS_COMPLETE = re.compile(r"KV cache usage: [\d.]+%[\s\"'.,]*$|hit rate: [^,]*?[\d.]+%[\s\"'.,]*$")
# How the rest of a cut stats line starts: inside a word (`sage: 98.7%`) or with one of its fields; anything
# else after a cut line (a person's next sentence) is a line of its own.
_STATS_REST = re.compile(r"[a-z]|(?:Running|Swapped|Pending|Waiting|Preemptions|Deferred|Prefix|[A-Z]\w* KV)\b")
_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>[\w<>]+)')
# A notebook's traceback (IPython, Jupyter, Colab): `File ~/…/client.py:962, in Client.__init__(self)` (IPython 8),
# `/usr/…/vllm_utils.py in patch()` (IPython 7; Colab renders the path as a link, `[/usr/…/x.py](https://…) in f()`),
# the line then only on the `--> 191   code` line below it.
_NOTEBOOK_FRAME = re.compile(
    r"^\s*(?:File (?P<path8>[~/][^\s,]*?\.py):(?P<line>\d+), in (?P<func8>[\w.<>]+)\("
    r"|\[?(?P<path7>/[^\s\]]+?\.py)\]?(?:\([^)\s]*\))? in (?P<func7>[\w.<>]+)\()"
)
# A notebook's traceback header (IPython, Jupyter, Colab): the exception's class first, then `Traceback (most recent
# call last)` on the same line, padded between; its frames and `Class: message` follow.
_NOTEBOOK_HEADER = re.compile(
    r"^\s*(?:[A-Za-z_][\w]*\.)*(?P<cls>[A-Za-z_]\w*(?:Error|Exception))\s{2,}Traceback \(most recent call last\)\s*$"
)
# Under a notebook's frame: the context lines (`    189   code`), and the one it was in (`--> 191   code`).
_NOTEBOOK_CONTEXT = re.compile(r"^\s*(?P<arrow>-+>)?\s*(?P<line>\d+)(?:\s{2,}(?P<code>.*))?$")
# A vLLM release a person names in a sentence ("on the 0.2.7 release", "vllm==0.3.2", "v0.8"): three parts, or
# two after `v`, "vllm" or "version" (a bare `0.5` is as likely a temperature or a number of seconds).
_RELEASE_SAID = re.compile(
    r"(?<![\w.])(?P<prefix>(?:vllm|version|release)\W{0,3}v?|v)?(?P<release>0\.\d{1,2}(?P<patch>\.\d{1,2})?(?:\.\d+|\.?post\d+|rc\d+)?)"
    r"(?![\w.]*\d)",
    re.IGNORECASE,
)
# Two lines that start alike (`6月 10 16:45:05 host bash[1]: `) are records of one writer, not a wrapped line.
SHARED_PREFIX_CHARS = 6
_LOGGED = re.compile(r"\b(?:WARNING|ERROR)\b")
# Markdown bold a reporter put around part of a line (`**ModuleNotFoundError: No module named 'decord'**`): a pair
# of `**` opening after a space (or the line's start) and closing before one (or its end), never Python's `**kwargs`.
_BOLD = re.compile(r"(?:(?<=^)|(?<=\s))\*\*(?=\S)(?P<text>.+?)(?<=\S)\*\*(?=\s|$)")
# A whole line an issue wrapped in Markdown's inline code (`` `KeyError: 'layers.0.mlp.down_proj.weight'` ``,
# unslothai/unsloth#1208): the words inside are the line; a code span inside it keeps its backticks.
_INLINE_CODE = re.compile(r"^\s*`(?!`)(?P<text>[^`](?:[^`]|`[^`]*`)*?)`\s*$")
# An exception line an issue set in Markdown's italics (`_ModuleNotFoundError: No module named 'x'_`,
# ROCm/vllm#48): only a whole line that is an exception class's line, so a name's own underscores are never taken.
_ITALIC_EXCEPTION = re.compile(r"^\s*_(?P<text>[A-Z]\w*(?:Error|Exception|Warning):\s.*\S)_\s*$")


# Python's own exception classes by their lowercase spelling: a line a person (or an issue title's editor) typed in
# lower case (`valueerror: bfloat16 is only supported …`, OpenBuddy/OpenBuddy#45; `permissionError: …`,
# vllm#20127) names one of them all the same.
_BUILTIN_EXCEPTIONS = {
    name.lower(): name for name in dir(builtins) if name.endswith(("Error", "Exception")) and name[0].isupper()
}
_MISCASED_CLASS = re.compile(r"^(?P<cls>[A-Za-z]+(?:error|exception))(?=:\s)", re.IGNORECASE)
# A line whose quotes arrive escaped (`\"auto\" tool choice requires …`, QwenLM/Qwen-Agent#344): copied out of a
# JSON string or a log that escaped them, with no plain quote of its own left.
_ESCAPED_QUOTE = re.compile(r'(?<!\\)"')
# An error body logged as a quoted string inside another program's structured line, so its JSON is escaped once more
# (a Go service's logr line: `"body"="{\"object\":\"error\",\"message\":\"\\\"auto\\\" tool choice …`,
# llmariner/llmariner#619): where it starts.
_ESCAPED_BODY = re.compile(r'\{\\"(?:object\\":\\"error|error\\":\{)')
_ONE_ESCAPE = re.compile(r"\\(.)")


def _recased(line: str) -> str:
    """The line with a miscased Python exception class at its start spelled as Python spells it."""
    found = _MISCASED_CLASS.match(line)
    proper = _BUILTIN_EXCEPTIONS.get(found["cls"].lower()) if found else None
    return proper + line[found.end() :] if found and proper and proper != found["cls"] else line


def _unescaped(line: str) -> str:
    """A line whose every quote is escaped (`\"`), outside an error body's JSON, with its quotes plain."""
    if '\\"' not in line or line.lstrip().startswith("{") or _ESCAPED_QUOTE.search(line):
        return line
    return line.replace('\\"', '"')


@dataclass(frozen=True, slots=True)
class Unwrapped:
    """One piece of text to read as a log line, what it was found in, and an error body's `type`."""

    text: str
    how: Literal["line", "error_body"]
    error_type: str | None = None


# A client's status before a body that vLLM's server never answers (0.32's entrypoints use none of them): the body is
# a gateway's, and its status says more than its words (OP-5.25 reads it from the line).
_GATEWAY_STATUS = re.compile(r"\b(?:[Ee]rror code|[Ss]tatus(?: code)?):? (?:413|429|502|504)\b")


def unwrap(line: str) -> Unwrapped:
    """The text a pasted line holds: the line itself, or the message of an HTTP error body (JSON or a Python
    dict, alone or after a client's `Error code: 404 - `); a body after a status only a gateway answers stays in
    its line."""
    if "**" in line:
        line = _BOLD.sub(r"\g<text>", line)
    if line.lstrip().startswith("`") and (code := _INLINE_CODE.match(line)):
        line = code.group("text")
    if line.lstrip().startswith("_") and (italic := _ITALIC_EXCEPTION.match(line)):
        line = italic.group("text")
    line = _unescaped(_recased(line))
    escaped = _ESCAPED_BODY.search(line) if '{\\"' in line else None  # a substring test first: this runs per line
    if escaped is not None:  # the body with its string's escaping undone, once
        line = line[: escaped.start()] + _ONE_ESCAPE.sub(r"\1", line[escaped.start() :])
    member = _MESSAGE_MEMBER.match(line)
    if member is not None:
        return Unwrapped(_json_string(member.group(1)), "error_body")
    start = line.find("{")
    if start < 0 or _GATEWAY_STATUS.search(line, 0, start):
        return Unwrapped(line, "line")
    record = mapping_of(line[start : line.rindex("}") + 1]) if "}" in line[start:] else None
    if record is None:
        cut = _cut_body_message(line[start:])
        return Unwrapped(cut, "error_body") if cut else Unwrapped(line, "line")
    body = error_body_message(record)
    if body is not None and body[0].strip():
        return Unwrapped(body[0], "error_body", body[1])
    return Unwrapped(line, "line")  # a body whose message is empty says only its type and code: read as the line


def error_body_message(record: dict[str, Any]) -> tuple[str, str | None] | None:
    """The message and type of an error body in OpenAI's shape: `{"object": "error", "message": …}` (vLLM's),
    or `{"error": {"message": …}}` (OpenAI's, and vLLM's newer releases), or a server's plain `{"error": "…"}`;
    None for anything else."""
    nested = record.get("error")
    if isinstance(nested, str) and nested.strip():  # `{"error": "…"}`: KServe's, TGI's and other servers' shape
        kind = record.get("error_type")
        return nested, kind if isinstance(kind, str) else None
    if isinstance(nested, dict) and isinstance(nested.get("message"), str):
        record = nested
    elif not (isinstance(record.get("message"), str) and (record.get("object") == "error" or "code" in record)):
        return None
    kind = record.get("type")
    return record["message"], kind if isinstance(kind, str) else None


def joiner(previous: str, line: str) -> str:
    """What goes between `previous` and its wrapped rest `line`: nothing where a stats line was cut inside
    a word (`GPU KV cache u` / `sage: 98.7%`, as a terminal wraps at its width), else a space."""
    if _STATS in previous and previous[-1:].isalnum() and line.strip()[:1].islower():
        return ""
    return " "


def continues(previous: str, line: str) -> bool:
    """Whether `line` is the wrapped rest of `previous`, an error message or a stats line cut at the terminal's
    or the issue's width: `previous` names an exception (or is a warning or error cut mid-sentence, or a stats
    line without its end, whose rest starts inside a word or with one of its fields), and `line` starts no
    record of its own (no level, no timestamp, no process prefix, no frame, no exception) and shares no prefix
    with it. vLLM's messages run over several sentences, so a sentence's end is no record's end; matching
    searches, so a joined tail that is not vLLM's costs nothing."""
    if _WHAT.match(line) and _CPP_TERMINATE.search(previous):  # a C++ exception's message, on the line under it
        return True  # (its class may be lower case: `std::bad_alloc`, `std::length_error`)
    stats = _STATS in previous and not _STATS_COMPLETE.search(previous)
    logged = "WARNING" in previous or "ERROR" in previous
    if not stats and not logged and "Error" not in previous and "Exception" not in previous:  # the common line
        return False
    before, after = previous.rstrip(), line.strip()
    if not before or not after:
        return False
    # a warning or error line cut mid-sentence: its rest starts in lower case, and it did not end a sentence
    cut = logged and _LOGGED.search(before) is not None and before[-1:].isalnum() and after[:1].islower()
    error = cut or _EXCEPTION.search(before) is not None
    if not error and not (stats and _STATS_REST.match(after)):
        return False
    if _RECORD_START.match(after) or _EXCEPTION.search(after):
        return False
    shared = len(os.path.commonprefix([before, after]))
    return shared < SHARED_PREFIX_CHARS  # lines with one prefix (a syslog stamp, a pod name) are two records


def release_named(text: str) -> str | None:
    """The one vLLM release a person's line names (`Here's my speed on 0.3.2` → `0.3.2`); None when it names
    none, or several (`from 0.2.7 to 0.3.2` says which versions, not which one the lines below came from)."""
    if "0." not in text:
        return None
    named = {m["release"] for m in _RELEASE_SAID.finditer(text) if m["patch"] or m["prefix"]}
    return named.pop() if len(named) == 1 else None


# msgspec's refusal of a keyword (SamplingParams is a msgspec Struct from vLLM 0.6): always a TypeError, and pasted
# without its class after a person's own words (`openai_api_server接收请求报错：Unexpected keyword argument
# 'use_beam_search'`, zai-org/GLM-4#663)
_STRUCT_KEYWORD = re.compile(r"(?:^|(?<=[\s:：]))(?P<msg>Unexpected keyword argument '\w+')\s*$")
# An exception as its repr, as V0's engine logs it and a person pastes it (`问题：AttributeError("'Qwen3ForCausalLM'
# object has no attribute 'pooler'")`, gpustack/gpustack#2193): the class, a quoted message, the closing parenthesis
_REPR = re.compile(
    rf"{_BEFORE_CLASS}(?P<cls>(?:{_NAME}\.)*[A-Z][A-Za-z0-9_]*(?:Error|Exception))"
    r"\((?P<q>['\"])(?P<msg>.*)(?P=q),?\)\s*$"
)
# Python's AttributeError message alone on its line, as a JSON string or an API's `detail` shows it (ipex-llm#13012:
# `"'OpenAIServingTokenization' object has no attribute 'show_available_models'"`): its words are Python's only
_BARE_ATTRIBUTE = re.compile(r"""^\s*["`]?(?P<msg>'\w+' object has no attribute '\w+')["`]?\s*$""")
# The openai SDK's refusal of its pre-1.0 interface alone on its line, as a person quotes it without its class
# (vllm#1875: `You tried to access openai.ChatCompletion, but this is no longer supported in openai>=1.0.0 - …`)
_BARE_OPENAI_V1 = re.compile(r"^\s*`?(?P<msg>You tried to access openai\.\w+, but this is no longer supported in .*)$")
# PyTorch's dispatch refusal alone on its line, as a person quotes it without RuntimeError (vllm PR #18542:
# `"reshape_and_cache_cpu_impl" not implemented for 'Half'`): its words are PyTorch's only
_BARE_DISPATCH = re.compile(r"""^\s*`?(?P<msg>"\w+" not implemented for '\w+')`?\s*$""")


# C++'s std::terminate on an exception nothing caught (PyTorch's `c10::Error`, NCCL's `c10::DistBackendError`,
# vllm-neuron#7): the process aborts without a Python traceback, and the exception's what() follows on the next line
_CPP_TERMINATE = re.compile(
    r"terminate called after throwing an instance of '(?P<cls>[\w:]+)'(?:\s+what\(\):\s+(?P<what>.*\S))?"
)
_WHAT = re.compile(r"^\s*what\(\):")


def exception_in(text: str) -> tuple[str, str] | None:
    """(class, message) of an exception line anywhere in `text`, the class without its module: Python's, in the
    shapes people paste it (its repr, msgspec's keyword refusal, PyTorch's dispatch refusal, the openai SDK's refusal
    of its old interface or Python's attribute message without the class), or C++'s `terminate called after throwing
    an instance of 'X'` (its what() line joined after it, when the paste has it)."""
    match = _EXCEPTION.search(text)
    if match is None:
        if bare := _STRUCT_KEYWORD.search(text):
            return "TypeError", bare["msg"]
        if shown := _REPR.search(text):
            return shown["cls"].rsplit(".", 1)[-1], shown["msg"]
        if thrown := _CPP_TERMINATE.search(text):
            return thrown["cls"], thrown["what"] or ""
        if dispatch := _BARE_DISPATCH.match(text):
            return "RuntimeError", dispatch["msg"]
        if removed := _BARE_OPENAI_V1.match(text):
            return "APIRemovedInV1", removed["msg"]
        bare = _BARE_ATTRIBUTE.match(text)
        return ("AttributeError", bare["msg"]) if bare else None
    message = (match.group("msg") or "").strip()
    if message.endswith("`") and text[: match.start()].endswith("`"):  # the inline code's closing mark
        message = message[:-1].rstrip()
    return match.group("cls").rsplit(".", 1)[-1], message


class Frame(NamedTuple):
    """One frame of a traceback: `File "…/vllm/v1/sample/sampler.py", line 9, in f`."""

    path: str
    line: int
    function: str

    def call(self) -> str:
        """`sampler.py:9 in f`: how the frame is named to a reader (`x.py in f` where the line is not known)."""
        name = re.split(r"[\\/]", self.path)[-1]
        return f"{name}:{self.line} in {self.function}" if self.line else f"{name} in {self.function}"


def frame_in(text: str) -> Frame | None:
    """The frame a traceback line names (`File "…/vllm/v1/sample/sampler.py", line 9, in f`, or a notebook's
    `File ~/…/x.py:9, in f(…)` and `/…/x.py in f()`), if it is one; a notebook's frame of IPython 7 has line 0."""
    match = _FRAME.search(text)
    return Frame(match["path"], int(match["line"]), match["func"]) if match else notebook_frame(text)


def notebook_frame(text: str) -> Frame | None:
    """A notebook's frame line (IPython 8's `File ~/…/x.py:9, in f(…)`, IPython 7's and Colab's `/…/x.py in f()`)."""
    notebook = _NOTEBOOK_FRAME.match(text)
    if notebook is None:
        return None
    if notebook["path8"]:
        return Frame(notebook["path8"], int(notebook["line"]), notebook["func8"])
    return Frame(notebook["path7"], 0, notebook["func7"])


def notebook_header(text: str) -> str | None:
    """The exception class a notebook's traceback header names (`RuntimeError    Traceback (most recent call
    last)`): IPython prints it before the frames, so a paste cut right after the header still says what was
    raised."""
    header = _NOTEBOOK_HEADER.match(text)
    return header["cls"] if header else None


def notebook_context(text: str) -> tuple[bool, int, str] | None:
    """A notebook traceback's numbered source line under a frame: (whether it is the frame's own, `-->`, its line
    number, its code); None for any other line."""
    match = _NOTEBOOK_CONTEXT.match(text)
    return (bool(match["arrow"]), int(match["line"]), (match["code"] or "").strip()) if match else None


# The calls that say which phase a traceback ran in: vLLM's start (building the engine, loading the weights,
# profiling memory, sizing the KV cache, capturing graphs) or its serving loop (a step, a request's output).
# The outermost frame that names one decides: a forward pass runs in both, inside a start's profiling run.
STARTUP_CALLS = frozenset(
    {
        "from_engine_args",
        "from_vllm_config",
        "_init_executor",
        "init_device",
        "load_model",
        "load_weights",
        "_initialize_kv_caches",
        "determine_num_available_blocks",
        "determine_available_memory",
        "profile_run",
        "capture_model",
        "compile_or_warm_up_model",
        "initialize_from_config",
        "_wait_for_engine_startup",
    }
)
SERVING_CALLS = frozenset(
    {
        "run_busy_loop",
        "run_engine_loop",
        "engine_step",
        "step",
        "step_async",
        "_process_engine_step",
        "schedule",
        "get_output",
        "get_output_async",
        "output_handler",
        "create_chat_completion",
        "create_completion",
    }
)


def phase_of(frames: list[Frame]) -> str:
    """startup | serving | unknown: the phase the outermost frame naming one says the traceback ran in."""
    for frame in frames:
        if frame.function in STARTUP_CALLS:
            return "startup"
        if frame.function in SERVING_CALLS:
            return "serving"
    return "unknown"


def deepest_vllm_frame(frames: list[Frame]) -> Frame | None:
    """The innermost frame inside vLLM's own package: where vLLM's code was when the paste stops."""
    return next((f for f in reversed(frames) if "vllm/" in f.path.replace("\\", "/")), None)


# Frames that only pass a call on: torch's nn.Module dispatch (`return forward_call(*args, **kwargs)`), torch.compile's
# wrappers, torch's no-grad decorator, Python's functools and contextlib. Python refuses a call's arguments before the
# callee runs, so the frame that made the call is the innermost one that is none of these.
_PASSES_CALLS_ON = (
    "torch/nn/modules/module.py",
    "torch/_dynamo/",
    "torch/utils/_contextlib.py",
    "/functools.py",
    "/contextlib.py",
)


def call_site(frames: list[Frame]) -> Frame | None:
    """The innermost frame that is no wrapper passing a call on: for a TypeError about a call's arguments, the code
    that made the call (`…/fused_moe/layer.py:478 in forward_cuda`, under two frames of torch's module dispatch)."""
    return next(
        (f for f in reversed(frames) if not any(w in f.path.replace("\\", "/") for w in _PASSES_CALLS_ON)), None
    )


# A hardware plugin's package (vllm_ascend, vllm_kunlun, vllm_gaudi …): laid out as vLLM is, so its paths name
# the same components, which are then the plugin's.
_PLUGIN_PACKAGE = re.compile(r"(?:^|/)(vllm_[a-z0-9_]+)/")


def plugin_of(frames: list[Frame]) -> str | None:
    """The vLLM plugin package (vllm_kunlun) of the deepest frame inside vLLM or a plugin: the code that raised."""
    for frame in reversed(frames):
        normalised = frame.path.replace("\\", "/")
        if "vllm/" in normalised:
            return None
        if plugin := plugin_in_path(normalised):
            return plugin
    return None


def plugin_in_path(path: str | None) -> str | None:
    """The vLLM plugin package a path lies in (`vllm_omni/engine/async_omni_engine.py`: vllm_omni), or None; the
    path a log header names (`[vllm_omni/engine/…py:1148]`) says which package's logger wrote the line."""
    found = _PLUGIN_PACKAGE.search(path.replace("\\", "/")) if path else None
    return found.group(1) if found else None


def component_of(frames: list[Frame], message: str) -> str | None:
    """The component an error came from: the deepest vLLM (or vLLM plugin) frame of its traceback, else its own
    words."""
    for frame in reversed(frames):
        normalised = frame.path.replace("\\", "/")
        plugin = plugin_in_path(normalised) if "vllm/" not in normalised else None
        if "vllm/" not in normalised and "torch/" not in normalised and plugin is None:
            continue
        if component := component_of_path(normalised):
            return f"{component} ({plugin})" if plugin else component
    lowered = message.lower()
    return next((component for word, component in MESSAGE_COMPONENTS if word in lowered), None)


# An error body a tool cut short (a chat UI, a log line at its width): its message's string up to its closing
# quote or the end of the text, JSON escapes and all.
_CUT_BODY = re.compile(r'^\{\s*(?:"object"\s*:\s*"error"\s*,|"error"\s*:\s*\{)\s*"message"\s*:\s*"((?:[^"\\]|\\.)*)')
# What follows a JSON string's closing quote inside an object: a comma, the object's end, or the end of a cut text.
_STRING_END = re.compile(r'"\s*(?:[,}]|$)')


# One member of an error body printed over several lines (a log shipper's or a client's pretty-printed JSON): the line
# `"message": "…",` alone, its string JSON-escaped (runpod-workers/worker-vllm#85: `\n` between a schema error's lines).
_MESSAGE_MEMBER = re.compile(r'^\s*"message"\s*:\s*"((?:[^"\\]|\\.)*\S(?:[^"\\]|\\.)*)"\s*,?\s*$')


def _cut_body_message(text: str) -> str | None:
    """The message of an OpenAI-shaped error body whose JSON does not close (`{"object":"error","message":
    "\\"auto\\" tool choice requires --enable-auto-tool-ch…`), its escapes decoded; None for anything else.

    A body printed inside a string literal (a JavaScript client's `'{"object":"error","message":"\\\\"auto\\\\" …'`,
    langchain-ai/langgraphjs#1065) has every backslash doubled: its message's string would end at the first
    `\\\\"`, with words, not JSON, after it; read once more with the doubling undone."""
    match = _CUT_BODY.match(text)
    closed_early = match is not None and match.end() < len(text) and not _STRING_END.match(text, match.end())
    if closed_early and "\\\\" in text:
        match = _CUT_BODY.match(text.replace("\\\\", "\\"))
    if match is None or not match.group(1).strip():
        return None
    return _json_string(match.group(1).removesuffix(chr(92)))


def _json_string(escaped: str) -> str:
    """A JSON string's text with its escapes decoded, or as written when they do not decode."""
    try:
        return json.loads(f'"{escaped}"')
    except ValueError:
        return escaped
