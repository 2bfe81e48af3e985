"""The prefill probe against the real bundled server: lone prompts, counted by the server, timed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor.cli.main import main
from advisor.perf.measured import measured_ramp
from loadtest.errors import LoadTestError
from loadtest.prefill_probe import REPEATS, run_prefill_probe
from tests.helpers.server_process import ServerHandle


def test_each_length_is_sent_alone_and_counted_by_the_server(server: ServerHandle) -> None:
    probe = run_prefill_probe(server.base_url, server.model, [4, 12, 30], repeats=2)
    assert [t.words for t in probe.timings] == [4, 12, 30, 4, 12, 30]  # interleaved over the repeats
    assert all(t.ttft_s > 0 for t in probe.timings)
    medians = probe.medians()
    tokens = [tokens for tokens, _ in medians]
    # the server's own count grows with the words sent (the tiny model's tokenizer splits words
    # into one or more tokens, so the count is at least the words)
    assert tokens == sorted(tokens) and len(set(tokens)) == 3
    assert all(count >= words for count, words in zip(tokens, (4, 12, 30), strict=True))
    # every prompt opens with its own random number: no two are alike, so none hits the prefix cache
    metrics = server.get("/metrics")[1].decode()
    assert "vllm:prefix_cache_hits_total" in metrics


def test_a_prompt_past_max_model_len_names_the_length_and_the_fix(server: ServerHandle) -> None:
    with pytest.raises(LoadTestError, match=r"prefill probe \(400 words\).*maximum context length.*--max-model-len"):
        run_prefill_probe(server.base_url, server.model, [400], repeats=1)


def test_servops_ramp_keeps_the_probe_in_its_result_for_the_model(server: ServerHandle, tmp_path: Path) -> None:
    out = tmp_path / "ramp.json"
    argv = ["ramp", "--endpoint", server.base_url, "--model", server.model, "--concurrency", "1"]
    argv += ["--step-seconds", "3", "--warmup-seconds", "0.5", "--cooldown-seconds", "2"]
    argv += ["--input-len", "8", "--output-len", "4", "--prefill-probe", "4,12", "--json", str(out)]
    assert main(argv) == 0
    document = json.loads(out.read_text())
    assert [t["words"] for t in document["prefill_probe"]["timings"]] == [4, 12] * REPEATS
    assert "prefill_probe" in document["config"] and document["config"]["prefill_probe"] == [4, 12]
    probe = measured_ramp(document).prefill_probe
    assert probe is not None and len(probe.medians()) == 2
