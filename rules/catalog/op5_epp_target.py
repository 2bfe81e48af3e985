"""OP-5.65: the inference gateway's endpoint picker found no vLLM pod for the request, and said why.

Why a rule of its own: with the Gateway API inference extension (and llm-d on it), requests reach vLLM through an
endpoint picker (EPP) that scores the InferencePool's pods by its scheduling profiles and plugins. When it picks none,
the client gets `InferencePoolResourceExhausted - failed to find target pod: <reason>` from the gateway, and vLLM's
own log shows nothing: the request never reached it. The reason is the EPP's. One is a configuration it accepts and
cannot run: `single profile handler is intended to be used with a single profile, failed to process multiple
profiles`, an EndpointPickerConfig that lists several schedulingProfiles while its profile handler is the single one
(kubernetes-sigs/gateway-api-inference-extension#1697, its reporter's reproduction; the reporter asked that the EPP
refuse such a config at start).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

SINGLE_PROFILE_HANDLER = "single profile handler is intended to be used with a single profile"


def _target_finding(facts: Facts, event: LogEvent, _match: object) -> Finding:
    reason = event.message or "no reason given"
    profiles = SINGLE_PROFILE_HANDLER in reason
    return RULE_EPP_TARGET.finding(
        Severity.HIGH,
        "the inference gateway's endpoint picker found no vLLM pod for the request: "
        + (
            "its config lists several scheduling profiles with the single-profile handler"
            if profiles
            else f"{reason[:120]}"
        ),
        summary="Requests reach vLLM through the gateway's endpoint picker (EPP), which chooses a pod of the "
        "InferencePool by its scheduling profiles and plugins; it chose none, so the request never reached vLLM and "
        "vLLM's log says nothing of it. The reason after `failed to find target pod:` is the picker's."
        + (
            " The single-profile handler runs one scheduling profile, and the EndpointPickerConfig lists several "
            "(gateway-api-inference-extension#1697)."
            if profiles
            else ""
        ),
        evidence=[c.log_evidence(event, name="endpoint picker's reason", value=reason)],
        actions=[
            "Keep one schedulingProfile in the EndpointPickerConfig, or configure the profile handler plugin made to "
            "run several (the one your scheduling design names, such as prefill/decode disaggregation's); the EPP "
            "starts with such a config, so every request fails until it is fixed."
            if profiles
            else "Read the EPP's own log for that request (its pod in the InferencePool's namespace) and check the "
            "pool's pods: `kubectl get pods -l <the pool's selector>` ready, and the filters of the scheduling "
            "profile that discarded them.",
        ],
        confidence=0.8 if profiles else 0.55,
    )


RULE_EPP_TARGET = Rule(
    code="OP-5.65",
    title="the inference gateway's endpoint picker found no vLLM pod for a request",
    category=Category.RELIABILITY,
    check=c.on_kind(LogEventKind.EPP_NO_TARGET_POD, _target_finding),
    needs=("events",),
    page=RulePage(
        checks="`InferencePoolResourceExhausted - failed to find target pod: <reason>` from the Gateway API inference "
        "extension's endpoint picker.",
        why="The request never reached vLLM; the picker's reason says why it chose no pod.",
        example="`… failed to find target pod: single profile handler is intended to be used with a single profile, "
        "failed to process multiple profiles` (gateway-api-inference-extension#1697: two schedulingProfiles with "
        "the single-profile handler).",
        fix="One scheduling profile, or a profile handler that runs several; otherwise the pool's pods and filters.",
        limits="Only the single-profile reason is read specifically; others are named as the picker said them.",
        references=["https://github.com/kubernetes-sigs/gateway-api-inference-extension/issues/1697"],
    ),
)

RULES: list[Rule] = [RULE_EPP_TARGET]
