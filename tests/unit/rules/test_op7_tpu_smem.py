"""OP-7.64: XLA's refusal of a TPU kernel whose scalar memory (SMEM) does not fit, read from the line alone or with
the launch command (vllm#8318's line, verbatim; the thread's reporter ran with --max-model-len 8192)."""

from __future__ import annotations

from advisor.collect.facts import server_config
from advisor.collect.logs import parse_lines
from advisor.collect.server_args import parse_command
from rules.catalog import op7_tpu_smem
from rules.evaluate import evaluate
from rules.facts import Facts

LINE = (
    "RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in "
    "memory space smem. Used 1.00M of 1.00M smem. Exceeded smem capacity by 1.7K."
)


def _facts(text: str, server_args: str | None = None) -> Facts:
    events = parse_lines(text.splitlines()).events
    config = server_config(parse_command(server_args), events, None) if server_args else None
    return Facts(events=events, config=config)


def test_the_line_alone_is_the_top_finding_with_a_shorter_context_and_the_release_that_splits_the_batch():
    [top, *_] = evaluate(_facts(LINE)).findings
    assert top.rule == "OP-7.64" and "scalar memory (SMEM)" in top.title
    assert "used 1.00M of 1.00M, 1.7K over" in top.evidence[0].description
    assert top.changes == [] and top.actions[0].startswith("Lower --max-model-len")
    assert top.actions[1].startswith("Upgrade vLLM to 0.6.4 or later")


def test_with_the_launch_command_it_halves_the_context_then_the_batch_and_drops_an_upgrade_already_there():
    command = "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 8 --max-model-len 32768"
    facts = _facts(LINE, command + " --max-num-seqs 256")
    facts.config.vllm_version = "0.6.4.post1"
    [finding] = op7_tpu_smem.RULE_TPU_SMEM.evaluate(facts)
    assert [(c.flag, c.current, c.proposed) for c in [*finding.changes, *finding.alternatives]] == [
        ("--max-model-len", "32768", "16384"),
        ("--max-num-seqs", "256", "128"),
    ]
    assert not any(action.startswith("Upgrade") for action in finding.actions)


def test_xla_running_out_of_hbm_is_not_this():
    hbm = LINE.replace("memory space smem", "memory space hbm").replace("smem", "hbm")
    assert op7_tpu_smem.RULE_TPU_SMEM.evaluate(_facts(hbm)) == []
