"""OP-5.64: sampling failed because the distribution handed to torch.multinomial had no probability left.

Why a rule of its own: torch.multinomial refuses probabilities that sum to zero or less, `RuntimeError: invalid
multinomial distribution (sum of probabilities <= 0)`, another failure than HL-9's inf or NaN. Logits masked to -inf
do not give it (a softmax of a row of -inf is NaN, which HL-9's words report), so the probabilities were cut to zero
after the softmax: a sampler that applies top-k or top-p to the probabilities themselves (vLLM's early ones did), or a
probability tensor a caller built. In vllm#719 (vLLM 0.1.3) the request's top_k was 0.4, a fraction where vLLM takes a
count of tokens, which kept no token; the reporter changed it and the error went. vLLM's SamplingParams refuses a
fractional top_k from 0.5.5 (`top_k must be an integer, got …`, the message catalog), so on a later release the words
come from a sampler of another program (a framework that samples itself).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage

REFUSES_FRACTIONAL_TOP_K_FROM = (0, 5, 5)  # `top_k must be an integer` (the message catalog's first release)


def _zero_finding(facts: Facts, event: LogEvent, _match: object) -> Finding:
    release = c.vllm_release(facts)
    checked = release is not None and release >= REFUSES_FRACTIONAL_TOP_K_FROM
    return RULE_ZERO_DISTRIBUTION.finding(
        c.death_severity(facts),
        "sampling failed: the probabilities were cut to nothing after the softmax (a top_k below one token, or a "
        "sampler's own cut)",
        summary="torch.multinomial refuses probabilities that sum to zero. A softmax leaves every token some "
        "probability, so a cut made after it removed them all: a top_k below one token (vllm#719's 0.4 on vLLM "
        "0.1.3, whose sampler cut the probabilities), or a probability tensor the calling code built. Unlike inf or "
        "NaN probabilities (HL-9), the model's arithmetic is not at fault."
        + (
            " This vLLM already refuses a fractional top_k (from 0.5.5), so the sampler that failed is likely another "
            "program's."
            if checked
            else ""
        ),
        evidence=[c.log_evidence(event, name="sampling", value=event.message)],
        actions=[
            "Check the failing request's top_k: a whole count of tokens, at least 1 (or the value that disables it), "
            "never a fraction as top_p is; vLLM from 0.5.5 refuses a fractional one itself.",
            "Where the calling code samples itself (a framework over vLLM's logits), check the probabilities it cuts "
            "before torch.multinomial: a cut that keeps no token gives these words.",
        ],
        confidence=0.65,
    )


RULE_ZERO_DISTRIBUTION = Rule(
    code="OP-5.64",
    title="sampling failed on a distribution with no probability left",
    category=Category.RELIABILITY,
    check=c.on_kind(LogEventKind.ZERO_PROBABILITIES, _zero_finding),
    needs=("events",),
    page=RulePage(
        checks="torch.multinomial's `invalid multinomial distribution (sum of probabilities <= 0)`.",
        why="A cut after the softmax kept no token: a fractional top_k on early vLLM, or a caller's own sampler; not "
        "the model's arithmetic (HL-9).",
        example="`RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)` with top_k=0.4 on "
        "vLLM 0.1.3 (vllm#719: fixed by the reporter's change of top_k).",
        fix="A whole top_k of at least 1 (or the disabling value); a caller's cut that keeps a token.",
        limits="The line does not say which request or parameter; vLLM from 0.5.5 refuses a fractional top_k "
        "before sampling.",
        references=["https://github.com/vllm-project/vllm/issues/719"],
    ),
)

RULES: list[Rule] = [RULE_ZERO_DISTRIBUTION]
