"""The same incidents, cut the ways people cut a paste: does triage still answer without failing?

A person on call copies part of a log: the first screen of it, the last, a window in the middle, a selection that
starts or stops inside a line, the same lines twice (a scroll-back copied over itself), or lines in another order
(a log shipper's view sorted by something else). Every case of the real-incident corpus
(tests/fixtures/incidents/) is cut each of these ways at places drawn from a fixed seed and triaged again, as a
user would (a file passed to --logs). Correctness is not judged here (a cut may take the cause away); what is
counted is what must never happen: an exception out of triage (a traceback for the user), or non-empty text
refused as unusable (the reader's promise is that any text is read).

    .venv/bin/python benchmarks/cut_pastes.py                # 12 cuts per case, seed 0
    .venv/bin/python benchmarks/cut_pastes.py --seed 7 --cuts 24
    .venv/bin/python benchmarks/cut_pastes.py --baseline f9e4057     # and the reader before the pasted-text reader
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

try:  # run as a script: this folder is on sys.path (and, for a baseline, the other commit's packages come first)
    from baseline_tree import at_revision
except ImportError:  # imported as benchmarks.cut_pastes
    from benchmarks.baseline_tree import at_revision

Cut = Callable[[list[str], random.Random], list[str]]


def _head(lines: list[str], rng: random.Random) -> list[str]:
    return lines[: rng.randint(1, len(lines))]


def _tail(lines: list[str], rng: random.Random) -> list[str]:
    return lines[rng.randint(0, len(lines) - 1) :]


def _window(lines: list[str], rng: random.Random) -> list[str]:
    start = rng.randint(0, len(lines) - 1)
    return lines[start : rng.randint(start + 1, len(lines))]


def _inside_a_line(lines: list[str], rng: random.Random) -> list[str]:
    """A selection that starts (or stops) at a character inside a line."""
    text = "\n".join(lines)
    at = rng.randint(1, max(1, len(text) - 1))
    return (text[:at] if rng.random() < 0.5 else text[at:]).splitlines()


def _twice(lines: list[str], rng: random.Random) -> list[str]:
    return lines + lines


def _shuffled(lines: list[str], rng: random.Random) -> list[str]:
    order = lines[:]
    rng.shuffle(order)
    return order


CUTS: dict[str, Cut] = {
    "first lines": _head,
    "last lines": _tail,
    "a window": _window,
    "inside a line": _inside_a_line,
    "copied twice": _twice,
    "out of order": _shuffled,
}


def outcome(text: str, server_args: str | None = None) -> str | None:
    """None when triage answered the text (saved to a file and passed as --logs, as a user would); else what went
    wrong: the refusal's words, or the exception's. Imported from where each commit has them, so a baseline commit
    answers the same texts."""
    from advisor.errors import UserError
    from advisor.triage.result import TriageRequest

    try:
        from advisor.triage.collect import run_triage
    except ImportError:  # before the collect/decide split (30abd93)
        from advisor.triage.run import run_triage
    with tempfile.TemporaryDirectory(prefix="servops-cut-") as folder:
        pasted = Path(folder) / "pasted.txt"
        pasted.write_text(text, encoding="utf-8", newline="")
        try:
            run_triage(TriageRequest(logs=str(pasted), server_args=server_args))
        except UserError as error:
            return f"refused: {error}"
        except Exception as error:  # noqa: BLE001 - counting what escapes is the point
            where = traceback.extract_tb(error.__traceback__)[-1]
            return f"exception: {type(error).__name__}: {error} (raised at {where.filename}:{where.lineno})"
    return None


def outcomes(path: str) -> list[str | None]:
    """outcome() of each [text, server_args] pair in the JSON file at `path` (what a baseline commit runs)."""
    return [outcome(text, args) for text, args in json.loads(Path(path).read_text(encoding="utf-8"))]


def cut(quoted: str, kind: str, rng: random.Random) -> str:
    """A paste cut one way, at places `rng` draws."""
    return "\n".join(CUTS[kind](quoted.splitlines() or [quoted], rng))


def cut_pastes(seed: int, cuts: int) -> list[tuple[str, str, str, str | None]]:
    """(case id, cut kind, text, server args) for every case, `cuts` cuts each, the kinds in turn."""
    try:
        from incident_corpus import load_cases
    except ImportError:
        from benchmarks.incident_corpus import load_cases
    rng, kinds, pastes = random.Random(seed), list(CUTS), []
    for case in load_cases():
        for n in range(cuts):
            kind = kinds[n % len(kinds)]
            text = cut(case.quoted, kind, rng)
            if text.strip():
                pastes.append((case.id, kind, text, case.server_args))
    return pastes


def _baseline(revision: str, pastes: list[tuple[str, str, str, str | None]]) -> list[str | None]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8", delete=False) as file:
        json.dump([[text, args] for _, _, text, args in pastes], file)
    try:
        return at_revision(revision, f"from cut_pastes import outcomes; print(json.dumps(outcomes({file.name!r})))")
    finally:
        Path(file.name).unlink()


def _table(pastes: list[tuple[str, str, str, str | None]], now: list[str | None], before: list | None) -> list[str]:
    rows = ["| cut | pastes | exceptions | refused |" + (" answered at baseline |" if before else "")]
    rows.append("|---|---:|---:|---:|" + ("---:|" if before else ""))
    for kind in CUTS:
        mine = [i for i, paste in enumerate(pastes) if paste[1] == kind]
        failed = sum(1 for i in mine if (now[i] or "").startswith("exception"))
        refused = sum(1 for i in mine if (now[i] or "").startswith("refused"))
        then = f" {sum(1 for i in mine if before[i] is None)} |" if before else ""
        rows.append(f"| {kind} | {len(mine)} | {failed} | {refused} |{then}")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0, help="the seed the cut places are drawn from (default 0)")
    parser.add_argument("--cuts", type=int, default=12, help="cuts per case, the kinds in turn (default 12)")
    parser.add_argument("--baseline", metavar="REV", help="also triage the same cut pastes with the code at REV")
    args = parser.parse_args(argv)
    if args.cuts < 1:
        parser.error(f"--cuts {args.cuts}: give at least 1 cut per case")
    pastes = cut_pastes(args.seed, args.cuts)
    before = _baseline(args.baseline, pastes) if args.baseline else None
    now = [outcome(text, server_args) for _, _, text, server_args in pastes]
    for (case_id, kind, _, _), wrong in zip(pastes, now, strict=True):
        if wrong is not None:
            print(f"{case_id} ({kind}): {wrong}")
    print("\n".join(_table(pastes, now, before)))
    answered = sum(1 for wrong in now if wrong is None)
    line = f"\n{len(pastes)} cut pastes of the corpus's incidents (seed {args.seed}): {answered} answered"
    if before is not None:
        line += f"; at {args.baseline}: {sum(1 for wrong in before if wrong is None)}"
    print(line)
    return 0 if answered == len(pastes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
