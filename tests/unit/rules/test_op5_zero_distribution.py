"""OP-5.64: torch.multinomial refusing a distribution with no probability left: the request excluded every token."""

from __future__ import annotations

from tests.unit.rules.factories import config, top_finding

# vllm#719, verbatim: top_k=0.4 on vLLM 0.1.3; the reporter changed it and the error went
ZERO = "RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)"


def test_a_zero_sum_distribution_is_the_requests_sampling_parameters_not_the_models_arithmetic():
    top = top_finding(ZERO)
    assert top.rule == "OP-5.64" and "cut to nothing after the softmax" in top.title
    assert "never a fraction as top_p is" in top.actions[0] and not top.changes


def test_only_a_release_that_refuses_a_fractional_top_k_points_elsewhere():
    # `top_k must be an integer` from 0.5.5 (the message catalog); 0.5.0's check let 0.4 through
    assert "already refuses a fractional top_k" not in top_finding(ZERO, config=config(vllm_version="0.5.0")).summary
    assert "already refuses a fractional top_k" in top_finding(ZERO, config=config(vllm_version="0.5.5")).summary


def test_inside_an_engines_death_the_sampling_failure_leads():
    top = top_finding("ERROR 08-01 10:00:00 [core.py:1] EngineCore encountered a fatal error.", ZERO)
    assert top.rule == "OP-5.64" and top.severity.value == "critical"
