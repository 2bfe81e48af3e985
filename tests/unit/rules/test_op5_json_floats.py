"""OP-5.61: a response held NaN or an infinity, which FastAPI's JSON encoder refuses."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_the_json_encoders_refusal_names_logprobs_and_nan_outputs():
    # dphnAI/sonar#183, verbatim: an Aphrodite server's -inf top_logprobs; the reporter clamped them to -1000
    top = top_finding("ValueError: Out of range float values are not JSON compliant")
    assert top.rule == "OP-5.61" and top.title.startswith("a JSON encoder refused NaN or an infinity")
    assert "-9999.0" in top.actions[0] and "--dtype bfloat16" in top.actions[1]
