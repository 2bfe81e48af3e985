"""OP-7.204: an RL trainer sends vLLM's workers a weight in another dtype than the engine's model.

Why a rule of its own: RL frameworks that keep a vLLM engine for rollouts push the policy's updated weights into its
workers through a worker extension of their own, and OpenRLHF's (copied into many others) checks each weight's dtype
first: `assert dtype == self.model_config.dtype, f"mismatch dtype: src {dtype}, dst {self.model_config.dtype}"`.
vLLM relays it as `Worker failed with error 'mismatch dtype: src torch.float32, dst torch.bfloat16'`, which reads
as a worker crash of vLLM's. It is the trainer's: what it sends is not in the dtype the engine was started with. In
OpenRLHF#1349 peft kept LoRA adapter weights in float32 while the engine ran bfloat16, and the reporter's fix (OpenRLHF
PR #1348) casts them to the engine's dtype before the sync.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# The worker extension's words, as OpenRLHF and the frameworks that copied its update_weight print them
DTYPE_MISMATCH = re.compile(r"mismatch dtype: src (?P<src>(?:torch\.)?\w+), dst (?P<dst>(?:torch\.)?\w+)")


def _dtype_mismatch_finding(_facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    src, dst = found["src"], found["dst"]
    upcast = "float32" in src and "float32" not in dst
    why = (
        " A float32 weight beside a half-precision engine is most often one the trainer keeps in full precision: "
        "LoRA adapters, which peft upcasts (OpenRLHF#1349), or a policy trained without its bf16 setting."
        if upcast
        else ""
    )
    actions = [
        f"Cast each weight to the engine's dtype before it is sent (`param.data.to({dst})`; OpenRLHF PR #1348 "
        "does so for LoRA adapters), or upgrade the framework to a release that does.",
        f"Or train the policy in {dst} (the trainer's mixed-precision setting), so that what it sends is already "
        "what the engine holds.",
    ]
    halves = {src.removeprefix("torch."), dst.removeprefix("torch.")}
    if halves == {"float16", "bfloat16"}:  # the two 16-bit floats: the engine can take the trainer's at no cost
        engine_dtype = src.removeprefix("torch.")
        actions.append(f"Or start the rollout engine with `--dtype {engine_dtype}` (`LLM(dtype=...)`): the same size.")
    return RULE.finding(
        Severity.CRITICAL,
        f"the trainer sends vLLM's workers {src} weights, and the engine's model is {dst}: the weight sync refuses "
        "them",
        summary="The RL framework's worker extension checks each weight it pushes into the rollout engine against "
        f"the dtype the engine was started with, and the trainer's side sends {src} while vLLM holds {dst}.{why} "
        "The error is the trainer's sync, not vLLM's workers.",
        evidence=[c.log_evidence(event, name="weight dtype", value=f"{src} → {dst}")],
        actions=actions,
        confidence=0.85,
    )


RULE = Rule(
    code="OP-7.204",
    title="an RL trainer's weight sync sends another dtype than the vLLM engine's",
    category=Category.CONFIGURATION,
    check=c.on_phrase(DTYPE_MISMATCH, _dtype_mismatch_finding, kinds=c.RELAYED_TOO),
    needs=("events",),
    page=RulePage(
        checks="The worker extension's `mismatch dtype: src <dtype>, dst <dtype>` (OpenRLHF's update_weight and its "
        "copies), alone or relayed as `Worker failed with error '…'`.",
        why="RL frameworks push updated weights into vLLM's workers and check each against the engine's model dtype; "
        "a trainer that keeps some weights in another precision (peft's float32 LoRA adapters) fails the check.",
        example="`RuntimeError: Worker failed with error 'mismatch dtype: src torch.float32, dst torch.bfloat16'` "
        "(OpenRLHF#1349: LoRA adapters upcast by peft; fixed by OpenRLHF PR #1348).",
        fix="Cast the weights to the engine's dtype before the sync, or train in that dtype.",
        limits="The words are the framework's, not vLLM's; a framework that words its own check otherwise is not "
        "read here.",
        references=["https://github.com/OpenRLHF/OpenRLHF/issues/1349"],
    ),
)

RULES: list[Rule] = [RULE]
