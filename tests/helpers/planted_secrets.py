"""The secrets the planted-secret tests put in every place a user can put one.

Each is distinct, so a leak names its road; the shapes are the ones redaction must know
(advisor/redact.py, docs/security.md): a plain key, a quoted one, a `key-` prefix, an `hf_` token,
a lower-case environment name, an AWS key, a URL password holding `@`, a query token, a header.
"""

from __future__ import annotations

SECRETS = {
    "api_key": "s3cret-api-91",
    "quoted": "s3cret-quoted-92",
    "key_prefixed": "key-s3cret-93",
    "hf_token": "hf_s3cretTokenAbcdefghijklmnop94",
    "env_lower": "s3cret-env-95",
    "aws": "s3cret-aws-96",
    "url_password": "p@ss-s3cret-97",
    "query": "s3cret-query-98",
    "header": "s3cret-header-99",
    "log_key": "s3cret-log-90",
}
# What servops' own environment may hold; every engine it starts inherits it.
ENVIRONMENT = {
    "HF_TOKEN": SECRETS["hf_token"],
    "VLLM_API_KEY": SECRETS["api_key"],
    "AWS_SECRET_ACCESS_KEY": SECRETS["aws"],
}
