"""The tensor-parallel size a memory shortage needs is the memory model's, not the next doubling."""

from __future__ import annotations

from pathlib import Path

from advisor.catalog.gpus import resolve_gpu
from advisor.catalog.models import resolve_model
from advisor.memory.budget import LaunchConfig
from advisor.memory.kv_change import Deployment, figures
from advisor.triage.collect import run_triage
from advisor.triage.result import TriageRequest
from advisor.triage.tp_choice import TP_FLAG
from advisor.triage.valuation import value_findings
from rules.model import ConfigChange, Finding, Severity

WEIGHT_OOM = str(Path(__file__).parents[3] / "fixtures" / "vllm" / "v0_14_cuda_oom_weight_load.log")


def _tp_change(result) -> ConfigChange:
    (change,) = [c for c in result.top.changes if c.flag == TP_FLAG]
    return change


def test_70b_in_bf16_gets_the_smallest_tp_that_starts_not_the_doubling():
    """Llama-3.1-70B does not load on one H100 (OP-1.4). Two GPUs still leave no KV room at its
    default 131,072 tokens; four do. The proposal is 4, and its prediction says it starts."""
    result = run_triage(TriageRequest(logs=WEIGHT_OOM, gpu="H100-SXM-80GB", gpus=8))
    change = _tp_change(result)
    assert result.top.rule == "OP-1.4"
    assert change.proposed == "4" and "smallest tensor-parallel size" in change.reason
    assert change.predicted_effect.figures["starts_after"] == 1.0
    assert change.cost.startswith("4 GPUs")

    deployment = Deployment(resolve_model("Llama-3.1-70B"), resolve_gpu("H100-SXM-80GB"), LaunchConfig())
    starts = {tp: figures(deployment, LaunchConfig(tensor_parallel_size=tp)).fits for tp in (1, 2, 4)}
    assert starts == {1: False, 2: False, 4: True}  # so 4 is the smallest, reproducible from the figures


def test_with_only_two_gpus_the_proposal_stays_and_says_it_will_not_start():
    change = _tp_change(run_triage(TriageRequest(logs=WEIGHT_OOM, gpu="H100-SXM-80GB", gpus=2)))
    assert change.proposed == "2"
    assert "no tensor-parallel size up to 2 GPUs" in change.reason
    assert change.predicted_effect.figures["starts_after"] == 0.0


def test_a_tp_reduction_is_left_as_the_rule_made_it():
    deployment = Deployment(
        resolve_model("Llama-3.1-8B"), resolve_gpu("L4"), LaunchConfig(tensor_parallel_size=4, max_model_len=8192)
    )
    swap = ConfigChange(flag=TP_FLAG, current="4", proposed="1", reason="PCIe")
    finding = Finding(rule="AP-X", severity=Severity.MEDIUM, category="parallelism", title="t", changes=[swap])
    [swap] = value_findings([finding], None, deployment, 4, None).findings[0].changes
    assert (swap.proposed, swap.reason) == ("1", "PCIe")
