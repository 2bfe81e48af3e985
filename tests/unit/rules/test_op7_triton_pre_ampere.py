"""OP-7.81: Triton's assertion on an mma -> mma layout conversion before Ampere (vllm#3944's and vllm#5533's lines,
verbatim: Triton 2.1's and 2.2's wordings; vllm#8024's workaround, --enable-chunked-prefill=False)."""

from __future__ import annotations

import pytest

from advisor.collect.facts import server_config
from advisor.collect.logs import parse_lines
from advisor.collect.server_args import parse_command
from rules.catalog import op7_triton_pre_ampere
from rules.evaluate import evaluate
from rules.facts import Facts

TRITON_21 = (
    "python3: /project/lib/Analysis/Allocation.cpp:40: std::pair<llvm::SmallVector<unsigned int>, "
    "llvm::SmallVector<unsigned int> > mlir::triton::getCvtOrder(mlir::Attribute, mlir::Attribute): Assertion "
    '`!(srcMmaLayout && dstMmaLayout) && "Unexpected mma -> mma layout conversion"\' failed.'
)
TRITON_22 = (
    "/project/lib/Analysis/Allocation.cpp:43: std::pair<llvm::SmallVector<unsigned int>, llvm::SmallVector<unsigned "
    "int> > mlir::triton::getCvtOrder(mlir::Attribute, mlir::Attribute): Assertion `!(srcMmaLayout && dstMmaLayout && "
    '!srcMmaLayout.isAmpere()) && "mma -> mma layout conversion is only supported on Ampere"\' failed.'
)


def _facts(line: str, server_args: str | None = None) -> Facts:
    events = parse_lines([line]).events
    config = server_config(parse_command(server_args), events, None) if server_args else None
    return Facts(events=events, config=config)


@pytest.mark.parametrize("line", [TRITON_21, TRITON_22])
def test_either_wording_alone_turns_chunked_prefill_off_first(line: str):
    top = evaluate(_facts(line)).top
    assert top.rule == "OP-7.81" and "older than Ampere" in top.title
    assert [(c.flag, c.proposed) for c in [*top.changes, *top.alternatives]] == [
        ("--enable-chunked-prefill", "false"),
        ("--enable-prefix-caching", "false"),
    ]


def test_a_launch_with_prefix_caching_on_turns_that_off_first():
    # vllm#3944's launch: the OpenAI server with --enable-prefix-caching on two GPUs
    launch = "python -m vllm.entrypoints.openai.api_server --model m --tensor-parallel-size 2 --enable-prefix-caching"
    [finding] = op7_triton_pre_ampere.RULE_PRE_AMPERE.evaluate(_facts(TRITON_21, launch))
    assert [(c.flag, c.current, c.proposed) for c in finding.changes] == [("--enable-prefix-caching", "true", "false")]
