"""What vLLM's interface and message catalog say about a name a message refused, for the log reader's events.

Why its own module: a refusal names something (a quantization method, a chat content part type, an engine
argument a caller passed), and what answers it is a lookup, not the line's words: whether the newest vLLM read
(0.32, advisor/catalog/vllm_interface.json) knows the name, which releases' source had it (the message catalog's
files and versions), or which package called into vLLM. The log reader stores the answers on the event; the rules
stay pure and only read them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from advisor.catalog.vllm_interface import interface_release, is_flag, part_type_instead, quantization_methods
from advisor.catalog.vllm_messages import message_catalog
from advisor.collect.pasted_text import Frame
from rules.catalog.common import installed_package, refused_architectures
from rules.events import (
    CONFIG_ATTRIBUTE,
    ENGINE_ARG_CLASSES,
    MISSING_MODULE,
    SAMPLING_PARAMS_INIT,
    STRUCT_UNEXPECTED_KEYWORD,
    UNEXPECTED_KEYWORD,
    VLLM_MODULE_MISSING,
    CatalogRef,
    named_as_vllms,
)

# Folders a shortened path may start with that name no package (a project's layout, not what it installs as).
_PROJECT_FOLDERS = frozenset({"src", "lib", "app", "workspace", "code", "scripts", "examples", "tests"})


def _package_of(path: str) -> str | None:
    """The package a frame's file belongs to: installed (site-packages), or the first folder of a path the reporter
    shortened to the package's own tree (`openrlhf/trainer/ray/vllm_engine.py`, `vllm/utils.py`)."""
    installed = installed_package(path)
    if installed is not None:
        return installed
    first, slash, _ = path.partition("/")
    return first if slash and first.isidentifier() and first not in _PROJECT_FOLDERS else None


def caller_of_vllm(frames: list[Frame]) -> str | None:
    """The package whose frame called into vLLM (the last non-vLLM package before vLLM's first frame)."""
    packages = [_package_of(frame.path) for frame in frames]
    if "vllm" not in packages:
        return None
    before = [p for p in packages[: packages.index("vllm")] if p is not None]
    return before[-1] if before else None


@dataclass(frozen=True, slots=True)
class ArgumentReleases:
    """Which releases take a keyword an installed vLLM refused: from `known_in_release` on (the installed one is
    older), only in `known_releases` (removed since: the installed one is newer), or none of `absent_from`."""

    known_in_release: str | None = None
    known_releases: str | None = None
    absent_from: str | None = None
    builder: str | None = None  # the package whose frame built the object that refused it (msgspec's words name none)
    server_flag: str | None = None  # absent from every release's EngineArgs, but a flag of vLLM's command line


def argument_releases(cls: str, said: str, frames: list[Frame]) -> ArgumentReleases:
    """The releases that take a keyword argument vLLM's own function refused (an engine argument a caller passed):
    from the catalog's table of EngineArgs' fields per release (0.4 to 0.34), else whether vLLM 0.32's command line
    has the flag."""
    if cls == "AttributeError":
        return _config_field_releases(said)
    own = VLLM_MODULE_MISSING.search(said) if cls in ("ModuleNotFoundError", "ImportError") else None
    if own is not None:
        return _own_module_releases(own["module"])
    keyword = UNEXPECTED_KEYWORD.search(said) if cls == "TypeError" else None
    if keyword is None:
        return _struct_keyword_releases(cls, said, frames)
    if keyword["function"] == "__init__":  # Python before 3.10 names no class
        return _unnamed_constructor_releases(keyword["keyword"])
    engine_class = ENGINE_ARG_CLASSES.get(keyword["function"])
    if engine_class is not None:
        read = message_catalog().engine_args_minors
        if read:  # a catalog that holds the engine arguments answers for EngineArgs
            return _engine_keyword_releases(engine_class, keyword["keyword"], read)
    elif not _vllm_refused(keyword["function"], frames):
        return ArgumentReleases()  # another function than vLLM's refused it
    taken = is_flag("--" + keyword["keyword"].replace("_", "-"))
    return ArgumentReleases(known_in_release=interface_release() if taken else None)


def _own_module_releases(module: str) -> ArgumentReleases:
    """The releases whose source has one of vLLM's own modules that an import did not find, as far as the catalog
    places vLLM's messages in it (`vllm.utils.argparse_utils`: 0.11.1 on, OpenPipe/ART PR #501 met it on 0.11.0): a
    module every release read has says nothing, one only newer releases have dates the installed vLLM as older than
    the importing code expects, one only older releases had as newer."""
    read = message_catalog().minors_read
    if not read:  # a catalog without versions dates nothing
        return ArgumentReleases()
    path = module.replace(".", "/")
    span = message_catalog().releases_with(f"{path}.py", f"{path}/", patch=True)
    if span is None:
        return ArgumentReleases()
    first, last = span
    if last != read[-1]:
        return ArgumentReleases(known_releases=f"{first}–{last}")
    return ArgumentReleases(known_in_release=first) if _minor_of(first) != read[0] else ArgumentReleases()


def _minor_of(release: str) -> str:
    return ".".join(release.split(".")[:2])


def _config_field_releases(said: str) -> ArgumentReleases:
    """The releases whose engine arguments had a field of vLLM's configuration that code read and the installed vLLM
    lacks (`'LoRAConfig' object has no attribute 'lora_extra_vocab_size'`, verl-project/verl#4380: EngineArgs had it
    in 0.4 to 0.11). Only a field some releases had and others not says anything: one no release's EngineArgs had is
    a config's own attribute, and its history is not in the table."""
    found = CONFIG_ATTRIBUTE.search(said)
    read = message_catalog().engine_args_minors
    if found is None or not read:
        return ArgumentReleases()
    owner = "AsyncEngineArgs" if found["owner"] == "AsyncEngineArgs" else "EngineArgs"
    return _dated(_engine_argument_releases(owner, found["name"], read), read)


def _dated(releases: ArgumentReleases, read: list[str]) -> ArgumentReleases:
    """The releases, where they date a name: none when no release read had it, or every one did (the oldest read
    already took it), since neither says which release the caller was written for."""
    if releases.absent_from is not None or releases.known_in_release == read[0]:
        return ArgumentReleases()
    return releases


def _engine_keyword_releases(engine_class: str, keyword: str, read: list[str]) -> ArgumentReleases:
    """An engine argument's releases by its Python name (a command line's hyphens read as underscores); one no release
    took that vLLM's command line has is a front-end flag passed to the engine (Xinference passing
    `tool-call-parser` to AsyncEngineArgs, xorbitsai/inference#4196)."""
    field = keyword.replace("-", "_")
    releases = _engine_argument_releases(engine_class, field, read)
    flag = "--" + field.replace("_", "-")
    if releases.absent_from is not None and is_flag(flag):
        return ArgumentReleases(absent_from=releases.absent_from, server_flag=flag)
    return releases


def _unnamed_constructor_releases(keyword: str) -> ArgumentReleases:
    """Python before 3.10 words a constructor's refusal without its class (`__init__() got an unexpected keyword
    argument 'limit_mm_per_prompt'`, hiyouga/LlamaFactory#6654 on Python 3.9): read as vLLM's EngineArgs only for a
    keyword of its own (an underscore in it, no plain `model` or `seed`) that some releases read took and others did
    not; one every release took was not refused by EngineArgs, and one none took is another class's."""
    read = message_catalog().engine_args_minors
    if "_" not in keyword or not read:
        return ArgumentReleases()
    return _dated(_engine_argument_releases(ENGINE_ARG_CLASSES["EngineArgs.__init__"], keyword, read), read)


def _struct_keyword_releases(cls: str, said: str, frames: list[Frame]) -> ArgumentReleases:
    """msgspec's refusal names no class (`Unexpected keyword argument 'use_beam_search'`): read as vLLM's
    SamplingParams' only when a release read took the keyword there, else nothing is known. msgspec raises from C,
    so the traceback's deepest frame is the code that built SamplingParams (FastChat's worker), its `builder`."""
    found = STRUCT_UNEXPECTED_KEYWORD.search(said) if cls == "TypeError" else None
    read = message_catalog().engine_args_minors
    if found is None or not read:
        return ArgumentReleases()
    releases = _engine_argument_releases(ENGINE_ARG_CLASSES[SAMPLING_PARAMS_INIT], found["keyword"], read)
    if releases.absent_from is not None:  # no release's SamplingParams took it: another Struct's refusal
        return ArgumentReleases()
    builder = _package_of(frames[-1].path) if frames else None
    return replace(releases, builder=builder if builder != "vllm" else None)


def _vllm_refused(function: str, frames: list[Frame]) -> bool:
    """vLLM's own function refused the keyword: its traceback's deepest frame is vLLM's, or, on a line pasted without
    frames, the function is a method of a class of vLLM's that frameworks construct (`OpenAIServingChat.__init__`) or
    a function of vLLM's they call by name (`resolve_chat_template_content_format`)."""
    if frames:
        return _package_of(frames[-1].path) == "vllm"
    return named_as_vllms(function)


def _engine_argument_releases(engine_class: str, keyword: str, read: list[str]) -> ArgumentReleases:
    """From the releases read (oldest first): taken up to the newest (added in the first), taken and removed since,
    or never taken."""
    span = message_catalog().engine_argument_span(engine_class, keyword)
    if span is None:
        return ArgumentReleases(absent_from=f"{read[0]}–{read[-1]}")
    first, last = span
    if last == read[-1]:  # to the newest minor read, every patch of it: still taken
        return ArgumentReleases(known_in_release=first)
    return ArgumentReleases(known_releases=f"{first}–{last}")


def flag_releases(flag: str) -> ArgumentReleases:
    """The releases whose command line takes a flag a server refused: an engine argument's by its field (the catalog's
    table of EngineArgs' and AsyncEngineArgs' fields per release); a front-end flag vLLM 0.32 has, as 0.32's."""
    field = flag.lstrip("-").split("=", 1)[0].replace("-", "_")
    read = message_catalog().engine_args_minors
    if read:
        releases = _engine_argument_releases("AsyncEngineArgs", field, read)
        if releases.absent_from is None:
            return releases
    return ArgumentReleases(known_in_release=interface_release()) if is_flag(flag) else ArgumentReleases()


# vLLM's messages refusing a quantization method by name ("Unknown quantization method: gptq. Must be one of ['awq',
# 'squeezellm']."): a name the newest release read knows means the installed one predates it.
_QUANTIZATION_REFUSALS = ("Unknown quantization method", "Invalid quantization method", "Found unknown quantization=")
_QUANTIZATION_MODULES = "vllm/model_executor/layers/quantization/"


def _refused_quantization(ref: CatalogRef) -> str | None:
    """The quantization method this message refused by name, lower-cased; None for any other message."""
    name = ref.captured.get("quantization", "").strip("`'\" ").lower()
    return name if name and ref.template.startswith(_QUANTIZATION_REFUSALS) else None


def _architecture_span(ref: CatalogRef) -> tuple[str, str] | None:
    """(first, last) release whose registry lists one of the refused architectures (the first of the config's
    list the registry knows), from the catalog's reading of every release's model registry."""
    catalog = message_catalog()
    return next(filter(None, (catalog.architecture_releases(a) for a in refused_architectures(ref))), None)


def architecture_never_listed(ref: CatalogRef) -> str | None:
    """The releases read ("0.4–0.34") when no release's registry lists any architecture this message refused: no
    vLLM release builds the model natively, so no upgrade runs it (the Transformers backend or a plugin may)."""
    if not refused_architectures(ref) or not message_catalog().knows_architectures():
        return None
    if _architecture_span(ref) is not None:
        return None
    versions = message_catalog().header.get("versions", [])
    return f"{versions[0]['minor']}–{versions[-1]['minor']}" if versions else None


def release_knowing(ref: CatalogRef) -> str | None:
    """The first vLLM release read that knows the quantization method or the model architecture this message
    refused, when the newest read does: for a method, the release read of the oldest minor whose source has its
    module (mxfp4: 0.10.2; the newest interface's release when no message comes from that module); for an
    architecture, the first release whose model registry lists it (Qwen3_5MoeForConditionalGeneration: 0.17.0).
    The smallest upgrade servops can vouch for. For an architecture later releases dropped (releases_having names
    them) it is where that span starts: the rule tells which side of it the installed release is."""
    span = _architecture_span(ref)
    if span is not None:
        return span[0]
    name = _refused_quantization(ref)
    if name is None or name not in quantization_methods():
        return None
    span = _releases_with_module(name)
    return message_catalog().release_read(span[0]) if span else interface_release()


def releases_having(ref: CatalogRef) -> str | None:
    """The releases whose source has the module of a quantization method this message refused and the newest
    release read no longer knows (bitsandbytes: 0.5–0.27), from where the catalog's messages were said; or whose
    registry listed a refused architecture the newest no longer lists."""
    span = _architecture_span(ref)
    if span is not None:
        catalog = message_catalog()
        if any(catalog.runs_in_newest(name) for name in refused_architectures(ref)):
            return None
        last = catalog.release_read(span[1]) if span[1].count(".") == 1 else span[1]  # the minor's newest patch
        return f"{span[0]}–{last}"
    name = _refused_quantization(ref)
    if name is None or name in quantization_methods():
        return None
    span = _releases_with_module(name)
    return f"{span[0]}–{span[1]}" if span else None


def _releases_with_module(name: str) -> tuple[str, str] | None:
    """The first and last minor whose source raises or logs in the quantization method's module (`mxfp4.py`, the
    folder `compressed_tensors/` for `compressed-tensors`): when the method existed, as far as the catalog reads."""
    module = _QUANTIZATION_MODULES + name.replace("-", "_")
    return message_catalog().releases_with(f"{module}.py", f"{module}/")


# vLLM's refusal of a chat content part: "Unknown part type: image" (0.4-0.20), "Unsupported chat content part
# type: 'image'. Supported types: …" (0.21 on).
_PART_TYPE_REFUSALS = ("Unknown part type", "Unsupported chat content part type")


def accepted_instead(ref: CatalogRef) -> str | None:
    """The content part type vLLM takes where this message refused one (`image` -> `image_url`); for an
    architecture no release lists, the listed one its name ends with (`FSDPQwen2ForCausalLM` -> `Qwen2ForCausalLM`)."""
    if refused_architectures(ref):
        catalog = message_catalog()
        return next(filter(None, (catalog.listed_within(name) for name in refused_architectures(ref))), None)
    if not ref.template.startswith(_PART_TYPE_REFUSALS):
        return None
    return part_type_instead(ref.captured.get("part_type", ""))


def extra_installing(cls: str, said: str) -> tuple[str, str] | None:
    """(extra, "first–last") of vLLM's extra that installs a module Python could not find (`decord`: video in
    0.7–0.x), from the wheels' METADATA the catalog read; None for any other error, and for vLLM's own modules."""
    found = MISSING_MODULE.search(said) if cls in ("ModuleNotFoundError", "ImportError") else None
    top = found["module"].split(".")[0] if found else "vllm"
    if top == "vllm":
        return None
    extra = message_catalog().extra_installing(top)
    return (extra[0], f"{extra[1]}–{extra[2]}") if extra else None
