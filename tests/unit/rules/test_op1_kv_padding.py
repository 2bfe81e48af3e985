"""OP-1.13: vLLM's warning that it padded a hybrid model's KV-cache layer groups (vllm#46462's line, verbatim:
Qwen3.6-35B-A3B with a DFlash drafter; 10 % is what a hybrid model with an MTP head prints in public logs)."""

from __future__ import annotations

from advisor.collect.facts import server_config
from advisor.collect.logs import parse_lines
from advisor.collect.server_args import parse_command
from rules.catalog import op1_kv_padding
from rules.evaluate import evaluate
from rules.facts import Facts

DFLASH = (
    "(EngineCore pid=29723) WARNING 06-23 10:27:23 [kv_cache_utils.py:1152] Add 6 padding layers, may waste at most "
    "60.00% KV cache memory"
)
SMALL = "WARNING 05-14 08:25:39 [kv_cache_utils.py:1152] Add 3 padding layers, may waste at most 10.00% KV cache memory"


def _facts(line: str, server_args: str | None = None) -> Facts:
    events = parse_lines([line]).events
    config = server_config(parse_command(server_args), events, None) if server_args else None
    return Facts(events=events, config=config)


def test_a_large_share_is_worth_a_look_and_points_at_the_drafter():
    top = evaluate(_facts(DFLASH)).top
    assert top.rule == "OP-1.13" and top.severity.value == "medium"
    assert "6 placeholder layer(s): up to 60%" in top.title
    assert "--speculative-config" in top.actions[0]


def test_with_a_drafter_in_the_launch_it_says_to_compare_without_it():
    launch = (
        'vllm serve Qwen/Qwen3.6-35B-A3B --speculative-config \'{"method": "dflash", "num_speculative_tokens": 4}\''
    )
    [finding] = op1_kv_padding.RULE_KV_PADDING.evaluate(_facts(DFLASH, launch))
    assert finding.actions[0].startswith("Start it once without the speculative config")


def test_a_few_percent_is_the_models_layout_and_low():
    [finding] = op1_kv_padding.RULE_KV_PADDING.evaluate(_facts(SMALL))
    assert finding.severity.value == "low" and finding.actions[0].startswith("Nothing is wrong with the server")
