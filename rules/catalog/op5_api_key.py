"""OP-5.36: the server requires an API key, and the request did not carry it (or carried another).

Why a rule of its own: a 401 reads as vLLM refusing, and its body says only `{"error": "Unauthorized"}`. vLLM answers
exactly that when it was started with --api-key (or VLLM_API_KEY; the flag wins) and a request to a guarded path
(/v1, /v2, /inference, /cohere) lacks `Authorization: Bearer <key>` with one of its keys: the middleware in
vllm/entrypoints/serve/middleware/authenticate.py (0.32) compares the bearer token's hash with each key's. The
unguarded paths (/health, /metrics, /ping, /invocations) answer without a key, so a probe or Prometheus passing
while clients get 401 is this, not a server fault.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

GUARDED = ("/v1", "/v2", "/inference", "/cohere")  # vLLM 0.32's GUARDED_PREFIX


def _check_api_key(facts: Facts) -> list[Finding]:
    refused = facts.events_of(LogEventKind.UNAUTHORIZED)
    if not refused:
        return []
    paths = sorted({e.message for e in refused if e.message and e.message.startswith("/")})
    first = refused[0]
    asked = f" ({', '.join(paths[:3])})" if paths else ""
    return [
        RULE_API_KEY.finding(
            Severity.HIGH,
            f"{len(refused)} request(s) refused with 401 Unauthorized{asked}: the server requires an API key the "
            "request did not carry",
            summary='vLLM answers 401 `{"error": "Unauthorized"}` when it was started with an API key (--api-key, or '
            "VLLM_API_KEY) and a request to /v1 (or /v2, /inference) does not carry one of its keys as the bearer "
            "token of its Authorization header. Nothing is wrong with the server: /health and /metrics answer "
            "without a key, so probes and Prometheus keep passing.",
            evidence=[c.log_evidence(e, name="refused for its API key") for e in refused[:3]],
            actions=[
                "Send the key the server was started with: the OpenAI SDK's api_key argument or OPENAI_API_KEY (it "
                "sends the key as the bearer token of the Authorization header); with curl, an Authorization header "
                "of 'Bearer' and the key; a gateway in front must pass the header on.",
                "Check which key the server holds: the key(s) on its command line (--api-key, which takes several "
                "and wins over VLLM_API_KEY), else VLLM_API_KEY in its environment; a client that sends a "
                "placeholder key such as EMPTY works only against a server started without one.",
            ],
            confidence=0.8 if first.component != "OpenAI SDK" or len(refused) > 1 else 0.7,
        )
    ]


RULE_API_KEY = Rule(
    code="OP-5.36",
    title="a request refused for its API key (401 Unauthorized)",
    category=Category.RELIABILITY,
    check=_check_api_key,
    needs=("events",),
    page=RulePage(
        checks='vLLM\'s 401 body `{"error": "Unauthorized"}`, the access log\'s `"POST /v1/… HTTP/1.1" 401`, the '
        "OpenAI SDK's `AuthenticationError: Error code: 401`.",
        why="vLLM started with an API key (--api-key, or VLLM_API_KEY) refuses every request to /v1, /v2 and "
        "/inference without one of its keys as a bearer token; its unguarded paths (/health, /metrics) keep "
        "answering, so nothing else looks wrong.",
        example="`openai.AuthenticationError: Error code: 401 - {'error': 'Unauthorized'}` from a client holding the "
        "placeholder key EMPTY against a server started with a key.",
        fix="Send the server's key as the bearer token (the OpenAI SDK's api_key argument), or start the server "
        "without a key where none is wanted.",
        limits="A 401 from a gateway in front of vLLM with the same body reads the same; its own log says which "
        "answered.",
        references=["https://docs.vllm.ai/en/latest/cli/serve.html"],
    ),
)

RULES: list[Rule] = [RULE_API_KEY]
