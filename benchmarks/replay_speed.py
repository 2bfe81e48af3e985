"""`servops predict` with and without the replay's decode runs, on recorded ramps (not a test).

    .venv/bin/python -m benchmarks.replay_speed [--repeat 3] [--json OUT.json]

Baseline in the same run: the same predictions with `_StepReplayer._decode_run` switched off, so
every virtual step is built through `Scheduler.schedule()` (the replay before decode runs). Each case
is a recorded ramp, the flags it ran with and one `--change`; both ways must write the same
prediction (compared figure for figure), and the ratio is the baseline's median time over the decode
runs' median time. tests/unit/advisor/perf/test_decode_runs.py holds the equality on every kind of
replay; this measures what it buys.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import time
from pathlib import Path

from advisor.cli.main import main
from advisor.perf import memo, replay

ROOT = Path(__file__).parents[1]
CASES = (
    ("tests/fixtures/vllm_cpu/queue_seqs1_ramp.json", "vllm serve m --max-num-seqs 1", "--max-num-seqs 8"),
    ("tests/fixtures/vllm_cpu/moderate_ramp.json", "vllm serve m", "--max-num-seqs 4"),
    ("tests/fixtures/bundled/chunked_ramp.json", "--max-num-batched-tokens 64", "--max-num-batched-tokens 256"),
)


def _predict(ramp: str, server_args: str, change: str, out: Path) -> float:
    # The performance model keeps its answers for the process (advisor/perf/memo.py): without forgetting them, every
    # run after the first would be a look-up, and the second way would be handed the first way's prediction.
    memo.forget_all()
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(
            [
                "predict",
                "--ramp",
                str(ROOT / ramp),
                "--server-args",
                server_args,
                "--change",
                change,
                "--json",
                str(out),
            ]
        )
    if code != 0:
        raise SystemExit(f"predict on {ramp} exited {code}")
    return time.perf_counter() - started


def _figures(path: Path) -> list:
    return json.loads(path.read_text())["steps"]


def main_cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each way per case (medians reported)")
    parser.add_argument("--json", default=None, metavar="OUT.json")
    parser.add_argument("--work", default="/tmp/servops-replay-speed", help="folder for the predictions")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    original = replay._StepReplayer._decode_run
    rows = []
    for ramp, server_args, change in CASES:
        times: dict[str, list[float]] = {"baseline": [], "decode_runs": []}
        for _ in range(args.repeat):
            for way in times:
                replay._StepReplayer._decode_run = original if way == "decode_runs" else (lambda self: False)
                times[way].append(_predict(ramp, server_args, change, work / f"{way}.json"))
        replay._StepReplayer._decode_run = original
        same = _figures(work / "baseline.json") == _figures(work / "decode_runs.json")
        base, fast = statistics.median(times["baseline"]), statistics.median(times["decode_runs"])
        rows.append(
            {
                "ramp": ramp,
                "change": change,
                "baseline_s": base,
                "decode_runs_s": fast,
                "ratio": base / fast,
                "same": same,
            }
        )
        print(
            f"{ramp} {change!r}: baseline {base:.2f} s, decode runs {fast:.2f} s, {base / fast:.2f}x, "
            f"same prediction: {same}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main_cli()
