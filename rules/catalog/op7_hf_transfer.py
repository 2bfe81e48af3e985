"""OP-7.161: HF_HUB_ENABLE_HF_TRANSFER=1 is set where vLLM downloads a model, and hf_transfer is not installed there.

Why a rule of its own: with that variable set, huggingface_hub's download (`http_get` in file_download.py, the 0.x
releases that had the hf_transfer path) imports the `hf_transfer` package and raises `ValueError: Fast download using
'hf_transfer' is enabled (HF_HUB_ENABLE_HF_TRANSFER=1) but 'hf_transfer' package is not available in your
environment. Try `pip install hf_transfer`.` instead of falling back to its own client. The error comes while vLLM
fetches the model's files at start, so it reads like a model or network fault; it is neither. The variable is often
preset by the image or the user's profile, not by whoever started vLLM (vllm-project/vllm-omni PR #1264, which proposed
shipping hf_transfer for that reason); unsetting it, or installing the package, are the two ways out.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

TRANSFER_ENV = "HF_HUB_ENABLE_HF_TRANSFER"
# huggingface_hub's words, up to where a paste that wraps them (vllm-omni PR #1264) still has them
TRANSFER_MISSING = re.compile(r"Fast download using 'hf_transfer' is enabled")


def _transfer_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE_HF_TRANSFER.finding(
        Severity.CRITICAL,
        f"{TRANSFER_ENV}=1 makes huggingface_hub download with hf_transfer, which is not installed where vLLM "
        "fetches the model",
        summary=f"With {TRANSFER_ENV}=1, huggingface_hub imports the hf_transfer package for every download and "
        "stops with this error when it is missing, instead of using its own HTTP client: nothing is wrong with the "
        "model, the token or the network. Images and shell profiles often set the variable without the package.",
        evidence=[c.log_evidence(event, name="huggingface_hub's refusal", value=f"{TRANSFER_ENV}=1")],
        changes=[
            ConfigChange(
                flag=TRANSFER_ENV,
                current="1",
                proposed="0",
                reason="huggingface_hub then downloads with its own client; only the download's speed changes",
                kind="env",
            )
        ],
        actions=[
            "Or keep the fast path: install hf_transfer in the environment vLLM runs in (`pip install hf_transfer`, "
            "in the image for a container).",
            "Find where the variable comes from (`env | grep HF_HUB` in the container; the image's ENV, the pod "
            "spec, a shell profile) so the fix outlives a restart.",
        ],
        confidence=0.9,
    )


RULE_HF_TRANSFER = Rule(
    code="OP-7.161",
    title="HF_HUB_ENABLE_HF_TRANSFER=1 without hf_transfer installed",
    category=Category.STARTUP,
    check=c.on_phrase(TRANSFER_MISSING, _transfer_finding),
    needs=("events",),
    page=RulePage(
        checks="huggingface_hub's `Fast download using 'hf_transfer' is enabled (HF_HUB_ENABLE_HF_TRANSFER=1) but "
        "'hf_transfer' package is not available in your environment.`",
        why="The model's download stops at start, in words that read like a model or network fault.",
        example="`ValueError: Fast download using 'hf_transfer' is enabled (HF_HUB_ENABLE_HF_TRANSFER=1)`, the "
        "variable preset in the image (vllm-project/vllm-omni PR #1264).",
        fix=f"{TRANSFER_ENV}=0 (or unset), or `pip install hf_transfer` where vLLM runs.",
        limits="huggingface_hub releases that dropped the hf_transfer path ignore the variable and never say this.",
        references=["https://github.com/vllm-project/vllm-omni/pull/1264"],
    ),
)

RULES: list[Rule] = [RULE_HF_TRANSFER]
