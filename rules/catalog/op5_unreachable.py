"""OP-5.34: the client's connection never reached a server: nothing listened where it called, or it called another
server's address.

Why a rule of its own: "Connection refused" is among the texts people most often bring when a client cannot talk to
vLLM, and it says nothing about vLLM: the connection was refused (or timed out, or its host name did not resolve)
before any request was made. What settles it is where the client called, which its words name, against where the
server listens, which vLLM's own log names (`Starting vLLM API server on http://0.0.0.0:8000`): a server that is not
up yet (vLLM listens only once its engine has loaded and warmed up, minutes for a large model), one that crashed, a
port or host that differs, a container port not published. A client whose local-model provider keeps its own
default address calls Ollama's (11434) or LM Studio's (1234) whatever base_url it was given for vLLM: the Codex CLI's
built-in `oss` provider takes its address only from CODEX_OSS_BASE_URL, else localhost at CODEX_OSS_PORT, Ollama's
port by default (openai/codex, codex-rs `model_provider_info.rs`, `create_oss_provider`; openai/codex#2257).
"""

from __future__ import annotations

from rules import vllm_defaults
from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

VLLM_DEFAULT_PORT = vllm_defaults.API_SERVER_PORT
# The client whose words name no address (`openai.APIConnectionError: Connection error.`); httpx, its transport,
# chains what the connection met (`httpx.ConnectError: [Errno 111] Connection refused`). Alone, httpx's words name
# no caller either: vLLM's own Mooncake connector calls its bootstrap server with httpx too.
OPENAI_SDK = "OpenAI SDK"
# Local inference servers whose default address a client falls back to (their documentation's defaults).
OTHER_SERVERS: dict[int, str] = {11434: "Ollama", 1234: "LM Studio"}
# Clients whose provider for a local server keeps its own address, and the setting that moves it.
CLIENT_ADDRESS_SETTINGS = (
    "Codex CLI (`--oss`, its built-in `oss` provider): CODEX_OSS_BASE_URL=http://<vLLM host>:<port>/v1 (the "
    "provider's base_url in config.toml is not read for it), or CODEX_OSS_PORT for another port on localhost",
    "an OpenAI SDK client: its base_url (OpenAI(base_url=…)) or OPENAI_BASE_URL, ending in /v1",
)
# What the connection met, in words: the title's and the first action's.
_MET: dict[str | None, tuple[str, str]] = {
    "refused": (
        "nothing accepted the connection",
        "Nothing listened at that address when the client called: the server was not up yet (vLLM opens its port "
        "only once the engine has loaded the model and warmed up: wait for `Application startup complete` or GET "
        "/health answering 200), it had crashed (its log says why: triage it), or it listens on another port or "
        "host.",
    ),
    "timeout": (
        "the connection timed out",
        "No answer to the connection at all: a firewall or security group dropping it, a host that is not the "
        "server's, or a server too overloaded to accept (its log and stats lines say which).",
    ),
    "unresolved": (
        "the host name did not resolve",
        "The client could not resolve the server's host name: a wrong service name, a Kubernetes Service in another "
        "namespace (<service>.<namespace>.svc), or a container on another network than the server's.",
    ),
    "unreachable": (
        "no route to the server's host",
        "The network has no route to that host: the client is on another network than the server (a container "
        "network, a VPN), or the address is wrong.",
    ),
    None: (
        "the connection failed",
        "The request never reached a server: the client's words do not say why; try the same address with "
        "`curl <address>/health` from where the client runs.",
    ),
}
_OPENAI_BASE_URL = (
    "Check the address the client calls: the OpenAI SDK's base_url (OpenAI(base_url=…), or OPENAI_BASE_URL) must be "
    f"the vLLM server's host and port ending in /v1 (http://<host>:{VLLM_DEFAULT_PORT}/v1); `curl <base_url>/models` "
    "from where the client runs must list the served model."
)
_HTTPX_CALLERS = (
    "The frames above the error name the caller: the OpenAI SDK (then its base_url, OpenAI(base_url=…) or "
    "OPENAI_BASE_URL, must be the vLLM server's host and port ending in /v1), a proxy in front of vLLM servers (the "
    "servers' addresses it was given), or vLLM's own Mooncake KV connector (its bootstrap server); `curl` that "
    "address from where the caller runs."
)
_CONTAINER = (
    "In a container, publish the server's port (`docker run -p 8000:8000`, a Kubernetes Service's targetPort) and let "
    "vLLM listen on every interface (vLLM's default; `--host 127.0.0.1` accepts connections from inside its own "
    "container only); from another container call the server's service name, not localhost."
)


def _check_unreachable(facts: Facts) -> list[Finding]:
    failed = facts.events_of(LogEventKind.SERVER_UNREACHABLE)
    # where vLLM says it listens (uvicorn's `Application startup complete` is the same event, naming no address)
    listening = [e for e in facts.events_of(LogEventKind.SERVER_LISTENING) if e.listen_address]
    failure = next((e for e in failed if e.address), None)
    if failure is None:
        if facts.events_of(LogEventKind.SERVER_DISCONNECTED):
            return []  # the SDK's words wrap a connection that was made and closed unanswered: OP-5.37's
        return [_no_address(failed, listening[-1] if listening else None)] if failed else []
    host, port = c.split_address(failure.address)
    if port in OTHER_SERVERS:
        return [_other_server(failure, port)]
    served = c.served_address(listening[-1].listen_address) if listening else None
    if served is not None and port is not None:
        served_host, served_port = served
        if served_port is not None and served_port != port:
            return [_other_port(failure, listening[-1], port, served_port)]
        if c.LOOPBACK.match(served_host) and not c.is_local_host(host):
            return [_loopback_only(failure, listening[-1])]
    return [_not_reached(failure, listening[-1] if listening else None)]


def _other_server(failure: LogEvent, port: int) -> Finding:
    server = OTHER_SERVERS[port]
    return RULE_UNREACHABLE.finding(
        Severity.HIGH,
        f"the client calls {failure.address}, {server}'s default address, not the vLLM server: the base_url it was "
        "given for vLLM did not take",
        summary=f"{_said(failure)} Port {port} is where {server} listens by default; a client calls it when its "
        f"provider for a local server keeps its own default address instead of the base_url set for vLLM (vLLM "
        f"listens on {VLLM_DEFAULT_PORT} unless --port says otherwise).",
        evidence=[_evidence(failure)],
        actions=[
            "Point the client at vLLM through the setting its provider reads: "
            + "; ".join(CLIENT_ADDRESS_SETTINGS)
            + ".",
            f"Check what answers there: `curl http://<vLLM host>:{VLLM_DEFAULT_PORT}/v1/models` should list the "
            "served model.",
        ],
        confidence=0.8,
    )


def _other_port(failure: LogEvent, listening: LogEvent, port: int, served_port: int) -> Finding:
    return RULE_UNREACHABLE.finding(
        Severity.HIGH,
        f"the client calls port {port}, the server listens on {served_port}",
        summary=f"{_said(failure)} vLLM's log says it listens on {listening.listen_address}.",
        evidence=[_evidence(failure), c.log_evidence(listening, name="where the server listens")],
        actions=[
            f"Call port {served_port} (in the client's base_url), or start the server with --port {port}.",
            _CONTAINER,
        ],
        confidence=0.85,
    )


def _loopback_only(failure: LogEvent, listening: LogEvent) -> Finding:
    return RULE_UNREACHABLE.finding(
        Severity.HIGH,
        f"the server listens on {listening.listen_address} only, and the client calls {failure.address} from elsewhere",
        summary=f"{_said(failure)} vLLM's log says it listens on {listening.listen_address}: a loopback address "
        "accepts connections from the same host (or container) only.",
        evidence=[_evidence(failure), c.log_evidence(listening, name="where the server listens")],
        actions=[
            "Start the server without --host (vLLM then listens on every interface) or with --host 0.0.0.0, and "
            "publish its port from the container.",
        ],
        confidence=0.85,
    )


def _not_reached(failure: LogEvent, listening: LogEvent | None) -> Finding:
    met, first = _MET.get(failure.connect_result, _MET[None])
    actions = [first]
    evidence = [_evidence(failure)]
    if listening is not None:
        actions.append(f"vLLM's log says it listens on {listening.listen_address}: call that address.")
        evidence.append(c.log_evidence(listening, name="where the server listens"))
    if failure.connect_result not in ("unresolved", "unreachable"):
        actions.append(_CONTAINER)
    local = c.is_local_host(c.split_address(failure.address)[0])
    here = " The address is this host's own: a server here must be up and listening on that port." if local else ""
    return RULE_UNREACHABLE.finding(
        Severity.HIGH,
        f"the client's connection to {failure.address or 'the server'} never reached a server: {met}",
        summary=f"{_said(failure)} No request reached vLLM, so nothing in its behaviour explains this: where the "
        f"client called, against where the server listens, does.{here}",
        evidence=evidence,
        actions=actions,
        confidence=0.7,
    )


def _no_address(failed: list[LogEvent], listening: LogEvent | None) -> Finding:
    """A failed connection whose words name no address: the OpenAI SDK's (its base_url is where it went), with what
    its transport's chained cause says the connection met; or httpx's alone, whose caller only the frames name."""
    sdk = next((e for e in failed if e.component == OPENAI_SDK), None)
    failure = sdk or failed[0]
    result = next((e.connect_result for e in failed if e.connect_result), None)
    met, said = _MET.get(result, _MET[None])
    actions = [_OPENAI_BASE_URL if sdk else _HTTPX_CALLERS, *([said] if result else [])]
    evidence = [_evidence(failure)]
    if listening is not None:
        actions.append(f"vLLM's log says it listens on {listening.listen_address}: the client must call that address.")
        evidence.append(c.log_evidence(listening, name="where the server listens"))
    if result not in ("unresolved", "unreachable"):
        actions.append(_CONTAINER)
    summary = (
        "The OpenAI SDK could not connect to its base_url, which its words do not name. No request reached vLLM, "
        "so nothing in its behaviour explains this: the address the client calls, against where the server "
        "listens, does."
        if sdk
        else f"{failure.component or 'httpx'} could not connect, and its words name neither the caller nor the "
        "address: the frames above the error do."
    )
    return RULE_UNREACHABLE.finding(
        Severity.HIGH,
        f"the client's connection never reached a server: {met} (its words name no address)",
        summary=summary,
        evidence=evidence,
        actions=actions,
        confidence=0.6 if sdk else 0.4,
    )


def _said(failure: LogEvent) -> str:
    path = f" asking for {failure.url_path}" if failure.url_path else ""
    return f"The client ({failure.component}) could not connect to {failure.address or 'the server'}{path}."


def _evidence(failure: LogEvent):
    return c.log_evidence(failure, name="the client's failed connection", value=failure.address)


RULE_UNREACHABLE = Rule(
    code="OP-5.34",
    title="the client's connection never reached a server",
    category=Category.RELIABILITY,
    check=_check_unreachable,
    needs=("events",),
    page=RulePage(
        checks="A client's words for a connection that failed before any request, naming where it went (curl's "
        "`(7) Failed to connect to … port …`, urllib3's `HTTPConnectionPool(host=…, port=…): Max retries exceeded`, "
        "aiohttp's `Cannot connect to host`, Node's `connect ECONNREFUSED`, Go's `dial tcp …` and `dial tcp: lookup "
        "…: no such host`, reqwest's `error sending request for url (…)`) to a local host, an inference server's "
        "default port or one of vLLM's routes (a model hub or a media URL is not a server of the user's); against "
        "where vLLM's log says it listens. Words that name no address: the OpenAI SDK's `APIConnectionError: "
        "Connection error.` (its base_url is where it went), with what httpx's chained `ConnectError` says the "
        "connection met, or httpx's alone; LiteLLM's `<Provider>Exception - Connection error.` (its api_base is "
        "where it went).",
        why="The connection failed before any request, so vLLM's behaviour cannot explain it; where the client called "
        "against where the server listens does.",
        example="`error sending request for url (http://localhost:11434/v1/chat/completions)` from the Codex CLI set "
        "up for a vLLM server: its `oss` provider ignores config.toml's base_url and calls Ollama's default address "
        "(openai/codex#2257).",
        fix="Another server's default port: the client's provider setting for its address (CODEX_OSS_BASE_URL, an "
        "OpenAI client's base_url). A port other than the one vLLM's log names: call that one. Otherwise: wait for "
        "the server to be ready (GET /health), read why it stopped, publish its port from the container.",
        limits="Without vLLM's log beside it, where the server listens is unknown; without an address in the "
        "client's words, only the checks are named (the SDK's base_url, or for httpx alone the caller its frames "
        "name: vLLM's Mooncake connector calls its bootstrap server with httpx too). A proxy between them is "
        "OP-5.25's.",
        references=[
            "https://github.com/openai/codex/issues/2257",
            "https://docs.vllm.ai/en/latest/cli/serve.html",
        ],
    ),
)

RULES: list[Rule] = [RULE_UNREACHABLE]
