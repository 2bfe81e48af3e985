"""OP-7.17: the Hugging Face Hub refused the model's files, so vLLM cannot read its config or weights.

Why a rule of its own: vLLM downloads a model named by its Hub id at start (its config first), through
huggingface_hub, and the Hub's refusal ends the start in huggingface_hub's or requests' words, never vLLM's, so
its message catalog does not hold them. The refusal says which of four things is wrong, and each has its own fix:
a gated model whose licence the token's account has not accepted (403, "not in the authorized list"); no token at
all (401, "You must be authenticated"); a fine-grained token without the permission for public gated repositories
(403, "enable access to public gated repositories in your fine-grained token settings"); a token the Hub does not
accept ("Invalid credentials in Authorization header"). A repository not found is a misspelt id, or a private
or gated one asked for without a token (the Hub answers 401 for both). huggingface_hub reads the token from
HF_TOKEN before its token file (huggingface_hub 2.4: utils/_auth.py; the error texts in utils/_http.py).
Source: rh-ai-quickstart/ai-virtual-agent#200 (a vLLM pod crash-looping on a 403 for Llama 3.1's config.json;
the licence was not accepted).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

TOKEN_ENV = "HF_TOKEN"
RATE_LIMITED = 429  # the Hub's status for a request over its rate limits (its "Hub Rate limits" page)
# The hosts a model's download talks to, as requests/urllib3 name them (`host='huggingface.co'`): the Hub, its CDN and
# its Xet storage bridge
HUB_HOSTS = r"(?:huggingface\.co|hf\.co|cdn-lfs[\w.-]*|cas-bridge[\w.-]*)"
# urllib3 giving up on one after its retries, the quotes escaped where the error is printed inside another's repr
HUB_RETRIES_EXCEEDED = rf"host=\\?'{HUB_HOSTS}\\?', port=443\): Max retries exceeded with url: \S+ \(Caused by "
# … because it could not connect (a name that did not resolve, no route, a refusal): read from the error itself, which
# the collector leaves an unplaced error (its wording reads the other three causes)
HUB_NEW_CONNECTION = re.compile(rf"{HUB_RETRIES_EXCEEDED}NewConnectionError")
# The most specific reason the text gives wins: several lines of one refusal each name part of it.
PRIORITY = ("fine_grained", "no_access", "no_token", "bad_token", "not_found", "gated")


class Refusal(NamedTuple):
    what: str
    first: str  # the first thing to do


def _refusals(page: str) -> dict[str, Refusal]:
    access = (
        f"Request access to the model on Hugging Face: open {page} signed in as the account whose token the server "
        "uses and accept its licence; some authors approve each request by hand, so wait until the page says access "
        "is granted."
    )
    return {
        "no_access": Refusal("a gated model the token's account has no access to", access),
        "gated": Refusal("a gated model: no token was sent, or its account has no access", access),
        "no_token": Refusal(
            "a gated or private model asked for without a token",
            f"Give the server a token: {TOKEN_ENV} in its environment (in Kubernetes, from the secret the pod mounts), "
            f"of an account that has accepted the licence at {page}.",
        ),
        "fine_grained": Refusal(
            "a fine-grained token without access to public gated repositories",
            "In the token's settings on Hugging Face, enable access to public gated repositories (the Hub's message "
            "says so), or give the server a token with the read role; the account must also have access to the model.",
        ),
        "bad_token": Refusal(
            "a token the Hub does not accept",
            f"Replace {TOKEN_ENV}: the Hub rejects it (revoked, mistyped, or a quote or newline kept from the secret "
            "it came from); `hf auth whoami` with the same token says whether it is valid and whose it is.",
        ),
        "not_found": Refusal(
            "a repository the Hub does not show to this request",
            f"Check the model id's spelling and case at {page}; if it is private or gated, the server needs "
            f"{TOKEN_ENV} of an account with access (the Hub answers 'not found' to a request without a token).",
        ),
    }


def _check_hub(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.HUB_ACCESS_REFUSED)
    if not events:
        return []
    event = min(events, key=lambda e: PRIORITY.index(e.message) if e.message in PRIORITY else len(PRIORITY))
    repo = next((e.model for e in events if e.model), None)
    return [_hub_finding(event, repo)]


def _hub_finding(event: LogEvent, repo: str | None) -> Finding:
    page = f"https://huggingface.co/{repo}" if repo else "the model's page on huggingface.co"
    refusal = _refusals(page)[event.message if event.message in PRIORITY else "gated"]
    needs_token = event.message in ("no_token", "bad_token", "not_found", "gated")
    return RULE_HUB_REFUSED.finding(
        Severity.CRITICAL,
        f"Hugging Face refused {repo or 'the model'}'s files: {refusal.what}",
        summary="vLLM fetches a model named by its Hub id when it starts (its config first, then the weights) "
        "with the token in HF_TOKEN or the one `hf auth login` stored; the Hub refused, so nothing was loaded and "
        "the start ends there. A restart does not help: the same request is refused again.",
        evidence=[c.log_evidence(event, name="Hub refusal")],
        changes=[
            ConfigChange(
                flag=TOKEN_ENV,
                proposed="<a read token of an account that has access to the model>",
                reason="huggingface_hub sends it with every download",
                cost="none; keep it in a secret, not in the command line",
                kind="env",
            )
        ]
        if needs_token
        else [],
        actions=[
            refusal.first,
            "Or download the model once where access is granted and serve its local directory (`vllm serve "
            "/models/<name>`), so the servers never ask the Hub.",
        ],
        confidence=0.9,
    )


RULE_HUB_REFUSED = Rule(
    code="OP-7.17",
    title="the Hugging Face Hub refused the model's files",
    category=Category.STARTUP,
    check=_check_hub,
    needs=("events",),
    page=RulePage(
        checks="huggingface_hub's and transformers' refusals (`Cannot access gated repo`, `Access to model X is "
        "restricted …`, `… fine-grained token settings …`, `Invalid credentials in Authorization header`, `Repository "
        "Not Found for url: https://huggingface.co/…`) and requests' `403 Client Error: Forbidden` / `401 … "
        "Unauthorized for url: https://huggingface.co/…`.",
        why="A model named by its Hub id is downloaded at start; a refused download ends the start, and the words say "
        "which of the licence, the token or the id is wrong.",
        example="`requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: https://huggingface.co/"
        "meta-llama/Llama-3.1-8B-Instruct/resolve/main/config.json` in a crash-looping pod: the licence had not been "
        "accepted (rh-ai-quickstart/ai-virtual-agent#200).",
        fix=f"By the reason: accept the licence on the model's page; {TOKEN_ENV} of an account with access; a "
        "fine-grained token allowed public gated repositories; the id spelt right; or serve a local copy.",
        limits="Reads the Hub's words, not a mirror's or a proxy's (HF_ENDPOINT); a 403 from a corporate proxy in "
        "front of huggingface.co reads the same as the Hub's.",
        references=["https://github.com/rh-ai-quickstart/ai-virtual-agent/issues/200"],
    ),
)

# --- OP-7.38 the model's files neither cached nor fetchable --------------------------------------------------

_SERVE_LOCAL = (
    "Or serve the model's own directory (`vllm serve /models/<name>`): a path is read from disk and never looked "
    "up on the Hub."
)
_FILL_CACHE = (
    "Put the model where the server looks: download it into the cache the server reads (HF_HOME, "
    "~/.cache/huggingface by default; --download-dir when given) where the Hub can be reached, `hf download <model>` "
    "with the same HF_HOME, and mount that cache into the server's container at the same path."
)


_TRUST_THE_PROXY = (
    "Give the server the CA certificate that signed what it met (a proxy that inspects HTTPS: your network team "
    "has it): add it to the image's system store (`update-ca-certificates`), and point SSL_CERT_FILE (httpx, which "
    "huggingface_hub uses from 1.0) and REQUESTS_CA_BUNDLE (requests, before 1.0) at a bundle that holds it."
)


def _check_not_cached(facts: Facts) -> list[Finding]:
    if facts.events_of(LogEventKind.HUB_ACCESS_REFUSED):  # a refusal is OP-7.17's, more specific
        return []
    untrusted = facts.events_of(LogEventKind.HUB_TLS_UNTRUSTED)
    if untrusted:
        return [_untrusted_finding(untrusted[0])]
    unavailable = facts.events_of(LogEventKind.HUB_UNAVAILABLE)
    if unavailable:
        return [_unavailable_finding(unavailable[0])]
    events = facts.events_of(LogEventKind.HUB_NOT_CACHED)
    if not events:
        refused = c.first_match(facts, HUB_NEW_CONNECTION)
        return [_not_cached_finding(refused[0], "unreachable")] if refused is not None else []
    event = next((e for e in events if e.message in ("offline", "offline_api")), events[0])
    if event.message == "timeout":
        return [_timeout_finding(event)]
    return [_not_cached_finding(event, event.message)]


def _not_cached_finding(event: LogEvent, how: str | None) -> Finding:
    """The model's files neither in the cache nor fetched: `how` says whether offline mode refused the call (on the
    Hub's API, or on the files) or the Hub could not be reached."""
    if how == "offline_api":
        title = "the model's metadata was asked of the Hub's API while offline mode is on (HF_HUB_OFFLINE=1)"
        summary = (
            "huggingface_hub refuses every call to the Hub in offline mode, and this one went to its API "
            "(/api/models/<id>: the repository's metadata and file list), which a model named by its Hub id is "
            "looked up with whether or not its files are cached; vLLM 0.4 did so even with HF_HUB_OFFLINE=1 "
            "(vllm#3719). The files may well be in the cache: naming them by path avoids the lookup."
        )
        actions = [
            "Serve the cached snapshot by its path, as vLLM's maintainers advised (vllm#3719): `vllm serve "
            "$HF_HOME/hub/models--<org>--<name>/snapshots/<revision>` (`hf cache scan` lists it), or the model's "
            "own directory: a path is read from disk and never looked up on the Hub.",
            "Or unset HF_HUB_OFFLINE where the server can reach the Hub.",
        ]
    elif how == "offline":
        title = "the model is not in the local cache, and downloads are switched off (offline mode)"
        summary = (
            "huggingface_hub found no cached copy of the model's files and was not allowed to ask the Hub: "
            "HF_HUB_OFFLINE=1 (or TRANSFORMERS_OFFLINE=1, or local_files_only) is set where the server runs, and "
            "this cache never received the model, or it is another cache than the one the model was downloaded to."
        )
        actions = [_FILL_CACHE, _SERVE_LOCAL, "Or unset HF_HUB_OFFLINE where the server may download."]
    else:
        title = "the model is not in the local cache, and the Hub could not be reached"
        summary = (
            "The Hub client (huggingface_hub, for transformers and vLLM) found no cached copy of the model's files "
            "and could not get an answer from huggingface.co: the "
            "server has no route to the Hub (no network in the container or cluster, a proxy it does not use, a "
            "firewall), and the cache it reads never received the model."
        )
        actions = [
            "Give the server its way to the Hub (HTTPS_PROXY for a proxy, HF_ENDPOINT for a mirror), or fill its "
            "cache beforehand: " + _FILL_CACHE[0].lower() + _FILL_CACHE[1:],
            _SERVE_LOCAL,
        ]
    return RULE_HUB_NOT_CACHED.finding(
        Severity.CRITICAL,
        title,
        summary=summary,
        evidence=[c.log_evidence(event, name="offline call" if how == "offline_api" else "no cached copy")],
        actions=actions,
        confidence=0.85,
    )


HUB_TIMEOUT_S = 10  # huggingface_hub's DEFAULT_ETAG_TIMEOUT and DEFAULT_DOWNLOAD_TIMEOUT (constants.py, 2.4)


def _timeout_finding(event: LogEvent) -> Finding:
    """The Hub was reached but did not answer within huggingface_hub's read timeout."""
    waited = f"{event.timeout_ms / 1000:g} s" if event.timeout_ms else f"{HUB_TIMEOUT_S} s"
    return RULE_HUB_NOT_CACHED.finding(
        Severity.CRITICAL,
        f"the Hub did not answer within the download's read timeout ({waited}): a slow or throttled link to it",
        summary="The connection to the Hub was made, and an answer (the metadata or a piece of a file) did not come "
        f"within huggingface_hub's timeout ({HUB_TIMEOUT_S} s by default for each); the model was not in the cache the "
        "server reads, so the start ends there.",
        evidence=[c.log_evidence(event, name="the Hub's answer", value=f"none within {waited}")],
        changes=[
            ConfigChange(
                flag="HF_HUB_DOWNLOAD_TIMEOUT",
                proposed="60",
                reason="huggingface_hub waits this long for each read of a file (HF_HUB_ETAG_TIMEOUT likewise for the "
                "metadata request), instead of 10 s",
                cost="a dead link takes longer to fail",
                kind="env",
            )
        ],
        actions=[
            "Raise HF_HUB_ETAG_TIMEOUT too where the first request (the model's metadata) is the one that timed out.",
            _FILL_CACHE,
            _SERVE_LOCAL,
        ],
        confidence=0.8,
    )


def _untrusted_finding(event: LogEvent) -> Finding:
    why = event.message or "certificate verify failed"
    self_signed = "self-signed" in why or "self signed" in why
    return RULE_HUB_NOT_CACHED.finding(
        Severity.CRITICAL,
        f"the Hub's certificate is not trusted where the server runs ({why}): "
        + ("something between re-signs HTTPS" if self_signed else "its CA bundle lacks the issuer"),
        summary="huggingface_hub verifies huggingface.co's certificate before it downloads anything. "
        + (
            "A certificate chain ending in a self-signed certificate is what a proxy or firewall that inspects "
            "HTTPS presents in the Hub's place; the server does not trust its CA."
            if self_signed
            else "The CA bundle the client reads does not hold the certificate's issuer: an image without "
            "ca-certificates, or a proxy's CA missing from it."
        )
        + " The model cannot be fetched until it does, and no cached copy was used.",
        evidence=[c.log_evidence(event, name="certificate not trusted", value=why)],
        actions=[
            _TRUST_THE_PROXY,
            _SERVE_LOCAL,
            "Turning verification off is not a fix: it lets anything between the server and the Hub change the "
            "weights it downloads.",
        ],
        confidence=0.85,
    )


def _unavailable_finding(event: LogEvent) -> Finding:
    """The Hub rate-limited the download (429), or failed on its side (5xx)."""
    limited = event.status == RATE_LIMITED
    return RULE_HUB_NOT_CACHED.finding(
        Severity.CRITICAL,
        f"the Hub {'rate-limited' if limited else 'failed'} the model's download (HTTP {event.status}): "
        + ("too many requests from this address in its window" if limited else "trouble on the Hub's side"),
        summary=(
            "The Hub counts requests per 5-minute window, by account for a request with a token and by IP address "
            "without one, and an account's limits are the higher; replicas that each download the model at start, "
            "behind one NAT address, share one anonymous limit."
            if limited
            else "The Hub (or a proxy in front of it) answered with an error of its own; nothing about the token or "
            "the model's id is wrong."
        )
        + " The model was not in the cache the server reads, so the start ends there.",
        evidence=[c.log_evidence(event, name="the Hub's answer", value=event.status)],
        actions=(
            [
                "Give the servers HF_TOKEN (an account's limits are higher than an address's), and download the model "
                "once into a cache they share (a PersistentVolumeClaim filled by one job or an init container, "
                "`hf download`) instead of once per replica.",
                "huggingface_hub from 1.2 waits for the window the Hub's RateLimit header names before it retries "
                "(its release notes); with an older one, restart the server after the window has passed.",
            ]
            if limited
            else [
                "Retry after a while (https://status.huggingface.co says whether the Hub is degraded).",
                _SERVE_LOCAL,
            ]
        ),
        confidence=0.85,
    )


RULE_HUB_NOT_CACHED = Rule(
    code="OP-7.38",
    title="the model's files neither cached nor fetchable",
    category=Category.STARTUP,
    check=_check_not_cached,
    needs=("events",),
    page=RulePage(
        checks="huggingface_hub's `Cannot find the requested files in the disk cache and outgoing traffic has been "
        "disabled` (or `… cached snapshot folder … and outgoing traffic has been disabled`), its `An error happened "
        "while trying to locate the file(s) on the Hub …` (the Hub not reached), and transformers' `We couldn't "
        "connect to 'https://huggingface.co' to load …, and couldn't find … in the cached files`; urllib3's `Max "
        "retries exceeded` on a Hub host (a connect timeout, a name that did not resolve, a proxy, a new connection "
        "refused); OpenSSL's "
        "`[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: …` on a line naming huggingface.co; the Hub's "
        "own answers to a download, `429 … Too Many Requests for url: https://huggingface.co/…` (its rate limits) "
        "and `50x Server Error … for url: https://huggingface.co/…`.",
        why="A model named by its Hub id is read from the local cache first; offline (HF_HUB_OFFLINE=1) or without a "
        "route to the Hub, a model the cache never received cannot be loaded.",
        example="`huggingface_hub.errors.LocalEntryNotFoundError: Cannot find the requested files in the disk cache "
        "and outgoing traffic has been disabled.` in an air-gapped pod whose cache volume was filled on another "
        "path.",
        fix="The model downloaded into the cache the server reads (HF_HOME, --download-dir), or its local directory "
        "served, or the Hub reachable (a proxy, HF_ENDPOINT, HF_HUB_OFFLINE unset); for an untrusted certificate, "
        "the inspecting proxy's CA trusted (the system store, SSL_CERT_FILE, REQUESTS_CA_BUNDLE), never verification "
        "turned off.",
        limits="The words do not say which cache was searched; the server's HF_HOME and --download-dir do.",
        references=[
            "https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables",
            "https://huggingface.co/docs/huggingface_hub/concepts/migration",
            "https://github.com/huggingface/transformers/issues/17611",
            "https://huggingface.co/docs/hub/rate-limits",
        ],
    ),
)

RULES: list[Rule] = [RULE_HUB_REFUSED, RULE_HUB_NOT_CACHED]
