"""OP-5.61: a response held a float JSON cannot write (NaN or an infinity), so the request ended in a 500.

Why a rule of its own: vLLM's OpenAI-compatible server answers through FastAPI, whose JSON encoder refuses NaN and
infinities (`json.dumps(..., allow_nan=False)`) with Python's `ValueError: Out of range float values are not JSON
compliant`; the model finished, the answer is lost in the encoding. Two values bring one there. A logprob of -inf, a
token the sampler masked out: vLLM's server floors a logprob at -9999.0 (max(logprob, -9999.0) in 0.32's
chat_completion/serving.py and completion/serving.py), but servers before that, and servers built on vLLM's engine
with their own endpoints, send it as is (dphnAI/sonar#183: an Aphrodite server's top_logprobs of -inf; the reporter
clamped them to -1000). And NaN, which no floor catches (`max(nan, -9999.0)` is NaN in Python, as 0.32's own
comment says): a model whose activations overflow in float16 gives NaN logprobs, embeddings or scores.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

NOT_JSON_FLOAT = re.compile(r"Out of range float values are not JSON compliant")


def _json_float_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE_JSON_FLOATS.finding(
        Severity.HIGH,
        "a JSON encoder refused NaN or an infinity: most often the server's answer, which then ends in a 500 (or a "
        "broken stream) after the model had answered",
        summary="The server encodes its answers with a JSON encoder that refuses NaN and infinities. A logprob of "
        "-inf (a token the sampler masked) reaches it from servers that do not floor logprobs (vLLM's own floors "
        "them at -9999.0 in 0.32); NaN reaches it from a model whose activations overflow, most often in float16, "
        "as NaN logprobs, embeddings or scores.",
        evidence=[c.log_evidence(event, name="JSON encoder", value=match.group(0))],
        actions=[
            "If the failing requests ask for logprobs (logprobs, top_logprobs, prompt_logprobs), upgrade the server "
            "to a release that floors -inf logprobs (vLLM's OpenAI server does, at -9999.0), or clamp them where "
            "your own endpoint builds the response (dphnAI/sonar#183 clamped to -1000).",
            "If they are embeddings or scores, or the logprobs are NaN, the model overflowed: serve it with --dtype "
            "bfloat16 (or float32) instead of float16, and check one request's raw output for NaN.",
        ],
        confidence=0.75,
    )


RULE_JSON_FLOATS = Rule(
    code="OP-5.61",
    title="a JSON encoder refused NaN or an infinity in an answer",
    category=Category.RELIABILITY,
    check=c.on_phrase(NOT_JSON_FLOAT, _json_float_finding),
    needs=("events",),
    page=RulePage(
        checks="Python's `ValueError: Out of range float values are not JSON compliant` (FastAPI's JSON encoder).",
        why="The model answered, but the answer held NaN or an infinity and the encoder refused it: every such "
        "request fails with a 500.",
        example="`ValueError: Out of range float values are not JSON compliant` on /v1/completions with logprobs "
        "(dphnAI/sonar#183: -inf top_logprobs from an Aphrodite server, clamped to -1000 to fix).",
        fix="A server that floors -inf logprobs (vLLM's at -9999.0), or a clamp in your own endpoint; NaN outputs: "
        "--dtype bfloat16 or float32.",
        limits="Which value it was is not in the line: the request's fields (logprobs, an embedding) tell. A client "
        "encoding its own request body the same way (`requests`' `json=`) raises the same words before anything "
        "reaches the server; its traceback's frames say which side it was.",
        references=["https://github.com/dphnAI/sonar/issues/183"],
    ),
)

RULES: list[Rule] = [RULE_JSON_FLOATS]
