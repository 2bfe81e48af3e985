"""One redaction function for every place a credential could leave servops.

Why one function: a secret reaches our output by many roads (a password in an `--endpoint`
or `--prometheus` URL, an `--api-key` inside `--server-args`, an `HF_TOKEN=…` in a pasted
command, an `Authorization` header echoed in an error) and leaves by several (the JSON
results, the HTML report, stdout, error lines). Each output path calls `redact` (text) or
`redact_document` (a JSON-ready tree) last, so a new field or a new road cannot bypass it.
Inputs are cleaned first where it matters: `split_url_credentials` takes `user:pass@` out
of a URL before it is stored anywhere and turns it into Basic auth for the requests.

What is replaced by `***` (the value only; the flag, key or user name stays readable):
  - the password of `scheme://user:password@host` (a lone `token@host` as well);
  - the value after `--api-key`, `--hf-token` and any other flag whose name ends in key,
    token, secret or password (`--api-key=…` too);
  - `Authorization: Bearer …` / `Basic …` header values, `X-Api-Key: …`-style headers;
  - environment assignments such as `HF_TOKEN=…`, `VLLM_API_KEY=…`, `AWS_SECRET_ACCESS_KEY=…`;
  - JSON/dict entries whose key names a secret (`"api_key": "…"`, `'hf_token': '…'`);
  - bare Hugging Face (`hf_…`) and OpenAI-style (`sk-…`) tokens.
Redaction is idempotent: `redact(redact(x)) == redact(x)`.
"""

from __future__ import annotations

import base64
import re
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

MASK = "***"

__all__ = ["MASK", "is_secret_name", "redact", "redact_document", "split_url_credentials"]

_SECRET_WORD = r"(?:api[_-]?key|token|secret|password|passwd|credentials?|auth)"
_SECRET_NAME = re.compile(rf"(?i)(?:^|[_-]){_SECRET_WORD}$|^authorization$|^x[_-]api[_-]key$")

_PATTERNS: tuple[tuple[re.Pattern[str], Any], ...] = (
    # scheme://user:password@host -> scheme://user:***@host ; scheme://token@host -> scheme://***@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/\s:@'\"]+):([^/\s@'\"]+)@"), rf"\1\2:{MASK}@"),
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/\s:@'\"*]{16,})@"), rf"\1{MASK}@"),
    # Authorization: Bearer X / Basic X (headers, error lines, curl commands)
    (re.compile(r"(?i)\b(authorization\s*[:=]\s*['\"]?\s*(?:bearer|basic|token)\s+)[^\s'\",}]+"), rf"\1{MASK}"),
    (re.compile(r"(?i)\b((?:x-)?api-key\s*:\s*)[^\s'\",}]+"), rf"\1{MASK}"),
    # vLLM's --api-key takes several keys (nargs='+'): `--api-key k1 k2 --port 1` masks both, up to
    # the next flag or the end of the command (a value ending in ':' is prose, left to the next rule)
    (
        re.compile(
            r"(?i)(--api[-_]?key(?:=|\s+))(?!--|\(|KEY\b|TOKEN\b)([^\s'\",}:]+(?:\s+(?!--)[^\s'\",}:]+)+)"
            r"(?=\s+--|\s*$|['\"])"
        ),
        lambda m: m.group(1) + re.sub(r"\S+", MASK, m.group(2)),
    ),
    # --api-key VALUE / --api-key=VALUE / --api-key 'quoted value' (any flag named like a secret)
    (re.compile(rf"(?i)(--[a-z0-9-]*{_SECRET_WORD}(?:=|\s+))(['\"])[^'\"]*\2"), rf"\1\2{MASK}\2"),
    (re.compile(rf"(?i)(--[a-z0-9-]*{_SECRET_WORD}(?:=|\s+))(?!--|\(|KEY\b|TOKEN\b)([^\s'\",}}]+)"), rf"\1{MASK}"),
    # ["--api-key", "value"] (an argv list in JSON or a Python repr)
    (re.compile(rf"(?i)(['\"]--[a-z0-9-]*{_SECRET_WORD}['\"]\s*,\s*['\"])([^'\"]+)(['\"])"), rf"\1{MASK}\3"),
    # HF_TOKEN=… VLLM_API_KEY=… (environment assignments, shell or .env style)
    (re.compile(r"\b([A-Z0-9_]*(?:API_KEY|TOKEN|SECRET|PASSWORD|PASSWD)(?:_[A-Z0-9]+)*=)([^\s'\"]+)"), rf"\1{MASK}"),
    # "api_key": "value" / 'hf_token': 'value' (JSON and Python dict reprs, e.g. vLLM's non-default args)
    (re.compile(rf"(?i)(['\"][a-z0-9_-]*{_SECRET_WORD}['\"]\s*:\s*\[?\s*['\"])([^'\"]+)(['\"])"), rf"\1{MASK}\3"),
    # bare tokens with a recognisable prefix
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}\b"), MASK),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{20,}\b"), MASK),
)


def redact(text: str) -> str:
    """`text` with every credential value replaced by `***` (see the module docstring)."""
    if not text:
        return text
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def redact_document(node: Any) -> Any:
    """A JSON-ready tree (dicts, lists, strings) with secrets redacted, as a new tree.

    Values under a key that names a secret are masked whole; every other string goes
    through `redact`.
    """
    if isinstance(node, dict):
        return {
            key: (MASK if is_secret_name(str(key)) and value not in (None, "", [], {}) else redact_document(value))
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [redact_document(item) for item in node]
    if isinstance(node, str):
        return redact(node)
    return node


def is_secret_name(name: str) -> bool:
    """True for field, flag or header names that hold a credential (api_key, HF_TOKEN, Authorization)."""
    return bool(_SECRET_NAME.search(name.strip().lstrip("-")))


def split_url_credentials(url: str | None) -> tuple[str | None, str | None]:
    """(`url` without `user:pass@`, the `Authorization: Basic …` value it carried, or None).

    The URL that is stored, printed and compared never holds the password; the caller sends
    the Basic value only when the user gave no explicit Authorization header of their own.
    """
    if not url or "@" not in url:
        return url, None
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.username is None and parts.password is None:
        return url, None
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    clean = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    if "://" not in url:
        clean = clean.split("://", 1)[1]
    user = unquote(parts.username or "")
    password = unquote(parts.password or "")
    basic = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return clean, f"Basic {basic}"
