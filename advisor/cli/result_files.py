"""Reading result files and writing reports: the file side of `servops report`, demo and tune.

Why here: reports/ renders what it is given and must not compute findings or know the rule
catalog, so the command layer attaches each rule's page text (`servops rules explain`) to
the triage documents before rendering. Loading and writing live here too, so every command
gives the same one-line errors for the same file problems.

Every document is read through the pydantic model of the command that wrote it (RESULT_MODELS):
the same model that wrote the file is the one that says it is well-formed, so a wrong type, a
NaN, a negative latency or a zero window is refused here in one line naming the field, and the
renderers and the performance model only ever see documents of the shape they were written for.
A report may leave out fields (an older servops wrote fewer; reports/fields.py leaves gaps for
them); a ramp the performance model computes from (`--ramp`) must have every field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from advisor.advise.result import AdviseResult
from advisor.errors import UserError
from advisor.perf.forecast import Prediction
from advisor.redact import redact, redact_document
from advisor.triage.result import TriageResult
from advisor.tune.demo import DemoResult
from advisor.tune.loop import TuneResult
from loadtest.results import RampResult
from reports.render import KINDS, render_html
from rules.catalog import UnknownRuleError, get_rule

__all__ = ["RESULT_MODELS", "attach_rule_pages", "load_ramp", "load_result", "write_html_report"]

# The model each result kind is written with, and read back through.
RESULT_MODELS: dict[str, type[BaseModel]] = {
    "triage": TriageResult,
    "ramp": RampResult,
    "advise": AdviseResult,
    "demo": DemoResult,
    "tune": TuneResult,
    "prediction": Prediction,
}
# The command that writes each kind, for the fix in an error message.
WRITTEN_BY = {"prediction": "predict"}


def load_result(path: Path, complete: bool = False, kind: tuple[str, str] | None = None) -> dict[str, Any]:
    """Read one result file, with one-line errors naming the file and the fix; `complete`: every
    field its model requires must be there too (what is there is always checked); `kind`: (the kind
    required, the flag the file was given to)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file; pass a JSON result written by servops") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror}); check the path and permissions") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: not text (binary bytes); pass a JSON result file written by servops") from None
    try:
        document = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}); pass a servops result file"
        ) from None
    except _NotJson as exc:
        raise UserError(f"{path}: holds {exc}, which is not JSON; servops writes null for a missing figure") from None
    where = _out_of_range(document)
    if where:
        raise UserError(
            f"{path}: {where} is beyond any figure servops writes (|x| > 1e300); pass the file servops wrote"
        )
    if not isinstance(document, dict) or document.get("kind") not in KINDS:
        kind = document.get("kind") if isinstance(document, dict) else type(document).__name__
        raise UserError(f"{path}: kind {kind!r} is not a servops result; report renders {', '.join(KINDS)} JSON")
    if kind is not None and document["kind"] != kind[0]:
        raise UserError(
            f"{kind[1]} {path}: kind {document['kind']!r} is not a {kind[0]} result; give the JSON "
            f"`servops {WRITTEN_BY.get(kind[0], kind[0])} --json` wrote"
        )
    _check_complete(path, document)
    _check_shape(path, document, complete)
    document.setdefault("_source_file", path.name)
    return document


def load_ramp(path: str, flag: str) -> dict[str, Any]:
    """The document given to `flag` (--ramp): a servops ramp result, or one line naming the file and the fix."""
    return load_result(Path(path), complete=True, kind=("ramp", flag))


def _check_shape(path: Path, document: dict[str, Any], complete: bool) -> None:
    """The document, and every result it embeds (a demo's or tune's triage, ramps and predictions, which
    its own model keeps as plain JSON), validates against the model its kind is written with (fields left
    out allowed unless `complete`); else one line naming the first field that does not, what is wrong
    with it, and the fix. Why the embedded ones too: the report renders them with the same views as a
    file of their own, so a value refused there must not reach a view from inside another document
    (`"actions": true` in a demo's triage ended `servops report` in a traceback)."""
    kind = document["kind"]
    for loc, part in [((), document), *_embedded_results(document)]:
        try:
            RESULT_MODELS[part["kind"]].model_validate(part)
        except ValidationError as exc:
            errors = [error for error in exc.errors() if complete or error["type"] != "missing"]
            if not errors:
                continue
            error = errors[0]
            where = _field_path((*loc, *error["loc"])) or "the document"
            given = error.get("input")
            held = "" if error["type"] == "missing" or isinstance(given, (dict, list)) else f" (it holds {given!r:.60})"
            raise UserError(
                f"{path}: not a {kind} result servops can read: {where}: {error['msg'].lower()}{held}; pass the "
                f"file 'servops {WRITTEN_BY.get(kind, kind)} --json' wrote, or run it again"
            ) from None


def _embedded_results(node: Any, loc: tuple = ()) -> list[tuple[tuple, dict[str, Any]]]:
    """(location, result) of every result document below `node` (a dict whose `kind` is a result kind)."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    found: list[tuple[tuple, dict[str, Any]]] = []
    for key, value in items:
        if isinstance(value, dict) and isinstance(value.get("kind"), str) and value["kind"] in RESULT_MODELS:
            found.append(((*loc, key), value))
        if isinstance(value, (dict, list)):
            found.extend(_embedded_results(value, (*loc, key)))
    return found


def _field_path(loc: tuple) -> str:
    """pydantic's error location as a path a person can find in the file: steps[2].ttft_s.p99."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif not str(part).startswith(("function-", "union[", "literal[")) and part not in ("float", "int", "str"):
            text += f".{part}" if text else str(part)
    return text


FINDING_KEYS = ("rule", "severity", "title")  # what every rendered finding shows
LARGEST_FIGURE = 1e300  # far beyond any count, rate or duration; 1e308 overflows the charts' arithmetic


class _NotJson(ValueError):
    """NaN or Infinity in the text: Python's parser takes them, JSON does not, and servops never writes them."""


def _no_constant(name: str) -> float:
    raise _NotJson(name)


def _out_of_range(node: Any, where: str = "") -> str | None:
    """The path of the first number too large to be a figure (an integer beyond float range included)."""
    if isinstance(node, dict):
        return next(
            (
                found
                for key, value in node.items()
                if (found := _out_of_range(value, f"{where}.{key}" if where else str(key)))
            ),
            None,
        )
    if isinstance(node, list):
        return next(
            (found for index, value in enumerate(node) if (found := _out_of_range(value, f"{where}[{index}]"))), None
        )
    if isinstance(node, (int, float)) and not isinstance(node, bool) and (abs(node) > LARGEST_FIGURE):
        return where or "the document"
    return None


def _check_complete(path: Path, document: dict[str, Any]) -> None:
    """The list a triage or ramp report is made of must be there and well-formed: a truncated or
    edited file must not render as a clean "0 findings" report."""
    kind = document["kind"]
    if kind not in ("triage", "ramp"):
        return
    key = "findings" if kind == "triage" else "steps"
    items = document.get(key)
    problem = None
    if not isinstance(items, list):
        problem = f"'{key}' is missing" if items is None else f"'{key}' is not a list"
    elif not all(isinstance(item, dict) for item in items):
        problem = f"'{key}' holds something other than objects"
    elif kind == "triage":
        broken = [
            index
            for index, finding in enumerate(items)
            if not all(isinstance(finding.get(field), str) and finding.get(field) for field in FINDING_KEYS)
        ]
        if broken:
            problem = f"findings[{broken[0]}] lacks one of {', '.join(FINDING_KEYS)}"
    if problem:
        raise UserError(
            f"{path}: not a complete {kind} result ({problem}); pass the file "
            f"'servops {kind} --json' wrote, or run it again"
        )


def attach_rule_pages(document: Any) -> None:
    """Give every triage document found (also inside demo/tune) a `rule_pages` {code: page text}."""
    for triage in _triage_documents(document):
        pages = dict(triage.get("rule_pages") or {})
        for finding in triage.get("findings") or []:
            code = finding.get("rule") if isinstance(finding, Mapping) else None
            if code and code not in pages:
                try:
                    pages[code] = get_rule(code).explain()
                except UnknownRuleError:
                    continue  # a rule from another servops version: the report points to `explain`
        if pages:
            triage["rule_pages"] = pages


def write_html_report(output: Path, documents: list[dict[str, Any]], title: str | None = None) -> Path:
    """Render documents (rule pages attached, credentials redacted) into one HTML file; returns its path."""
    documents = [redact_document(document) for document in documents]
    for document in documents:
        attach_rule_pages(document)
    return _write(output, render_html(documents, title=redact(title) if title else title))


def _write(output: Path, text: str) -> Path:
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{output}: cannot write ({exc.strerror}); choose a writable path") from None
    return output


def _triage_documents(node: Any) -> Iterable[dict[str, Any]]:
    if isinstance(node, dict):
        if node.get("kind") == "triage":
            yield node
        for value in node.values():
            if isinstance(value, (dict, list)):
                yield from _triage_documents(value)
    elif isinstance(node, list):
        for item in node:
            yield from _triage_documents(item)
