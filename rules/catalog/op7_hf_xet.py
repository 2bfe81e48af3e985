"""OP-7.175: Hugging Face's Xet downloader failed while vLLM fetched the model's files.

Why a rule of its own: repositories stored on Hugging Face's Xet backend are downloaded by the hf-xet package, which
huggingface_hub uses whenever it is installed (recent huggingface_hub releases install it), and its failures surface
as `RuntimeError: Data processing error: CAS service error: …` (`single flight error`, `ReqwestMiddleware Error:
Request failed after 5 retries`), far from anything that says "download". They come while vLLM loads the weights at
start, so they read like a model or worker fault. The fix projects that hit it adopted is to download over plain
HTTP instead: HF_HUB_DISABLE_XET=1 (meta-pytorch/torchforge PR #109, merged; vllm PR #18701 quotes the same error
from a worker downloading Qwen3's weights and points at huggingface_hub#3089: the Xet client fails in some
environments, behind some proxies and sandboxes).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

XET_ENV = "HF_HUB_DISABLE_XET"
# hf-xet's words for a failed transfer from its content-addressed store (CAS)
XET_FAILED = re.compile(r"Data processing error: CAS service error\b")


def _xet_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE_HF_XET.finding(
        Severity.CRITICAL,
        "Hugging Face's Xet downloader (hf-xet) failed to fetch the model's files: download them over plain HTTP",
        summary="huggingface_hub downloads a repository stored on Hugging Face's Xet backend with the hf-xet package "
        "whenever it is installed; its `CAS service error` means that transfer failed (a proxy, a sandbox, a "
        "network that drops its connections). Nothing is wrong with the model or vLLM.",
        evidence=[c.log_evidence(event, name="hf-xet's error", value=match.group(0))],
        changes=[
            ConfigChange(
                flag=XET_ENV,
                current=None,
                proposed="1",
                reason="huggingface_hub then downloads over plain HTTP instead of through hf-xet",
                kind="env",
            )
        ],
        actions=[
            "Or download the model once outside the server (`hf download <org>/<name> --local-dir <dir>`, with the "
            f"same {XET_ENV}=1 if it fails the same way) and serve the local directory.",
            "Behind a proxy, check that it lets the Xet backend's hosts through (or keep the variable set for good).",
        ],
        confidence=0.85,
    )


RULE_HF_XET = Rule(
    code="OP-7.175",
    title="Hugging Face's Xet downloader failed to fetch the model",
    category=Category.STARTUP,
    check=c.on_phrase(XET_FAILED, _xet_finding),
    needs=("events",),
    page=RulePage(
        checks="hf-xet's `RuntimeError: Data processing error: CAS service error: …` (single flight error, "
        "ReqwestMiddleware Error: Request failed after 5 retries).",
        why="The model's files never arrive, in words that read like a worker fault.",
        example="`RuntimeError: Data processing error: CAS service error : ReqwestMiddleware Error: Request failed "
        "after 5 retries` (meta-pytorch/torchforge PR #109, fixed with HF_HUB_DISABLE_XET=1).",
        fix=f"{XET_ENV}=1, or a download outside the server and a local path.",
        limits="Which network fault broke the transfer is in hf-xet's lines after this one.",
        references=[
            "https://github.com/meta-pytorch/torchforge/pull/109",
            "https://github.com/vllm-project/vllm/pull/18701",
        ],
    ),
)

RULES: list[Rule] = [RULE_HF_XET]
