"""OP-7.154: gpt-oss's Harmony encoding could not get its vocabulary file.

Why a rule of its own: vLLM serves gpt-oss through openai_harmony, whose load_harmony_encoding fetches the
`o200k_base.tiktoken` vocabulary from openaipublic.blob.core.windows.net the first time it runs, apart from the model's
own files. Where the server has no way out (an air-gapped cluster, a container without egress: vllm#22525), or a
proxy that re-signs TLS (openai/harmony#46), it fails with `HarmonyError: error downloading or loading vocab file`,
though the weights and tokenizer.json are all local. The library reads the file from a local directory named by
TIKTOKEN_ENCODINGS_BASE (openai/harmony#95) or from its download cache (TIKTOKEN_RS_CACHE_DIR, /tmp/tiktoken-rs-cache
by default: openai/harmony#46, where mounting a filled cache made the container run offline).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

VOCAB_FETCH = re.compile(r"error downloading or loading vocab file")
VOCAB_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


def _vocab_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE.finding(
        Severity.CRITICAL,
        "gpt-oss's Harmony encoding could not fetch its vocabulary (o200k_base.tiktoken): the server cannot reach "
        "OpenAI's public blob store, and no local copy is configured",
        summary="openai_harmony downloads the tokenizer vocabulary it encodes gpt-oss's chat format with on first "
        "use, from the internet, whatever the model directory holds; an air-gapped server, a container without egress "
        "or a TLS-intercepting proxy stops it there.",
        evidence=[c.log_evidence(event, name="Harmony's error", value=match.group(0))],
        actions=[
            f"Put the file where the server can read it and point the library at it: download {VOCAB_URL} once "
            "(where the network allows), copy it into the image or a mounted volume, and set "
            "TIKTOKEN_ENCODINGS_BASE=<that directory> in the server's environment (openai/harmony#95).",
            "Or fill Harmony's cache on a connected machine (run `python -c 'from openai_harmony import "
            'load_harmony_encoding as l; l("HarmonyGptOss")\'`) and mount that cache directory at the same path, '
            "with TIKTOKEN_RS_CACHE_DIR naming it (openai/harmony#46).",
            "Behind a proxy that re-signs TLS, allow the blob store's host or use the local file above (a commenter "
            "in openai/harmony#46 found the library does not use the system's trust store).",
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-7.154",
    title="gpt-oss's Harmony vocabulary could not be downloaded",
    category=Category.STARTUP,
    check=c.on_phrase(VOCAB_FETCH, _vocab_finding),
    needs=("events",),
    page=RulePage(
        checks="openai_harmony's `HarmonyError: error downloading or loading vocab file`.",
        why="gpt-oss needs a vocabulary file the model does not ship, downloaded at first use.",
        example="vllm/vllm-openai:gptoss on an air-gapped Kubernetes cluster (vllm#22525).",
        fix="TIKTOKEN_ENCODINGS_BASE naming a directory with o200k_base.tiktoken, or a filled TIKTOKEN_RS_CACHE_DIR.",
        limits="Reads Harmony's words; which of network, proxy or file is at fault is in the lines after it.",
        references=[
            "https://github.com/vllm-project/vllm/issues/22525",
            "https://github.com/openai/harmony/issues/46",
            "https://github.com/openai/harmony/issues/95",
        ],
    ),
)

RULES: list[Rule] = [RULE]
