"""What carried a log line (kubectl, containerd, the journal, compose, stern, shippers' JSON) is taken off first."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from advisor.collect.log_transport import carried_lines, opened
from advisor.collect.logs import parse_lines
from benchmarks.incident_corpus import load_cases
from rules.events import LogEventKind as K

LINE = "(EngineCore_DP0 pid=7) INFO 11-30 21:47:14 [kv_cache_utils.py:1] GPU KV cache size: 54,048 tokens"
STAMP = "2026-11-30T21:47:14.123456789Z"


@pytest.mark.parametrize(
    "carried",
    [
        f"{STAMP} stderr F {LINE}",
        f"{STAMP} {LINE}",
        f"2026-11-30T21:47:14+02:00 {LINE}",
        f"2026-11-30 21:47:14 {LINE}",
        f"2026-11-30 21:47:14,123 {LINE}",
        f"[pod/vllm-7c9d8-x2k4q/vllm] {LINE}",
        f"[pod/vllm-0/vllm] {STAMP} {LINE}",
        f"Nov 30 21:47:14 gpu-node-3 vllm[4172]: {LINE}",
        f"6月 10 16:45:05 host bash[1]: {LINE}",
        f"2026-11-30T21:47:14+0000 gpu-node-3 vllm[4172]: {LINE}",
        json.dumps({"log": f"{LINE}\n", "stream": "stderr", "time": STAMP}),
        json.dumps({"labels": {"app": "vllm"}, "line": f"{STAMP} stderr F {LINE}", "timestamp": STAMP}),
        json.dumps({"@timestamp": STAMP, "message": LINE}),
        json.dumps({"MESSAGE": LINE, "_SYSTEMD_UNIT": "vllm.service"}),
        f"\x1b[32m{LINE}\x1b[0m",
        f"> {STAMP} {LINE}\r\n",
    ],
    ids=[
        "containerd",
        "kubectl-timestamps",
        "offset-stamp",
        "wrapper-logger-stamp",
        "python-asctime",
        "kubectl-prefix",
        "kubectl-prefix-timestamps",
        "journal",
        "journal-other-locale",
        "journal-short-iso",
        "docker-json-file",
        "logcli-of-containerd",
        "elasticsearch",
        "journal-json",
        "colours",
        "quoted-crlf",
    ],
)
def test_each_carrier_is_taken_off_down_to_vllms_own_line(carried):
    assert opened(carried) == [LINE]
    [event] = parse_lines([carried]).events
    assert event.kind == K.KV_CACHE_SIZE and event.kv_cache_tokens == 54048 and event.process == "EngineCore_DP0"


def test_a_runtimes_partial_line_is_joined_to_its_rest_at_the_first_lines_number():
    cut = len(LINE) // 2
    lines = [f"{STAMP} stderr P {LINE[:cut]}", f"{STAMP} stderr F {LINE[cut:]}", f"{STAMP} stdout F done"]
    assert list(carried_lines(lines)) == [(1, LINE), (3, "done")]


def test_a_split_inside_the_lines_own_envelope_takes_that_envelope_off_the_joined_whole():
    """containerd may split a journal line inside the wrapper's stamp it carries (Lemonade's, before `[Error]`):
    the stamp is whole only once the pieces are joined, so the inner envelopes come off after joining."""
    journal = "Jul 25 14:36:08 zentraldenker lemond[594237]: 2026-07-25 14:36:08.362 [Error] vllm-server failed"
    cut = journal.index(".362")
    lines = [f"{STAMP} stderr P {journal[:cut]}", f"{STAMP} stderr P {journal[cut : cut + 3]}"]
    lines.append(f"{STAMP} stderr F {journal[cut + 3 :]}")
    assert list(carried_lines(lines)) == [(1, "[Error] vllm-server failed")]


def test_a_shipper_record_of_several_lines_gives_each_under_its_number():
    record = json.dumps({"log": 'Traceback (most recent call last):\n  File "x.py", line 1, in f\nValueError: v\n'})
    assert list(carried_lines(["first", record])) == [
        (1, "first"),
        (2, "Traceback (most recent call last):"),
        (2, '  File "x.py", line 1, in f'),
        (2, "ValueError: v"),
    ]


def test_an_error_body_is_not_a_shipper_record_it_is_what_vllm_answered():
    body = '{"object":"error","message":"The model `m` does not exist.","type":"NotFoundError","code":404}'
    assert opened(body) == [body]
    assert opened('{"error":{"message":"bad","type":"BadRequestError"}}') == [
        '{"error":{"message":"bad","type":"BadRequestError"}}'
    ]
    assert parse_lines([json.dumps({"log": body + "\n"})]).error_bodies == 1  # carried, then read as the body it is


def test_a_stamp_before_a_clients_words_keeps_the_words():
    """Only the journal's ISO form with a pid is a journal line: `<stamp> Error code: 400` keeps `Error code`."""
    assert opened(f"{STAMP} Error code: 400 - {{'message': 'x'}}") == ["Error code: 400 - {'message': 'x'}"]


def test_a_runpod_workers_console_prefix_goes_and_the_error_under_it_is_read():
    # runpod-workers/worker-vllm#260, verbatim: RunPod's console glues the worker's id and level to the line
    line = (
        "duuu9mr59pks4j[info]AttributeError: TokenizersBackend has no attribute all_special_tokens_extended. Did you me"
    )
    assert opened(line) == [line.removeprefix("duuu9mr59pks4j[info]")]
    assert "a RunPod worker's console from 1 line(s)" in parse_lines([line]).describe()
    assert opened("see [info] above") == ["see [info] above"]  # a word before brackets is no worker's id


def test_compose_and_stern_prefixes_go_when_they_begin_most_lines_and_prose_keeps_its_words():
    compose = ["vllm-server-1  | INFO 11-30 a", "proxy-1        | GET /v1/models", "vllm-server-1  | ValueError: v"]
    assert [text for _, text in carried_lines(compose)] == ["INFO 11-30 a", "GET /v1/models", "ValueError: v"]
    stern = ["vllm-7c9d8-x2k4q vllm INFO 11-30 a", "vllm-7c9d8-x2k4q vllm ValueError: v"]
    assert [text for _, text in carried_lines(stern)] == ["INFO 11-30 a", "ValueError: v"]
    prose = ["my-server crashed after an hour", "then it printed", "ValueError: v"]
    assert [text for _, text in carried_lines(prose)] == prose  # one such line is not stern's shape


def test_a_message_wrapped_under_a_carrier_is_joined_as_it_is_without_one():
    """The reader joins a message an issue wrapped over two lines; it must still do so when each line came
    through the journal, so the carrier's prefix is gone before it judges the wrap."""
    wrapped = [
        "ValueError: Free memory on device cuda:0 (67.92/121.69 GiB) on startup is less than",
        "desired GPU memory utilization (0.7, 85.18 GiB).",
    ]
    bare = parse_lines(wrapped).events
    journal = parse_lines([f"Nov 30 21:47:14 node vllm[1]: {line}" for line in wrapped]).events
    assert [(e.kind, e.raw) for e in journal] == [(e.kind, e.raw) for e in bare]
    assert bare[0].kind == K.FREE_MEMORY_BELOW_REQUESTED


def test_the_reader_says_what_carried_the_text():
    lines = [json.dumps({"log": f"{STAMP} stderr F {LINE}\n"}), f"\x1b[31m{STAMP} stderr F {LINE}\x1b[0m"]
    described = parse_lines(lines).describe()
    assert "taken off before reading: containerd/CRI-O from 2 line(s)" in described
    assert "a log shipper's JSON from 1 line(s)" in described and "terminal colours from 1 line(s)" in described
    assert "taken off" not in parse_lines([LINE]).describe()


def test_an_issues_fences_and_details_are_empty_lines_never_the_rest_of_the_error_above():
    paste = ["<details><summary>Logs</summary>", "", "```log", "ValueError: v", "```", "</details>"]
    assert [text for _, text in carried_lines(paste)] == ["", "", "", "ValueError: v", "", ""]
    [event] = parse_lines(paste).events
    assert event.raw == "ValueError: v"  # not `ValueError: v ```` joined as its wrapped rest


def test_a_details_title_that_holds_the_error_is_read_as_the_error():
    # vllm-project/vllm#13230, verbatim: the error in the block's title, the rest of the paste a screenshot
    paste = ["<summary>RuntimeError: No CUDA GPUs are available</summary>"]
    assert [text for _, text in carried_lines(paste)] == ["RuntimeError: No CUDA GPUs are available"]
    [event] = parse_lines(paste).events
    assert event.raw == "RuntimeError: No CUDA GPUs are available"
    title = ["<details><summary>The output of <code>python collect_env.py</code></summary>"]  # vLLM's issue template
    assert [text for _, text in carried_lines(title)] == [""]


def test_the_indentation_every_line_shares_goes_and_a_tracebacks_own_stays():
    block = ["    Traceback (most recent call last):", '      File "x.py", line 1, in f', "    ValueError: v"]
    assert [text for _, text in carried_lines(block)] == [
        "Traceback (most recent call last):",
        '  File "x.py", line 1, in f',
        "ValueError: v",
    ]
    assert [text for _, text in carried_lines(["\tERROR a", "  ERROR b"])] == ["\tERROR a", "  ERROR b"]  # none shared


def test_a_copys_odd_spaces_and_a_byte_order_mark_are_plain_text_again():
    assert opened("\ufeffValueError:\u00a0Total\u202fnumber\u200b of heads") == ["ValueError: Total number of heads"]
    [event] = parse_lines([f"\ufeff{LINE.replace(' ', chr(0xA0))}"]).events
    assert event.kind == K.KV_CACHE_SIZE and event.kv_cache_tokens == 54048


STATS = (
    "(APIServer pid=9) INFO 11-30 21:47:14 [loggers.py:1] Engine 000: Avg prompt throughput: 1.0 tokens/s, "
    "Avg generation throughput: 2.0 tokens/s, Running: 32 reqs, Waiting: 5 reqs, GPU KV cache usage: 99.1%"
)


def _cut(lines: list[str], width: int) -> list[str]:
    return [line[i : i + width] for line in lines for i in range(0, max(len(line), 1), width)]


def test_a_log_a_terminal_hard_wrapped_is_joined_back_at_its_width():
    log = [
        LINE,
        STATS,
        "ValueError: Total number of attention heads (12) must be divisible by tensor parallel size (8).",
    ]
    wrapped = _cut(log, 70)
    assert len(wrapped) > len(log)
    carriers = Counter()
    assert [text for _, text in carried_lines(wrapped, carriers)] == log
    assert carriers["a terminal's wrapping at 70 columns"] == len(wrapped) - len(log)
    assert [e.kind for e in parse_lines(wrapped).events] == [e.kind for e in parse_lines(log).events]


def test_longest_lines_of_one_length_are_not_a_wrap_when_a_record_or_a_source_line_follows():
    """Two stats lines of one length, each followed by the next record; two frames of one length, each followed by
    its source line: a log's own shape, never joined."""
    other = STATS.replace("1.0 tokens/s", "3.0 tokens/s")
    assert [text for _, text in carried_lines([STATS, LINE, other, LINE])] == [STATS, LINE, other, LINE]
    frames = [
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 431, in _step',
        "    self.step()",
        '  File "/usr/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 537, in _step',
        "    raise ValueError(x)",
        "ValueError: x",
    ]
    assert [text for _, text in carried_lines(frames)] == frames


def test_a_tables_rows_of_the_terminals_width_are_rows_not_a_wrap():
    """nvidia-smi draws its table as rows of one width between `|` or `+` edges: each row is whole, never joined to
    the next as a terminal's cut line would be."""
    table = [
        "+-----------------------------------------+------------------------+----------------------+",
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
        "|=========================================+========================+======================|",
        "|   0  NVIDIA A100-SXM4-80GB          On  |   00000000:07:00.0 Off |                    0 |",
        "| N/A   34C    P0             62W /  400W |   72345MiB /  81920MiB |      0%      Default |",
        "+-----------------------------------------+------------------------+----------------------+",
    ]
    carriers = Counter()
    assert [text for _, text in carried_lines(table, carriers)] == table
    assert not carriers


def test_alertmanagers_label_lines_of_one_length_are_items_not_a_wrap():
    """Alertmanager's notification lists an alert's labels and annotations one per line: two of them of one length
    (the longest of the paste) are two items, never a terminal's cut line and its rest."""
    items = [
        "Annotations:",
        " - description = 10.0.0.5:8000 (Qwen/Qwen2.5-7B-Instruct): ITL p99 0.97 over the target 0.1 s.",
        " - runbook_url = https://runbooks.example/servops/docs/rule-pages.md#op-54-itl-high-under-load",
        " - summary = OP-5.4 ITL high under load",
    ]
    assert len(items[1]) == len(items[2]) == max(map(len, items))
    assert [text for _, text in carried_lines(items)] == items


RECORDED = Path(__file__).resolve().parents[3] / "fixtures" / "vllm_cpu"


def _joined(lines: list[str]) -> str:
    """A paste whose line breaks were lost: a quote of an unfenced log on a rendered page (aibrix#1154)."""
    return " ".join(line.strip() for line in lines if line.strip())


def test_a_real_vllm_failure_whose_line_breaks_were_lost_reads_as_its_lines():
    """vLLM 0.32's own failed start (`--gpu-memory-utilization` above the free memory), every line joined by a
    space: each vLLM record, each line of the engine core's traceback and of the API server's bare one is a line
    again, so the reader finds the same events in the same order (the first, vLLM's unheaded stderr line, keeps the
    warnings joined after it: prose is never cut)."""
    lines = (RECORDED / "cpu_memory_utilization.log").read_text().splitlines()
    bare, joined = parse_lines(lines), parse_lines([_joined(lines)])
    assert [(e.kind, e.message) for e in joined.events[1:]] == [(e.kind, e.message) for e in bare.events[1:]]
    assert K.FREE_MEMORY_BELOW_REQUESTED in [e.kind for e in joined.events]
    assert "lost line breaks (its records split again, numbered as lines) from 1 line(s)" in joined.describe()


def test_a_bare_traceback_joined_gets_its_lines_and_indentation_back():
    paste = (
        'Traceback (most recent call last): File "/app/serve.py", line 5, in main engine = build(args) '
        '~~~~~^^^^^^ File "/app/vllm/config.py", line 9, in build raise ValueError("heads") ValueError: Total number '
        "of attention heads (12) must be divisible by tensor parallel size (8). The above exception was the direct "
        'cause of the following exception: Traceback (most recent call last): File "/x.py", line 1, in <module> '
        "main() RuntimeError: Engine core initialization failed. See root cause above."
    )
    assert [text for _, text in carried_lines([paste])] == [
        "Traceback (most recent call last):",
        '  File "/app/serve.py", line 5, in main',
        "    engine = build(args)",
        "    ~~~~~^^^^^^",
        '  File "/app/vllm/config.py", line 9, in build',
        '    raise ValueError("heads")',
        "ValueError: Total number of attention heads (12) must be divisible by tensor parallel size (8).",
        "The above exception was the direct cause of the following exception:",
        "Traceback (most recent call last):",
        '  File "/x.py", line 1, in <module>',
        "    main()",
        "RuntimeError: Engine core initialization failed. See root cause above.",
    ]


def test_joined_records_are_numbered_as_lines_and_the_lines_after_them_move_on():
    """The rules order events and measure their distance by line: records that were lines get numbers of their
    own, and each physical line after them is shifted by as many."""
    joined = "INFO 06-09 05:30:55 [__init__.py:239] a INFO 06-09 05:30:58 [api_server.py:1043] b"
    assert list(carried_lines(["first", joined, "last"])) == [
        (1, "first"),
        (2, "INFO 06-09 05:30:55 [__init__.py:239] a"),
        (3, "INFO 06-09 05:30:58 [api_server.py:1043] b"),
        (4, "last"),
    ]


@pytest.mark.parametrize(
    "line",
    [
        # a person's words quoting one header: one header in a message proves nothing
        "the pod said INFO 06-09 05:30:58 [api_server.py:1043] Starting vLLM API server and stopped",
        # an exception quoting an exception, not after a space
        "RuntimeError: Worker failed with error 'ValueError: bad value', please check the stack trace above",
        # a frame of a traceback pasted alone, and a source line
        '  File "/app/vllm/config.py", line 9, in build',
        '    raise ValueError("heads")',
        # a chat message that names a level
        "the pod printed ERROR: twice and then INFO: once",
        # real lines of the corpus and recordings that hold two record starts and are one line each: V1's engine
        # core announcing the traceback on the next lines, a wrapper's level or date in front of a frame or of
        # vLLM's own line, a process prefix in front of uvicorn's access line, a frame with a table's edge
        "ERROR 03-20 08:11:30 [core.py:340] EngineCore hit an exception: Traceback (most recent call last):",
        'ERROR:      File "/usr/lib/python3.10/os.py", line 215, in makedirs',
        "ERROR:    (Worker_TP1 pid=3534) ERROR 10-11 22:28:17 [multiproc_executor.py:694] RuntimeError: Could not "
        "find nvcc",
        '2025-02-19   File "/usr/local/lib/python3.10/dist-packages/vllm/utils.py", line 1813, in __getattr__',
        '(APIServer pid=1) INFO:     172.20.30.1:62052 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server '
        "Error",
        'File "/vllm/lora/ops/triton_ops/lora_shrink_op.py", line 149, in _lora_shrink |  ',
        # LiteLLM's chain of exception names in front of one message
        "litellm.exceptions.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: "
        "Hosted_vllmException - Error code: 400",
    ],
)
def test_a_line_that_holds_one_record_is_never_cut(line):
    carriers = Counter()
    assert [text for _, text in carried_lines(["x", line], carriers)] == ["x", line]
    assert not carriers


def _is_cut(line: str) -> bool:
    carriers = Counter()
    list(carried_lines([line], carriers))
    return any(name.startswith("lost line breaks") for name in carriers)


def test_no_line_of_a_real_paste_or_recording_is_cut():
    """Every line of the incident corpus and of the recorded logs is one record as pasted: none may be taken for a
    paste whose line breaks were lost."""
    recordings = [*RECORDED.parent.glob("**/*.log")]
    texts = [case.quoted for case in load_cases()] + [path.read_text(errors="replace") for path in recordings]
    assert len(recordings) > 10
    assert [line for text in texts for line in text.splitlines() if _is_cut(line)] == []


def test_an_exception_written_after_a_progress_bars_last_redraw_is_read_as_its_own_line():
    """vllm#4151's line, verbatim: tqdm's last redraw of an offline job ends without a line break when the job
    dies, so the exception starts on the bar's line."""
    line = (
        "Processed prompts:   5%|▌         | 429/8535 [00:27<08:37, 15.68it/s] RuntimeError: probability tensor "
        "contains either `inf`, `nan` or element < 0"
    )
    assert [text for _, text in carried_lines([line])] == [
        "Processed prompts:   5%|▌         | 429/8535 [00:27<08:37, 15.68it/s]",
        "RuntimeError: probability tensor contains either `inf`, `nan` or element < 0",
    ]
    kinds = [event.kind for event in parse_lines([line]).events]
    assert kinds == [K.OFFLINE_PROGRESS, K.NAN_PROBABILITIES]


@pytest.mark.parametrize("escape", ["\x1b", "^[", "\ufffd"])
def test_terminal_colours_go_whether_the_escape_was_kept_shown_in_caret_notation_or_replaced(escape):
    # vllm PR #51654's CI log showed the escape as U+FFFD; vllm#31709's copy as `^[`
    line = f"{escape}[0;36m(APIServer pid=1){escape}[0;0m AttributeError: 'str' object has no attribute 'get'"
    assert opened(line) == ["(APIServer pid=1) AttributeError: 'str' object has no attribute 'get'"]
    assert opened("a regex ^[[a-z]] and \ufffd alone stay") == ["a regex ^[[a-z]] and \ufffd alone stay"]
