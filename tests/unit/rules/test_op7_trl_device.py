"""OP-7.84: TRL 0.14-0.15's GRPO trainer refusing the GPU it was to run vLLM on (huggingface/trl#2826's line and
#3085's, verbatim)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_trl_server
from rules.evaluate import evaluate
from rules.facts import Facts

_REFUSAL = (
    "ValueError: The requested device for vllm ({device}) is not available. You are likely using vLLM without "
    "restricting the number of GPUs for training. Set the `--num_processes` argument to a value lower than the number "
    "of GPUs available on your machine—typically, reducing it by one is sufficient. In your case: `--num_processes "
    "{processes}`{end}"
)


def _facts(line: str) -> Facts:
    return Facts(events=parse_lines([line]).events)


def test_one_gpu_puts_vllm_on_the_training_gpu_as_the_maintainers_answered():
    top = evaluate(_facts(_REFUSAL.format(device="cuda:1", processes=0, end="."))).top
    assert top.rule == "OP-7.84" and top.title.endswith("with one GPU, vLLM must share it")
    assert top.actions[0].startswith('With one GPU, put vLLM on the training GPU: vllm_device="cuda:0"')


def test_more_gpus_take_one_training_process_fewer_and_count_within_the_visible_ones():
    [finding] = op7_trl_server.RULE_TRL_DEVICE.evaluate(_facts(_REFUSAL.format(device="cuda:4", processes=3, end="")))
    assert "put vLLM on cuda:4, a GPU its process cannot see" in finding.title
    assert "`accelerate launch --num_processes 3`" in finding.actions[0]
    assert "CUDA_VISIBLE_DEVICES=6,7" in finding.actions[1] and "trl vllm-serve" in finding.actions[2]
