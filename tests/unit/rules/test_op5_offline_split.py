"""OP-5.43: offline data-parallel workers given unequal work, read from the `Processed prompts` bars of
`LLM.generate` as vllm/entrypoints/common/offline.py (0.32) draws them through tqdm: `{desc}: {pct}%|{bar}|
{n}/{total} [{elapsed}<{remaining}, {rate}{postfix}]`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from advisor.collect.logs import parse_lines
from rules.catalog import op5_offline_split
from rules.evaluate import evaluate
from rules.events import LogEventKind
from rules.facts import Facts


def _bar(done: int, total: int, elapsed: str, rate: str, speed: tuple[float, float] | None = None) -> str:
    """One redraw; `speed`: the est. speed postfix later releases print (input, output toks/s)."""
    postfix = f", est. speed input: {speed[0]:.2f} toks/s, output: {speed[1]:.2f} toks/s" if speed else ""
    share = f"{100 * done // total:3d}%|{'█' * (10 * done // total):<10}|"
    return f"Processed prompts: {share} {done}/{total} [{elapsed}<00:10, {rate}{postfix}]"


def _findings(lines: list[str]):
    return op5_offline_split.RULE.evaluate(Facts(events=parse_lines(lines).events))


# Two workers of one job of 4,687 prompts, their redraws interleaved as two processes print to one terminal: the
# 2,343-prompt worker runs twice as fast as the 2,344-prompt one (the shape of lm-evaluation-harness#1468).
UNEVEN = [
    _bar(0, 2344, "00:00", "?it/s"),
    _bar(0, 2343, "00:00", "?it/s"),
    _bar(1, 2343, "00:01", "1.89s/it"),
    _bar(257, 2343, "00:03", "77.72it/s"),
    _bar(201, 2344, "00:06", "37.00it/s"),
    _bar(769, 2343, "00:07", "124.65it/s"),
    _bar(457, 2344, "00:09", "59.88it/s"),
]


def test_the_bar_is_read_with_its_clock_its_rate_and_its_speed():
    events = parse_lines(
        [_bar(1, 2343, "00:01", "1.89s/it"), _bar(500, 500, "1:01:23", "5.99it/s", speed=(1234.56, 567.89))]
    ).events
    slow, done = [e for e in events if e.kind is LogEventKind.OFFLINE_PROGRESS]
    assert (slow.prompts_done, slow.prompts_total, slow.elapsed_s) == (1, 2343, 1.0)
    assert round(slow.requests_per_s, 3) == round(1 / 1.89, 3)  # tqdm's seconds per prompt, turned over
    assert (done.elapsed_s, done.requests_per_s) == (3683.0, 5.99)
    assert (done.prompt_throughput_tps, done.generation_throughput_tps) == (1234.56, 567.89)


def test_equal_shares_at_unequal_paces_are_unequal_work_per_prompt():
    [finding] = _findings(UNEVEN)
    assert finding.title == (
        "data-parallel offline workers have unequal work: at the pace each has kept, one needs ~21 s for its 2,343 "
        "prompts, another ~46 s for its 2,344 (~2.2×)"
    )
    assert "even in count (2,344 and 2,343 prompts)" in finding.summary
    # a projection, said as one: the reporter's fast worker finished at 14 s, not the 21 s its pace at 7 s gives
    assert "idle for about 54% of the run. A projection from a bar's pace so far moves" in finding.summary
    assert [e.value for e in finding.evidence] == [109.86, 50.78]
    assert "round-robin" in finding.actions[0]
    assert evaluate(Facts(events=parse_lines(UNEVEN).events)).findings[0].rule == "OP-5.43"


def test_the_est_speed_shows_which_worker_has_the_longer_prompts():
    lines = [
        _bar(100, 1000, "00:02", "50.00it/s", speed=(40000.0, 10000.0)),
        _bar(40, 1000, "00:02", "20.00it/s", speed=(36000.0, 8000.0)),
        _bar(600, 1000, "00:10", "60.00it/s", speed=(24000.0, 6000.0)),
        _bar(200, 1000, "00:10", "20.00it/s", speed=(36000.0, 8000.0)),
    ]
    [finding] = _findings(lines)
    assert "one needs ~17 s for its 1,000 prompts, another ~50 s" in finding.title  # told apart by count and clock
    said = "the slow worker has finished average 1,800 input and 400 output tokens, the fast one's 400 and 100"
    assert said in finding.summary


def test_unequal_counts_are_named_as_the_split():
    lines = [_bar(300, 3000, "00:05", "60.00it/s"), _bar(300, 1000, "00:05", "60.00it/s")]
    lines += [_bar(600, 3000, "00:10", "60.00it/s"), _bar(600, 1000, "00:10", "60.00it/s")]
    [finding] = _findings(lines)
    assert "The shares differ in count (3,000 and 1,000 prompts): the split itself is uneven." in finding.summary


def test_workers_at_one_pace_are_balanced():
    lines = [_bar(300, 2344, "00:05", "60.00it/s"), _bar(310, 2343, "00:05", "62.00it/s")]
    lines += [_bar(700, 2344, "00:10", "70.00it/s"), _bar(650, 2343, "00:10", "65.00it/s")]
    assert _findings(lines) == []


def test_one_jobs_batches_in_turn_are_not_workers_at_once():
    """A script that calls generate once per batch draws one bar after another: they never interleave."""
    first = [_bar(0, 256, "00:00", "?it/s"), _bar(128, 256, "00:06", "21.33it/s"), _bar(256, 256, "00:08", "32.00it/s")]
    second = [_bar(0, 256, "00:00", "?it/s"), _bar(64, 256, "00:06", "10.67it/s"), _bar(256, 256, "00:24", "10.67it/s")]
    assert _findings(first + second) == []


def test_two_bars_of_one_size_that_only_share_their_start_are_two_workers():
    """The fast worker can finish before the slow one's first prompt: their `0/N` lines are all that interleave."""
    lines = [_bar(0, 32, "00:00", "?it/s"), _bar(0, 32, "00:00", "?it/s")]
    lines += [_bar(3, 32, "00:20", "9.74s/it"), _bar(32, 32, "00:37", "1.17s/it"), _bar(32, 32, "00:37", "1.17s/it")]
    lines += [_bar(1, 32, "01:30", "90.00s/it"), _bar(32, 32, "02:10", "2.00s/it")]
    [finding] = _findings(lines)
    assert "one finished its 32 prompts in 37 s, another took 130 s for its 32 (3.5×)" in finding.title
    assert "the fast worker's GPU sat idle for 72% of the run." in finding.summary


def test_bars_younger_than_the_clock_can_compare_say_nothing():
    assert _findings(UNEVEN[:4]) == []


def test_a_pace_from_the_first_few_prompts_of_a_batch_is_not_projected():
    """vLLM admits a batch together and finishes it in a burst: 1 and 3 of 32 done say nothing of the runs."""
    lines = [_bar(0, 32, "00:00", "?it/s"), _bar(0, 32, "00:00", "?it/s")]
    lines += [_bar(1, 32, "00:40", "40.00s/it"), _bar(3, 32, "00:41", "13.67s/it")]
    assert _findings(lines) == []


def test_a_full_bar_against_a_running_ones_clock_is_a_measured_lower_bound():
    lines = [_bar(0, 32, "00:00", "?it/s"), _bar(0, 32, "00:00", "?it/s"), _bar(32, 32, "00:50", "1.56s/it")]
    lines += [_bar(2, 32, "01:43", "42.86s/it")]
    [finding] = _findings(lines)
    assert finding.title.endswith("one finished its 32 prompts in 50 s, another is at 2 of its 32 after 103 s (≥2.0×)")
    assert "has sat idle for 51% of the run so far, and more until the slow one ends" in finding.summary
    # and before the running bar's clock shows the gap, no pace of 1 or 2 prompts stands in for it
    assert _findings([*lines[:3], _bar(2, 32, "01:10", "35.00s/it")]) == []


def test_bars_a_page_joined_into_one_line_are_read_as_their_redraws():
    """A log quoted from a rendered page loses its line breaks: the redraws arrive end to end, spaces collapsed."""
    joined = " ".join(" ".join(UNEVEN).split())
    [finding] = _findings([joined])
    assert "~21 s for its 2,343 prompts, another ~46 s" in finding.title


RECORDED = Path(__file__).resolve().parents[2] / "fixtures" / "vllm_cpu"


@pytest.mark.parametrize("recording", ["offline_data_parallel", "offline_data_parallel_contended"])
def test_a_real_offline_job_split_by_length_names_the_slow_half_with_its_prompts_real_length(recording):
    """vLLM 0.32 on CPU (tests/fixtures/vllm_cpu, `offline_data_parallel`): two workers given the two halves of one
    length-sorted list print their bars into one log (the contended recording: beside another vLLM worker holding a
    core). The long half's worker is named the slow one, and the mean prompt length the rule reads from each full
    bar's est. speed is the one its prompts had (prompt_token_ids; the same prompts in both recordings)."""
    log = (RECORDED / f"{recording}.log").read_text()
    measured = json.loads((RECORDED / "recording.json").read_text())["situations"]["offline_data_parallel"]["client"]
    short_half, long_half = measured["mean_prompt_tokens"]
    [finding] = _findings(log.splitlines())
    read = re.search(
        r"finished average ([\d,]+) input and [\d,]+ output tokens, the fast one's ([\d,]+) and", finding.summary
    )
    slow_in, fast_in = (float(read[group].replace(",", "")) for group in (1, 2))
    # a full bar's clock is printed in whole seconds, within a second of the one vLLM divided its speed by
    assert abs(fast_in - short_half) / short_half < 0.02
    assert abs(slow_in - long_half) / long_half < 0.02


def _cuts(recording: str) -> tuple[list[tuple[int, str]], float]:
    """The recording's log cut after each of its redraws: the finding's title at each cut (or "" for none), and the
    ratio of the two workers' whole runs, from the clocks of their full bars in the whole log."""
    events = parse_lines((RECORDED / f"{recording}.log").read_text().splitlines()).events
    redraws = [i for i, event in enumerate(events) if event.kind is LogEventKind.OFFLINE_PROGRESS]
    full = sorted({events[i].elapsed_s for i in redraws if events[i].prompts_done == events[i].prompts_total})
    titles = []
    for i in redraws:
        found = op5_offline_split.RULE.evaluate(Facts(events=events[: i + 1]))
        titles.append((i, found[0].title if found else ""))
    return titles, full[-1] / full[0]


@pytest.mark.parametrize(
    "recording", ["offline_data_parallel", "offline_data_parallel_contended", "offline_data_parallel_paced"]
)
def test_at_every_redraw_of_a_real_job_what_the_rule_says_holds_at_its_end(recording):
    """Each cut is the paste a user would bring mid-run; the whole log says how the runs really compared.

    In a batch admitted at once (vLLM's default 256 sequences, 32 prompts a worker) the slow bar sits at 1 or 2 of 32
    until its last second: no pace is projected from that, and what is said instead is the full bar's clock against
    the running one's, a lower bound the end bears out. In the paced job (max_num_seqs=4) both bars advance while
    both run: the ratio projected from their paces stays within PROJECTION_SPREAD of the one measured at the end."""
    titles, final = _cuts(recording)
    said = [title for _, title in titles if title]
    assert said, "the rule never fired on the recording"
    projected = []
    for title in said:
        stated = re.search(r"\((≥|~)?([\d.]+)×\)$", title)
        assert stated, title
        kind, ratio = stated[1], float(stated[2])
        if kind == "~":
            projected.append(ratio)
            assert 1 / op5_offline_split.PROJECTION_SPREAD <= ratio / final <= op5_offline_split.PROJECTION_SPREAD
        elif kind == "≥":
            assert ratio <= final, (title, final)
        else:
            assert round(final, 1) == ratio, (title, final)
    assert bool(projected) == (recording == "offline_data_parallel_paced"), said
