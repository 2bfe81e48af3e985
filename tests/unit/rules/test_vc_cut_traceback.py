"""VC-3: a traceback pasted without its exception line says where vLLM was and what to fetch."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from advisor.collect.pasted_text import Frame, phase_of
from rules.catalog import vc_cut_traceback
from rules.evaluate import evaluate
from rules.events import LogEventKind
from rules.facts import Facts

# vllm#9791 (Phi-3-small on a V100), as the corpus quotes it: a docker-compose prefix, cut after the frame
# that profiles memory; the exception line (blocksparse attention) is not in the paste.
PREFIX = "phi_3_small_instruct_api  |   "
CUT_AT_STARTUP = [
    PREFIX + 'File "/usr/local/lib/python3.10/site-packages/vllm/engine/multiprocessing/engine.py", line 141, in '
    "from_engine_args",
    PREFIX + "  return cls(",
    PREFIX + 'File "/usr/local/lib/python3.10/site-packages/vllm/engine/llm_engine.py", line 484, in '
    "_initialize_kv_caches",
    PREFIX + "  self.model_executor.determine_num_available_blocks())",
]


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_traceback_cut_at_startup_names_the_frame_the_component_and_what_vllm_was_doing():
    [finding] = vc_cut_traceback.RULE_CUT_TRACEBACK.evaluate(_facts(CUT_AT_STARTUP))
    assert finding.title == (
        "a traceback cut before its exception line, in engine, during startup: last vLLM frame "
        "llm_engine.py:484 in _initialize_kv_caches"
    )
    assert "sizing and allocating the KV cache" in finding.summary
    assert finding.evidence[0].value == "llm_engine.py:484 in _initialize_kv_caches"
    assert finding.actions[0].startswith("Fetch the rest of the traceback")
    assert not finding.changes  # the cause is in the line that was not pasted: nothing to change yet


def test_a_traceback_cut_in_the_workers_message_queue_names_the_queue_not_nccl():
    """vllm#38916 as quoted: the engine core waiting in the multiprocess executor for its workers' reply."""
    prefix = "(EngineCore pid=2906234) ERROR 04-01 22:27:40 [v1/engine/core.py:1101] "
    site = "/usr/local/lib/python3.12/site-packages/vllm/"
    lines = [
        prefix + "Traceback (most recent call last):",
        prefix + f'  File "{site}v1/executor/multiproc_executor.py", line 376, in get_response',
        prefix + "    status, result = mq.dequeue(timeout=dequeue_timeout)",
        prefix + f'  File "{site}distributed/device_communicators/shm_broadcast.py", line 755, in dequeue',
        prefix + "    with self.acquire_read(timeout, indefinite) as buf:",
    ]
    [finding] = vc_cut_traceback.RULE_CUT_TRACEBACK.evaluate(_facts(lines))
    assert "in the shared-memory message queue between the engine and its workers" in finding.title
    assert "NCCL" not in finding.title and "the workers' reply, or a worker's next step" in finding.summary


def test_a_finished_traceback_is_not_cut_and_a_finding_that_names_a_cause_ranks_first():
    ended = [*CUT_AT_STARTUP, "ValueError: boom"]
    assert not parse_lines(ended).of_kind(LogEventKind.CUT_TRACEBACK)
    # the Transformers-backend line (OP-7.9, MEDIUM) explains a crash while the model is built: it stays on top
    backend = "INFO 08-01 10:00:00 [__init__.py:1] Using Transformers backend."
    ranked = evaluate(_facts([backend, *CUT_AT_STARTUP])).findings
    assert [f.rule for f in ranked][-1] == "VC-3" and ranked[0].rule != "VC-3"


def test_the_outermost_frame_naming_a_phase_decides_it():
    step = Frame("/x/vllm/v1/engine/core.py", 1, "run_busy_loop")
    start = Frame("/x/vllm/engine/llm_engine.py", 2, "_initialize_kv_caches")
    forward = Frame("/x/vllm/worker/model_runner.py", 3, "execute_model")
    assert phase_of([start, forward]) == "startup"  # a profiling run's forward pass is still the start
    assert phase_of([step, forward]) == "serving"
    assert phase_of([forward]) == "unknown"
    assert start.call() == "llm_engine.py:2 in _initialize_kv_caches"


def test_a_traceback_with_no_vllm_frame_names_the_package_it_stops_in_not_vllm():
    # intel/ipex-llm#11559: uvicorn's frame is the last one pasted; microsoft/autogen: the client's own code
    lines = [
        "ERROR:    Exception in ASGI application",
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.11/dist-packages/uvicorn/protocols/http/httptools_impl.py", line 399, in '
        "run_asgi",
        "    result = await app(  # type: ignore[func-returns-value]",
    ]
    [finding] = vc_cut_traceback.RULE_CUT_TRACEBACK.evaluate(_facts(lines))
    assert finding.title == (
        "a traceback cut before its exception line, outside vLLM, phase unknown: last frame (in uvicorn; none of "
        "vLLM's) httptools_impl.py:399 in run_asgi"
    )
    assert "vLLM frame" not in finding.evidence[0].description


# OpenPipe/ART#176, as the corpus quotes it: a Colab cell's log, then the notebook's traceback header and nothing after.
CUT_AT_HEADER = [
    "INFO 07-02 23:55:15 [model_runner.py:1203] Model loading took 2.2550 GiB and 30.916279 seconds",
    "---------------------------------------------------------------------------",
    "RuntimeError                              Traceback (most recent call last)",
]


def test_a_notebook_traceback_cut_at_its_header_names_the_class_and_what_to_copy():
    [finding] = vc_cut_traceback.RULE_CUT_TRACEBACK.evaluate(_facts(CUT_AT_HEADER))
    assert finding.title == (
        "a RuntimeError traceback cut at its header, during startup: no frame and no message pasted"
    )  # after the weights loaded: still starting
    assert finding.actions[0].startswith("Copy the whole traceback from the notebook cell's output")


def test_a_notebook_header_names_the_class_of_a_traceback_cut_in_its_frames_and_a_whole_one_is_not_cut():
    frames = ["  File ~/x/lib/python3.11/site-packages/vllm/worker/model_runner.py:1203, in load_model(self)"]
    [finding] = vc_cut_traceback.RULE_CUT_TRACEBACK.evaluate(_facts([*CUT_AT_HEADER, *frames]))
    assert finding.title.startswith("a RuntimeError traceback cut before its exception line")
    whole = parse_lines([*CUT_AT_HEADER, *frames, "RuntimeError: CUDA error: no kernel image is available"])
    assert not [e for e in whole.events if e.kind == LogEventKind.CUT_TRACEBACK]
