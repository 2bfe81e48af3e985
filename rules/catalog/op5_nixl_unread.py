"""OP-5.60: in prefill/decode disaggregation with NIXL, the prefill instance freed a request's KV blocks that no
decode worker had read.

Why a rule of its own: vLLM's prefill side keeps a finished prefill's KV blocks until the decode side has pulled them,
then frees them when its hold expires: `Releasing expired KV blocks for request <id> which were retrieved by <n> decode
worker(s) within <s> seconds.` (vLLM 0.10 to 0.21, the hold being VLLM_NIXL_ABORT_REQUEST_TIMEOUT, which the message
names) or `… by <n> remote worker(s) before lease expired.` (0.22 on). The message reads as a timeout to raise, and VC-1
says so from its words. With n = 0, no decode worker read anything: the decode side never reached this instance, never
got the request, or its transfers failed (a transport error in the decode side's log), and a longer hold only keeps the
memory longer. NIXL's handshake goes over a side channel whose host defaults to `localhost`
(VLLM_NIXL_SIDE_CHANNEL_HOST, vllm/envs.py in 0.32), which a decode pod cannot reach; ai-dynamo/dynamo#4773 (NIXL
troubleshooting for Dynamo on Kubernetes) lists this line with the side-channel host set to the pod's IP as its fix.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

SIDE_CHANNEL_HOST = "VLLM_NIXL_SIDE_CHANNEL_HOST"
# vLLM's two wordings, read only where no worker retrieved the blocks
UNREAD = re.compile(
    r"Releasing expired KV blocks for request (?P<request>\S+) which were retrieved by 0 (?:decode|remote) worker\(s\)"
    r"(?: within (?P<seconds>\d+) seconds)?"
)


def _unread_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    held = f" for {match['seconds']} s" if match["seconds"] else ""
    return RULE_NIXL_UNREAD.finding(
        Severity.HIGH,
        f"the prefill instance held request {match['request']}'s KV blocks{held} and no decode worker read them: the "
        "decode side could not reach this instance over NIXL (its side channel or transport), or never got the request",
        summary="In P/D disaggregation the decode instance pulls each prefilled request's KV blocks over NIXL; the "
        "prefill instance frees them when its hold expires. Retrieved by 0 workers means none finished reading: a "
        "longer hold would only keep the memory longer. The handshake goes over NIXL's side channel, whose host "
        f"defaults to localhost ({SIDE_CHANNEL_HOST}), which a decode pod on another host cannot reach.",
        evidence=[c.log_evidence(event, name="decode workers that read the blocks", value=0)],
        changes=[
            ConfigChange(
                flag=SIDE_CHANNEL_HOST,
                current=None,
                proposed="<the address the decode instance reaches this one at: the pod IP (downward API "
                "status.podIP) or the node's>",
                reason="the decode side handshakes with the prefill side at this host; localhost is only itself",
                kind="env",
            )
        ],
        actions=[
            "Read the decode instance's log at the same time: a NIXL transfer error there (UCX's, a transport's "
            "BAD_STATUS) is a link that failed mid-transfer, not an unreachable side channel.",
            "Keep VLLM_NIXL_SIDE_CHANNEL_PORT (5600 by default) open from the decode pods to the prefill pods; "
            "ai-dynamo/dynamo#4773 lists this line with the side-channel host set to the pod IP as the fix.",
            "Check that requests reach the decode instance at all: the router or proxy in front must send each "
            "prefilled request on to decode (its log, and the decode instance's request count).",
        ],
        confidence=0.5,
    )


RULE_NIXL_UNREAD = Rule(
    code="OP-5.60",
    title="a prefill instance freed KV blocks no decode worker read (NIXL P/D)",
    category=Category.RELIABILITY,
    check=c.on_phrase(UNREAD, _unread_finding, kinds=c.RELAYED_TOO),
    needs=("events",),
    page=RulePage(
        checks="vLLM's `Releasing expired KV blocks for request <id> which were retrieved by 0 decode worker(s) "
        "within <s> seconds` (0.10 to 0.21) or `… by 0 remote worker(s) before lease expired` (0.22 on).",
        why="The decode side never pulled the request's KV: the request fails or is recomputed there, and the "
        "prefill instance's memory was held for nothing.",
        example="`Releasing expired KV blocks for request <id> which were retrieved by 0 decode worker(s) within 120 "
        "seconds` (ai-dynamo/dynamo#4773, under its Kubernetes troubleshooting).",
        fix=f"{SIDE_CHANNEL_HOST} set to the address the decode side reaches; the side-channel port open between "
        "the instances; requests routed on to decode.",
        limits="A count above 0 (some workers read, some did not) is left to VC-1: a slow decode side, not an "
        "unreachable one.",
        references=["https://github.com/ai-dynamo/dynamo/issues/4773"],
    ),
)

RULES: list[Rule] = [RULE_NIXL_UNREAD]
