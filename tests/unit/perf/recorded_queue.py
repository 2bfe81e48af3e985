"""The two recorded `--max-num-seqs 1` servers and the CLI round trips the model-chosen-value tests share.

Real vLLM 0.32 on its CPU backend (tests/fixtures/vllm_cpu/queue_seqs1*) and the bundled engine
(tests/fixtures/bundled/queue_seqs1*), each ramped over 1-16 closed-loop streams by
`benchmarks/predict_accuracy.py`: `triage` reads the log and the ramp, `predict` runs a command
triage printed, exactly as a user would paste it.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from advisor.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CASES = {"vllm-0.32-cpu": FIXTURES / "vllm_cpu" / "queue_seqs1", "bundled": FIXTURES / "bundled" / "queue_seqs1"}


def triage(stem: Path, out: Path, *extra: str) -> dict:
    """`servops triage --logs STEM.log --ramp STEM_ramp.json EXTRA… --json OUT`, as a document."""
    args = ["triage", "--logs", f"{stem}.log", "--ramp", f"{stem}_ramp.json", *extra, "--json", str(out)]
    assert main(args) == 0
    return json.loads(out.read_text())


def triage_window(stem: Path, out: Path, *extra: str) -> dict:
    """`servops triage --logs STEM.log --metrics STEM_before.prom --metrics STEM_after.prom
    --metrics-interval 8 EXTRA… --json OUT` (a recorded 8 s window, no ramp), as a document."""
    metrics = ["--metrics", f"{stem}_before.prom", "--metrics", f"{stem}_after.prom", "--metrics-interval", "8"]
    args = ["triage", "--logs", f"{stem}.log", *metrics, *extra, "--json", str(out)]
    assert main(args) == 0
    return json.loads(out.read_text())


def predict(command: str, out: Path) -> dict:
    """A printed `servops predict …` command run with `--json OUT`, as a document."""
    words = shlex.split(command)
    assert words[:2] == ["servops", "predict"], command
    assert main([*words[1:], "--json", str(out)]) == 0
    return json.loads(out.read_text())
