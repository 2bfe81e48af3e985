"""Does the vLLM tier's vLLM at nice 19 keep its observers from waiting, and at what cost to vLLM? (not a test)

    .venv/bin/python -m benchmarks.harness_priority --rounds 2 --json bench-out/harness-priority.json

The vLLM tier judges a loaded vLLM with processes that run beside it on the same 2-core box: the
held `openai` streams, live `servops triage` children, the scrapes. Under load vLLM's CPU backend
keeps both cores busy (docs/reference.md §6), and on the CI box those observers starved, so the tier
lowers vLLM to nice 19 (tests/helpers/vllm_situations.give_way). This measures both sides of that
choice on one vLLM, alternating its priority (0, 19, 0, 19, ... for --rounds pairs) under the tier's
saturated load (32 held streams): how long each live two-scrape triage child waited for a CPU (its
run delay, /proc/PID/task/*/schedstat) and took, and vLLM's generation rate over the scrape window
(`vllm:generation_tokens_total`). Baseline: vLLM at nice 0, the priority it had before. Needs root
to bring a lowered vLLM back to 0; as another user the rounds after the first 19 stay at 19.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from tests.helpers import cli_child, machine_state
from tests.helpers import vllm_situations as vs
from tests.integration.server.prom import value
from tests.integration.vllm.test_triage_live import TRIAGE_TIMEOUT_S, live_triage_args

GENERATED = "vllm:generation_tokens_total"
# How often a running triage child's run delay is read (its last reading before it exits counts).
POLL_S = 0.05


def triage_children(server: vs.VllmServer, folder: Path, count: int, label: str) -> vs.During:
    """`count` live two-scrape triages one after another, each's wall time, CPU and CPU wait."""

    def run() -> list[dict]:
        measured = []
        for index in range(count):
            child = cli_child.start(*live_triage_args(server, folder / f"{label}-{index}.json", vs.SCRAPE_INTERVAL_S))
            cpu_s = waited_s = 0.0
            try:
                while child.process.poll() is None and time.monotonic() - child.started < TRIAGE_TIMEOUT_S:
                    cpu_s = machine_state.cpu_seconds(child.process.pid) or cpu_s
                    waited_s = machine_state.cpu_wait_s(child.process.pid) or waited_s
                    time.sleep(POLL_S)
                took_s = time.monotonic() - child.started
            finally:
                child.close()
            figures = {"took_s": took_s, "cpu_s": cpu_s, "waited_for_cpu_s": waited_s}
            measured.append({key: round(seconds, 2) for key, seconds in figures.items()})
        return measured

    return run


def one_round(server: vs.VllmServer, folder: Path, nice: int, streams: int, triages: int) -> dict:
    vs.give_way(server.process, nice)
    actual = machine_state.priority(server.process.pid)
    label = f"nice{nice}-{time.monotonic():.0f}"
    situation = vs.held_streams(server, streams, label, during=triage_children(server, folder, triages, label))
    generated = value(situation.metrics_after, GENERATED) - value(situation.metrics_before, GENERATED)
    return {
        "nice": nice,
        "vllm_priority": actual,
        "triages": situation.notes["during"],
        "vllm_generation_tok_s": round(generated / situation.interval_s, 1),
        "load": situation.notes.get("load", ""),
    }


def summarize(rounds: list[dict]) -> dict:
    """Per nice value: the medians over its rounds; and the nice-19 / nice-0 ratios."""
    by_nice: dict[int, dict] = {}
    for nice in sorted({r["nice"] for r in rounds}):
        mine = [r for r in rounds if r["nice"] == nice]
        children = [child for r in mine for child in r["triages"]]
        by_nice[nice] = {
            "triage_waited_for_cpu_s": round(statistics.median(c["waited_for_cpu_s"] for c in children), 2),
            "triage_took_s": round(statistics.median(c["took_s"] for c in children), 2),
            "vllm_generation_tok_s": round(statistics.median(r["vllm_generation_tok_s"] for r in mine), 1),
        }
    ratios = {}
    if 0 in by_nice and vs.VLLM_NICE in by_nice:
        base, low = by_nice[0], by_nice[vs.VLLM_NICE]
        ratios = {key: round(low[key] / base[key], 3) if base[key] else None for key in base}
    return {"by_nice": by_nice, "nice19_over_nice0": ratios}


def _positive(text: str) -> int:
    """An argparse type: a whole number of at least 1 (a count of 0 would measure nothing)."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=_positive, default=2, help="(nice 0, nice 19) pairs (default 2)")
    parser.add_argument("--streams", type=_positive, default=32, help="held openai streams (default 32: saturated)")
    parser.add_argument("--triages", type=_positive, default=2, help="live triage children per observation (default 2)")
    parser.add_argument("--out", type=Path, default=Path("bench-out/harness-priority"), help="folder for vLLM's log")
    parser.add_argument("--json", type=Path, help="write the rounds and the summary here")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rounds = []
    with vs.vllm_server(args.out, label="harness-priority") as server:
        for index in range(args.rounds):
            for nice in (0, vs.VLLM_NICE):
                rounds.append(one_round(server, args.out, nice, args.streams, args.triages))
                shown = {k: v for k, v in rounds[-1].items() if k != "load"}
                print(f"[round {index + 1}] {json.dumps(shown)}", file=sys.stderr, flush=True)
    result = {"streams": args.streams, "rounds": rounds, "summary": summarize(rounds)}
    print(json.dumps(result["summary"], indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
