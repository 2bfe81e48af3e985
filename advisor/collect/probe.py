"""Probe an endpoint's /health, /version and /v1/models: is it alive, and which vLLM?

A 200 from /health alone does not prove progress (hung engines answer it), so these are
facts for the rules to weigh, not a verdict. Failures here are recorded, never raised:
by the time triage probes, /metrics has already told the user whether the URL works.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request

from rules.facts import EndpointFacts


def base_url(endpoint: str) -> str:
    """`host:port`, `…/v1` or `…/metrics` → `http://host:port`."""
    base = endpoint.strip().rstrip("/")
    if "://" not in base:
        base = f"http://{base}"
    for suffix in ("/metrics", "/v1"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return base


def probe_endpoint(endpoint: str, timeout_s: float, headers: dict[str, str] | None = None) -> EndpointFacts:
    base = base_url(endpoint)
    facts = EndpointFacts()
    status, _ = _get(f"{base}/health", timeout_s, headers)
    facts.health_status = status
    facts.health_reachable = status is not None
    status, body = _get(f"{base}/v1/models", timeout_s, headers)
    facts.models_ok = status == 200 and '"data"' in (body or "")
    status, body = _get(f"{base}/version", timeout_s, headers)
    if status == 200 and body:
        try:
            facts.version = str(json.loads(body).get("version") or "") or None
        except (ValueError, AttributeError):
            facts.version = None
    return facts


def _get(url: str, timeout_s: float, headers: dict[str, str] | None) -> tuple[int | None, str | None]:
    try:
        request = urllib.request.Request(url, headers=headers or {})
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310 (user's URL)
            return response.status, response.read(65536).decode("utf-8", errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, None
    except (urllib.error.URLError, TimeoutError, OSError, ValueError, http.client.HTTPException):
        return None, None
