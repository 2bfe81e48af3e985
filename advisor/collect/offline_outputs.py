"""vLLM's Python objects an offline user printed: a `SamplingParams(…)` and what a request generated.

Why a reader of its own: when `LLM.generate()` answers wrongly (a repeated token, a stop too early) people paste the
objects they printed, `print(sampling_params)` and `print(outputs)`, and no line of them is an error. What is wrong is
in their fields read together: the settings asked for (min_tokens, max_tokens, stop strings) against what came back
(how many tokens, which ids, how it finished, what the prompt began with). A serving adapter's answer carries the same
facts in its own keys (`"generated_token_count": 2`, `"stop_reason": "stop"`: IBM's TGIS API in front of vLLM). This
reads them off the text and hands the rules one event for the settings and one for the output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rules.events import LogEvent, LogEventKind
from rules.literals import python_literal

# vLLM's SamplingParams.__repr__ (vllm/sampling_params.py, 0.4 to 0.34): `SamplingParams(n=1, …, stop=['\n'],
# stop_token_ids=[], …, max_tokens=200, min_tokens=200, …)`
_SAMPLING = re.compile(r"\bSamplingParams\((?P<body>.*\bmin_tokens=.*)\)")
_STOP = re.compile(r"\bstop=(?P<list>\[.*?\]), stop_token_ids=")
_MIN_TOKENS = re.compile(r"\bmin_tokens=(?P<n>\d+)")
_MAX_TOKENS = re.compile(r"\bmax_tokens=(?P<n>\d+)")
# RequestOutput.__repr__ and CompletionOutput.__repr__ (vllm/outputs.py): `prompt_token_ids=[50429, 563]`, then
# `CompletionOutput(index=0, text=' is is', token_ids=[563, 563], …, finish_reason=length, stop_reason=None)`
_PROMPT_IDS = re.compile(r"\bprompt_token_ids=\[(?P<ids>[\d,\s]*)\]")
_COMPLETION = re.compile(
    r"\bCompletionOutput\(index=\d+, text=(?P<text>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"), "
    r"token_ids=(?:array\('l', )?\[(?P<ids>[\d,\s]*)\]"
)
_FINISH = re.compile(r"\bfinish_reason=(?P<reason>\w+)")
# A serving adapter's answer, one key per line (IBM's vllm-tgis-adapter: generated_token_count, stop_reason)
_ADAPTER_TOKENS = re.compile(r'"generated_token_count"\s*:\s*(?P<n>\d+)')
_ADAPTER_STOP = re.compile(r'"stop_reason"\s*:\s*"(?P<reason>\w+)"')
_ADAPTER_TEXT = re.compile(r'"generated_text"\s*:\s*(?P<text>"(?:[^"\\]|\\.)*")')


@dataclass
class OfflineOutputs:
    """The settings and the output of the objects printed, as far as read."""

    params: LogEvent | None = None
    output: LogEvent | None = None
    _adapter: dict[str, object] = field(default_factory=dict)  # an adapter's keys, read line by line

    def read(self, text: str, line_no: int, source: str) -> None:
        """Take what `text` says of the settings or the output; a line holds at most one object of each."""
        if (sampling := _SAMPLING.search(text)) is not None and self.params is None:
            self.params = _params_event(sampling["body"], text, line_no, source)
        if (completion := _COMPLETION.search(text)) is not None and self.output is None:
            self.output = _output_event(completion, text, line_no, source)
        for key, pattern in (("tokens", _ADAPTER_TOKENS), ("reason", _ADAPTER_STOP), ("text", _ADAPTER_TEXT)):
            if (found := pattern.search(text)) is not None:
                self._adapter.setdefault(key, found.group(1))
                self._adapter.setdefault("line_no", line_no)
                self._adapter.setdefault("raw", text.strip())

    def events(self, source: str) -> list[LogEvent]:
        """The settings' event and the output's (a printed object first, else an adapter's keys), those read."""
        output = self.output or _adapter_event(self._adapter, source)
        return [event for event in (self.params, output) if event is not None]


def _params_event(body: str, raw: str, line_no: int, source: str) -> LogEvent:
    minimum, maximum, stop = _MIN_TOKENS.search(body), _MAX_TOKENS.search(body), _STOP.search(body)
    return LogEvent(
        kind=LogEventKind.OFFLINE_SAMPLING_PARAMS,
        message="SamplingParams",
        min_tokens=int(minimum["n"]) if minimum else None,
        requested_tokens=int(maximum["n"]) if maximum else None,
        stop_strings=_strings(stop["list"]) if stop else [],
        raw=raw.strip(),
        line_no=line_no,
        source_file=source,
    )


def _output_event(completion: re.Match[str], raw: str, line_no: int, source: str) -> LogEvent:
    ids = _ids(completion["ids"])
    prompt = _PROMPT_IDS.search(raw)
    finish = _FINISH.search(raw, completion.end())
    return LogEvent(
        kind=LogEventKind.OFFLINE_OUTPUT,
        message=_literal(completion["text"]),
        generated_tokens=len(ids),
        token_ids=ids,
        prompt_token_ids=_ids(prompt["ids"]) if prompt else [],
        finish_reason=finish["reason"] if finish else None,
        raw=raw.strip(),
        line_no=line_no,
        source_file=source,
    )


def _adapter_event(keys: dict[str, object], source: str) -> LogEvent | None:
    if "tokens" not in keys:
        return None
    return LogEvent(
        kind=LogEventKind.OFFLINE_OUTPUT,
        message=_literal(str(keys["text"])) if "text" in keys else None,
        generated_tokens=int(str(keys["tokens"])),
        finish_reason=str(keys["reason"]) if "reason" in keys else None,
        raw=str(keys.get("raw", "")),
        line_no=int(str(keys["line_no"])),
        source_file=source,
    )


def _ids(text: str) -> list[int]:
    return [int(part) for part in text.replace(",", " ").split()]


def _literal(text: str) -> str:
    """A printed Python or JSON string's value (`'test\\n'` -> `test` and a newline); the text itself when it does
    not parse (a paste cut inside it)."""
    value = python_literal(text)
    return value if isinstance(value, str) else text.strip("'\"")


def _strings(text: str) -> list[str]:
    """A printed list of strings (`['\\n', 'END']`); [] when it does not parse."""
    value = python_literal(text)
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []
