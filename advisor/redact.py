"""One redaction function for every place a credential could leave servops.

Why one function: a secret reaches our output by many roads (a password in an `--endpoint`
or `--prometheus` URL, an `--api-key` inside `--server-args`, an `HF_TOKEN=…` in a pasted
command, an `Authorization` header echoed in an error) and leaves by several (the JSON
results, the HTML report, stdout, error lines). Each output path calls `redact` (text) or
`redact_document` (a JSON-ready tree) last, so a new field or a new road cannot bypass it.
Inputs are cleaned first where it matters: `split_url_credentials` takes `user:pass@` out
of a URL before it is stored anywhere and turns it into Basic auth for the requests.

What is replaced by `***` (the value only; the flag, key or user name stays readable):
  - the password of `scheme://user:password@host`, up to the last `@` of the authority (a password
    may hold `@`), and a lone `token@host`;
  - credential-like query parameters of a URL (`?token=…&api_key=…`, `access_token`, `key`,
    `secret`, `password`, `sig`);
  - the value after `--api-key`, `--hf-token`, `--aws-secret-key` and any other flag whose name ends
    in a secret word (key, token, secret, password, credential, auth), `--flag=…` too; a value that
    merely starts with `key-` or `token-` is a value (only the upper-case placeholders `KEY`, `TOKEN`
    of prose are left);
  - `Authorization:` / `Proxy-Authorization:` header values of any scheme (Bearer, Basic, ApiKey …,
    or none), `X-Api-Key: …`-style headers;
  - environment assignments such as `HF_TOKEN=…`, `hf_token=…`, `VLLM_API_KEY=…`,
    `AWS_SECRET_ACCESS_KEY=…`;
  - JSON/dict entries whose key names a secret (`"api_key": "…"`, `'hf_token': '…'`);
  - bare tokens of well-known shapes: Hugging Face (`hf_…`), OpenAI-style (`sk-…`), GitHub
    (`ghp_…`, `gho_…`, `ghs_…`, `ghu_…`, `ghr_…`), AWS access key ids (`AKIA…`).
Redaction is idempotent: `redact(redact(x)) == redact(x)`. It runs over values before they are
serialized (`redact_document`, advisor/cli/output.py), never over serialized JSON, where a pattern
could eat the escaping of a quote.
"""

from __future__ import annotations

import base64
import re
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

MASK = "***"

__all__ = ["MASK", "is_secret_name", "redact", "redact_document", "split_url_credentials"]

_SECRET_WORD = r"(?:api[_-]?key|key|token|secret|password|passwd|credentials?|auth)"
_SECRET_NAME = re.compile(
    r"(?i)(?:^|[_-])(?:api[_-]?key|token|secret|password|passwd|credentials?|auth|(?:secret|access|private)[_-]?key)$"
    r"|^(?:proxy[_-])?authorization$|^x[_-]api[_-]key$"
)
# Upper-case placeholders of prose and help (`--api-key TOKEN`) are not values; `key-abc` and `token-1` are.
_PLACEHOLDER = r"(?!--|\(|(?-i:KEY|TOKEN)\b(?!-))"
_QUERY_SECRET = r"(?:api[_-]?key|access[_-]?token|token|key|secret|password|passwd|auth|sig|signature)"

_PATTERNS: tuple[tuple[re.Pattern[str], Any], ...] = (
    # scheme://user:password@host -> scheme://user:***@host (the password up to the authority's last @);
    # scheme://token@host -> scheme://***@host
    (
        re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/\s:@'\"]+):([^/\s'\"]*)@(?=[^/\s@'\"]*(?:[/\s'\"?#]|$))"),
        rf"\1\2:{MASK}@",
    ),
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/\s:@'\"*]{16,})@"), rf"\1{MASK}@"),
    # ?token=… &api_key=… in a URL's query
    (re.compile(rf"(?i)([?&]{_QUERY_SECRET}=)[^&#\s'\"]+"), rf"\1{MASK}"),
    # Authorization: <scheme> X, Authorization: X, Proxy-Authorization (headers, error lines, curl commands)
    (
        re.compile(r"(?i)\b((?:proxy-)?authorization\s*[:=]\s*['\"]?\s*)(?:([a-z][\w-]*)\s+)?([^\s'\",}]+)"),
        lambda m: m.group(1) + (f"{m.group(2)} " if m.group(2) else "") + MASK,
    ),
    (re.compile(r"(?i)\b((?:x-)?api-key\s*:\s*)[^\s'\",}]+"), rf"\1{MASK}"),
    # vLLM's --api-key takes several keys (nargs='+'): `--api-key k1 k2 --port 1` masks both, up to
    # the next flag or the end of the command (a value ending in ':' is prose, left to the next rule)
    (
        re.compile(
            rf"(?i)(--api[-_]?key(?:=|\s+)){_PLACEHOLDER}([^\s'\",}}:]+(?:\s+(?!--)[^\s'\",}}:]+)+)"
            r"(?=\s+--|\s*$|['\"])"
        ),
        lambda m: m.group(1) + re.sub(r"\S+", MASK, m.group(2)),
    ),
    # --api-key VALUE / --api-key=VALUE / --api-key 'quoted value' (any flag named like a secret)
    (re.compile(rf"(?i)(--[a-z0-9-]*(?<![a-z0-9]){_SECRET_WORD}(?:=|\s+))(['\"])[^'\"]*\2"), rf"\1\2{MASK}\2"),
    (re.compile(rf"(?i)(--[a-z0-9-]*(?<![a-z0-9]){_SECRET_WORD}(?:=|\s+)){_PLACEHOLDER}([^\s'\",}}]+)"), rf"\1{MASK}"),
    # ["--api-key", "value"] (an argv list in JSON or a Python repr)
    (
        re.compile(rf"(?i)(['\"]--[a-z0-9-]*(?<![a-z0-9]){_SECRET_WORD}['\"]\s*,\s*['\"])([^'\"]+)(['\"])"),
        rf"\1{MASK}\3",
    ),
    # HF_TOKEN=… VLLM_API_KEY=… (environment assignments, shell or .env style); hf_token=… in lower case
    (re.compile(r"\b([A-Z0-9_]*(?:API_KEY|TOKEN|SECRET|PASSWORD|PASSWD)(?:_[A-Z0-9]+)*=)([^\s'\"]+)"), rf"\1{MASK}"),
    (
        re.compile(
            r"(?i)\b([a-z0-9_]*(?<![a-z0-9])(?:api_key|token|secret|password|passwd|secret_key|access_key)=)(?!\d+\b)([^\s'\",&]+)"
        ),
        rf"\1{MASK}",
    ),
    # "api_key": "value" / 'hf_token': 'value' (JSON and Python dict reprs, e.g. vLLM's non-default args)
    (
        re.compile(rf"(?i)(['\"][a-z0-9_-]*(?<![a-z0-9]){_SECRET_WORD}['\"]\s*:\s*\[?\s*['\"])([^'\"]+)(['\"])"),
        rf"\1{MASK}\3",
    ),
    # bare tokens with a recognisable prefix
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}\b"), MASK),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{20,}\b"), MASK),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"), MASK),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), MASK),
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

    Text under a key that names a secret is masked whole (numbers stay: they are figures); every
    other string goes through `redact`.
    """
    if isinstance(node, dict):
        return {
            key: _masked(value) if is_secret_name(str(key)) else redact_document(value) for key, value in node.items()
        }
    if isinstance(node, list):
        return _redacted_list(node)
    if isinstance(node, str):
        return redact(node)
    return node


def _redacted_list(items: list) -> list:
    """A list whose words may be an argv (`["--api-key", "k1", "k2", "--port", "8000"]`, as `demo` keeps its
    engine flags): the words after a flag that names a secret are masked up to the next flag (vLLM's
    `--api-key` takes several keys); every other item is redacted as itself. Why here: each word alone
    looks like any other value, so only its place after the flag tells it is a key."""
    out: list = []
    after_secret_flag = False
    for item in items:
        if isinstance(item, str) and item.startswith("-") and len(item) > 1:
            after_secret_flag = "=" not in item and is_secret_name(item)
            out.append(redact(item))
        elif after_secret_flag and isinstance(item, str):
            out.append(MASK if item else item)
        else:
            out.append(redact_document(item))
    return out


def _masked(value: Any) -> Any:
    """A value under a secret's name: its text masked whole. A number stays: a secret is text, and names such
    as `kv_bytes_per_token` or `seconds_per_output_token` hold figures."""
    if isinstance(value, str):
        return MASK if value else value
    if isinstance(value, list):
        return [_masked(item) for item in value]
    if isinstance(value, dict):
        return redact_document(value)
    return value


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
