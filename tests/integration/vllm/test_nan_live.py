"""HL-8 on a real vLLM: requests answered from NaN logits, counted by vLLM and read by triage.

The embedded SmolLM2 is copied with its final norm's weight set to NaN, so every request's logits are NaN
(tests.helpers.vllm_situations.nan_logits). vLLM 0.32 on CPU still answers each one with HTTP 200 (an empty text,
here); with VLLM_COMPUTE_NANS_IN_LOGITS=1 it counts them in `vllm:corrupted_requests_total`. Triage of the two
scrapes and the log must say so (HL-8). The same situation is recorded in tests/fixtures/vllm_cpu (nan_logits), where
the recorded triage and the alert pack's promtool test read it.

What this showed of vLLM that the unit tests could not: the stats line's `Corrupted: N reqs` counts a request only
in an interval the engine logs at info level, and vLLM logs an interval that ends idle at debug level, so requests
that finish between two lines on a quiet server read 0 in every line while the counter holds them. The counter is
the figure to trust; the test asserts on it and does not require the line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rules.signals import CORRUPTED_COUNTER
from tests.helpers import vllm_situations as vs
from tests.integration.server.prom import value
from tests.integration.vllm.test_triage_live import findings, offline_triage


@pytest.fixture(scope="module")
def answered(vllm_work: Path) -> vs.Situation:
    return vs.nan_logits(vllm_work)


def test_vllm_answers_nan_logits_with_success_and_counts_them(answered: vs.Situation) -> None:
    assert answered.notes["during"]["statuses"] == [200] * vs.NAN_REQUESTS
    assert value(answered.metrics_before, CORRUPTED_COUNTER) == 0
    assert value(answered.metrics_after, CORRUPTED_COUNTER) == vs.NAN_REQUESTS, answered.metrics_after[-3000:]


def test_triage_of_the_scrapes_and_the_log_names_the_corrupted_requests(answered: vs.Situation, vllm_work: Path):
    document = offline_triage(answered, vllm_work / "nan-triage")
    [hl8] = [f for f in findings(document) if f["rule"] == "HL-8"]
    assert hl8["title"].startswith(f"{vs.NAN_REQUESTS} request(s) finished with NaN in their logits")
    assert hl8["evidence"][0]["name"] == f"increase({CORRUPTED_COUNTER})" and hl8["severity"] == "high"
