"""OP-5.32: gpt-oss's output refused by openai_harmony's parser, by what the refusal says."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op5_harmony
from rules.evaluate import evaluate
from rules.events import LogEventKind
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_turns_end_where_a_message_must_start_is_generation_past_the_end_and_drops_ignore_eos():
    # vllm-project/guidellm#979: GuideLLM sent ignore_eos to gpt-oss-120b on vLLM 0.18
    line = (
        "ValueError('Streaming response returned an error: Unexpected token 200002 while expecting start token 200006')"
    )
    [finding] = op5_harmony.RULE_HARMONY.evaluate(_facts([line]))
    assert finding.title == (
        "gpt-oss generated past the end of its turn: Harmony's parser got <|return|> (200002) where a new "
        "message's <|start|> (200006) must come"
    )
    assert finding.actions[0].startswith("Drop ignore_eos (and min_tokens) from requests to gpt-oss")
    assert finding.actions[1].startswith("Upgrade vLLM")


def test_headers_the_parser_cannot_read_are_named_in_words_and_upgrade_first():
    # tenstorrent/vllm#386: the fork's merge of v0.16 let gpt-oss write headers off the format
    lines = [
        "HarmonyError('Unknown role: <|start|>assistant')",
        "HarmonyError('channel marker present but no channel value found in header')",
    ]
    [finding] = op5_harmony.RULE_HARMONY.evaluate(_facts(lines))
    assert finding.title == (
        "gpt-oss wrote message headers Harmony's parser cannot read: a role Harmony does not know; a channel "
        "marker with no channel name after it"
    )
    assert finding.actions[0].startswith("Upgrade vLLM") and "tenstorrent/vllm#386" in finding.actions[1]


def test_a_deepseek_encoders_unknown_role_is_vllms_own_message_not_harmonys():
    facts = _facts(["NotImplementedError: Unknown role: tool"])
    assert not facts.events_of(LogEventKind.HARMONY_ERROR)
    assert not [f for f in evaluate(facts).findings if f.rule == "OP-5.32"]


def test_tokens_left_in_a_header_are_read_from_a_sentence_without_the_error_class():
    # ovh/public-cloud-roadmap#993: the error quoted inside a sentence, fixed by a later vLLM
    line = 'using gpt-oss-20b, sometimes i get the error "unexpected tokens remaining in message header".'
    [finding] = op5_harmony.RULE_HARMONY.evaluate(_facts([line]))
    assert finding.title.endswith("tokens left over in a message header")
    assert finding.actions[0].startswith("Upgrade vLLM")
