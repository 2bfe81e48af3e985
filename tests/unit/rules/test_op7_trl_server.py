"""OP-7.79: TRL's trainer waiting for its vLLM server (huggingface/open-r1#568's line, verbatim, repeated as the
reporter saw it; the ConnectionError in TRL's own words from trl/extras/vllm_client.py)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_trl_server
from rules.evaluate import evaluate
from rules.facts import Facts

RETRY = "INFO - trl.extras.vllm_client - Server is not up yet. Retrying in 2.0 seconds..."
GAVE_UP = (
    "ConnectionError: The vLLM server can't be reached at http://0.0.0.0:8000 after 240.0 seconds. Make sure the "
    "server is running by running `trl vllm-serve`."
)


def _facts(*lines: str) -> Facts:
    return Facts(events=parse_lines(list(lines)).events)


def test_the_retry_line_is_the_top_finding_and_starts_trls_own_server_first():
    top = evaluate(_facts(RETRY, RETRY, RETRY, RETRY)).top
    assert top.rule == "OP-7.79" and "start `trl vllm-serve` first" in top.title
    assert "(4 retries in this text)" in top.summary
    assert "CUDA_VISIBLE_DEVICES=0 trl vllm-serve" in top.actions[0] and "not `vllm serve`" in top.actions[1]
    assert 'vllm_mode="colocate"' in top.actions[3]


def test_the_give_up_names_the_url_it_polled():
    [finding] = op7_trl_server.RULE_TRL_SERVER.evaluate(_facts(RETRY, GAVE_UP))
    assert "no vLLM server at http://0.0.0.0:8000" in finding.title


def test_another_programs_retry_is_not_trls():
    assert op7_trl_server.RULE_TRL_SERVER.evaluate(_facts("Server is not up yet. Retrying in 1 second")) == []
