"""OP-5.64: torch.multinomial refusing a distribution with no probability left: the request excluded every token."""

from __future__ import annotations

from tests.unit.rules.factories import config, top_finding

# vllm#719, verbatim: top_k=0.4 on vLLM 0.1.3; the reporter changed it and the error went
ZERO = "RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)"


def test_a_zero_sum_distribution_is_the_requests_sampling_parameters_not_the_models_arithmetic():
    top = top_finding(ZERO)
    assert top.rule == "OP-5.64" and "left no token any probability" in top.title
    assert "top_k is a count of tokens" in top.actions[0] and not top.changes


def test_a_release_that_checks_top_k_points_at_the_mask():
    top = top_finding(ZERO, config=config(vllm_version="0.6.3"))
    assert "already refuses a top_k below 1" in top.summary
