"""A recorded one-engine ramp rewritten as N copies of that engine behind one vLLM front end (not a test)

    .venv/bin/python -m benchmarks.two_engines RAMP.json OUT.json [--engines 2]

Why: the layout choice for a `--data-parallel-size` server (OP-5.4/OP-5.5 merging replicas at their
bandwidth floor, advisor/triage/layouts.py) calibrates on a ramp of the whole server. This writes what
such a ramp would show if each engine behaved as the recorded one: every level's streams and every
total (throughput, request counts, the gauges vLLM sums over its engines) times N, latencies and KV
usage as measured. It is the inverse of `advisor.perf.measured.one_replica`, so the model must fit it
to the one-engine cost (tests/unit/advisor/triage/test_layout_choice.py). Stated, not measured: a real pair of
vLLM engines on one host made 0.75-0.88 of it (benchmarks/data_parallel_check.py).
"""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path

from advisor.cli.result_files import load_result
from advisor.errors import UserError
from advisor.perf.measured import ENGINE_COUNTS, ENGINE_TOTALS, SERVER_TOTALS


def behind_one_front(document: dict, engines: int = 2) -> dict:
    """The ramp `document` as `engines` identical engines sharing its load evenly."""
    combined = copy.deepcopy(document)
    combined["config"]["levels"] = [engines * level for level in combined["config"]["levels"]]
    for step in combined["steps"]:
        step["offered"] *= engines
        for key in (*ENGINE_TOTALS, *ENGINE_COUNTS):
            if step.get(key) is not None:
                step[key] *= engines
        server = step.get("server") or {}
        for key in SERVER_TOTALS:
            if server.get(key) is not None:
                server[key] *= engines
    return combined


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ramp", type=Path, help="a `servops ramp --json` result of one engine")
    parser.add_argument("out", type=Path, help="where to write the combined ramp")
    parser.add_argument("--engines", type=int, default=2, help="engines behind the front end (default 2)")
    args = parser.parse_args()
    if args.engines < 1:
        parser.error(f"--engines {args.engines}: give 1 or more")
    try:
        document = load_result(args.ramp)
    except UserError as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    document.pop("_source_file", None)  # load_result's note of where it read the input: not this output's
    args.out.write_text(json.dumps(behind_one_front(document, args.engines), indent=1))
    print(f"{args.out}: {args.ramp.name} as {args.engines} engines behind one front end")


if __name__ == "__main__":
    main()
