"""Build advisor/catalog/vllm_request_fields.json: the field names vLLM's OpenAI-compatible requests have.

Why it exists: a client that misspells a request field (`stream_otpions`) gets HTTP 400 "Extra inputs are not
permitted" from releases whose request models forbid unknown fields, and nothing at all from those that ignore
them (0.32 logs them at debug level). Triage names the field the client meant, which needs the names vLLM knows.
The script reads the request models of the vLLM source it is given (default: the vLLM installed in .venv-vllm,
0.32, by `scripts/install.sh`) with `ast`, without importing vLLM: every annotated field of the chat, completion
and embedding request classes, of their bases within vLLM, and of the nested stream options, plus the
guided-decoding fields vLLM lists as removed. Fields are added over releases far more often than removed, so the
newest release's names cover older requests too.

    .venv/bin/python scripts/extract_request_fields.py [--vllm PATH_TO_vllm_PACKAGE] [--out PATH]
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VLLM = ROOT / ".venv-vllm" / "lib" / "python3.11" / "site-packages" / "vllm"
DEFAULT_OUT = ROOT / "advisor" / "catalog" / "vllm_request_fields.json"
# The request classes a client's body is validated against, and the nested objects whose fields it names.
REQUEST_CLASSES = (
    "ChatCompletionRequest",
    "CompletionRequest",
    "EmbeddingCompletionRequest",
    "EmbeddingChatRequest",
    "StreamOptions",
)
REMOVED_SET = "_REMOVED_GUIDED_FIELDS"


def classes_of(package: Path) -> dict[str, ast.ClassDef]:
    """Every class defined under vllm/entrypoints by name (the request models and their bases live there)."""
    found: dict[str, ast.ClassDef] = {}
    for path in sorted((package / "entrypoints").rglob("*.py")):
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


def version_of(package: Path) -> str:
    dist = sorted(package.parent.glob("vllm*.dist-info"))
    return dist[0].name.removesuffix(".dist-info").split("-")[1] if dist else "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vllm", type=Path, default=DEFAULT_VLLM, help="the vllm package directory to read")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    args = parser.parse_args(argv)
    if not (args.vllm / "entrypoints").is_dir():
        print(
            f"extract_request_fields: error: {args.vllm} is not a vllm package (no entrypoints/); "
            "run scripts/install.sh or pass --vllm",
            file=sys.stderr,
        )
        return 2
    classes = classes_of(args.vllm)
    missing = [name for name in REQUEST_CLASSES if name not in classes]
    if missing:
        print(f"extract_request_fields: error: {args.vllm} defines none of {missing}", file=sys.stderr)
        return 2
    fields: set[str] = set()
    for name in REQUEST_CLASSES:
        fields |= fields_of(name, classes, set())
    document = {
        "vllm_version": version_of(args.vllm),
        "classes": list(REQUEST_CLASSES),
        "fields": sorted(fields),
        "removed": sorted(removed_fields(args.vllm)),
    }
    args.out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"{args.out.name}: {len(document['fields'])} fields of vLLM {document['vllm_version']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
