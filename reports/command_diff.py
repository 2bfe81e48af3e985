"""Show a proposed `vllm serve` command as a diff against the current one.

Why flag by flag instead of a text diff: two launch commands differ in a few flags, but a
one-line text diff marks the whole line as changed and hides which flag moved. Splitting
into "command words" and "one flag with its value" lines makes the change readable and
copy-pastable: the on-call engineer sees `- --max-num-seqs 1` / `+ --max-num-seqs 64`.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["DiffLine", "command_diff", "split_command", "apply_changes"]

Op = Literal["same", "removed", "added"]


@dataclass(frozen=True, slots=True)
class DiffLine:
    op: Op
    text: str

    @property
    def sign(self) -> str:
        return {"same": " ", "removed": "-", "added": "+"}[self.op]


def _shell_words(command: str) -> list[str]:
    """The shell's words; a command with an unbalanced quote (hand-edited, or cut off) is split at
    whitespace instead, so the diff shows what the file holds rather than failing the report."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def split_command(command: str | Sequence[str]) -> list[tuple[str, str | None]]:
    """Command as (word, value) items: leading words, then each flag with its value (or None)."""
    words = _shell_words(command) if isinstance(command, str) else [str(w) for w in command]
    items: list[tuple[str, str | None]] = []
    i = 0
    while i < len(words) and not words[i].startswith("--"):  # "vllm serve MODEL" stays one line
        i += 1
    if i:
        items.append((" ".join(shlex.quote(w) for w in words[:i]), None))
    while i < len(words):
        word = words[i]
        if word.startswith("--") and "=" in word:
            flag, value = word.split("=", 1)
            items.append((flag, value))
        elif word.startswith("-") and len(word) > 1 and not _is_number(word):
            nxt = words[i + 1] if i + 1 < len(words) else None
            if nxt is not None and (not nxt.startswith("-") or _is_number(nxt)):
                items.append((word, nxt))
                i += 1
            else:
                items.append((word, None))
        else:
            items.append((word, None))
        i += 1
    return items


def command_diff(current: str | Sequence[str], proposed: str | Sequence[str]) -> list[DiffLine]:
    """Lines of `current` → `proposed`, one flag per line, in the current command's order.

    A changed flag shows as its old line (removed) directly followed by its new line (added);
    flags only in the proposed command come last.
    """
    old = split_command(current)
    new = split_command(proposed)
    new_by_flag: dict[str, list[tuple[str, str | None]]] = {}
    for item in new:
        new_by_flag.setdefault(item[0], []).append(item)
    old_flags = {word for word, _ in old}
    lines: list[DiffLine] = []
    for item in old:
        replacements = new_by_flag.get(item[0], [])
        if item in replacements:
            lines.append(DiffLine("same", _join(item)))
            continue
        lines.append(DiffLine("removed", _join(item)))
        if replacements and all(r not in old for r in replacements):
            lines.extend(DiffLine("added", _join(r)) for r in replacements)
            new_by_flag[item[0]] = []  # shown once, next to what it replaces
    for item in new:
        if item[0] not in old_flags:
            lines.append(DiffLine("added", _join(item)))
    return lines


def apply_changes(command: str, changes: Sequence[Mapping[str, Any]], field: str) -> str:
    """Set each change's flag to its `field` value ("current" or "proposed") in `command`.

    Used to rebuild the current command from a proposed one (or the reverse) when a result
    carries only one of them. A value of None, False or "" (a flag proposed off the command) removes a flag; True
    makes it bare.
    """
    items = split_command(command)
    for change in changes:
        flag = str(change.get("flag") or "")
        if not flag:
            continue
        value = change.get(field)
        positions = [i for i, item in enumerate(items) if item[0] == flag]
        items = [item for item in items if item[0] != flag]
        if value is None or value is False or value == "":
            continue
        new_item = (flag, None if value is True else str(value))
        items.insert(positions[0] if positions else len(items), new_item)  # keep the flag's place
    return " ".join(_join(item) for item in items)


def _words(item: tuple[str, str | None]) -> list[str]:
    return [item[0]] if item[1] is None else [item[0], item[1]]


def _join(item: tuple[str, str | None]) -> str:
    flag, value = item
    if value is None and not flag.startswith("-"):
        return flag  # the leading command words, already quoted
    return " ".join(shlex.quote(w) for w in _words(item))


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True
