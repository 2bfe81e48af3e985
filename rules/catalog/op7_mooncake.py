"""OP-7.112: Mooncake's transfer engine was given a metadata server its build has no plugin for.

Why a rule of its own: vLLM's Mooncake KV connectors (and LMCache's Mooncake store) hand the transfer engine the
`metadata_server` of their Mooncake config (MOONCAKE_CONFIG_PATH's JSON, or LMCache's settings). The engine picks a
metadata plugin by the address's scheme, and each plugin exists only when Mooncake was compiled with it
(mooncake-transfer-engine/src/transfer_metadata_plugin.cpp: etcd under cmake's USE_ETCD, redis under USE_REDIS, http
under USE_HTTP). An address whose scheme the build lacks ends in glog's fatal `Unable to find metadata storage plugin
etcd [with conn string: etcd://…]`, which aborts the whole vLLM process at the connector's start: the etcd server
may be up and reachable, it is never called. A pip-installed wheel is the usual such build: kvcache-ai/Mooncake#386
(vLLM 0.8.5.post1, mooncake-transfer-engine 0.3.1 from pip), where a contributor named the missing etcd plugin and
`-DUSE_ETCD=ON`; other users of the wheel report the same for redis, and its http plugin with Mooncake's own
metadata server (`python -m mooncake.http_metadata_server`) as the way that needs no rebuild.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# The cmake switch that compiles each metadata plugin into Mooncake's transfer engine (transfer_metadata_plugin.cpp)
BUILD_SWITCHES = {"etcd": "USE_ETCD", "redis": "USE_REDIS", "http": "USE_HTTP", "https": "USE_HTTP"}


def _check_mooncake_plugin(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.MOONCAKE_METADATA_PLUGIN)
    if not events:
        return []
    event = events[0]
    scheme = event.message or "?"
    switch = BUILD_SWITCHES.get(scheme.lower())
    rebuild = (
        f"rebuild Mooncake with `cmake -D{switch}=ON` (and install that build in vLLM's environment)"
        if switch
        else "use a scheme Mooncake knows (etcd, redis, http or P2PHANDSHAKE): this one has no plugin in any build"
    )
    address = f" ({event.address})" if event.address else ""
    alternative = (
        "an http one: start `python -m mooncake.http_metadata_server --port 8080` on a host every instance reaches "
        "and set `metadata_server` to `http://<host>:8080/metadata`; or `P2PHANDSHAKE`, which needs no metadata "
        "server at all"
        if scheme.lower() not in ("http", "https")
        else "`P2PHANDSHAKE`, which needs no metadata server at all"
    )
    return [
        RULE.finding(
            Severity.CRITICAL,
            f"Mooncake's transfer engine has no '{scheme}' metadata plugin: its build was compiled without it",
            summary=f"The Mooncake config's metadata_server{address} names the '{scheme}' backend, and Mooncake's "
            "transfer engine only has the metadata plugins it was compiled with (transfer_metadata_plugin.cpp). It "
            "aborted the process before it called the server, so the server's own health is not in question. "
            "Wheels from pip are built without some plugins (kvcache-ai/Mooncake#386: etcd).",
            evidence=[c.log_evidence(event, name="the metadata backend asked for", value=scheme)],
            actions=[
                f"Point the Mooncake config's `metadata_server` (MOONCAKE_CONFIG_PATH's JSON, or LMCache's Mooncake "
                f"settings) at a backend this build has: {alternative}.",
                f"Or keep {scheme}: {rebuild}.",
                "Check which plugins an installed wheel has before choosing: `strings "
                "$(python -c 'import mooncake, os; print(os.path.dirname(mooncake.__file__))')/engine.so | grep "
                "StoragePlugin`.",
            ],
            confidence=0.85,
        )
    ]


RULE = Rule(
    code="OP-7.112",
    title="Mooncake's transfer engine has no plugin for its metadata server",
    category=Category.STARTUP,
    check=_check_mooncake_plugin,
    needs=("events",),
    page=RulePage(
        checks="Mooncake's fatal `Unable to find metadata storage plugin <scheme>[ with conn string: …]`.",
        why="The process dies at the KV connector's start on a build option, while the metadata server itself may "
        "be healthy: checking etcd or the network is time lost.",
        example="`Unable to find metadata storage plugin etcd with conn string: etcd://10.72.12.100:2379` from "
        "`vllm serve` with the Mooncake connector and a pip-installed transfer engine (kvcache-ai/Mooncake#386).",
        fix="A metadata server the build has a plugin for (Mooncake's http metadata server, or P2PHANDSHAKE), or "
        "Mooncake rebuilt with the plugin (`-DUSE_ETCD=ON`, `-DUSE_REDIS=ON`).",
        limits="Which plugins a given wheel carries changed between Mooncake releases; the line does not say which "
        "release runs, so the http advice is checked by the `strings` command, not assumed.",
        references=["https://github.com/kvcache-ai/Mooncake/issues/386"],
    ),
)

RULES: list[Rule] = [RULE]
