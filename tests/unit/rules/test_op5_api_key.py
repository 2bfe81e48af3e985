"""OP-5.36: a request vLLM refused for its API key (401 Unauthorized), in the server's and the client's words."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from advisor.redact import redact
from rules.catalog.op5_api_key import RULE_API_KEY
from rules.events import LogEventKind as K
from rules.facts import Facts

ACCESS = 'INFO:     10.0.0.5:51234 - "POST /v1/chat/completions HTTP/1.1" 401 Unauthorized'


def _finding(*lines: str):
    [finding] = RULE_API_KEY.evaluate(Facts(events=parse_lines(list(lines)).events))
    return finding


@pytest.mark.parametrize(
    "line",
    [
        ACCESS,
        '{"error":"Unauthorized"}',  # what curl prints: vLLM's middleware answers exactly this body
        "openai.AuthenticationError: Error code: 401 - {'error': 'Unauthorized'}",
    ],
)
def test_each_way_a_401_for_the_api_key_is_said(line):
    assert K.UNAUTHORIZED in [e.kind for e in parse_lines([line]).events]


def test_the_refused_paths_are_named_and_the_unguarded_ones_explain_why_probes_pass():
    finding = _finding(
        ACCESS, ACCESS.replace("51234", "51235"), 'INFO:     10.0.0.5:1 - "GET /metrics HTTP/1.1" 200 OK'
    )
    assert finding.title == (
        "2 request(s) refused with 401 Unauthorized (/v1/chat/completions): the server requires an API key the "
        "request did not carry"
    )
    assert "/health and /metrics answer without a key" in finding.summary
    assert "OPENAI_API_KEY" in finding.actions[0] and "VLLM_API_KEY" in finding.actions[1]


def test_the_advice_survives_the_output_boundarys_redaction():
    """Every text leaves through advisor/redact.py, which masks what follows `Bearer`, `--api-key` or `api_key=`:
    the advice is written so that none of its words is taken for a secret."""
    finding = _finding("openai.AuthenticationError: Error code: 401 - {'error': 'Unauthorized'}")
    for text in (finding.title, finding.summary, *finding.actions):
        assert redact(text) == text


def test_a_hubs_401_is_not_this_servers():
    hub = "401 Client Error: Unauthorized for url: https://huggingface.co/api/models/meta-llama/Llama-3.1-8B"
    assert K.UNAUTHORIZED not in [e.kind for e in parse_lines([hub]).events]
