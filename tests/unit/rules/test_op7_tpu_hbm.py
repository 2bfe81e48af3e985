"""OP-7.76: XLA on a TPU out of HBM, read from the line alone or with the launch command (tpu-recipes#151's line,
verbatim; its reporter started the server at --gpu-memory-utilization 0.83 where 0.93 failed)."""

from __future__ import annotations

import pytest

from advisor.collect.facts import server_config
from advisor.collect.logs import parse_lines
from advisor.collect.server_args import parse_command
from rules.catalog import op7_tpu_hbm
from rules.evaluate import evaluate
from rules.facts import Facts

RECIPE = (
    "RESOURCE_EXHAUSTED: Error loading program 'jit__multi_slice': Attempting to reserve 6.14G at the bottom of "
    "memory. That was not possible."
)
WITH_FIGURES = (
    "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Error loading program: Attempting to reserve 4.50G "
    "at the bottom of memory. That was not possible. There are 3.19G free, 0B reserved, and 3.19G reservable."
)
BUFFER = (
    "RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate "
    "196.00M. That was not possible. There are 134.44M free.; (1x0x0_HBM0)"
)
COMPILER = (
    "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in "
    "memory space hbm. Used 21.95G of 15.48G hbm."
)


def _facts(text: str, server_args: str | None = None) -> Facts:
    events = parse_lines(text.splitlines()).events
    config = server_config(parse_command(server_args), events, None) if server_args else None
    return Facts(events=events, config=config)


def test_the_recipe_line_alone_is_the_top_finding_and_lowers_the_kv_share_first():
    [top, *_] = evaluate(_facts(RECIPE)).findings
    assert top.rule == "OP-7.76" and "KV cache's share" in top.title
    assert "6.14 GiB (jit__multi_slice)" in top.evidence[0].description
    assert top.changes[0].flag == "--gpu-memory-utilization"


def test_with_the_recipes_launch_it_steps_down_from_093_to_083_then_halves_the_batch():
    facts = _facts(RECIPE, "vllm serve openai/gpt-oss-120b --gpu-memory-utilization 0.93 --max-num-seqs 256")
    [finding] = op7_tpu_hbm.RULE_TPU_HBM.evaluate(facts)
    assert [(c.flag, c.current, c.proposed) for c in [*finding.changes, *finding.alternatives]] == [
        ("--gpu-memory-utilization", "0.93", "0.83"),
        ("--max-num-seqs", "256", "128"),
    ]


def test_a_share_already_low_is_not_lowered_further():
    facts = _facts(RECIPE, "vllm serve google/gemma-3-4b-it --gpu-memory-utilization 0.55")
    [finding] = op7_tpu_hbm.RULE_TPU_HBM.evaluate(facts)
    assert [c.flag for c in finding.changes] == []


@pytest.mark.parametrize(
    ("line", "asked", "free"), [(WITH_FIGURES, "4.50 GiB", "3.19 GiB"), (BUFFER, "0.19 GiB", "0.13")]
)
def test_xlas_figures_are_read_in_its_own_units(line: str, asked: str, free: str):
    [finding] = op7_tpu_hbm.RULE_TPU_HBM.evaluate(_facts(line))
    assert asked in finding.evidence[0].description and f"{free}" in finding.evidence[0].description


def test_the_compilers_refusal_proposes_no_share_but_smaller_shapes_or_more_chips():
    facts = _facts(COMPILER, "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4")
    [finding] = op7_tpu_hbm.RULE_TPU_HBM.evaluate(facts)
    assert "larger than the chip's HBM" in finding.title and finding.changes == []
    assert "21.95 GiB of a chip with 15.48 GiB" in finding.evidence[0].description
    assert "--tensor-parallel-size above 4" in finding.actions[1]


def test_scalar_memory_is_op764s_not_this():
    smem = COMPILER.replace(
        "memory space hbm. Used 21.95G of 15.48G hbm.", "memory space smem. Used 1.00M of 1.00M smem."
    )
    assert op7_tpu_hbm.RULE_TPU_HBM.evaluate(_facts(smem)) == []


def test_vmem_is_a_kernels_limit_not_the_hbm_share():
    """vllm-project/tpu-inference PR #508's line, verbatim: a Pallas kernel's blocks larger than the core's VMEM;
    no HBM share is proposed."""
    line = "jaxlib._jax.XlaRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem"
    [finding] = op7_tpu_hbm.RULE_TPU_HBM.evaluate(Facts(events=parse_lines([line]).events))
    assert "vector memory (VMEM)" in finding.title and finding.changes == []
    assert "PR #508" in finding.actions[0]
