"""Score `servops triage` on the corpus of real vLLM incidents (tests/fixtures/incidents/).

Each case is what a person pasted into a GitHub issue (a log, a traceback, one error line, an HTTP error
body, stats lines) and the cause the thread confirmed. Triage reads the quoted text as `--logs` does (and
the reporter's own launch command as `--server-args`, when they gave one); the case is right when the
top finding says the confirmed cause (every expected keyword in its title, summary, evidence or actions)
and proposes the thread's first fix: its flag (or environment variable, or container setting) in the
direction the thread advised. Only what servops itself writes counts (never the pasted line it quotes
as evidence). The expectations were written from the threads before servops ran on them
and are never edited to fit what servops says (tests/fixtures/incidents/README.md).

    .venv/bin/python benchmarks/incident_corpus.py                 # the score by kind, one line per case
    .venv/bin/python benchmarks/incident_corpus.py --json out.json # and every verdict as JSON
    .venv/bin/python benchmarks/incident_corpus.py --case ID -v    # one case: the top finding in full
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from advisor.errors import UserError
from advisor.triage.collect import run_triage
from advisor.triage.result import TriageRequest, TriageResult
from rules.model import ConfigChange, Finding

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "incidents"
KINDS = ("startup", "runtime", "performance")
Direction = Literal["raise", "lower", "set", "unset", "enable", "disable", "upgrade", "none"]
_TRUE, _FALSE = {"true", "1", "yes", "on"}, {"false", "0", "no", "off", ""}


class Fix(BaseModel):
    """The first fix the thread advised: one of a flag, an environment variable or a container setting."""

    model_config = ConfigDict(extra="forbid")

    flag: str | None = None
    env: str | None = None
    setting: str | None = None
    direction: Direction = "none"
    value: str | None = None


class Expected(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cause: str
    keywords: list[str] = Field(min_length=1)
    fix: Fix = Field(default_factory=Fix)


class Diagnosis(BaseModel):
    model_config = ConfigDict(extra="forbid")

    quote: str
    by: Literal["maintainer", "reporter", "contributor"]
    url: str | None = None


class Case(BaseModel):
    """One incident file; the schema tests/fixtures/incidents/README.md documents."""

    model_config = ConfigDict(extra="forbid")

    id: str
    kind: Literal["startup", "runtime", "performance"]
    input_kind: Literal["full_log", "excerpt", "traceback", "error_line", "http_body", "stats_lines", "metrics"]
    source_url: str
    vllm_version: str
    hardware: str
    server_args: str | None = None
    quoted: str
    elided: str | None = None
    diagnosis: Diagnosis
    expected: Expected
    notes: str | None = None
    path: str = ""


class Verdict(BaseModel):
    """Whether the top finding names the confirmed cause and proposes the thread's fix, and why not."""

    id: str
    kind: str
    input_kind: str
    right: bool
    cause_named: bool
    fix_proposed: bool
    missing_keywords: list[str] = Field(default_factory=list)
    top_rule: str | None = None
    top_title: str | None = None
    top_fix: list[str] = Field(default_factory=list)
    error: str | None = None


def load_cases(root: Path = CORPUS) -> list[Case]:
    """Every case file under `root`, in path order; a file that does not match the schema fails loudly."""
    cases = []
    for path in sorted(root.glob("*/*.yaml")):
        case = Case.model_validate({**yaml.safe_load(path.read_text()), "path": str(path.relative_to(root))})
        if case.id != path.stem or case.kind != path.parent.name:
            raise ValueError(f"{path}: id {case.id!r} / kind {case.kind!r} do not match the file's name and folder")
        cases.append(case)
    return cases


def triage_case(case: Case, text: str | None = None) -> TriageResult:
    """Triage the quoted text (or `text`, the same lines as something else carried them) as a user would:
    saved to a file, byte for byte, and passed as --logs (with --server-args)."""
    with tempfile.TemporaryDirectory(prefix="servops-incident-") as folder:
        pasted = Path(folder) / "pasted.txt"
        pasted.write_text(case.quoted if text is None else text, encoding="utf-8", newline="")
        request = TriageRequest(logs=str(pasted), server_args=case.server_args)
        return run_triage(request)


def judge(case: Case, result: TriageResult | None, error: str | None = None) -> Verdict:
    """The verdict on the top finding of `result` (None when triage failed with `error`)."""
    verdict = Verdict(
        id=case.id, kind=case.kind, input_kind=case.input_kind, right=False, cause_named=False, fix_proposed=False
    )
    top = result.findings[0] if result is not None and result.findings else None
    if top is None:
        verdict.error = error or "no finding"
        return verdict
    text = _words(_finding_text(top))
    verdict.missing_keywords = [word for word in case.expected.keywords if _words(word) not in text]
    verdict.cause_named = not verdict.missing_keywords
    verdict.fix_proposed = fix_matches(case.expected.fix, top)
    verdict.right = verdict.cause_named and verdict.fix_proposed
    verdict.top_rule, verdict.top_title = top.rule, top.title
    verdict.top_fix = [_change_text(c) for c in [*top.changes, *top.alternatives]] + list(top.actions)
    return verdict


def fix_matches(fix: Fix, finding: Finding) -> bool:
    """The finding proposes the fix: the flag, variable or setting among its changes (or, for a container
    setting or an upgrade, named in its actions), moved in the expected direction.

    An upgrade is an upgrade whatever the expectation names as its target (a vLLM build, a container image):
    no log names the build that fixes it, so the finding must say to upgrade. A setting written as a name
    (`--shm-size`, `NCCL_BUFFSIZE`) must appear as written; one written in words (`request max_tokens (client
    side)`) must have each of its words outside parentheses in one action, with a word of its direction."""
    if fix.direction == "upgrade" and fix.flag is None and fix.env is None:
        return "upgrade" in _finding_text(finding).lower()
    if fix.flag is None and fix.env is None and fix.setting is None:
        return True  # the thread advised no setting: naming the cause is the answer
    name = fix.flag or fix.env or fix.setting
    changes = [c for c in [*finding.changes, *finding.alternatives] if c.flag == name]
    if any(_moves(change, fix.direction) for change in changes):
        return True
    if fix.setting is not None and " " in fix.setting.strip():
        return any(_says_setting(fix.setting, fix.direction, action) for action in finding.actions)
    if fix.setting is not None or fix.env is not None:
        return any(name in action for action in finding.actions)
    return False


_STOP_WORDS = frozenset({"a", "an", "the", "of", "per", "to", "in", "on", "for", "and", "or", "with", "by"})
_DIRECTION_WORDS: dict[str, frozenset[str]] = {
    "raise": frozenset({"raise", "increase", "more", "larger", "higher", "add"}),
    "lower": frozenset({"lower", "reduce", "fewer", "less", "smaller", "decrease", "shorten", "trim"}),
    "enable": frozenset({"enable", "turn", "set"}),
    "disable": frozenset({"disable", "remove", "unset", "drop"}),
}


def _says_setting(setting: str, direction: Direction, action: str) -> bool:
    """Each word of the setting (outside parentheses, stop words aside) in `action`, and a word of the direction."""
    wanted = _stems(re.sub(r"\([^)]*\)", " ", setting)) - _STOP_WORDS
    said = _stems(action)
    moves = _DIRECTION_WORDS.get(direction)
    return bool(wanted) and wanted <= said and (moves is None or bool(moves & said))


def _stems(text: str) -> set[str]:
    """Lower-case words (`max_tokens` stays one), without a possessive `'s` or a plural `s`."""
    words = re.findall(r"[a-z0-9_]+(?:'s)?", text.lower())
    return {w.removesuffix("'s").removesuffix("s") if len(w) > 3 else w for w in words}


def _moves(change: ConfigChange, direction: Direction) -> bool:
    proposed = change.proposed.strip().lower()
    if direction in ("raise", "lower"):
        before, after = _number(change.current), _number(change.proposed)
        if before is None or after is None:
            return after is not None  # a value where the current one is unknown: the direction cannot be checked
        return after > before if direction == "raise" else after < before
    if direction == "enable":
        return proposed in _TRUE
    if direction == "disable":
        return proposed in _FALSE
    if direction == "unset":
        return proposed in ("", "unset", "none")
    return True  # set, upgrade, none: proposing the setting is the fix


_SIZE_UNITS = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def _number(text: str | None) -> float | None:
    """The value's number (`0.95`, `image=3`: the last number in it); a size with its unit in bytes
    (`10gb`, `10g`, `64 MiB`), so two sizes written in different units compare as sizes."""
    found = re.findall(r"(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:i?b)?\b)?", (text or "").lower())
    if not found:
        return None
    number, unit = found[-1]
    return float(number) * _SIZE_UNITS.get(unit, 1)


def _finding_text(finding: Finding) -> str:
    """What servops itself says: title, summary, actions, the evidence's descriptions and the changes'
    reasons; never the user's own pasted line (evidence `raw`/`value`), which would name any cause."""
    parts = [finding.title, finding.summary, *finding.actions, *(e.description for e in finding.evidence)]
    parts += [f"{c.flag} {c.proposed} {c.reason}" for c in [*finding.changes, *finding.alternatives]]
    return "\n".join(str(part) for part in parts)


def _words(text: str) -> str:
    """Lower case, with `-` and `_` as spaces: `max_model_len`, `max-model-len` and `max model len` are one
    keyword (vLLM writes the same flag all three ways)."""
    return " ".join(text.lower().replace("-", " ").replace("_", " ").split())


def _change_text(change: ConfigChange) -> str:
    before = f"{change.current} → " if change.current else ""
    return f"{change.flag} {before}{change.proposed}"


def run(cases: Iterable[Case]) -> list[Verdict]:
    """Every case triaged and judged; a case whose triage fails is wrong, with the error as its reason."""
    verdicts = []
    for case in cases:
        try:
            verdicts.append(judge(case, triage_case(case)))
        except UserError as exc:
            verdicts.append(judge(case, None, f"refused: {exc}"))
    return verdicts


def score(verdicts: list[Verdict]) -> dict[str, Any]:
    """Right at the top finding, by kind and in all."""
    by_kind: dict[str, dict[str, int]] = {}
    for kind in KINDS:
        of_kind = [v for v in verdicts if v.kind == kind]
        by_kind[kind] = {"cases": len(of_kind), "right": sum(v.right for v in of_kind)}
    refused = sum(1 for v in verdicts if v.error and v.error.startswith("refused"))
    return {
        "cases": len(verdicts),
        "right": sum(v.right for v in verdicts),
        "cause_named": sum(v.cause_named for v in verdicts),
        "fix_proposed": sum(v.fix_proposed for v in verdicts),
        "refused": refused,
        "by_kind": by_kind,
        "by_input_kind": dict(Counter(v.input_kind for v in verdicts if v.right)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="FILE", help="write the score and every verdict here")
    parser.add_argument("--case", action="append", default=[], help="only this case id (repeatable)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each wrong case's top finding")
    args = parser.parse_args(argv)
    cases = [c for c in load_cases() if not args.case or c.id in args.case]
    if not cases:
        print(f"error: no case with id {', '.join(args.case)}", file=sys.stderr)
        return 2
    verdicts = run(cases)
    for v in verdicts:
        mark = "right" if v.right else "WRONG"
        why = "" if v.right else f"  ({v.error or _why(v)})"
        print(f"{mark:5}  {v.kind:11} {v.id}: {v.top_rule or '-'} {v.top_title or ''}{why}"[:240])
    summary = score(verdicts)
    parts = [f"{kind} {k['right']}/{k['cases']}" for kind, k in summary["by_kind"].items() if k["cases"]]
    share = summary["right"] / summary["cases"]
    print(f"\nright at the top finding: {summary['right']}/{summary['cases']} ({share:.0%}); {', '.join(parts)}")
    print(f"cause named {summary['cause_named']}, fix proposed {summary['fix_proposed']}, refused {summary['refused']}")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"score": summary, "verdicts": [v.model_dump() for v in verdicts]}, indent=2)
        )
    return 0


def _why(verdict: Verdict) -> str:
    reasons = []
    if verdict.missing_keywords:
        reasons.append(f"missing {verdict.missing_keywords}")
    if not verdict.fix_proposed:
        reasons.append(f"fix not proposed (top: {', '.join(verdict.top_fix) or 'none'})")
    return "; ".join(reasons)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - stdout for the interpreter's final flush
        sys.exit(0)
