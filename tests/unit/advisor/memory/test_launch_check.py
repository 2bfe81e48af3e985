"""vLLM's config checks, run on a launch before memory: `advise` never says "starts: yes" for a launch vLLM
refuses, and `triage --server-args` alone reports the refusal in vLLM's words with the fix."""

from __future__ import annotations

from advisor.catalog.models import resolve_model
from advisor.cli.main import main
from advisor.memory.budget import LaunchConfig
from advisor.memory.launch_check import launch_refusals
from advisor.triage.collect import run_triage
from advisor.triage.result import TriageRequest


def test_each_config_check_vllm_makes_gives_its_message():
    qwen = resolve_model("Qwen2.5-72B")  # 64 heads, 32,768 positions
    assert launch_refusals(qwen, LaunchConfig(tensor_parallel_size=8, max_model_len=32768)) == []
    [heads] = launch_refusals(qwen, LaunchConfig(tensor_parallel_size=3))
    assert heads == "Total number of attention heads (64) must be divisible by tensor parallel size (3)."
    [long] = launch_refusals(qwen, LaunchConfig(tensor_parallel_size=8, max_model_len=131072))
    assert long.startswith("User-specified max_model_len (131072) is greater than the derived max_model_len")
    assert launch_refusals(qwen, LaunchConfig(max_model_len=131072), env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}) == []
    [budget] = launch_refusals(qwen, LaunchConfig(max_num_batched_tokens=8192), chunked_prefill=False)
    assert budget.startswith("max_num_batched_tokens (8192) is smaller than max_model_len (32768)")
    assert launch_refusals(qwen, LaunchConfig(max_num_batched_tokens=8192)) == []  # chunked prefill splits it


def test_advise_says_a_refused_launch_does_not_start(capsys):
    argv = ["advise", "--model", "Qwen2.5-72B", "--gpu", "H100", "--gpus", "8", "--tensor-parallel-size", "8"]
    assert main([*argv, "--max-model-len", "131072"]) == 0
    out = capsys.readouterr().out
    assert "starts: yes" not in out.split("Recommended launch")[0]
    assert "starts: NO" in out and "User-specified max_model_len (131072)" in out


def test_triage_of_a_command_alone_reports_what_vllm_would_refuse_with_the_fix():
    request = TriageRequest(
        server_args="vllm serve Qwen/Qwen2.5-72B-Instruct --max-model-len 131072 --tensor-parallel-size 8",
        gpu="H100",
    )
    top = run_triage(request).findings[0]
    assert top.rule == "VC-1" and top.title.startswith("vLLM would refuse: User-specified max_model_len (131072)")
    [change] = top.changes
    assert (change.flag, change.current, change.proposed) == ("--max-model-len", "131072", "32768")
    [evidence] = top.evidence  # the user's command, which has no line to cite
    assert evidence.location == "--server-args"
    heads = run_triage(TriageRequest(server_args="vllm serve HuggingFaceTB/SmolLM2-135M-Instruct -tp 2"))
    assert heads.findings[0].changes[0].proposed == "1"  # 9 heads: only TP 1 (or 9) divides them
