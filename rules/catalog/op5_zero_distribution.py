"""OP-5.64: sampling failed because the request's distribution had no probability left (all tokens excluded).

Why a rule of its own: torch.multinomial refuses a distribution whose probabilities sum to zero or less, `RuntimeError:
invalid multinomial distribution (sum of probabilities <= 0)`, which is another failure than HL-9's inf or NaN: the
probabilities are finite and all zero, so the sampling parameters excluded every token. In vllm#719 (vLLM 0.1.3) the
request's top_k was 0.4, a fraction where vLLM takes a count of tokens; the reporter changed it and the error went.
vLLM's SamplingParams has refused such values since (`top_k must be -1 (disable), or at least 1` from 0.4, `top_k must
be an integer` from 0.5.5, the message catalog), so on a later release the words come from a sampler of another
program (a framework that samples itself) or from logits masked entirely (every allowed token banned).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

CHECKS_TOP_K_FROM = (0, 4)  # SamplingParams refuses a top_k below 1 (other than the disabling value) from 0.4


def _zero_finding(facts: Facts, event: LogEvent, _match: object) -> Finding:
    release = c.vllm_release(facts)
    checked = release is not None and release >= CHECKS_TOP_K_FROM
    return RULE_ZERO_DISTRIBUTION.finding(
        Severity.HIGH,
        "sampling failed: the request's sampling parameters (or a mask) left no token any probability",
        summary="torch.multinomial refuses probabilities that sum to zero: every token was excluded, by sampling "
        "parameters that keep none (a top_k below one token, vllm#719's 0.4 on vLLM 0.1.3) or by a mask that bans "
        "every allowed token (logit_bias, bad words, a grammar). Unlike inf or NaN probabilities, the model's "
        "arithmetic is not at fault."
        + (" This vLLM already refuses a top_k below 1, so look at the mask or at who sampled." if checked else ""),
        evidence=[c.log_evidence(event, name="sampling", value=event.message)],
        actions=[
            "Check the failing request's sampling parameters: top_k is a count of tokens (a whole number of at least "
            "1, or the value that disables it: -1, or 0 from vLLM 0.9), top_p above 0, min_p below 1; vLLM from 0.4 "
            "refuses a top_k below 1 itself.",
            "Check what masks tokens in that request: a logit_bias of -100 on many ids, bad words, or structured "
            "output whose grammar allows nothing at that point.",
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
        why="Every token was excluded: sampling parameters that keep none, or a mask that bans all; not the "
        "model's arithmetic (HL-9).",
        example="`RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)` with top_k=0.4 on "
        "vLLM 0.1.3 (vllm#719: fixed by the reporter's change of top_k).",
        fix="A whole top_k of at least 1 (or the disabling value), top_p above 0; a mask that leaves a token.",
        limits="The line does not say which request or parameter; later vLLM releases refuse such a top_k before "
        "sampling.",
        references=["https://github.com/vllm-project/vllm/issues/719"],
    ),
)

RULES: list[Rule] = [RULE_ZERO_DISTRIBUTION]
