"""OP-7.185: LMCache's PD buffer is not a whole number of its chunks."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_the_buffer_is_rounded_down_to_a_whole_number_of_chunks():
    # LMCache PR #2104, verbatim: pd_buffer_size not divisible by the per-chunk bytes
    top = top_finding(
        "When I used the Disaggregated prefill feature, I encountered the following error: AssertionError: Buffer "
        "size 1073741824 must be a multiple of align bytes 29360128 in paged memory allocator."
    )
    assert top.rule == "OP-7.185"
    [change] = top.changes
    assert (change.flag, change.current, change.proposed) == ("pd_buffer_size", "1073741824", "1056964608")
    assert int(change.proposed) % 29360128 == 0
