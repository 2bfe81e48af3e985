"""Triage orchestration: partial inputs give the findings they support; the JSON has its contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor.errors import UserError
from advisor.triage.collect import run_triage
from advisor.triage.result import TriageRequest
from advisor.triage.text import render_text

CORPUS = Path(__file__).parents[3] / "fixtures" / "vllm"
COLLECT = Path(__file__).parents[3] / "fixtures" / "collect"


def test_nothing_to_triage_is_a_user_error():
    with pytest.raises(UserError, match="--endpoint"):
        run_triage(TriageRequest())


def test_json_document_has_kind_version_time_and_ranked_findings():
    result = run_triage(TriageRequest(logs=str(COLLECT / "log_v0_11_startup_failure.log"), model="Qwen3-8B", gpu="L4"))
    document = json.loads(result.model_dump_json())
    assert document["kind"] == "triage" and document["servops_version"] and document["created_at"]
    top = document["findings"][0]
    assert {"rule", "severity", "category", "title", "evidence", "changes"} <= set(top)
    change = top["changes"][0]
    assert {"flag", "current", "proposed", "reason", "predicted_effect"} <= set(change)
    assert (change["flag"], change["current"], change["proposed"]) == ("--max-model-len", "262144", "23152")
    assert change["predicted_effect"]["figures"]["starts_after"] == 1.0
    assert document["inputs"]["logs"].endswith(".log") and document["sources"][0]["kind"] == "log"


def test_proposed_command_is_the_current_one_with_the_changes():
    result = run_triage(
        TriageRequest(
            logs=str(COLLECT / "log_v0_11_startup_failure.log"),
            server_args="vllm serve Qwen/Qwen3-8B --max-model-len 262144 --port 8000",
        )
    )
    assert result.current_command == "vllm serve Qwen/Qwen3-8B --max-model-len 262144 --port 8000"
    assert result.proposed_command == "vllm serve Qwen/Qwen3-8B --max-model-len 23152 --port 8000"


def test_a_log_alone_gives_startup_findings_without_predictions_when_the_device_is_unknown():
    result = run_triage(TriageRequest(logs=str(CORPUS / "v0_15_max_model_len_no_fit.log")))
    assert result.top.rule == "OP-1.1"
    assert result.facts.snapshot is None and result.facts.window is None


def test_one_metrics_scrape_alone_still_finds_preemptions():
    result = run_triage(TriageRequest(metrics_files=[str(COLLECT / "metrics_v0_8_0.txt")]))
    assert result.top.rule == "OP-5.3"
    assert result.facts.config.block_size == 16  # from cache_config_info


def test_more_than_two_metrics_files_is_a_user_error():
    path = str(COLLECT / "metrics_v0_33_0.txt")
    with pytest.raises(UserError, match="--metrics"):
        run_triage(TriageRequest(metrics_files=[path, path, path]))


def test_human_text_shows_severity_evidence_change_and_prediction():
    result = run_triage(TriageRequest(logs=str(COLLECT / "log_v0_11_startup_failure.log"), model="Qwen3-8B", gpu="L4"))
    text = render_text(result)
    assert "1. [CRITICAL] OP-1.1" in text
    assert "change --max-model-len: 262144 → 23152" in text
    assert "predicted: server starts" in text
    assert "Proposed command:" in text


def test_human_text_says_which_alternative_needs_more_gpus_than_the_host_has(tmp_path):
    """With one GPU, the wider split comes after the fix that fits, and its cost says it needs more hardware
    (the JSON always said so; the text showed the alternative without its cost)."""
    log = tmp_path / "kv.log"
    log.write_text(
        "ValueError: No available memory for the cache blocks. "
        "Try increasing `gpu_memory_utilization` when initializing the engine.\n"
    )
    request = TriageRequest(logs=str(log), server_args="vllm serve Qwen/Qwen2.5-32B-Instruct", gpu="A100-80GB", gpus=1)
    lines = render_text(run_triage(request)).splitlines()
    first_change = next(i for i, line in enumerate(lines) if line.startswith("   change "))
    split = next(i for i, line in enumerate(lines) if line.startswith("   or --tensor-parallel-size 2"))
    assert "--gpu-memory-utilization" in lines[first_change] and first_change < split
    assert lines[split + 1] == "     cost: 2 GPUs per replica: more than the 1 this host has (more hardware) [safe]"


def test_fired_rules_carry_their_page_and_the_document_renders_as_a_report():
    from reports.render import render_html

    result = run_triage(TriageRequest(logs=str(COLLECT / "log_v0_11_startup_failure.log"), model="Qwen3-8B", gpu="L4"))
    assert set(result.rule_pages) == {finding.rule for finding in result.findings}
    assert result.rule_pages["OP-1.1"].startswith("OP-1.1")
    html = render_html([json.loads(result.model_dump_json())])
    assert "OP-1.1" in html and "23152" in html


def test_text_leads_with_the_key_figures_of_the_window():
    corpus = CORPUS
    result = run_triage(
        TriageRequest(
            metrics_files=[str(corpus / "v0_33_healthy_before.prom"), str(corpus / "v0_33_healthy_after.prom")],
            metrics_interval_s=10,
        )
    )
    second_line = render_text(result).splitlines()[1]
    assert second_line.startswith("now: running ") and "preemptions 0.00/s" in second_line
    assert second_line.endswith("over 10 s")


def test_a_rebuilt_command_is_flagged_only_when_something_is_proposed():
    healthy = run_triage(TriageRequest(metrics_files=[str(CORPUS / "v0_33_healthy_before.prom")]))
    assert healthy.proposed_command is None and not any("rebuilt" in note for note in healthy.notes)
    failing = run_triage(TriageRequest(logs=str(COLLECT / "log_v0_11_startup_failure.log")))
    assert failing.proposed_command.startswith("vllm serve Qwen/Qwen3-8B --max-model-len 23152")
    assert any("rebuilt" in note for note in failing.notes)


def test_saved_files_and_a_live_source_together_are_refused():
    with pytest.raises(UserError, match="not both"):
        run_triage(TriageRequest(metrics_files=[str(COLLECT / "metrics_v0_33_0.txt")], endpoint="http://127.0.0.1:9"))


def test_a_v0_log_is_read_for_its_release_and_its_quantized_weights(tmp_path):
    """vLLM 0.4-0.6's engine line (`Initializing an LLM engine (v0.5.0) with config: … quantization=awq`) and
    its `Loading model weights took … GB`: the KV shortage is answered for that server, so nothing it already
    runs (AWQ weights, V0's 256 sequences) is proposed, nor a caveat of releases it is not (0.8-0.9.0)."""
    log = tmp_path / "v0.log"
    log.write_text(
        "INFO 07-01 10:00:00 llm_engine.py:161] Initializing an LLM engine (v0.5.0) with config: "
        "model='Qwen/Qwen2-72B-Instruct-AWQ', tokenizer='Qwen/Qwen2-72B-Instruct-AWQ', dtype=torch.float16, "
        "max_seq_len=32768, tensor_parallel_size=1, quantization=awq, enforce_eager=False, kv_cache_dtype=auto, "
        "device_config=cuda, seed=0)\n"
        "INFO 07-01 10:01:00 model_runner.py:160] Loading model weights took 38.9017 GB\n"
        "ValueError: No available memory for the cache blocks. "
        "Try increasing `gpu_memory_utilization` when initializing the engine.\n"
    )
    top = run_triage(TriageRequest(logs=str(log), gpu="L40S", gpus=1)).findings[0]
    flags = [change.flag for change in [*top.changes, *top.alternatives]]
    assert top.rule == "OP-1.2" and flags == ["--gpu-memory-utilization", "--tensor-parallel-size"]
    assert "more hardware" in top.alternatives[-1].cost
    assert not any("0.8–0.9.0" in action for action in top.actions)
    assert any(e.name == "weights per GPU" and e.value == 38.9017 for e in top.evidence)


def test_v0s_pool_in_tokens_anchors_the_prediction_of_its_own_estimate(tmp_path):
    """V0 states the KV pool in tokens only (`… can be stored in KV cache (22688)`); the memory model's own
    activation guess put it at 17,248 and predicted vLLM's own figure would not start. The pool is those tokens."""
    log = tmp_path / "v0.log"
    log.write_text(
        "INFO 07-01 10:00:00 llm_engine.py:184] Initializing an LLM engine (v0.5.5) with config: "
        "model='meta-llama/Meta-Llama-3.1-70B-Instruct', dtype=torch.bfloat16, max_seq_len=131072, "
        "tensor_parallel_size=2, quantization=None, enforce_eager=False, kv_cache_dtype=auto, device_config=cuda)\n"
        "ERROR 07-01 10:01:30 worker.py:660] ValueError: The model's max seq len (131072) is larger than the maximum "
        "number of tokens that can be stored in KV cache (22688). Try increasing `gpu_memory_utilization` or "
        "decreasing `max_model_len` when initializing the engine.\n"
    )
    top = run_triage(TriageRequest(logs=str(log), gpu="A100-80GB", gpus=2)).findings[0]
    [change] = top.changes
    figures = change.predicted_effect.figures
    assert (change.flag, change.proposed) == ("--max-model-len", "22688")
    assert figures["starts_after"] == 1.0 and figures["kv_cache_tokens_before"] == 22688


def test_a_model_left_as_a_shell_variable_is_named_as_one():
    # opea-project/GenAIComps#336: the README's launch pasted with its ${your_hf_llm_model} unexpanded
    result = run_triage(TriageRequest(server_args="vllm serve ${your_hf_llm_model} --port 80"))
    assert any("is a shell variable the pasted launch left unexpanded" in note for note in result.notes)
