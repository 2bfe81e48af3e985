"""OP-7.215: the installed transformers refuses a layer type the model's config.json names.

Why a rule of its own: transformers checks a config's `layer_types` against the list of layer kinds it implements
(ALLOWED_LAYER_TYPES beside its PretrainedConfig; in the 5.x releases a strict-dataclass validator,
`validate_layer_type`, raises it inside huggingface_hub's `StrictDataclassClassValidationError`). A model whose config
was written by a newer transformers names a kind the installed one does not list, and vLLM's worker dies while it
builds the config, before any weight is read: coreweave/ml-containers PR #206 found GLM-5.2's
`deepseek_sparse_attention` refused by transformers 5.9.0 and 5.10.4 and accepted from 5.11.0, and bumped its image's
transformers. The refusal names the transformers module, not the version, and no vLLM flag changes it: the PR notes
that --hf-overrides applies after the config object is built.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# transformers 5.x's validator (`… must be in (…) but got […]`, for layer_types and mlp_layer_types) and its older
# layer_type_validation, which names the allowed kinds only (`The `layer_types` entries must be in (…)`)
LAYER_TYPES_REFUSED = re.compile(
    r"The `?(?P<field>(?:mlp_)?layer_types)`? entries must be in (?P<allowed>.+?)(?: but got (?P<got>.*))?$"
)
_NAME = re.compile(r"['\"](?P<name>\w+)['\"]")


def _refused_kind(found: re.Match[str]) -> str:
    """The first kind the config names that the allowed ones leave out (the list may start with allowed ones)."""
    allowed = {m["name"] for m in _NAME.finditer(found["allowed"])}
    named = (m["name"] for m in _NAME.finditer(found["got"] or ""))
    return next((name for name in named if name not in allowed), "")


def _layer_types_finding(_facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    refused = _refused_kind(found)
    got = refused or "every layer type the model's config.json names"
    kind = f"the layer type {refused}" if refused else "a layer type"
    return RULE.finding(
        Severity.CRITICAL,
        f"the installed transformers does not know {kind} the model's config names: the model's config is newer "
        "than transformers",
        summary="transformers checks a config's layer_types against the layer kinds it implements while it builds "
        "the config, before vLLM reads any weight; a kind added by a later transformers release is refused, and "
        "vLLM's worker dies at start (coreweave/ml-containers PR #206: GLM-5.2's deepseek_sparse_attention, refused "
        "by transformers 5.9 and 5.10, read from 5.11).",
        evidence=[c.log_evidence(event, name="refused layer type", value=got)],
        actions=[
            f"Upgrade transformers in the server's environment (its image) to a release that lists {got} among its "
            "layer types (the model's card names the transformers it was written with), within the range the "
            "installed vLLM accepts; if that vLLM predates the model, upgrade vLLM with it.",
            "No vLLM flag gets past it: --hf-overrides applies after transformers has built (and refused) the config.",
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-7.215",
    title="a layer type the installed transformers does not know",
    category=Category.STARTUP,
    check=c.on_phrase(LAYER_TYPES_REFUSED, _layer_types_finding, kinds=c.RELAYED_TOO),
    needs=("events",),
    page=RulePage(
        checks="transformers' `The `layer_types` entries must be in (…) but got […]` (or `mlp_layer_types`; older "
        "releases without `but got`), alone or under huggingface_hub's `StrictDataclassClassValidationError: Class "
        "validation error for validator 'validate_layer_type'`.",
        why="The model's config was written by a newer transformers than the one installed; vLLM builds the config "
        "through transformers, so it fails before loading anything.",
        example="`ValueError: The `layer_types` entries must be in ('full_attention', 'sliding_attention', ... "
        "'moe') but got ['deepseek_sparse_attention', ...]` serving GLM-5.2 on an image with transformers 5.9.0 "
        "(coreweave/ml-containers PR #206).",
        fix="Upgrade transformers to a release that knows the layer type (and vLLM with it, where vLLM predates the "
        "model).",
        limits="The line does not say which transformers release added the kind; the model's card does.",
        references=["https://github.com/coreweave/ml-containers/pull/206"],
    ),
)

RULES: list[Rule] = [RULE]
