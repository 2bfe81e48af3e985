"""OP-6.4: the draft model's vocabulary is not the target's, and V0's speculative decoding refuses the pair.

Why a rule of its own: V0's SpecDecodeWorker checks once that the draft and the target workers have the same vocab
size, with a bare assertion whose source line is all a paste shows (`assert all(vocab_sizes[0] == vocab_size for
vocab_size in vocab_sizes)`, `_vocab_size` in vllm/spec_decode/spec_decode_worker.py, 0.4 to 0.9): the draft's
tokens are scored by the target token for token, so both must index one vocabulary. Models of one family can
still differ in their embedding rows: Qwen2.5's 1.5B checkpoint has 151,936 and its 7B 152,064, so
DeepSeek-R1-Distill-Qwen-1.5B drafting for the 7B fails here (vllm#14939).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_draft_vocab(facts: Facts) -> list[Finding]:
    seen = facts.events_of(LogEventKind.DRAFT_VOCAB_MISMATCH)
    if not seen:
        return []
    event = seen[0]
    return [
        RULE.finding(
            Severity.CRITICAL,
            "the draft model's vocab size differs from the target's: V0's speculative decoding scores the draft's "
            "tokens with the target's, so both must have the same vocabulary",
            summary="vLLM's SpecDecodeWorker asserts at start-up that the draft and target vocab sizes are equal. "
            "Checkpoints of one family can differ in their embedding rows (Qwen2.5 1.5B: 151,936; 7B: 152,064).",
            evidence=[c.log_evidence(event, name="V0's speculative decoding check", value=event.message)],
            actions=[
                "Compare `vocab_size` in the two models' config.json and pick a draft whose vocab_size equals the "
                "target's (one published as its draft, where the family has one).",
                "Or speculate without a separate vocabulary: n-gram lookup (`--speculative-model [ngram]` on V0, "
                '`{"method": "ngram"}` in --speculative-config later), or EAGLE/MTP heads trained for the target.',
            ],
            confidence=0.85,
        )
    ]


RULE = Rule(
    code="OP-6.4",
    title="a draft model whose vocabulary is not the target's",
    category=Category.SPEC_DECODE,
    check=_check_draft_vocab,
    needs=("events",),
    page=RulePage(
        checks="V0's `assert all(vocab_sizes[0] == vocab_size for vocab_size in vocab_sizes)` "
        "(vllm/spec_decode/spec_decode_worker.py).",
        why="The draft's tokens are verified by the target token for token; the two must share one vocabulary.",
        example="DeepSeek-R1-Distill-Qwen-1.5B drafting for DeepSeek-R1-Distill-Qwen-7B (vllm#14939).",
        fix="A draft with the target's vocab_size, n-gram speculation, or EAGLE/MTP heads for the target.",
        limits="The assertion prints no sizes; the two config.json files say which differ.",
        references=["https://github.com/vllm-project/vllm/issues/14939"],
    ),
)

RULES: list[Rule] = [RULE]
