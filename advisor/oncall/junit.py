"""A triage as a JUnit report: one test case per rule evaluated, failed when the rule fired.

Why JUnit: it is what CI systems (GitLab, Jenkins, GitHub's test reporters) already read and show
per case, the way kube-bench and Popeye hand their checks to CI. A rule that could not run for want
of facts is a skipped case, so a green report never hides a rule that did not look.
"""

from __future__ import annotations

from collections.abc import Iterable
from xml.sax.saxutils import escape, quoteattr

from advisor.redact import redact
from rules.catalog import UnknownRuleError, get_rule
from rules.model import Finding


def junit_report(rules_run: Iterable[str], rules_skipped: Iterable[str], findings: Iterable[Finding], name: str) -> str:
    """The JUnit XML text (one `testsuite`) of one triage: `name` is what was triaged (its target)."""
    fired: dict[str, list[Finding]] = {}
    for finding in findings:
        fired.setdefault(finding.rule, []).append(finding)
    cases, failures, skipped = [], 0, 0
    for code in rules_run:
        case = f'  <testcase classname="servops.rules" name={quoteattr(_case_name(code))}>'
        if code in fired:
            failures += 1
            worst = min(fired[code], key=lambda f: f.severity.rank)
            details = "\n".join(f"[{f.severity.value}] {f.title}" for f in fired[code])
            case += (
                f"\n    <failure type={quoteattr(worst.severity.value)} message={quoteattr(redact(worst.title))}>"
                f"{escape(redact(details))}\n{escape(f'servops rules explain {code}')}</failure>\n  "
            )
        cases.append(case + "</testcase>")
    for code in rules_skipped:
        skipped += 1
        cases.append(
            f'  <testcase classname="servops.rules" name={quoteattr(_case_name(code))}>'
            '<skipped message="the facts this rule needs were not given"/></testcase>'
        )
    header = (
        f'<testsuite name={quoteattr("servops triage " + redact(name))} tests="{len(cases)}" '
        f'failures="{failures}" errors="0" skipped="{skipped}">'
    )
    return "\n".join(['<?xml version="1.0" encoding="UTF-8"?>', header, *cases, "</testsuite>"]) + "\n"


def _case_name(code: str) -> str:
    try:
        return f"{code} {get_rule(code).title}"
    except UnknownRuleError:  # a code from another catalog version keeps its bare code
        return code
