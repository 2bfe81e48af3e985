"""What a real vLLM 0.32.0 (CPU build) printed and exposed, read through triage's collectors and rules.

Each test pins one difference between what servops expected (its hand-written corpus) and what the
recording in tests/fixtures/vllm_cpu shows; the expected numbers are read from the recorded files
themselves wherever they state them (the log's `CPU KV cache size` line, `vllm:cache_config_info`),
so a re-recording with other numbers still checks the same things.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from advisor.catalog.models import resolve_model
from advisor.catalog.vllm_versions import vllm_cpu_defaults
from advisor.collect.facts import server_config
from advisor.collect.kv_space import parse_kv_cache_memory_bytes
from advisor.collect.logs import parse_lines, read_log
from advisor.collect.metrics import load_file
from advisor.memory.budget import LaunchConfig
from advisor.memory.cpu_backend import CpuKvSpace, size_cpu_kv
from advisor.triage.collect import run_triage
from advisor.triage.result import TriageRequest, TriageResult
from rules.catalog.health import RULE_DEAD, RULE_HANG
from rules.events import LogEventKind as K
from rules.facts import ConfigSource, Facts
from rules.vllm_defaults import (
    CPU_API_SERVER_MAX_NUM_BATCHED_TOKENS,
    CPU_API_SERVER_MAX_NUM_SEQS,
    CPU_DEFAULT_BLOCK_SIZE,
)
from tests.unit.advisor.data_paths import DATA_DIR

RECORDED = Path(__file__).resolve().parents[3] / "fixtures" / "vllm_cpu"
SERVING = ("idle", "moderate", "saturated", "client_overload")
CAPACITY = re.compile(
    r"CPU KV cache size: (?P<tokens>[\d,]+) tokens, Maximum concurrency for (?P<len>[\d,]+) "
    r"tokens per request: (?P<x>[\d.]+)x"
)


def path(name: str) -> str:
    return str(RECORDED / name)


def triage(situation: str, *, log_only: bool = False, **request) -> TriageResult:
    metrics = (
        []
        if log_only or not (RECORDED / f"{situation}_before.prom").exists()
        else [path(f"{situation}_before.prom"), path(f"{situation}_after.prom")]
    )
    return run_triage(
        TriageRequest(
            logs=path(f"{situation}.log"), metrics_files=metrics, metrics_interval_s=8 if metrics else None, **request
        )
    )


def labels(situation: str) -> dict[str, str]:
    return dict(load_file(path(f"{situation}_after.prom")).samples("vllm:cache_config_info")[0].labels)


# --- 1. the start-up shm_broadcast wait is compilation, not a hang ------------------------------


@pytest.mark.parametrize("situation", SERVING)
def test_the_startup_broadcast_wait_is_marked_as_startup(situation):
    events = read_log(path(f"{situation}.log")).events
    [wait] = [e for e in events if e.kind == K.SHM_BROADCAST_HANG]
    [ready] = [e for e in events if e.kind == K.ENGINE_READY]
    assert wait.during_startup is True and wait.line_no < ready.line_no and ready.init_seconds > 0


@pytest.mark.parametrize("situation", SERVING)
def test_no_hang_is_reported_for_startup_compilation(situation):
    for result in (triage(situation), triage(situation, log_only=True)):
        assert "HL-1" not in {f.rule for f in result.findings}
        assert any(note.startswith("start-up compiled") for note in result.notes), result.notes


def test_a_broadcast_wait_after_the_server_started_is_still_a_hang():
    lines = (RECORDED / "idle.log").read_text().splitlines()
    wait = next(line for line in lines if "No available shared memory broadcast block" in line)
    result = parse_lines([*lines, wait, wait], source="idle+hang")
    waits = result.of_kind(K.SHM_BROADCAST_HANG)
    assert [e.during_startup for e in waits] == [True, False, False]
    [finding] = RULE_HANG.evaluate(Facts(events=result.events))
    assert finding.severity.value == "critical" and "2 shm_broadcast" in finding.title


# --- 2. launch flags read back as vLLM 0.32 spells and chooses them -----------------------------


def test_the_rebuilt_command_uses_vllm_032_flags_and_pins_no_auto_block_size():
    result = triage("saturated")
    command = result.current_command
    assert labels("saturated")["user_specified_block_size"] == "False"
    assert f"--kv-cache-memory-bytes {labels('saturated')['kv_cache_memory_bytes']}" in command
    assert "--kv-cache-memory " not in command and "--block-size" not in command
    assert "--served-model-name smol" in command and "['smol']" not in command


def test_the_cpu_server_reads_back_model_name_batch_defaults_and_kv_size():
    result = triage("saturated")
    config, memory = result.facts.config, result.facts.memory
    log = (RECORDED / "saturated.log").read_text()
    capacity = CAPACITY.search(log)
    cache = labels("saturated")
    assert config.device == "cpu" and config.vllm_version == "0.32.0"
    assert config.model.endswith("SmolLM2-135M-Instruct") and config.flags["--served-model-name"] == "smol"
    assert (config.max_num_seqs, config.max_num_batched_tokens) == (128, 2048)
    assert config.source_of("--max-num-seqs") == config.source_of("--max-num-batched-tokens") == ConfigSource.DEFAULT
    assert config.block_size == int(cache["block_size"]) == CPU_DEFAULT_BLOCK_SIZE
    tokens = int(capacity["tokens"].replace(",", ""))
    assert memory.kv_cache_tokens == tokens == int(cache["kv_cache_size_tokens"])
    assert memory.num_blocks * memory.block_size == tokens == int(cache["num_gpu_blocks"]) * int(cache["block_size"])
    assert memory.max_concurrency == pytest.approx(float(capacity["x"]))
    assert any("CPU backend" in note and "--max-num-seqs 128" in note for note in result.notes)


def test_cpu_defaults_are_one_table_scaled_by_world_size():
    assert vllm_cpu_defaults((0, 32, 0)) == {
        "max_num_seqs": CPU_API_SERVER_MAX_NUM_SEQS,
        "max_num_batched_tokens": CPU_API_SERVER_MAX_NUM_BATCHED_TOKENS,
        "block_size": CPU_DEFAULT_BLOCK_SIZE,
    }
    assert vllm_cpu_defaults((0, 32, 0), world_size=2)["max_num_seqs"] == 2 * CPU_API_SERVER_MAX_NUM_SEQS
    assert vllm_cpu_defaults((0, 31, 0)) is None  # not read: nothing assumed


def test_an_explicit_flag_beats_the_cpu_default():
    result = run_triage(TriageRequest(logs=path("saturated.log"), server_args="vllm serve m --max-num-seqs 16"))
    assert result.facts.config.max_num_seqs == 16
    assert result.facts.config.source_of("--max-num-seqs") == ConfigSource.ARGS


# --- 3. vLLM 0.32's CPU wording ----------------------------------------------------------------


def test_cpu_kv_lines_and_stats_lines_are_read():
    events = read_log(path("saturated.log")).events
    [size] = [e for e in events if e.kind == K.KV_CACHE_SIZE]
    capacity = CAPACITY.search((RECORDED / "saturated.log").read_text())
    assert size.device == "CPU" and size.kv_cache_tokens == int(capacity["tokens"].replace(",", ""))
    assert size.max_model_len == int(capacity["len"].replace(",", "")) and size.max_concurrency == float(capacity["x"])
    stats = [e for e in events if e.kind == K.STATS_LINE]
    assert stats and all(e.kv_usage is not None and "CPU KV cache usage" in e.raw for e in stats)
    [space] = [e for e in events if e.kind == K.AVAILABLE_KV_MEMORY]
    assert space.available_kv_gib == 1.0  # "Explicitly set (1.0/… GiB) for KV cache on node 0"


def test_the_cpu_memory_utilization_error_is_a_free_memory_event():
    [event] = read_log(path("cpu_memory_utilization.log")).of_kind(K.FREE_MEMORY_BELOW_REQUESTED)
    numbers = re.search(
        r"\((?P<free>[\d.]+)/(?P<total>[\d.]+) GiB\) on startup is less than desired CPU memory "
        r"utilization \((?P<util>[\d.]+), (?P<req>[\d.]+) GiB\)",
        event.raw,
    )
    assert event.device == "CPU"
    assert (event.free_gib, event.total_gib) == (float(numbers["free"]), float(numbers["total"]))
    assert (event.gpu_memory_utilization, event.requested_gib) == (float(numbers["util"]), float(numbers["req"]))


def test_the_cpu_memory_utilization_failure_proposes_an_explicit_kv_size_within_free_memory():
    result = triage("cpu_memory_utilization")
    top = result.top
    assert top.rule == "OP-1.3" and result.facts.config.device == "cpu"
    [change] = top.changes
    [event] = result.facts.events_of(K.FREE_MEMORY_BELOW_REQUESTED)
    assert change.flag == "--kv-cache-memory-bytes"
    assert parse_kv_cache_memory_bytes(change.proposed) <= event.free_gib * 2**30 / 2
    assert [a.flag for a in top.alternatives] == ["--gpu-memory-utilization"]
    assert result.facts.hardware is None  # a NUMA node's total is not a GPU


def test_kv_too_small_keeps_vllms_estimate_and_an_alternative_byte_size_that_starts():
    result = triage("kv_too_small")
    top = result.top
    assert top.rule == "OP-1.1" and {c.flag: c.proposed for c in top.changes} == {"--max-model-len": "1920"}
    assert "block size 128" in top.changes[0].reason
    [alternative] = top.alternatives
    assert alternative.flag == "--kv-cache-memory-bytes"
    model = resolve_model(str(DATA_DIR / "smollm2-135m"))
    space = CpuKvSpace(kv_cache_memory_bytes=parse_kv_cache_memory_bytes(alternative.proposed))
    assert size_cpu_kv(model, LaunchConfig(max_model_len=8192), space).fits
    assert "OP-3.3" not in {f.rule for f in result.findings}  # the worker died in the shutdown after it


# --- 4. a saturated CPU engine: the step budget does not bind ---------------------------------


def test_saturated_cpu_engine_is_compute_bound_not_budget_bound():
    result = triage("saturated")
    assert result.top.rule == "OP-5.4"
    raised = [c for f in result.findings for c in f.changes if c.flag == "--max-num-batched-tokens"]
    assert raised == []
    [ttft] = [f for f in result.findings if f.rule == "OP-5.1"]
    evidence = {e.name: e for e in ttft.evidence}
    steps, prompts = evidence["vllm:iteration_tokens_total p50"], evidence["vllm:request_prompt_tokens p99"]
    assert steps.value < steps.threshold and prompts.value <= prompts.threshold == 2048


# --- 5. other 0.32 differences -----------------------------------------------------------------


def test_preemptions_cap_from_vllms_own_request_sizes_then_the_model_calibrated_on_the_window():
    """The rule sizes the cap from vLLM's own p95 request (2,048 tokens / 680 = 3); the model,
    calibrated on the same window, replays 1-32 streams and predicts no cap to help: the rule's 3
    queues and is listed as rejected, with why. No other value comes near: 4 keeps the predicted safe
    point at 2, as it measured when ramped (each step is replayed in the load of the steps around it;
    from an empty server 4 had looked like a gain at the nominal p99)."""
    result = triage("preempting")
    top = result.top
    assert top.rule == "OP-5.3"
    measured = next(e for e in top.evidence if e.name == "p95 prompt + p95 max_tokens per request")
    by_rule = math.floor(result.facts.memory.kv_cache_tokens / measured.value)
    assert by_rule == 3
    assert not [c for c in top.changes if c.flag == "--max-num-seqs"]
    rejected = {r.change.proposed: r.reason for r in result.rejected_changes if r.change.flag == "--max-num-seqs"}
    assert "safe operating point unchanged at 2" in rejected[str(by_rule)]
    assert set(rejected) == {str(by_rule)}, rejected
    assert any("calibrated on the live 8 s window: 16 request(s) in flight" in n for n in result.notes)


def test_vllm_032_stats_lines_never_show_preemptions_so_the_window_is_needed():
    stats = read_log(path("preempting.log")).of_kind(K.STATS_LINE)
    before, after = (
        load_file(path(f"preempting_{when}.prom")).value("vllm:num_preemptions_total") for when in ("before", "after")
    )
    assert stats and all(e.preemptions is None for e in stats) and after > before
    log_only = triage("preempting", log_only=True)
    assert log_only.top.rule == "OP-5.2" and "OP-5.3" not in {f.rule for f in log_only.findings}


def test_the_bundled_engine_on_a_cpu_is_not_taken_for_vllms_cpu_backend():
    lines = [
        line.replace("(v0.32.0)", "(v0.1.0)").replace("version 0.32.0", "version 0.33.0+servops.0.1.0")
        for line in (RECORDED / "idle.log").read_text().splitlines()
    ]
    config = server_config(None, parse_lines(lines).events, None)
    assert config.device is None and config.max_num_seqs is None and config.max_num_batched_tokens is None


def test_a_data_parallel_server_is_read_from_its_arguments_not_its_engines_config_lines():
    """Two data-parallel engines (`--data-parallel-size 2`): the engine-config line, printed by engine 0
    only, says `data_parallel_size=1` (each engine is one rank of the DP group, its own world of one), and
    only the API server's `non-default args` say 2. The metrics carry one series per engine, each
    engine's `vllm:cache_config_info` its own pool: the pool triage reads is one engine's."""
    log = (RECORDED / "data_parallel_2.log").read_text()
    assert "'data_parallel_size': 2" in log
    engine_lines = [line for line in log.splitlines() if "Initializing a V1 LLM engine" in line]
    assert len(engine_lines) == 1 and "EngineCore_DP0" in engine_lines[0]
    assert "data_parallel_size=1," in engine_lines[0]
    snapshot = load_file(path("data_parallel_2_after.prom"))
    engines = {s.labels.get("engine") for s in snapshot.samples("vllm:num_requests_running")}
    assert engines == {"0", "1"}
    result = triage("data_parallel_2")
    config, memory = result.facts.config, result.facts.memory
    assert config.data_parallel_size == 2 and config.source_of("--data-parallel-size") == ConfigSource.ARGS
    assert config.max_num_seqs == CPU_API_SERVER_MAX_NUM_SEQS  # per engine: world size is TP x PP
    pools = snapshot.samples("vllm:cache_config_info")
    per_engine = {s.labels["engine"]: s.labels["kv_cache_size_tokens"] for s in pools}
    assert set(per_engine) == {"0", "1"} and len(set(per_engine.values())) == 1
    assert memory.kv_cache_tokens == int(per_engine["0"])


def test_a_worker_that_fails_first_is_the_cause_and_a_known_crash_gets_its_fix():
    """vLLM 0.32's CPU backend with two pipeline stages in eager mode: healthy, then on the first request
    the second stage's worker prints `WorkerProc hit an exception.` and a traceback ending in a bare
    `AssertionError` (an `assert` on the intermediate tensors from the first stage), and only then the
    engine core its fatal error, a KeyError on a request id the worker never returned. The worker's
    exception is the cause, quoted with its source line; the core's is its consequence. Compiled, the
    same layout serves (tests/fixtures/vllm_cpu/pipeline_*), so the fix is to drop --enforce-eager."""
    log = (RECORDED / "pipeline_eager_crash.log").read_text()
    assert "WorkerProc hit an exception." in log and "EngineCore encountered a fatal error." in log
    result = triage("pipeline_eager_crash", log_only=True)
    top = result.findings[0]
    assert top.rule == RULE_DEAD.code
    assert "Worker_PP1: AssertionError: assert self.intermediate_tensors is not None" in top.title
    assert "then the engine core: KeyError:" in top.title
    assert top.evidence[0].name == K.WORKER_EXCEPTION.value
    assert {c.flag: c.proposed for c in top.changes} == {"--enforce-eager": "false"}
    config = result.facts.config
    assert config.pipeline_parallel_size == 2 and config.max_num_seqs == 2 * CPU_API_SERVER_MAX_NUM_SEQS


def test_a_message_less_exception_is_named_by_its_source_line_and_frame():
    lines = [
        "(Worker_TP1 pid=7) ERROR 11-28 10:00:00 [multiproc_executor.py:1063] WorkerProc hit an exception.",
        "(Worker_TP1 pid=7) ERROR 11-28 10:00:00 [multiproc_executor.py:1063] Traceback (most recent call last):",
        '(Worker_TP1 pid=7) ERROR 11-28 10:00:00 [multiproc_executor.py:1063]   File "/x/vllm/runner.py", '
        "line 12, in step",
        "(Worker_TP1 pid=7) ERROR 11-28 10:00:00 [multiproc_executor.py:1063]     assert batch is not None",
        "(Worker_TP1 pid=7) ERROR 11-28 10:00:00 [multiproc_executor.py:1063] AssertionError",
    ]
    [event] = parse_lines(lines).events
    assert event.kind == K.WORKER_EXCEPTION and event.process == "Worker_TP1"
    assert event.message == "AssertionError: assert batch is not None (runner.py:12 in step)"
