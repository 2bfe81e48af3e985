"""VC-5: a failure vLLM itself logged that names nothing to change, when nothing else explains the text.

Why a rule of its own: vLLM logs hundreds of failures at error level that it catches and survives (a tool call
that does not parse, a prompt that could not be preprocessed, a KV transfer that failed), in words its catalog
holds (advisor/catalog/vllm_messages.json) but that name no flag. VC-1 reads the catalog's messages that name a
setting or have a known remedy; VC-4 names error lines the catalog does not hold. A paste of one of these lines fell
between them and got "no findings", although vLLM said something failed and where. This rule names the line as
vLLM's own error (or, low, a warning whose words say something failed), the part of vLLM that logged it (from the
file, as a traceback's frame is named), and where its cause is: for `logger.exception`, the traceback vLLM prints
right under the line, whose exception it names when the paste holds it. It gives way to any other finding at least
as severe (`fallback="failure"`), which knows more.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.catalog.component_actions import COMPONENT_ACTIONS
from rules.catalog.vc_vllm_messages import LOGGED_ERROR_LEVELS, cut_at_word, reads_as_finding
from rules.components import component_of_path
from rules.events import FAILURE_WORDS, CatalogRef, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# Below VC-1's own words (0.97): vLLM said this failed, but the line says what failed, not why.
OWN_ERROR_CONFIDENCE = 0.5
TITLE_WORDS_CHARS = 180
CAUGHT_WORDS_CHARS = 120  # of the caught exception's words, added to the title
_PHASES = {"config": "checking its configuration", "startup": "during startup", "serving": "while serving"}


def _check_own_errors(facts: Facts) -> list[Finding]:
    said = [e for e in facts.events_of(LogEventKind.VLLM_MESSAGE, LogEventKind.WORKER_EXCEPTION) if _lead(e)]
    if not said:
        return []
    errors = [e for e in said if e.catalog is not None and e.catalog.level in LOGGED_ERROR_LEVELS]
    first = (errors or said)[0]
    ref = first.catalog
    assert ref is not None  # _own_failure holds it
    component = component_of_path(ref.file) or f"code in {ref.file.removeprefix('vllm/')}"
    # a worker's exception header is logged while the engine starts and while it serves: only the text tells which
    known_phase = first.phase or (ref.phase if first.kind == LogEventKind.VLLM_MESSAGE else None)
    phase = _PHASES.get(known_phase or "", "")
    words = cut_at_word((first.message or ref.template).strip(), TITLE_WORDS_CHARS)
    evidence = [c.log_evidence(first, name="vllm_error" if errors else "vllm_warning", value=first.message)]
    under = _under(first, ref, facts)
    caught = next((e for e in under if e.kind == LogEventKind.UNPLACED_ERROR), None)
    actions = [_lead_action(ref)]
    # else the next event, when a wording of its own read it (a request too long, an out of memory): cited, so the
    # rule that answers that event explains this finding (`fallback`) rather than ranking under it
    read = under[0] if caught is None and under and under[0].kind != LogEventKind.VLLM_MESSAGE else None
    if read is not None:
        evidence.append(c.log_evidence(read, name="caught_exception", value=read.message or read.raw))
    if caught is not None:
        words = f"{words} ({cut_at_word(caught.message or '', CAUGHT_WORDS_CHARS)})"
        evidence.append(c.log_evidence(caught, name="caught_exception", value=caught.message))
        actions = [_caught_action(caught)]
    if component in COMPONENT_ACTIONS:
        actions.append(COMPONENT_ACTIONS[component])
    others = len(said) - 1
    what = "an error" if errors else "a warning that something failed"
    return [
        RULE_OWN_ERRORS.finding(
            Severity.MEDIUM if errors else Severity.LOW,
            f"vLLM logged {what} in its {component}" + (f" {phase}" if phase else "") + f": {words}",
            summary=f"vLLM's own words ({ref.location()}), logged at {ref.level} level: vLLM caught the failure and "
            "went on, and its words name no setting to change."
            + (f" {others} other such line(s) of vLLM's follow." if others else ""),
            evidence=evidence,
            actions=actions,
            confidence=OWN_ERROR_CONFIDENCE,
        )
    ]


def _lead(event: LogEvent) -> bool:
    """vLLM's own failure line, a worker's exception header included while no traceback under it named its root
    (then VC-2 or HL-2 answers with that exception)."""
    if event.kind == LogEventKind.WORKER_EXCEPTION:
        return event.catalog is not None and event.exception is None
    return _own_failure(event.catalog)


def _own_failure(ref: CatalogRef | None) -> bool:
    """A message vLLM logs (no raise) at error level, or at warning level in words that say something failed, which
    VC-1 does not make a finding of."""
    if ref is None or ref.exception is not None or reads_as_finding(ref):
        return False
    return ref.level in LOGGED_ERROR_LEVELS or (ref.level == "warning" and bool(FAILURE_WORDS.search(ref.template)))


def _under(first: LogEvent, ref: CatalogRef, facts: Facts) -> list[LogEvent]:
    """The events under a `logger.exception` line, in line order: the exception it was logged with is among them
    (Python prints its traceback right after the logger's line); none for a line of another level."""
    if ref.level != "exception" or first.line_no is None:
        return []
    return sorted((e for e in facts.events if (e.line_no or 0) > first.line_no), key=lambda e: e.line_no or 0)


def _caught_action(caught: LogEvent) -> str:
    where = f"{caught.code_file.rsplit('/', 1)[-1]}, in {caught.function}" if caught.code_file else "its traceback"
    return (
        f"The exception vLLM caught is under the line: {caught.message} ({where}). That is the failure to act on; "
        "the line above it says what vLLM then did."
    )


def _lead_action(ref: CatalogRef) -> str:
    """Where the cause is: under the line for `logger.exception`, before it for `logger.error` and a warning."""
    start = cut_at_word(ref.template.split("{", 1)[0].strip(), 60) or ref.template[:60]
    if ref.level == "exception":
        return (
            "vLLM logs this line with the exception it caught (logger.exception), so the traceback printed right "
            f"under it is the cause: fetch the log from this line on (`kubectl logs <pod> | grep -A 60 -F "
            f"'{start}'`) and triage the whole, traceback included."
        )
    return (
        "vLLM logged this and carried on; what it was doing is in the lines just before it (the same request id, "
        "the same process): fetch the log around it and triage the whole."
    )


RULE_OWN_ERRORS = Rule(
    code="VC-5",
    title="a failure vLLM logged that names nothing to change, when nothing else explains the text",
    category=Category.RELIABILITY,
    check=_check_own_errors,
    needs=("events",),
    fallback="failure",
    page=RulePage(
        checks="A line that matches a message of vLLM's catalog logged (not raised) at error, exception or critical "
        "level, or at warning level in words that say something failed (error, failed, cannot, unable, refused, "
        "timed out), that names no flag or environment variable and has no remedy of VC-1's; the first error "
        "(else warning), with the part of vLLM its file is in and, under a logger.exception line, the exception "
        "its traceback ends in. A worker's `WorkerProc hit an exception.` with no traceback under it is one too.",
        why="vLLM catches and logs many failures without naming a setting (a tool call that does not parse, a "
        "prompt it could not preprocess, a KV transfer that failed). Answering 'no findings' to one of them sends "
        "the engineer away from the line that says what failed; naming it, where vLLM logged it and where its "
        "cause is printed gives the next step.",
        example="ERROR [llama_tool_parser.py:141] Error in extracting tool call from response. Returning output in "
        "content with empty tool calls",
        fix="None to propose from the line alone. The finding says where the cause is (the traceback under a "
        "logger.exception line, the lines before a logger.error one) and, for the tool-call and reasoning parsers, "
        "the KV transfer connector and structured output, what setting to check.",
        limits="Kept only when no other finding is at least as severe (MEDIUM for an error, LOW for a warning) and "
        "none cites the exception read under a logger.exception line (a request too long, an out of memory): any "
        "rule that explains the text outranks it. Warnings that name nothing to change and say nothing failed stay "
        "context.",
        references=["docs/triage.md"],
    ),
)

RULES: list[Rule] = [RULE_OWN_ERRORS]
