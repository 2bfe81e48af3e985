"""OP-7.12: a platform plugin's model runner left out what vLLM's serving layer reads.

Why a rule of its own: out-of-tree platforms (vllm-metal on Apple silicon, vllm-ascend, …) run vLLM's own
OpenAI server over their own model runner. When the runner does not fill an output the server indexes, the
failure is raised in vLLM's serving code, far from its cause: an IndexError while the response's logprobs
are assembled means the engine returned fewer logprobs than tokens, which vLLM's own runners never do for a
request that asked for them. Source: vllm-metal#331 (`top_logprobs[i]`, IndexError, HTTP 500), fixed by
vllm-metal#332 ("The Metal runner previously sampled tokens but always returned `logprobs=None`").
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# The serving layer's source line indexing the engine's per-token logprobs (`step_top_logprobs =
# top_logprobs[i]` in entrypoints/openai/*/serving.py).
_LOGPROBS_INDEXED = re.compile(r"logprobs\w*\s*\[")
# Models only an out-of-tree platform serves: MLX weights run on vllm-metal alone.
_PLATFORM_OF_MODEL = ((re.compile(r"(?:^|/)mlx-community/|[-_]mlx(?:[-_]|$)", re.IGNORECASE), "metal"),)
_KNOWN_FIX = {"metal": "vllm-metal#332 made its runner return them"}


def _check_missing_logprobs(facts: Facts) -> list[Finding]:
    errors = [
        e
        for e in facts.events_of(LogEventKind.UNPLACED_ERROR)
        if e.exception == "IndexError" and e.code and _LOGPROBS_INDEXED.search(e.code)
    ]
    if not errors:
        return []
    return [_missing_logprobs_finding(errors[0], _platform(facts))]


def _platform(facts: Facts) -> str | None:
    """The out-of-tree platform the text shows: vLLM's own line activating it, else a model only it serves."""
    activated = facts.events_of(LogEventKind.PLATFORM_PLUGIN)
    if activated and activated[0].message:
        return activated[0].message
    model = facts.config.model if facts.config else None
    return next((name for pattern, name in _PLATFORM_OF_MODEL if model and pattern.search(model)), None)


def _missing_logprobs_finding(error: LogEvent, platform: str | None) -> Finding:
    package = f"vllm-{platform}" if platform else None  # the plugins' package names: vllm-metal, vllm-ascend …
    runner = f"{package}'s model runner (the {platform.title()} platform plugin)" if platform else None
    title = "the engine returned no logprobs for a request that asked for them"
    title += f": {runner} does not return them" if runner else " (IndexError in vLLM's logprobs response)"
    fix = _KNOWN_FIX.get(platform or "")
    return RULE_MISSING_LOGPROBS.finding(
        Severity.HIGH,
        title,
        summary="vLLM's OpenAI server builds a response's logprobs by indexing, token by token, the logprobs the "
        "engine returned with the tokens; an IndexError there means the engine returned fewer (or none). vLLM's "
        "own model runners always return them for a request that asks, so the runner is another one"
        + (f": {runner}, which serves this model" if runner else ": a platform plugin's or a modified build's")
        + ". Requests without logprobs are answered; those with `logprobs` or `top_logprobs` fail with HTTP 500.",
        evidence=[c.log_evidence(error, name="IndexError where the response's logprobs are built", value=error.code)],
        actions=[
            f"Upgrade {package}{f' ({fix})' if fix else ''}; keep vLLM at the version the plugin supports."
            if package
            else "Upgrade vLLM and the platform plugin that runs the model, if one does (`pip list | grep vllm` "
            "lists it): its runner must return the logprobs a request asks for.",
            "Meanwhile send requests without `logprobs` / `top_logprobs`: they are answered.",
        ],
        confidence=0.8 if platform else 0.6,
    )


RULE_MISSING_LOGPROBS = Rule(
    code="OP-7.12",
    title="the engine returned no logprobs for a request that asked for them",
    category=Category.RELIABILITY,
    check=_check_missing_logprobs,
    needs=("events",),
    page=RulePage(
        checks="An IndexError whose traceback's last source line indexes logprobs (`top_logprobs[i]`, in vLLM's "
        "OpenAI serving code); the platform from vLLM's `Platform plugin X is activated` line, else from a "
        "model only one platform serves (MLX weights: vllm-metal).",
        why="The serving layer trusts the engine to return one logprob entry per token when they were asked for; "
        "a runner that returns none fails every such request with HTTP 500.",
        example="`step_top_logprobs = top_logprobs[i]` / `IndexError: list index out of range` serving "
        "mlx-community/Mistral-7B-Instruct-v0.3-4bit on vllm-metal (vllm-metal#331).",
        fix="Upgrade the plugin (vllm-metal#332 returns logprobs); send requests without logprobs meanwhile.",
        limits="Without a platform in the text the finding cannot say whose runner; a bug in vLLM's own "
        "serving code would read the same.",
        references=[
            "https://github.com/vllm-project/vllm-metal/issues/331",
            "https://github.com/vllm-project/vllm-metal/pull/332",
        ],
    ),
)

RULES: list[Rule] = [RULE_MISSING_LOGPROBS]
