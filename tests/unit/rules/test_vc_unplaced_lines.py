"""VC-4: error lines that name no exception and that nothing else explains are named, not 'nothing looks wrong'."""

from __future__ import annotations

from advisor.collect.logs import MAX_UNPLACED_LINES, parse_lines
from rules.catalog import vc_unplaced_lines
from rules.evaluate import evaluate
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Severity

# llm-d's decode pod after its prefill pods crashed (llm-d/llm-d#187's paste, the corpus's
# runtime-llmd-nixl-keyerror-prefill): UCX's glog lines, one per canceled transfer, two threads.
UCX = [
    f"W0904 10:52:53.0476{n:02d}     {thread} ucx_utils.cpp:62] Unexpected UCX error: Request canceled"
    for n, thread in ((94, 512), (4, 515), (12, 512), (21, 512))
]


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_native_librarys_repeated_warning_is_named_once_with_its_repeats_and_the_peer_to_fetch():
    [finding] = vc_unplaced_lines.RULE_UNPLACED_LINES.evaluate(_facts(UCX))
    assert finding.severity == Severity.LOW  # a warning, by its header's W
    assert finding.title == (
        "Unexpected UCX error: Request canceled (ucx_utils.cpp:62, a native library's log; 4 lines): "
        "a warning servops cannot place"
    )
    assert finding.evidence[0].location.endswith(":1")
    assert "the text begins with it: fetch the log from before it" in finding.actions[0]
    assert "UCS_ERR_CANCELED" in finding.actions[1] and "other role's logs" in finding.actions[1]
    assert not any("nearest" in action for action in finding.actions)  # UCX's words are not vLLM's
    assert not finding.changes


def test_the_native_header_gives_the_level_and_file_and_is_not_read_as_vllms_log():
    read = parse_lines(
        [
            "E0804 01:27:56.831786 150938 transfer_executor_base.cpp:263] Failed to connect to target: "
            "10.196.186.72:20064, status: 503900",
            "[W ProcessGroupGloo.cpp:138] Warning: Gloo connectFullMesh failed with a timeout",
            "I0804 01:27:57.000000 150938 transfer_engine.cpp:10] Transfer engine ready",
        ]
    )
    assert read.vllm_lines == 0
    first, second = read.of_kind(LogEventKind.UNPLACED_LINE)
    assert (first.level, first.code_file) == ("ERROR", "transfer_executor_base.cpp:263")
    assert first.message.startswith("Failed to connect to target")  # the header is not part of the words
    assert (second.level, second.code_file) == ("WARNING", "ProcessGroupGloo.cpp:138")
    [finding] = vc_unplaced_lines.RULE_UNPLACED_LINES.evaluate(Facts(events=read.events))
    assert finding.severity == Severity.MEDIUM and "an error servops cannot place" in finding.title
    assert "1 other unplaced line(s) follow" in finding.summary


def test_a_vllm_error_line_without_an_exception_gets_the_nearest_messages_and_where_to_read():
    lines = [
        "INFO 09-01 10:00:00 [api_server.py:1] vLLM API server version 0.10.0",
        "ERROR 09-01 10:00:05 [scheduler.py:12] Something broke while admitting requests",
    ]
    [finding] = vc_unplaced_lines.RULE_UNPLACED_LINES.evaluate(_facts(lines))
    assert "(scheduler.py:12, vLLM's logger)" in finding.title
    assert "read the lines above its first occurrence (line 2)" in finding.actions[0]
    assert finding.actions[-1].startswith("vLLM's nearest messages: ")


def test_a_wrappers_bracketed_level_is_read_and_its_words_get_no_vllm_neighbours():
    """Lemonade's journal (noamsto/nix-amd-ai#68, the corpus's startup-lemonade-vllm-readiness-timeout-zero): its own
    logger, not vLLM's."""
    stamp = "Jul 25 14:36:08 zentraldenker lemond[594237]: 2026-07-25 14:36:08.362 "
    lines = [
        "Jul 25 14:36:08 zentraldenker lemond[594237]: Waiting for vllm-server to be ready (timeout: 0s)...",
        stamp + "[Error] (WrappedServer) vllm-server failed to start within timeout",
        stamp + "[Info] (ProcessManager) Process terminated, waiting for GPU driver cleanup...",
    ]
    [finding] = vc_unplaced_lines.RULE_UNPLACED_LINES.evaluate(_facts(lines))
    assert finding.title == (
        "(WrappedServer) vllm-server failed to start within timeout (another program's logger): "
        "an error servops cannot place"
    )
    assert "(line 2)" in finding.actions[0] and len(finding.actions) == 1


def test_info_lines_and_warnings_that_do_not_say_something_failed_are_not_kept():
    lines = [
        "W0904 10:52:53.047694 512 ucx_utils.cpp:62] Using the shared-memory transport for small messages",
        "WARNING 09-01 10:00:05 [utils.py:12] Consider setting a larger batch for throughput",
        "ERROR:    Exception in ASGI application",  # uvicorn's line: a traceback follows; no header level
    ]
    assert not parse_lines(lines).of_kind(LogEventKind.UNPLACED_LINE)


def test_any_finding_at_least_as_severe_explains_the_text_and_vc4_gives_way():
    # the same UCX lines beside an engine death: HL-2 names the failure, VC-4 is dropped
    dead = "ERROR 09-04 10:52:50 [async_llm.py:420] AsyncLLM output_handler failed."
    codes = [finding.rule for finding in evaluate(_facts([dead, *UCX])).findings]
    assert "VC-4" not in codes and codes
    # alone, it is the one finding: not "nothing looks wrong"
    assert [finding.rule for finding in evaluate(_facts(UCX)).findings] == ["VC-4"]


def test_a_traceback_logged_at_error_is_no_unplaced_line_even_where_the_paste_begins_inside_it():
    # vllm#16948 (the corpus's runtime-llama4-fa3-scheduler-metadata) begins at a source line and its markers;
    # an issue's formatting can also drop the indentation (runtime-mm-image-fetch-proxy-invalidurl)
    prefix = "(VllmWorker rank=1 pid=2920557) ERROR 04-21 14:16:49 [multiproc_executor.py:470] "
    lines = [
        prefix + "    unified_attention_with_output = torch.ops.vllm.unified_attention_with_output(",
        prefix + "                                    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "ERROR 04-21 18:26:31 [serving_chat.py:200] raise InvalidURL(url)",
    ]
    assert not parse_lines(lines).of_kind(LogEventKind.UNPLACED_LINE)


def test_nccls_own_warn_line_is_an_error_of_nccls_log_with_how_to_get_its_info_lines():
    # NCCL's src/debug.cc: `host:pid:tid [device] file:line (function) NCCL WARN …` (a stamp first since 2.2x),
    # behind a vLLM worker's prefix when NCCL runs in one; its INFO lines are debug output
    lines = [
        "(VllmWorker rank=3 pid=2345) gpu-1:2345:2601 [3] NCCL INFO Channel 00/0 : 3[3] -> 4[4] via P2P/IPC",
        "(VllmWorker rank=3 pid=2345) [2026-11-30 10:00:01] gpu-1:2345:2601 [3] transport/net_ib.cc:1295 "
        "(ncclIbTest) NCCL WARN NET/IB : Got completion from peer 10.0.0.2<43434> with error 12, opcode 0",
    ]
    [event] = parse_lines(lines).of_kind(LogEventKind.UNPLACED_LINE)
    assert (event.level, event.component, event.code_file) == ("ERROR", "NCCL's log", "transport/net_ib.cc:1295")
    assert event.message.startswith("NET/IB : Got completion from peer") and not event.nearest
    [finding] = vc_unplaced_lines.RULE_UNPLACED_LINES.evaluate(Facts(events=[event]))
    assert finding.severity == Severity.MEDIUM
    assert "NCCL_DEBUG=INFO" in finding.actions[1] and "native library's" in finding.actions[2]


def test_repeats_differ_in_their_ids_and_a_flood_of_distinct_lines_is_bounded():
    same = [f"ERROR 11-30 10:00:00 [sched.py:1] Request chatcmpl-{i:08x}beef failed in batch {i}" for i in range(50)]
    [event] = parse_lines(same).of_kind(LogEventKind.UNPLACED_LINE)
    assert event.repeats == 50
    distinct = [f"ERROR 11-30 10:00:00 [x.py:1] Failure of kind {chr(97 + i % 26) * 3}" for i in range(26)]
    read = parse_lines(distinct)
    assert len(read.of_kind(LogEventKind.UNPLACED_LINE)) == MAX_UNPLACED_LINES and read.unplaced_lines == 26


def test_a_level_word_before_the_loggers_name_or_after_its_pid_is_another_programs_error():
    # NVIDIA Dynamo's Rust workers (tracing: `<ts> ERROR target: …`, ai-dynamo/dynamo#843) and Xinference's Python
    # logging (`<ts> xinference.api.restful_api 155837 ERROR    […] …`)
    for line, where in (
        ("2025-04-26T20:46:29.907Z ERROR engine.start: nixlBackendError('NIXL_ERR_BACKEND')", "engine.start"),
        ("2024-02-22 06:33:22,982 xinference.api.restful_api 155837 ERROR    [address=0.0.0.0:33063] it broke", None),
    ):
        [event] = parse_lines([line]).of_kind(LogEventKind.UNPLACED_LINE)
        assert (event.level, event.code_file) == ("ERROR", where)
    assert not parse_lines(["2025-04-26T20:46:29.907Z INFO engine.start: ready"]).of_kind(LogEventKind.UNPLACED_LINE)
