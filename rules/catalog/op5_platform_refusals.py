"""OP-5.54: a hardware plugin refuses a feature it does not implement: logprobs in a request, or a kind of model.

Why a rule of its own: vLLM's hardware plugins implement sampling on their own devices, and some leave log
probabilities out. vllm-gaudi (Intel Gaudi) answers such a request with HTTP 400 and `Gaudi doesn't support logprobs.
Please remove 'logprobs'/'top_logprobs' from your request to receive a response.` since vllm-gaudi PR #1098 (March
2026, its 0.16.0 branch); before it, the same request took the server down. The request is what to change: clients
ask for logprobs without their user knowing (evaluation harnesses scoring choices, LangChain's `logprobs=True`,
OpenAI SDK defaults in some tools). vllm-ascend on Atlas 300I (310P) words its refusal of pooling models so:
`NotImplementedError: 310P does not support runner_type='pooling'` (vllm-project/vllm-ascend#6471: an embedding
model that started, then failed its first request); the model, not a setting, needs other hardware.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

NO_LOGPROBS = re.compile(r"(?P<platform>\w+) doesn't support logprobs")
NO_RUNNER = re.compile(r"(?P<platform>\w+) does not support runner_type='(?P<runner>\w+)'")
# PyTorch without a random generator for the device: a request's `seed` makes vLLM build one there
# (sampling_metadata.py's torch.Generator(device=…)); HabanaAI/vllm-fork PR #246 moved Gaudi to Habana's own
NO_GENERATOR = re.compile(r"Device type (?P<platform>\w+) is not supported for torch\.Generator\(\) api")


def _check_platform_logprobs(facts: Facts) -> list[Finding]:
    runner = c.first_match(facts, NO_RUNNER)
    if runner is not None:
        return [_runner_refused(*runner)]
    generator = c.first_match(facts, NO_GENERATOR)
    if generator is not None:
        return [_seed_refused(*generator)]
    found = c.first_match(facts, NO_LOGPROBS)
    if found is None:
        return []
    event, match = found
    platform = match["platform"]
    return [
        RULE.finding(
            Severity.HIGH,
            f"the server runs on {platform}, whose vLLM plugin does not compute logprobs, and the request asked for "
            "them",
            summary="Hardware plugins implement sampling on their own devices; this one leaves log probabilities "
            "out and refuses requests with logprobs or top_logprobs (older plugin releases crashed on them).",
            evidence=[c.log_evidence(event, name="the platform that refused logprobs", value=platform)],
            actions=[
                "Remove logprobs and top_logprobs from the client's requests: an evaluation harness scoring choices "
                "by log probability, or a client library asked for them (LangChain's `logprobs=True`).",
                "A workload that needs log probabilities (likelihood-based evaluation, reranking by score) goes to a "
                "vLLM on GPUs, which computes them.",
            ],
            confidence=0.85,
        )
    ]


def _runner_refused(event, match) -> Finding:
    platform, runner = match["platform"], match["runner"]
    return RULE.finding(
        Severity.CRITICAL,
        f"the server runs on {platform}, whose vLLM plugin does not run {runner} models (runner_type='{runner}'): "
        "the model needs other hardware",
        summary="Hardware plugins implement the model runners their devices support; this one refuses the runner the "
        "model needs, at start-up or at its first request.",
        evidence=[c.log_evidence(event, name="the runner the platform refused", value=f"{platform}: {runner}")],
        actions=[
            f"Serve the {runner} model where the plugin (or vLLM on GPUs) supports it: for vllm-ascend, an Atlas "
            "A2 or A3 device rather than the 300I (310P).",
            "Keep the 310P for the generative models its plugin serves.",
        ],
        confidence=0.85,
    )


def _seed_refused(event, match) -> Finding:
    platform = match["platform"]
    return RULE.finding(
        Severity.HIGH,
        f"seeded sampling asked PyTorch for a random generator on {platform}, which it has none for: a request's "
        "seed (or a warm-up that sets one) fails on this plugin release",
        summary="vLLM samples a request that sets `seed` with its own torch.Generator on the device; PyTorch has no "
        f"such generator for {platform}, so seeded sampling fails, at a seeded request or, where the warm-up samples "
        "with a seed, at start-up (HabanaAI/vllm-fork#754).",
        evidence=[c.log_evidence(event, name="the device without a generator", value=platform)],
        actions=[
            "Drop `seed` from the client's requests until the plugin is upgraded (clients and evaluation harnesses "
            "set it for reproducibility); at start-up, the fork's own warm-up is seeded and only the upgrade helps.",
            "Upgrade the Gaudi fork or plugin: HabanaAI/vllm-fork PR #246 makes seeded sampling use Habana's own "
            "generator (habana_main, September 2024).",
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-5.54",
    title="a hardware plugin refuses a feature: logprobs, a seed, or a kind of model",
    category=Category.RELIABILITY,
    check=_check_platform_logprobs,
    needs=("events",),
    page=RulePage(
        checks="`<Platform> doesn't support logprobs` in an error body or line (vllm-gaudi's 400); `<Platform> does "
        "not support runner_type='<runner>'` (vllm-ascend on 310P); PyTorch's `Device type HPU is not supported for "
        "torch.Generator() api.` for a seeded request (HabanaAI/vllm-fork PR #246).",
        why="The plugin does not compute log probabilities; the request must not ask for them.",
        example="`Gaudi doesn't support logprobs. Please remove 'logprobs'/'top_logprobs' from your request` "
        "(vllm-project/vllm-gaudi PR #1098).",
        fix="No logprobs or top_logprobs in the requests, or a GPU server for the workload that needs them.",
        limits="Reads the plugin's words only; a plugin that crashes instead says nothing this rule knows.",
        references=["https://github.com/vllm-project/vllm-gaudi/pull/1098"],
    ),
)

RULES: list[Rule] = [RULE]
