"""OP-7.17: the Hugging Face Hub refused the model's files; its words say whether the licence, the token or the id."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.catalog import op7_hub
from rules.evaluate import evaluate
from rules.facts import Facts
from rules.model import Severity


def _facts(*lines: str) -> Facts:
    return Facts(events=parse_lines(list(lines)).events)


def test_requests_403_on_a_models_config_is_a_licence_the_account_has_not_accepted():
    # rh-ai-quickstart/ai-virtual-agent#200: a vLLM pod crash-looping
    facts = _facts(
        "(APIServer pid=1) requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: "
        "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/resolve/main/config.json"
    )
    top = evaluate(facts).findings[0]
    assert top.rule == "OP-7.17" and top.severity == Severity.CRITICAL
    assert top.title == (
        "Hugging Face refused meta-llama/Llama-3.1-8B-Instruct's files: a gated model the token's account has no "
        "access to"
    )
    assert top.actions[0].startswith(
        "Request access to the model on Hugging Face: open https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct"
    )
    assert not top.changes  # a token was sent: another token of the same account would not help


def test_a_gated_repo_error_without_a_token_asks_for_hf_token_first():
    # huggingface_hub's GatedRepoError as transformers re-raises it, three lines of one refusal
    facts = _facts(
        "OSError: You are trying to access a gated repo.",
        "Cannot access gated repo for url https://huggingface.co/google/gemma-2-2b/resolve/main/config.json.",
        "Access to model google/gemma-2-2b is restricted. You must be authenticated to access it.",
    )
    [finding] = op7_hub.RULE_HUB_REFUSED.evaluate(facts)
    assert finding.title.endswith("a gated or private model asked for without a token")
    assert (finding.changes[0].flag, finding.changes[0].kind) == ("HF_TOKEN", "env")
    assert "https://huggingface.co/google/gemma-2-2b" in finding.actions[0]


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (
            "403 Forbidden: Please enable access to public gated repositories in your fine-grained token settings to "
            "view this repository..",
            "a fine-grained token without access to public gated repositories",
        ),
        ("401 Client Error: Invalid credentials in Authorization header", "a token the Hub does not accept"),
        (
            "Repository Not Found for url: https://huggingface.co/api/models/Qwen/Qwen2.5-7b-Instruc/revision/main.",
            "a repository the Hub does not show to this request",
        ),
        # huggingface_hub's exception class and status alone, the first line a person copies
        (
            "huggingface_hub.errors.GatedRepoError: 401 Client Error. (Request ID: Root=1-abc)",
            "a gated model: no token was sent, or its account has no access",
        ),
        (
            "huggingface_hub.errors.GatedRepoError: 403 Client Error. (Request ID: Root=1-abc)",
            "a gated model the token's account has no access to",
        ),
        (
            "huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error. (Request ID: Root=1-6641)",
            "a repository the Hub does not show to this request",
        ),
    ],
)
def test_each_reason_the_hub_gives_has_its_own_fix(line: str, said: str):
    [finding] = op7_hub.RULE_HUB_REFUSED.evaluate(_facts(line))
    assert finding.title.endswith(said)
    if "Repository Not Found for url" in line:
        assert finding.title.startswith("Hugging Face refused Qwen/Qwen2.5-7b-Instruc's files")


def test_a_403_from_another_host_or_the_hubs_docs_is_not_read_as_the_hub_refusing_a_model():
    facts = _facts(
        "requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: https://example.com/v1/models",
        "For more details, see https://huggingface.co/docs/huggingface_hub/authentication",
    )
    assert op7_hub.RULE_HUB_REFUSED.evaluate(facts) == []


def test_a_read_timeout_on_the_hub_raises_huggingface_hubs_timeouts_and_a_servers_stays_the_clients():
    line = (
        "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='huggingface.co', port=443): Read timed out. "
        "(read timeout=10)"
    )
    [finding] = op7_hub.RULE_HUB_NOT_CACHED.evaluate(_facts(line))
    assert finding.title == (
        "the Hub did not answer within the download's read timeout (10 s): a slow or throttled link to it"
    )
    [change] = finding.changes
    assert (change.flag, change.proposed, change.kind) == ("HF_HUB_DOWNLOAD_TIMEOUT", "60", "env")
    assert "HF_HUB_ETAG_TIMEOUT" in finding.actions[0]
    server = line.replace("host='huggingface.co', port=443", "host='localhost', port=8000")
    assert op7_hub.RULE_HUB_NOT_CACHED.evaluate(_facts(server)) == []
    assert evaluate(_facts(server)).findings[0].rule == "OP-5.35"


def test_huggingface_hubs_refusal_of_hf_tokens_value_is_a_token_the_hub_does_not_accept():
    # validatedpatterns/rag-llm-gitops#70, verbatim: the secret held the literal value 'None'
    line = (
        "requests.exceptions.HTTPError: Invalid user token. The token from HF_TOKEN environment variable is invalid. "
        'Note that HF_TOKEN takes precedence over `hf auth login`."'
    )
    top = evaluate(_facts(line)).findings[0]
    assert top.rule == "OP-7.17" and "token the Hub does not accept" in top.title
