"""Failures produced on a real vLLM, each triaged to the right top finding, on one server start.

- a KV space too small for --max-model-len: vLLM's own startup error, triaged from its log to a
  --max-model-len that then starts for real;
- preemptions under that tiny KV space with long outputs, on the server that start brought up.
(The client-side overload runs on the shared server in test_triage_live.py.)

Why one server for both: each vLLM start costs about 50 s of a CI core, and the server the fix starts
is the tiny KV space the preemption case needs (about 1,000 tokens in float32, 2,000 where the CPU has
bf16 arithmetic: the recorded preempting case's 2,048).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fixtures.vllm_cpu.record import PREEMPTING_LOAD
from tests.helpers import vllm_situations as vs
from tests.integration.vllm.test_triage_live import findings, offline_triage, servops

# Fast starts for the failure cases: the formats are the same, the torch.compile minute is not needed.
EAGER = "--enforce-eager"

# The first preemption comes when the first wave of requests ends and the next, admitted together, grows
# into the pool; how soon depends on the machine. On a 2-core AVX2 host at 4-4.5 engine steps/s a
# 256-token request took longer than the ramp's default 60 s request timeout, so every request was
# abandoned before it ended and none was preempted (at the commit before the advisor's layers too): the
# live case lets requests finish and waits longer; the recording keeps its recipe. The ramp is
# interrupted as soon as the scrapes saw the preemptions (it keeps the partial step), so a fast
# machine does not sit out the rest of the 120 s step.
LIVE_PREEMPTING_LOAD = {
    **PREEMPTING_LOAD,
    "step_s": 120.0,
    "max_window_s": 95.0,
    "request_timeout_s": 240.0,
    "stop_when_observed": True,
}


@dataclass
class KvFixed:
    """The failed start, its triage, and the server the proposed --max-model-len started."""

    failed_log: str
    triage: dict
    change: dict
    started_log: str
    preempting: vs.Situation


@pytest.fixture(scope="module")
def kv_fixed(vllm_work: Path, kv_too_small_start: vs.Background | None) -> KvFixed:
    # begun with the session, beside the shared server's start (conftest.py)
    assert kv_too_small_start is not None, "conftest.py starts it whenever this module is collected"
    code, log_text = kv_too_small_start.result(vs.STARTUP_TIMEOUT_S)
    assert code != 0 and "estimated maximum model length" in log_text
    out = vllm_work / "kv-too-small-triage.json"
    done = servops("triage", "--logs", str(vllm_work / "kv-too-small.log"), "--json", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    document = json.loads(out.read_text())
    top = findings(document)[0]
    assert top["rule"] == "OP-1.1", done.stdout
    change = next(c for c in top["changes"] if c["flag"] == "--max-model-len")
    # Triage also proposes dropping --enforce-eager (a production smell); the start keeps it all the
    # same: whether max-model-len fits the KV space does not depend on compilation, and a compiled
    # start costs vLLM ~2 min of torch.compile on a CI core for nothing this test checks.
    flags = _flags_of(document["proposed_command"])
    fixed = vs.vllm_command(*flags, *([EAGER] if EAGER not in flags else []))
    with vs.vllm_server(vllm_work, label="kv-fixed", command=fixed) as server:
        started_log = server.log_text()
        preempting = vs.under_ramp_load(server, out_dir=vllm_work, name="preempting", **LIVE_PREEMPTING_LOAD)
    return KvFixed(log_text, document, change, started_log, preempting)


def test_kv_too_small_for_max_model_len_is_triaged_to_a_max_model_len_that_starts(kv_fixed: KvFixed) -> None:
    proposed, length = kv_fixed.triage["proposed_command"], kv_fixed.change["proposed"]
    assert proposed and f"--max-model-len {length}" in proposed, proposed
    assert f"max_model_len': {length}" in kv_fixed.started_log or f"max_seq_len={length}" in kv_fixed.started_log


def test_tiny_kv_space_under_long_outputs_is_triaged_to_preemptions(kv_fixed: KvFixed, vllm_work: Path) -> None:
    situation = kv_fixed.preempting
    document = offline_triage(situation, vllm_work / "preempting")
    assert findings(document)[0]["rule"] == "OP-5.3", [f["title"] for f in findings(document)]
    assert situation.ramp["steps"][0]["server"]["preemptions_per_s"] > 0


def _flags_of(command: str) -> list[str]:
    """The flags of a proposed `vllm serve MODEL …` command, minus what vs.vllm_command adds itself."""
    words = shlex.split(command)
    while words and "=" in words[0] and not words[0].startswith("-"):
        words.pop(0)
    flags = words[3:] if words[:2] == ["vllm", "serve"] else words
    out, skip = [], False
    for index, word in enumerate(flags):
        if skip:
            skip = False
            continue
        if word in ("--served-model-name", "--host", "--port", "--model"):
            skip = index + 1 < len(flags) and not flags[index + 1].startswith("-")
            continue
        out.append(word)
    return out
