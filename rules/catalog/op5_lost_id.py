"""OP-5.56 and OP-5.57: a bare `KeyError` whose key is an id vLLM tracks at run time: a request's, or another
engine's in a prefill/decode (P/D) deployment.

Why rules of their own: the engine keeps tables keyed by id, and a lookup that finds nothing ends in Python's bare
`KeyError` with the id as its only words, which reads like a problem with the input. It is not.

OP-5.56, a request id (the OpenAI server names its requests `chatcmpl-…`, `cmpl-…`, `embd-…` and so on: the prefixes
are vllm/entrypoints' in the 0.32 wheel): the V1 scheduler looks requests up without a guard in places, so a request
that finished or was aborted between building a step and updating after it (vllm#42157, vLLM 0.19 to 0.20), or one
missing from a worker's output because the worker failed part-way (vllm PR #53799), kills the engine core and every
request in flight. Tenstorrent's fork reported the same KeyError after an aborted streaming request
(tenstorrent/vllm#145).

OP-5.57, an engine id (`<uuid4>` or `<uuid4>_dp<N>`: KVTransferConfig.engine_id is a uuid4 and every data-parallel
rank gets `_dp<rank>` after it, vllm/config/kv_transfer.py and v1/engine/utils.py in the 0.32 wheel): a KV connector
looked up what it learned of the other engine in their handshake, and has nothing. NIXL's handshake goes over a side
channel whose host defaults to `localhost` (VLLM_NIXL_SIDE_CHANNEL_HOST in vllm/envs.py), which another pod cannot
reach; llm-d's P/D guide hit this KeyError when that variable was dropped and fixed it by setting it again
(llm-d/llm-d PR #650); vllm#40993 shows it on a DP+EP decode instance of vLLM 0.18.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# The request-id prefixes of vLLM's OpenAI-compatible server (chat, completions, embeddings, pooling, classification,
# scoring, reranking, transcription, translation, tokenize, responses, batch)
REQUEST_KEY = re.compile(
    r"KeyError: ['\"](?P<id>(?:chatcmpl|cmpl|embd|pool|classify|score|rerank|trsc|trsl|tokenize|resp|batch)[-_]"
    r"[\w-]{6,})['\"]"
)
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
ENGINE_KEY = re.compile(rf"KeyError: ['\"](?P<id>{_UUID}(?P<dp>_dp\d+)?)['\"]", re.IGNORECASE)


def _request_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE_REQUEST.finding(
        Severity.CRITICAL,
        f"vLLM's engine looked up request {match['id']} after it had left its tables: a request finished, aborted "
        "or missing from a worker's output between two steps, and the unguarded lookup ended the engine",
        summary="A bare KeyError on a request id is vLLM's own bookkeeping, not the request's content: the "
        "scheduler looks requests up without a guard in places, so a request aborted or finished between building a "
        "step and updating after it (a client that disconnected or timed out, vllm#42157), or one a failed worker "
        "left out of its output (vllm PR #53799), stops the engine core and every request in flight with it.",
        evidence=[c.log_evidence(event, name="the request id looked up", value=match["id"])],
        actions=[
            "Read the lines before it first: a worker's own error or an out-of-memory just before is the cause, and "
            "the KeyError only its consequence; fix that one.",
            "Otherwise it is a race in vLLM, not the launch: restart the server (a liveness probe on /health does it "
            "unattended), and upgrade to a release whose scheduler skips requests it no longer holds; vllm#42157 "
            "lists the unguarded lookups (scheduler.py, 0.19 to 0.20).",
            "It comes with aborted requests: count the server's `Aborted request` lines and the client's timeouts "
            "around the crash; a client that cancels streams under load makes it likelier.",
        ],
        confidence=0.6,
    )


def _engine_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    title = (
        f"a KV connector has no record of remote engine {match['id']} (data-parallel rank {match['dp'][3:]}): its "
        "handshake with the other (prefill or decode) instance never completed"
        if match["dp"]
        else f"KeyError on {match['id']}, the form of a P/D peer engine's id: a KV connector's handshake with the "
        "other (prefill or decode) instance likely never completed"
    )
    return RULE_ENGINE.finding(
        Severity.CRITICAL,
        title,
        summary="The id has the form of a KV-transfer engine id (a uuid4, with `_dp<rank>` for each data-parallel "
        "rank): in a P/D deployment the decode instance looks up what it learned of the prefill engine in their "
        "handshake, and found nothing. NIXL's handshake goes over a side channel whose host defaults to localhost, "
        "which another pod cannot reach. "
        + ("" if match["dp"] else "A request id set by a client (X-Request-Id) can have the same form."),
        evidence=[c.log_evidence(event, name="the engine id looked up", value=match["id"])],
        actions=[
            "Set VLLM_NIXL_SIDE_CHANNEL_HOST to the address the other instance reaches this one at (the pod IP, from "
            "the downward API's status.podIP) and keep VLLM_NIXL_SIDE_CHANNEL_PORT open between them: llm-d's P/D "
            "guide hit this KeyError when the variable was dropped (llm-d/llm-d PR #650).",
            "Run prefill and decode from the same vLLM release with the same --kv-transfer-config (and the same "
            "data-parallel layout): each side's engine id changes when it restarts, so restart a pair together.",
        ],
        confidence=0.55 if match["dp"] else 0.4,
    )


RULE_REQUEST = Rule(
    code="OP-5.56",
    title="a request vLLM's engine had already dropped looked up (KeyError on a request id)",
    category=Category.RELIABILITY,
    check=c.on_phrase(REQUEST_KEY, _request_finding),
    needs=("events",),
    page=RulePage(
        checks="A bare `KeyError` whose key is a request id of vLLM's OpenAI server (`chatcmpl-…`, `cmpl-…`, "
        "`embd-…` and the other endpoints' prefixes).",
        why="The unguarded lookup stops the engine core and every request in flight; it reads like a bad request "
        "but is vLLM's bookkeeping.",
        example="`KeyError: 'chatcmpl-8a6f39cb01952274'` in _update_after_schedule (vllm#42157); "
        "`KeyError: 'chatcmpl-95f443c92d6709b3-a7e574bd'` in update_from_output (vllm PR #53799).",
        fix="The error before it when there is one; else restart and upgrade.",
        limits="Only ids with the server's prefixes; a request id from LLM.generate (a counter) is not read.",
        references=[
            "https://github.com/vllm-project/vllm/issues/42157",
            "https://github.com/vllm-project/vllm/pull/53799",
        ],
    ),
)

RULE_ENGINE = Rule(
    code="OP-5.57",
    title="a KV connector's lookup of the remote engine found nothing (KeyError on an engine id)",
    category=Category.RELIABILITY,
    check=c.on_phrase(ENGINE_KEY, _engine_finding),
    needs=("events",),
    page=RulePage(
        checks="A bare `KeyError` whose key is a uuid4, with or without a `_dp<N>` suffix.",
        why="In P/D disaggregation the decode side needs the prefill engine's handshake; without it the engine stops.",
        example="`KeyError: 'f35e9d1d-f7fb-46cd-925b-d7478aa2b04a_dp1'` on a DeepSeek-V3.2 decode instance with "
        "NixlConnector (vllm#40993); llm-d's P/D guide without VLLM_NIXL_SIDE_CHANNEL_HOST (llm-d/llm-d PR #650).",
        fix="VLLM_NIXL_SIDE_CHANNEL_HOST set to the pod's address; both sides from one release and config.",
        limits="A bare uuid4 can also be a client's own request id; the `_dp<N>` form is the engine's alone.",
        references=[
            "https://github.com/vllm-project/vllm/issues/40993",
            "https://github.com/llm-d/llm-d/pull/650",
        ],
    ),
)

RULES: list[Rule] = [RULE_REQUEST, RULE_ENGINE]
