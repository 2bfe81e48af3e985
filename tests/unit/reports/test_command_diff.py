"""The proposed launch command shown flag by flag against the current one."""

from reports.command_diff import apply_changes, command_diff, split_command


def _lines(current: str, proposed: str) -> list[str]:
    return [f"{line.sign} {line.text}" for line in command_diff(current, proposed)]


def test_changed_flag_shows_old_line_then_new_line_in_place():
    lines = _lines("vllm serve m --max-num-seqs 1 --block-size 16", "vllm serve m --max-num-seqs 32 --block-size 16")
    assert lines == ["  vllm serve m", "- --max-num-seqs 1", "+ --max-num-seqs 32", "  --block-size 16"]


def test_added_and_removed_boolean_flags_are_marked():
    lines = _lines("vllm serve m --enforce-eager", "vllm serve m --enable-prefix-caching")
    assert "- --enforce-eager" in lines
    assert "+ --enable-prefix-caching" in lines


def test_equals_and_space_spellings_of_a_flag_are_the_same_flag():
    lines = _lines("vllm serve m --gpu-memory-utilization=0.9", "vllm serve m --gpu-memory-utilization 0.9")
    assert lines == ["  vllm serve m", "  --gpu-memory-utilization 0.9"]


def test_negative_numbers_are_values_not_flags():
    assert split_command("serve --seed -1 --x") == [("serve", None), ("--seed", "-1"), ("--x", None)]


def test_leading_command_words_stay_on_one_line():
    assert split_command("python -m engine serve --max-num-seqs 1")[0] == ("python -m engine serve", None)


def test_apply_changes_rebuilds_current_command_from_proposed_one():
    proposed = "vllm serve m --max-num-seqs 32 --enable-prefix-caching"
    changes = [
        {"flag": "--max-num-seqs", "current": 1, "proposed": 32},
        {"flag": "--enable-prefix-caching", "current": False, "proposed": True},
    ]
    assert apply_changes(proposed, changes, "current") == "vllm serve m --max-num-seqs 1"


def test_apply_changes_quotes_values_with_spaces():
    out = apply_changes("serve --a 1", [{"flag": "--name", "proposed": "two words"}], "proposed")
    assert out == "serve --a 1 --name 'two words'"


def test_a_command_with_an_unbalanced_quote_is_split_at_whitespace_not_refused():
    items = split_command("vllm serve m --api-key 'unbalanced --max-num-seqs 8")
    assert items[0] == ("vllm serve m", None)
    assert ("--max-num-seqs", "8") in items and ("--api-key", "'unbalanced") in items
