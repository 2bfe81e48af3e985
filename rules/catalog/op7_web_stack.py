"""OP-7.206: the web packages under vLLM's API server at releases that do not work together.

Why a rule of its own: vLLM's OpenAI server is a FastAPI app on Starlette, with prometheus-fastapi-instrumentator
timing every request, and vLLM pins none of them tightly. When pip resolves one of them past what another was written
for, the server starts and then fails every request (or fails to build its app) with an error about routers and
types that names neither package's release: Python's words point into the web stack, and the request, the model and
vLLM's flags are not the cause. Each reading below is a pair a thread confirmed:

- `'_IncludedRouter' object has no attribute 'path'`: FastAPI 0.137 keeps an included router as an `_IncludedRouter`
  without `.path`, and prometheus-fastapi-instrumentator up to 8.0.0 reads `route.path` on every request
  (RBLN-SW/vllm-rbln PR #692 and vllm-project/tpu-inference PR #2901 pinned `fastapi<0.137`; tenstorrent/tt-metal#47023
  met the same).
- `Router.__init__() got an unexpected keyword argument 'on_startup'`: Starlette 1.x dropped `on_startup`, which an
  old FastAPI still passes (huggingface/trl PR #6876: FastAPI 0.110.3 left beside Starlette 1.x; `fastapi>=0.133`).
- `'pydantic_core._pydantic_core.PydanticUndefinedType' object is not subscriptable`: FastAPI 0.113.0 with the
  request models of September 2024's vLLM (vllm#8212: 0.112.2 worked; vllm PR #8435 raised vLLM's floors).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


class Pairing(NamedTuple):
    """One confirmed pair of web-package releases that fail together: Python's words, and what to install."""

    words: str
    packages: str
    why: str
    install: str
    source: str
    confidence: float


PAIRINGS: tuple[Pairing, ...] = (
    Pairing(
        "'_IncludedRouter' object has no attribute 'path'",
        "FastAPI 0.137 or newer with prometheus-fastapi-instrumentator 8.0.0 or older",
        "FastAPI 0.137 keeps an included router as an _IncludedRouter without .path, and the instrumentator that times "
        "vLLM's requests reads route.path on every one, so every request (health checks too) fails with HTTP 500",
        'pip install "fastapi<0.137"',
        "RBLN-SW/vllm-rbln PR #692, vllm-project/tpu-inference PR #2901",
        0.9,
    ),
    Pairing(
        "Router.__init__() got an unexpected keyword argument 'on_startup'",
        "an old FastAPI with Starlette 1.x",
        "Starlette 1.x dropped Router's on_startup, which FastAPI releases before it still pass, so the app is not "
        "built and the server stops at startup",
        'pip install -U "fastapi>=0.133"',
        "huggingface/trl PR #6876: FastAPI 0.110.3 beside Starlette 1.x",
        0.85,
    ),
    Pairing(
        "'pydantic_core._pydantic_core.PydanticUndefinedType' object is not subscriptable",
        "FastAPI 0.113.0 with the request models of a September 2024 vLLM",
        "FastAPI 0.113.0 read the request models of vLLM's OpenAI server of the time (built on openai's and pydantic's "
        "types) in a way they did not support",
        'pip install "fastapi<0.113"',
        "vllm#8212: FastAPI 0.112.2 worked; vllm PR #8435 then raised vLLM's own fastapi and pydantic floors",
        0.7,
    ),
)
WEB_STACK_ERROR = re.compile("|".join(f"(?P<p{i}>{re.escape(p.words)})" for i, p in enumerate(PAIRINGS)))


def _pairing_finding(_facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    pairing = PAIRINGS[int(found.lastgroup.removeprefix("p"))]  # the one alternative's group that matched
    return RULE.finding(
        Severity.CRITICAL,
        f"the API server's web packages do not work together: {pairing.packages}",
        summary=f"{pairing.why} ({pairing.source}). vLLM pins its web stack loosely, so pip can resolve one package "
        "past what another was written for; the request, the model and vLLM's flags are not the cause.",
        evidence=[c.log_evidence(event, name="web stack", value=pairing.packages)],
        actions=[
            f"In the server's environment: `{pairing.install}`, then restart; in a container, a layer on the image.",
            "`pip show fastapi starlette prometheus-fastapi-instrumentator pydantic` says which releases are "
            "installed; `pip check` lists the requirements they break.",
        ],
        confidence=pairing.confidence,
    )


RULE = Rule(
    code="OP-7.206",
    title="the API server's web packages at releases that do not work together",
    category=Category.STARTUP,
    check=c.on_phrase(WEB_STACK_ERROR, _pairing_finding, kinds=c.RELAYED_TOO),
    needs=("events",),
    page=RulePage(
        checks="Python's `'_IncludedRouter' object has no attribute 'path'`, `Router.__init__() got an unexpected "
        "keyword argument 'on_startup'`, and `'pydantic_core._pydantic_core.PydanticUndefinedType' object is not "
        "subscriptable`.",
        why="vLLM's OpenAI server is a FastAPI app on Starlette timed by prometheus-fastapi-instrumentator, none "
        "pinned tightly; each of these words is a pair of their releases that a thread confirmed does not work.",
        example="`AttributeError: '_IncludedRouter' object has no attribute 'path'` on every request "
        "(RBLN-SW/vllm-rbln PR #692: FastAPI 0.137 with prometheus-fastapi-instrumentator <= 8.0.0; pinned "
        "fastapi<0.137).",
        fix="`fastapi<0.137`; `fastapi>=0.133` beside Starlette 1.x; `fastapi<0.113` with a September 2024 vLLM.",
        limits="Three pairings, each from its thread; another package's words about routers are not read here.",
        references=[
            "https://github.com/RBLN-SW/vllm-rbln/pull/692",
            "https://github.com/huggingface/trl/pull/6876",
            "https://github.com/vllm-project/vllm/issues/8212",
        ],
    ),
)

RULES: list[Rule] = [RULE]
