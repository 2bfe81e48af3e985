"""OP-3.10: a request routed to a data-parallel rank the API server does not hold."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# ai-dynamo/dynamo#5001, verbatim: both nodes of a DP 16 deployment started at --data-parallel-start-rank 0
PASTED = "- `IndexError: list index out of range` in `vllm/v1/engine/core_client.py:get_core_engine_for_request`"
# The same error as vLLM's traceback ends it (core_client.py's DPLBAsyncMPClient indexing its engines by the rank)
TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core_client.py", line 1100, in add_request_async',
    "    chosen_engine = self.get_core_engine_for_request(request)",
    '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core_client.py", line 1180, in '
    "get_core_engine_for_request",
    "    chosen_engine = self.core_engines[eng_index]",
    "IndexError: list index out of range",
]


def test_the_pasted_line_names_the_start_rank_per_node():
    top = top_finding(PASTED)
    assert top.rule == "OP-3.10" and "data-parallel rank" in top.title
    [change] = top.changes
    assert change.flag == "--data-parallel-start-rank" and "--data-parallel-size-local" in change.proposed
    assert "X-data-parallel-rank" in top.actions[1]


def test_the_traceback_is_read_by_its_last_frame():
    assert top_finding(*TRACEBACK).rule == "OP-3.10"


def test_an_index_error_elsewhere_is_not_this():
    top = top_finding("IndexError: list index out of range")
    assert top is None or top.rule != "OP-3.10"


def test_an_index_error_on_the_load_balancing_path_is_not_a_named_rank():
    # the same method, but its least-busy search indexing the engines' stats: no rank was named
    balancing = [
        line.replace("chosen_engine = self.core_engines[eng_index]", "waiting, running = current_counts[idx]")
        for line in TRACEBACK
    ]
    assert top_finding(*balancing).rule != "OP-3.10"
