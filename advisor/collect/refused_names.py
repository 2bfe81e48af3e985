"""What vLLM's interface and message catalog say about a name a message refused, for the log reader's events.

Why its own module: a refusal names something (a quantization method, a chat content part type, an engine
argument a caller passed), and what answers it is a lookup, not the line's words: whether the newest vLLM read
(0.32, advisor/catalog/vllm_interface.json) knows the name, which releases' source had it (the message catalog's
files and versions), or which package called into vLLM. The log reader stores the answers on the event; the rules
stay pure and only read them.
"""

from __future__ import annotations

from advisor.catalog.vllm_interface import interface_release, is_flag, part_type_instead, quantization_methods
from advisor.catalog.vllm_messages import message_catalog
from advisor.collect.pasted_text import Frame
from rules.catalog.common import installed_package
from rules.events import UNEXPECTED_KEYWORD, CatalogRef


def caller_of_vllm(frames: list[Frame]) -> str | None:
    """The installed package whose frame called into vLLM (the last non-vLLM package before vLLM's first frame)."""
    packages = [installed_package(frame.path) for frame in frames]
    if "vllm" not in packages:
        return None
    before = [p for p in packages[: packages.index("vllm")] if p is not None]
    return before[-1] if before else None


def release_taking(cls: str, said: str, frames: list[Frame]) -> str | None:
    """The vLLM release whose command line takes a keyword an installed vLLM's own function refused (an engine
    argument a package built on a newer vLLM passed): that release knows it, so the installed one predates it."""
    keyword = UNEXPECTED_KEYWORD.search(said) if cls == "TypeError" else None
    if keyword is None or not frames or installed_package(frames[-1].path) != "vllm":
        return None
    return interface_release() if is_flag("--" + keyword["keyword"].replace("_", "-")) else None


# vLLM's messages refusing a quantization method by name ("Unknown quantization method: gptq. Must be one of ['awq',
# 'squeezellm']."): a name the newest release read knows means the installed one predates it.
_QUANTIZATION_REFUSALS = ("Unknown quantization method", "Invalid quantization method", "Found unknown quantization=")
_QUANTIZATION_MODULES = "vllm/model_executor/layers/quantization/"


def _refused_quantization(ref: CatalogRef) -> str | None:
    """The quantization method this message refused by name, lower-cased; None for any other message."""
    name = ref.captured.get("quantization", "").strip("`'\" ").lower()
    return name if name and ref.template.startswith(_QUANTIZATION_REFUSALS) else None


def release_knowing(ref: CatalogRef) -> str | None:
    """The vLLM release whose interface knows the name this message refused, when it does."""
    name = _refused_quantization(ref)
    return interface_release() if name is not None and name in quantization_methods() else None


def releases_having(ref: CatalogRef) -> str | None:
    """The releases whose source has the module of a quantization method this message refused and the newest
    release read no longer knows (bitsandbytes: 0.5–0.27), from where the catalog's messages were said."""
    name = _refused_quantization(ref)
    if name is None or name in quantization_methods():
        return None
    span = message_catalog().releases_with(f"{_QUANTIZATION_MODULES}{name}.py", f"{_QUANTIZATION_MODULES}{name}/")
    return f"{span[0]}–{span[1]}" if span else None


# vLLM's refusal of a chat content part: "Unknown part type: image" (0.4-0.20), "Unsupported chat content part
# type: 'image'. Supported types: …" (0.21 on).
_PART_TYPE_REFUSALS = ("Unknown part type", "Unsupported chat content part type")


def accepted_instead(ref: CatalogRef) -> str | None:
    """The content part type vLLM takes where this message refused one (`image` -> `image_url`)."""
    if not ref.template.startswith(_PART_TYPE_REFUSALS):
        return None
    return part_type_instead(ref.captured.get("part_type", ""))
