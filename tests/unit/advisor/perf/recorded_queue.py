"""The recorded servers and the CLI round trips the model-chosen-value tests share.

Real vLLM 0.32 on its CPU backend (tests/fixtures/vllm_cpu/queue_seqs1*) and the bundled engine
(tests/fixtures/bundled/queue_seqs1*), each ramped over 1-16 closed-loop streams by
`benchmarks/predict_accuracy.py`: `triage` reads the log and the ramp, `predict` runs a command
triage printed, exactly as a user would paste it.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from advisor.cli.commands.predict import deployment_for, device_share
from advisor.cli.main import bind_command_line_values, build_parser, main
from advisor.cli.result_files import load_result
from advisor.collect.server_args import parse_command
from advisor.perf.measured import measured_ramp
from advisor.perf.whatif import FlagChanges, Forecaster, ServerContext

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
CASES = {"vllm-0.32-cpu": FIXTURES / "vllm_cpu" / "queue_seqs1", "bundled": FIXTURES / "bundled" / "queue_seqs1"}
# Each engine at --max-num-batched-tokens 64 under 128-word prompts, with the TTFT target under which
# the model chooses a larger budget there (tests/fixtures/*/chunked*, recorded by
# tests/fixtures/vllm_cpu/record.py --only chunked).
CHUNKED = {
    "vllm-0.32-cpu": (FIXTURES / "vllm_cpu" / "chunked", "0.8"),
    "bundled": (FIXTURES / "bundled" / "chunked", "1"),
}


def triage(stem: Path, out: Path, *extra: str) -> dict:
    """`servops triage --logs STEM.log --ramp STEM_ramp.json EXTRA… --json OUT`, as a document."""
    args = ["triage", "--logs", f"{stem}.log", "--ramp", f"{stem}_ramp.json", *extra, "--json", str(out)]
    assert main(args) == 0
    return json.loads(out.read_text())


def triage_window(stem: Path, out: Path, *extra: str, interval_s: str = "8") -> dict:
    """`servops triage --logs STEM.log --metrics STEM_before.prom --metrics STEM_after.prom
    --metrics-interval INTERVAL_S EXTRA… --json OUT` (a recorded window, no ramp), as a document."""
    metrics = ["--metrics", f"{stem}_before.prom", "--metrics", f"{stem}_after.prom", "--metrics-interval", interval_s]
    args = ["triage", "--logs", f"{stem}.log", *metrics, *extra, "--json", str(out)]
    assert main(args) == 0
    return json.loads(out.read_text())


def triage_ramp_and_window(stem: Path, out: Path, *extra: str) -> dict:
    """`servops triage --logs STEM.log --ramp STEM_ramp.json --metrics STEM_before.prom --metrics
    STEM_after.prom --metrics-interval 10 EXTRA… --json OUT` (a ramp and a 10 s window in its top
    step, as tests/fixtures/vllm_cpu/record.py's `chunked` situation recorded them), as a document."""
    metrics = ["--metrics", f"{stem}_before.prom", "--metrics", f"{stem}_after.prom", "--metrics-interval", "10"]
    args = ["triage", "--logs", f"{stem}.log", "--ramp", f"{stem}_ramp.json", *metrics, *extra, "--json", str(out)]
    assert main(args) == 0
    return json.loads(out.read_text())


def predict(command: str, out: Path) -> dict:
    """A printed `servops predict …` command run with `--json OUT`, as a document."""
    words = shlex.split(command)
    assert words[:2] == ["servops", "predict"], command
    assert main([*words[1:], "--json", str(out)]) == 0
    return json.loads(out.read_text())


class Rivals:
    """The other values a printed `servops predict` command could have asked about, calibrated once.

    Why not run the command once per value: each run calibrates again (a dozen replays of the whole
    ramp), the same every time, and the tests that check a choice is unbeaten ask about six to nine
    values. `servops predict` is `Forecaster(...).predict(changes)` (advisor/cli/commands/predict.py), so
    one Forecaster built from the command's own arguments gives each value's prediction exactly as
    the command would; the tests still run the printed command itself for the value it names."""

    def __init__(self, command: str) -> None:
        words = shlex.split(command)
        assert words[:2] == ["servops", "predict"], command
        parser = build_parser()
        args = parser.parse_args(bind_command_line_values(parser, words[1:]))
        document = load_result(Path(args.ramp))
        if args.slo is not None:
            document = {**document, "config": {**(document.get("config") or {}), "slo": args.slo}}
        self.changes = list(args.change or [])
        command = parse_command(args.server_args or "", flag="--server-args")
        server = ServerContext(
            command=command,
            engine=args.engine,
            kv_cache_tokens=args.kv_cache_tokens,
            device_share=device_share(args.kv_cache_gib, args.gpu_memory_gib),
            deployment=deployment_for(args.model, args.gpu, command, args.kv_cache_gib),
        )
        source = Path(args.ramp).name
        self.forecaster = Forecaster(measured_ramp(document, source), source, server).fit()

    def predict(self, flag: str, value: int | str) -> dict:
        """The command's prediction with its change of `flag` set to `value`, as its --json would hold it."""
        changes = [c for c in self.changes if c.split()[0] != flag] + [f"{flag} {value}"]
        return json.loads(self.forecaster.predict(FlagChanges.parse(changes)).model_dump_json())
