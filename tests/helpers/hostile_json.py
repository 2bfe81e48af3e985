"""Walking and editing JSON documents for the fuzz tests (Hypothesis): every value's path, whether a
path is still there after an earlier edit, and a copy with one value replaced."""

from __future__ import annotations

from typing import Any


def value_paths(node: Any, prefix: tuple = (), skip_top: tuple[str, ...] = ()) -> list[tuple]:
    """Every value below the top (leaves, objects and lists), by its path of keys and indexes; the top
    level keys in `skip_top` left out."""
    found: list[tuple] = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        if not prefix and key in skip_top:
            continue
        found.append((*prefix, key))
        if isinstance(value, (dict, list)):
            found.extend(value_paths(value, (*prefix, key)))
    return found


def exists(document: Any, path: tuple) -> bool:
    """Whether `path` still leads to a value (an earlier edit may have replaced one of its parents)."""
    for key in path:
        if isinstance(document, dict) and key in document:
            document = document[key]
        elif isinstance(document, list) and isinstance(key, int) and key < len(document):
            document = document[key]
        else:
            return False
    return True


def value_at(document: Any, path: tuple) -> Any:
    for key in path:
        document = document[key]
    return document


def replaced(document: Any, path: tuple, value: Any) -> Any:
    """A copy of `document` with the value at `path` replaced by `value`."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(document, dict):
        return {**document, head: replaced(document[head], rest, value)}
    copy = list(document)
    copy[head] = replaced(copy[head], rest, value)
    return copy
