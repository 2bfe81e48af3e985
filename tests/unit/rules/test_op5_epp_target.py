"""OP-5.65: the inference gateway's endpoint picker found no vLLM pod for a request, with its reason."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.events import LogEventKind
from tests.unit.rules.factories import top_finding

# kubernetes-sigs/gateway-api-inference-extension#1697, verbatim: two schedulingProfiles with the single-profile
# handler; the reporter's reproduction shows every request failing so
PROFILES = (
    "inference gateway: InferencePoolResourceExhausted - failed to find target pod: single profile handler is intended "
    "to be used with a single profile, failed to process multiple profiles"
)


def test_several_profiles_with_the_single_profile_handler_is_the_config():
    top = top_finding(PROFILES)
    assert top.rule == "OP-5.65" and top.title.endswith("several scheduling profiles with the single-profile handler")
    assert top.actions[0].startswith("Keep one schedulingProfile") and not top.changes


def test_another_reason_is_named_as_the_picker_said_it():
    top = top_finding(
        "inference gateway: InferencePoolResourceExhausted - failed to find target pod: no pods available"
    )
    assert top.rule == "OP-5.65" and top.title.endswith(": no pods available")
    assert "kubectl get pods" in top.actions[0]


def test_without_the_pickers_error_name_no_event():
    assert not parse_lines(["failed to find target pod"]).of_kind(LogEventKind.EPP_NO_TARGET_POD)
