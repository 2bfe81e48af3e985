"""Build advisor/catalog/vllm_interface.json: the names vLLM's interface knows — its requests' fields and the
flags `vllm serve` takes.

Why it exists: a client that misspells a request field (`stream_otpions`) gets HTTP 400 "Extra inputs are not
permitted" from releases whose request models forbid unknown fields, and nothing at all from those that ignore
them (0.32 logs them at debug level); a launch that passes a flag vLLM does not have (`--enable-metrics`) ends in
argparse's "unrecognized arguments". Triage names what was meant, which needs the names vLLM knows.

The script reads the vLLM source it is given (default: the vLLM installed in .venv-vllm, 0.32, by
`scripts/install.sh`) with `ast`, without importing vLLM:
- request fields: every annotated field of the chat, completion and embedding request classes, of their bases
  within vLLM, and of the nested stream options, plus the guided-decoding fields vLLM lists as removed;
- command-line flags: every field of the engine and front-end argument dataclasses (EngineArgs, AsyncEngineArgs,
  BaseFrontendArgs, FrontendArgs) as `--name-with-dashes`, and every `add_argument("--…")` literal under
  vllm/;
- quantization methods: the names `--quantization` accepts (`QuantizationMethods`), so a release that refuses one
  ("Unknown quantization method: gptq. Must be one of ['awq', 'squeezellm']") is known to predate it;
- chat content part types: the `type` values a chat message's content parts may have (the keys of
  `MM_PARSER_MAP`), so a refused part (`Unknown part type: image`, a Hugging Face processor's spelling) can be
  named with the type vLLM takes instead (`image_url`).
- model types: every `model_type` the transformers installed beside that vLLM maps to a configuration class
  (transformers/models/auto/auto_mappings.py's CONFIG_MAPPING_NAMES and configuration_auto.py's additions), and
  those vLLM registers configuration classes for itself (`_CONFIG_REGISTRY` in vllm/transformers_utils/config.py),
  so a bare `KeyError: 'gemma3'` from an older transformers can be named as the model type it is.
Names are added over releases far more often than removed, so the newest release's cover older launches and
requests too.

    .venv/bin/python scripts/extract_vllm_interface.py [--vllm PATH_TO_vllm_PACKAGE] [--out PATH]
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VLLM = ROOT / ".venv-vllm" / "lib" / "python3.11" / "site-packages" / "vllm"
DEFAULT_OUT = ROOT / "advisor" / "catalog" / "vllm_interface.json"
# The request classes a client's body is validated against, and the nested objects whose fields it names.
REQUEST_CLASSES = (
    "ChatCompletionRequest",
    "CompletionRequest",
    "EmbeddingCompletionRequest",
    "EmbeddingChatRequest",
    "StreamOptions",
)
# The dataclasses whose fields `vllm serve` turns into flags.
ARGUMENT_CLASSES = ("EngineArgs", "AsyncEngineArgs", "BaseFrontendArgs", "FrontendArgs")
REMOVED_SET = "_REMOVED_GUIDED_FIELDS"
QUANTIZATION_LITERAL = "QuantizationMethods"
PART_PARSERS = "MM_PARSER_MAP"
_ADD_ARGUMENT = re.compile(r"add_argument\(\s*['\"](--[a-z0-9][a-z0-9-]*)['\"]")


def classes_of(package: Path, folder: str = "") -> dict[str, ast.ClassDef]:
    """Every class defined under vllm/<folder> by name (the first definition of a name wins)."""
    found: dict[str, ast.ClassDef] = {}
    for path in sorted((package / folder).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, node)
    return found


def fields_of(name: str, classes: dict[str, ast.ClassDef], seen: set[str]) -> set[str]:
    """The annotated fields of class `name` and of its bases defined in vLLM (ClassVar and private names aside)."""
    if name in seen or name not in classes:
        return set()
    seen.add(name)
    node = classes[name]
    fields = {
        stmt.target.id
        for stmt in node.body
        if isinstance(stmt, ast.AnnAssign)
        and isinstance(stmt.target, ast.Name)
        and not stmt.target.id.startswith("_")
        and "ClassVar" not in ast.unparse(stmt.annotation)
    }
    for base in node.bases:
        if isinstance(base, ast.Name):
            fields |= fields_of(base.id, classes, seen)
    return fields


def removed_fields(package: Path) -> set[str]:
    """The guided-decoding fields vLLM lists as removed (its base model warns about them)."""
    for path in sorted((package / "entrypoints").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == REMOVED_SET for t in node.targets
            ):
                return {elt.value for elt in ast.walk(node.value) if isinstance(elt, ast.Constant)}
    return set()


def serve_flags(package: Path) -> set[str]:
    """The argument dataclasses' fields as flags, and every `add_argument("--…")` literal in vLLM's source."""
    classes = classes_of(package)
    flags = {"--" + name.replace("_", "-") for cls in ARGUMENT_CLASSES for name in fields_of(cls, classes, set())}
    for path in package.rglob("*.py"):
        flags |= set(_ADD_ARGUMENT.findall(path.read_text(encoding="utf-8")))
    return flags


def literal_aliases(package: Path) -> dict[str, list[str]]:
    """Every module-level `Name = Literal[...]` (or `Name: TypeAlias = Literal[...]`) under vllm/config/, by name,
    with aliases inside a Literal resolved (`KVRole = Literal[KVProducer, KVConsumer]`); values as text."""
    raw: dict[str, ast.expr] = {}
    for path in sorted((package / "config").rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
            target = node.target if isinstance(node, ast.AnnAssign) else target
            if isinstance(target, ast.Name) and node.value is not None and "Literal[" in ast.unparse(node.value):
                raw.setdefault(target.id, node.value)
    resolved: dict[str, list[str]] = {}
    for name in raw:
        resolved[name] = _literal_values(raw[name], raw, set())
    return {name: values for name, values in resolved.items() if values}


def _literal_values(node: ast.expr, aliases: dict[str, ast.expr], seen: set[str]) -> list[str]:
    """The values a Literal annotation allows, through aliases; an annotation that is not one allows none."""
    values: list[str] = []
    for part in ast.walk(node):
        if isinstance(part, ast.Subscript) and ast.unparse(part.value).endswith("Literal"):
            elements = part.slice.elts if isinstance(part.slice, ast.Tuple) else [part.slice]
            for element in elements:
                if isinstance(element, ast.Constant) and element.value is not None:
                    values.append(str(element.value))
                elif isinstance(element, ast.Name) and element.id in aliases and element.id not in seen:
                    values += _literal_values(aliases[element.id], aliases, seen | {element.id})
        elif isinstance(part, ast.Name) and part.id in aliases and part.id not in seen and part is node:
            values += _literal_values(aliases[part.id], aliases, seen | {part.id})
    return list(dict.fromkeys(values))


def literal_flags(package: Path) -> list[dict[str, object]]:
    """EngineArgs' fields that take only listed values (a Literal annotation, or an alias of one), each with its flag,
    the config field it fills (`max_lora_rank: MaxLoRARanks = LoRAConfig.max_lora_rank`) and its values: a
    pydantic `literal_error` lists the values and not the field, so the values name the flag."""
    aliases = {
        name: ast.parse(" | ".join(["Literal[" + ", ".join(map(repr, v)) + "]"]), mode="eval").body
        for name, v in literal_aliases(package).items()
    }
    classes = classes_of(package, "engine")
    found: dict[str, dict[str, object]] = {}
    for cls in ARGUMENT_CLASSES[:2]:
        node = classes.get(cls)
        for stmt in node.body if node is not None else []:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            annotation = stmt.annotation
            if isinstance(annotation, ast.Name) and annotation.id in aliases:
                annotation = aliases[annotation.id]
            values = _literal_values(annotation, aliases, set())
            default = stmt.value
            field = ast.unparse(default) if isinstance(default, ast.Attribute) else f"{cls}.{stmt.target.id}"
            if len(values) > 1:
                flag = "--" + stmt.target.id.replace("_", "-")
                found.setdefault(flag, {"flag": flag, "field": field, "values": values})
    return sorted(found.values(), key=lambda entry: str(entry["flag"]))


def quantization_methods(package: Path) -> list[str]:
    """The names `--quantization` accepts: the `QuantizationMethods = Literal[...]` of the quantization package."""
    path = package / "model_executor" / "layers" / "quantization" / "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == QUANTIZATION_LITERAL for t in node.targets
        ):
            return sorted({e.value for e in ast.walk(node.value) if isinstance(e, ast.Constant) and e.value})
    return []


def content_part_types(package: Path) -> list[str]:
    """The content part types a chat message may carry: the keys of the `MM_PARSER_MAP` dict literal (in
    vllm/entrypoints/chat_utils.py up to 0.31, vllm/renderers/chat_utils.py in 0.32)."""
    for path in sorted(package.rglob("chat_utils*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            target = node.target if isinstance(node, ast.AnnAssign) else None
            targets = node.targets if isinstance(node, ast.Assign) else [target] if target is not None else []
            if any(isinstance(t, ast.Name) and t.id == PART_PARSERS for t in targets) and isinstance(
                node.value, ast.Dict
            ):
                return sorted(k.value for k in node.value.keys if isinstance(k, ast.Constant))
    return []


def _mapping_keys(path: Path, name: str) -> set[str]:
    """The string keys of `name`'s mapping in a module: `OrderedDict([("key", …), …])`, `name.update({…})` and
    keyword arguments of a call assigned to it (`LazyConfigDict(key=…)`)."""
    keys: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        value = None
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                value = node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "update"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == name
        ):
            value = node
        if value is None:
            continue
        for inner in ast.walk(value):
            if isinstance(inner, ast.Tuple) and inner.elts and isinstance(inner.elts[0], ast.Constant):
                keys.add(str(inner.elts[0].value))
            elif isinstance(inner, ast.Dict):
                keys |= {str(k.value) for k in inner.keys if isinstance(k, ast.Constant)}
            elif isinstance(inner, ast.Call):
                keys |= {kw.arg for kw in inner.keywords if kw.arg}
    return {key for key in keys if re.fullmatch(r"[a-z][a-z0-9_-]*", key)}


def model_types(package: Path) -> dict[str, object]:
    """The model types the transformers beside `package` knows, and those vLLM registers configurations for."""
    auto = package.parent / "transformers" / "models" / "auto"
    known = _mapping_keys(auto / "auto_mappings.py", "CONFIG_MAPPING_NAMES") if auto.is_dir() else set()
    if auto.is_dir():
        known |= _mapping_keys(auto / "configuration_auto.py", "CONFIG_MAPPING_NAMES")
    registered = _mapping_keys(package / "transformers_utils" / "config.py", "_CONFIG_REGISTRY")
    dist = sorted(package.parent.glob("transformers-*.dist-info"))
    version = dist[0].name.removesuffix(".dist-info").split("-")[1] if dist else "unknown"
    return {"transformers_version": version, "transformers": sorted(known), "vllm": sorted(registered - known)}


def version_of(package: Path) -> str:
    dist = sorted(package.parent.glob("vllm*.dist-info"))
    return dist[0].name.removesuffix(".dist-info").split("-")[1] if dist else "unknown"


def _error(message: str) -> int:
    print(f"extract_vllm_interface: error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vllm", type=Path, default=DEFAULT_VLLM, help="the vllm package directory to read")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    args = parser.parse_args(argv)
    if not (args.vllm / "entrypoints").is_dir():
        return _error(f"{args.vllm} is not a vllm package (no entrypoints/); run scripts/install.sh or pass --vllm")
    classes = classes_of(args.vllm, "entrypoints")
    missing = [name for name in REQUEST_CLASSES if name not in classes]
    if missing:
        return _error(f"{args.vllm} defines none of {missing}")
    fields: set[str] = set()
    for name in REQUEST_CLASSES:
        fields |= fields_of(name, classes, set())
    flags = serve_flags(args.vllm)
    if "--max-model-len" not in flags:
        return _error(f"{args.vllm}: no engine arguments found (EngineArgs)")
    methods = quantization_methods(args.vllm)
    if "gptq" not in methods:
        return _error(f"{args.vllm}: no quantization methods found ({QUANTIZATION_LITERAL})")
    literals = literal_flags(args.vllm)
    if not any(entry["flag"] == "--max-lora-rank" for entry in literals):
        return _error(f"{args.vllm}: no flags with listed values found (EngineArgs' Literal annotations)")
    parts = content_part_types(args.vllm)
    if "image_url" not in parts:
        return _error(f"{args.vllm}: no chat content part types found ({PART_PARSERS})")
    types = model_types(args.vllm)
    if "llama" not in types["transformers"] or not types["vllm"]:
        return _error(f"{args.vllm}: no model types found (transformers' CONFIG_MAPPING_NAMES, _CONFIG_REGISTRY)")
    document = {
        "vllm_version": version_of(args.vllm),
        "request_classes": list(REQUEST_CLASSES),
        "fields": sorted(fields),
        "removed": sorted(removed_fields(args.vllm)),
        "cli_flags": sorted(flags),
        "quantization_methods": methods,
        "content_part_types": parts,
        "literal_flags": literals,
        "model_types": types,
    }
    args.out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    version = document["vllm_version"]
    print(
        f"{args.out.name}: {len(fields)} request fields, {len(flags)} command-line flags, {len(methods)} quantization "
        f"methods, {len(parts)} chat content part types, {len(literals)} flags with listed values of vLLM {version}; "
        f"{len(types['transformers'])} model types of transformers {types['transformers_version']} and "
        f"{len(types['vllm'])} vLLM registers itself"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
