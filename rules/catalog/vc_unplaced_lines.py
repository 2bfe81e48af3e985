"""VC-4: error lines that nothing else in the text explains.

A paste from a decode pod can hold nothing but a native library's lines (UCX's `Unexpected UCX error: Request
canceled`, eight times; Mooncake's transfer engine failing to connect), or one ERROR line of vLLM's logger that
names no exception and that vLLM's message catalog does not hold (a message built at run time). No wording servops
knows matches, no exception class names it, so VC-2 has nothing to name: before this rule triage answered
"nothing looks wrong" to a text full of errors. The collector keeps each such line once, with its repeats and the
file its header names (`LogEventKind.UNPLACED_LINE`); this rule names the first, says who logged it and where to
look, and gives way to any other finding (`fallback="failure"`), which knows more.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.catalog.vc_vllm_messages import cut_at_word, nearest_action
from rules.events import NATIVE_LOG, NCCL_LOG, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# Less than VC-3's cut traceback (0.35): the line is certain, that it is the failure's cause is not.
UNPLACED_LINE_CONFIDENCE = 0.3
TITLE_WORDS_CHARS = 160
ERROR_LEVELS = ("ERROR", "CRITICAL")
_PEER_ACTION = (
    "The line is a native library's (UCX and NIXL under vLLM's KV-transfer connectors, a KV store's transfer "
    "engine, NCCL, gRPC), not vLLM's Python logger's: search that library's issues for these words with the file "
    "name. When the line reports a transfer canceled or a "
    "connection to a peer refused or lost, the cause is usually on the peer: UCX completes every transfer still "
    "outstanding with `Request canceled` (UCS_ERR_CANCELED) when the peer fails or the endpoint is closed. With "
    "prefill and decode disaggregated, fetch the other role's logs (`kubectl logs --previous` for a pod that "
    "restarted)."
)

_NCCL_ACTION = (
    "NCCL logs at WARN only what it treats as an error (its NCCL_DEBUG documentation: 'messages indicating a fatal "
    "error'), and names the transport that failed (NET/IB, NET/Socket, P2P, SHM): the lines NCCL printed before it "
    "at INFO say which peer and interface; restart with NCCL_DEBUG=INFO (and NCCL_DEBUG_SUBSYS=INIT,NET) if the log "
    "lacks them."
)


def _check_unplaced_lines(facts: Facts) -> list[Finding]:
    lines = facts.events_of(LogEventKind.UNPLACED_LINE)
    if not lines:
        return []
    errors = [event for event in lines if event.level in ERROR_LEVELS]
    first = (errors or lines)[0]
    said = first.repeats or 1
    level = "an error" if first.level in ERROR_LEVELS else "a warning"
    words = cut_at_word(first.message or "", TITLE_WORDS_CHARS)
    evidence = c.log_evidence(first, name="unplaced_line", value=first.message)
    evidence.description = f"{level} line, {_logged_by(first)}" + (
        f", {said} lines with these words" if said > 1 else ""
    )
    actions = [_lead_action(first)]
    if first.component == NCCL_LOG:
        actions.append(_NCCL_ACTION)
    if _native(first):  # a native library's words are its own: vLLM messages sharing a word would mislead
        actions.append(_PEER_ACTION)
    elif first.nearest:
        actions.append(nearest_action(first.nearest))
    others = len(lines) - 1
    summary = (
        f"{level.capitalize()} line that neither servops' wording table nor vLLM's message catalog knows, and that "
        "names no exception"
        + (f"; {said} lines say the same" if said > 1 else "")
        + (f"; {others} other unplaced line(s) follow" if others else "")
        + "."
    )
    return [
        RULE_UNPLACED_LINES.finding(
            Severity.MEDIUM if errors else Severity.LOW,
            f"{words} ({_logged_by(first)}{f'; {said} lines' if said > 1 else ''}): {level} servops cannot place",
            summary=summary,
            evidence=[evidence],
            actions=actions,
            confidence=UNPLACED_LINE_CONFIDENCE,
        )
    ]


def _lead_action(first: LogEvent) -> str:
    """Where to read next: above the line, or, when the text begins with it, the log from before the paste."""
    if first.line_no is not None and first.line_no <= 1:
        return (
            "Nothing else in the text names a failure, so this line is the lead, and the text begins with it: "
            "fetch the log from before it, where what went wrong first is usually printed before the repeats."
        )
    return (
        f"Nothing else in the text names a failure, so this line is the lead: read the lines above its first "
        f"occurrence (line {first.line_no}), where what went wrong first is usually printed before the repeats."
    )


def _native(event: LogEvent) -> bool:
    return event.component in (NATIVE_LOG, NCCL_LOG)


def _logged_by(event: LogEvent) -> str:
    """Who wrote the line, as its header says, and the file it names: `ucx_utils.cpp:62, a native library's log`."""
    who = event.component or "no logger named"
    return f"{event.code_file}, {who}" if event.code_file else who


RULE_UNPLACED_LINES = Rule(
    code="VC-4",
    title="an error line no wording, catalog message or exception names, when nothing else explains the text",
    category=Category.RELIABILITY,
    check=_check_unplaced_lines,
    needs=("events",),
    fallback="failure",
    page=RulePage(
        checks="A line at ERROR or CRITICAL (vLLM's header, a native library's glog `E…`/`F…` header, NCCL's "
        "`NCCL WARN`, or a wrapper's `[Error]`), or a "
        "warning whose words say something failed (error, failed, cannot, refused, timed out), that names no "
        "exception class and that neither servops' wording table nor vLLM's message catalog holds; the first such "
        "error line (else warning), with how many lines said the same.",
        why="A paste can be nothing but such lines: a decode pod's UCX warnings after its prefill peers crashed, a "
        "KV store's transfer engine failing to connect. Answering 'nothing looks wrong' to a text full of errors "
        "sends the engineer away; naming the line, who logged it and where its cause usually is gives them the "
        "next step.",
        example="W0904 10:52:53.047694 512 ucx_utils.cpp:62] Unexpected UCX error: Request canceled (8 lines)",
        fix="None to propose: the line names no cause servops knows. The finding says which lines to read first, "
        "and for a native library's report of a peer (a canceled transfer, a refused connection) to fetch the "
        "peer's log. vLLM's nearest messages (two shared words at least) for a line of vLLM's logger; none for a "
        "native library's, whose words are its own.",
        limits="Kept only when no other finding is at least as severe (MEDIUM for an error line, LOW for a "
        "warning): any rule that explains the text outranks it. Warnings no wording knows whose words do not say "
        "something failed are counted in the read summary only (they are usually a library's advice).",
        references=["docs/triage.md"],
    ),
)

RULES: list[Rule] = [RULE_UNPLACED_LINES]
