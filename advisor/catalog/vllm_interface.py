"""The names vLLM's interface knows (vllm_interface.json): its requests' fields, its command line's flags, its
quantization methods, its chat content part types, the values of the flags that take listed ones, and the model
types its configurations come from (transformers', and those vLLM registers itself).

Why: a misspelt request field (`stream_otpions`) is refused with "Extra inputs are not permitted" by releases
whose request models forbid unknown fields and silently ignored by later ones, and a flag vLLM does not have
(`--enable-metrics`) ends the launch in argparse's "unrecognized arguments"; either way the person needs the
name vLLM knows. The JSON is generated from vLLM's source by scripts/extract_vllm_interface.py.
"""

from __future__ import annotations

import difflib
import json
from functools import cache
from importlib import resources

# How alike a refused name and a known one must be (difflib's ratio) to be called a misspelling of it:
# `stream_otpions` -> `stream_options` is 0.93, `max_token` -> `max_tokens` 0.95; unrelated names stay below.
CLOSE = 0.8
# Flags share long prefixes (`--enable-`, `--max-num-`), so a flag must be closer: `--max-model-length` ->
# `--max-model-len` is 0.91, while `--enable-metrics` -> `--enable-mfu-metrics` (another flag) is 0.89.
CLOSE_FLAG = 0.9


@cache
def _interface() -> dict:
    return json.loads(resources.files("advisor.catalog").joinpath("vllm_interface.json").read_text("utf-8"))


def request_fields() -> frozenset[str]:
    """Every field name vLLM's request models have, with the guided-decoding ones later releases removed."""
    return frozenset(_interface()["fields"]) | frozenset(_interface()["removed"])


def removed_request_fields() -> frozenset[str]:
    """The request fields older releases read and the interface's release no longer has (guided_json …)."""
    return frozenset(_interface()["removed"])


def cli_flags() -> frozenset[str]:
    """Every `--flag` vLLM's command line takes (its engine and front-end arguments, and every add_argument)."""
    return frozenset(_interface()["cli_flags"])


def quantization_methods() -> frozenset[str]:
    """The names `--quantization` accepts in the release the interface was read from."""
    return frozenset(_interface()["quantization_methods"])


def content_part_types() -> frozenset[str]:
    """The `type` values a chat message's content parts may have (text, image_url, input_audio …)."""
    return frozenset(_interface()["content_part_types"])


def part_type_instead(refused: str) -> str | None:
    """The content part type vLLM takes for a refused one: the media's `_url` type for a bare media word (a
    Hugging Face processor's `image`, `video`, `audio`), else the known type it misspells; None when none is."""
    name = refused.strip("`'\" ").lower()
    if not name or name in content_part_types():
        return None
    if f"{name}_url" in content_part_types():
        return f"{name}_url"
    return _nearest(name, content_part_types(), CLOSE)


def flags_taking(values: list[str]) -> list[str]:
    """The flags whose listed values are these (a pydantic `literal_error` lists the values, not the field): the
    flags of the newest release read that know nearly all of them (four in five) and whose own list they cover
    in part (three in ten: later releases add values, 0.32's --kv-cache-dtype lists 19 where 0.8 listed 7); the
    closest such, ties together; none when no flag comes close."""
    said = {value.strip("'\" ") for value in values}
    scored: list[tuple[float, str]] = []
    for entry in _interface().get("literal_flags", []):
        shared = len(said & set(entry["values"]))
        precision, recall = shared / len(said) if said else 0.0, shared / len(entry["values"])
        if precision >= 0.8 and recall >= 0.3:
            scored.append((precision + recall, entry["flag"]))
    best = max((score for score, _ in scored), default=None)
    return [flag for score, flag in scored if score == best]


def is_model_type(name: str) -> bool:
    """Whether a name is a configuration's `model_type` in the table's release: one the transformers installed beside
    that vLLM maps to a class, or one vLLM registers a configuration for itself."""
    types = _interface()["model_types"]
    return name in types["transformers"] or name in types["vllm"]


def interface_release() -> str:
    """The vLLM release the interface was read from (0.32.0)."""
    return str(_interface()["vllm_version"])


def nearest_field(name: str) -> str | None:
    """The known field `name` misspells, None when it is one or is like none."""
    return _nearest(name, request_fields(), CLOSE)


def nearest_flag(flag: str) -> str | None:
    """The known flag `flag` misspells (underscores read as dashes), None when it is one or is like none."""
    return None if is_flag(flag) else _nearest(_spelled(flag), cli_flags(), CLOSE_FLAG)


def is_flag(flag: str) -> bool:
    """Whether vLLM's command line takes `flag` (`--flag=value` and underscores as vLLM reads them)."""
    spelled = _spelled(flag)
    return spelled in cli_flags() or (spelled.startswith("--no-") and "--" + spelled[5:] in cli_flags())


def _spelled(flag: str) -> str:
    """A flag as vLLM's parser reads it: without `=value`, underscores as dashes."""
    return flag.split("=", 1)[0].replace("_", "-")


def _nearest(name: str, known: frozenset[str], cutoff: float) -> str | None:
    if name in known:
        return None
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=cutoff)
    return close[0] if close else None
