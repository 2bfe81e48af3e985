"""OP-7.123: lm-format-enforcer says transformers is not installed when its import of transformers' names failed.

Why a rule of its own: vLLM's `lm-format-enforcer` guided-decoding backend imports the package's transformers
integration, which wraps every ImportError of its own imports in one message: `transformers is not installed. Please
install it with "pip install transformers[torch]"` (lmformatenforcer/integrations/transformers.py). With transformers
installed, the message hides a name transformers no longer has: 0.10.10 imports `LogitsWarper` from
transformers.generation.logits_process, and 0.10.11 imports `LogitsProcessor` there instead (read in both released
wheels). In vllm#14401 (vLLM's docker image, `--guided-decoding-backend lm-format-enforcer`) a commenter traced it to a
transformers without LogitsWarper and to lm-format-enforcer 0.10.11's fix.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

WORDS = 'transformers is not installed. Please install it with "pip install transformers[torch]"'


def _check_lmfe(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR, LogEventKind.UNPLACED_LINE):
        if WORDS in (event.message or ""):
            return [
                RULE.finding(
                    Severity.CRITICAL,
                    "lm-format-enforcer could not import transformers' names and says transformers is not installed: "
                    "its release and the installed transformers do not fit",
                    summary="lm-format-enforcer's transformers integration turns any failed import of its own into "
                    "this message, installed or not. Its 0.10.10 imports LogitsWarper, which newer transformers no "
                    "longer has; 0.10.11 imports LogitsProcessor instead.",
                    evidence=[c.log_evidence(event, name="lm-format-enforcer's message", value=WORDS)],
                    actions=[
                        '`python -c "import transformers; print(transformers.__version__)"` first: if it imports, '
                        "upgrade lm-format-enforcer (`pip install -U lm-format-enforcer`, 0.10.11 or later), as "
                        "vllm#14401's commenter found.",
                        "Or serve structured output with another backend (xgrammar: --guided-decoding-backend in the "
                        "releases that have it, --structured-outputs-config in 0.32) until the versions fit.",
                    ],
                    confidence=0.8,
                )
            ]
    return []


RULE = Rule(
    code="OP-7.123",
    title="lm-format-enforcer hides a failed transformers import as 'transformers is not installed'",
    category=Category.STARTUP,
    check=_check_lmfe,
    needs=("events",),
    page=RulePage(
        checks=f"`ImportError: {WORDS}`.",
        why="The message names a missing package where a name missing from the installed transformers is the cause.",
        example="vLLM with `--guided-decoding-backend lm-format-enforcer` failing at import with transformers "
        "installed (vllm#14401).",
        fix="lm-format-enforcer 0.10.11 or later, or another structured-output backend.",
        limits="Which name failed is in the ImportError chained under it, when the paste holds it.",
        references=["https://github.com/vllm-project/vllm/issues/14401"],
    ),
)

RULES: list[Rule] = [RULE]
