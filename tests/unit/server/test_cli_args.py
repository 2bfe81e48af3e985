"""`python -m engine serve` / `servops serve` flags: vLLM's names, one-line errors, exit 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from engine.api import threads
from engine.api.cli_args import (
    CliArgsError,
    build_serve_parser,
    engine_config_kwargs,
    non_default_args,
    parse_serve_args,
)
from servops_kernels.cpu_gemm import MEMORY_BOUND_ROWS


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--tensor-parallel-size", "2"], "--tensor-parallel-size 2"),
        (["--quantization", "awq"], "--quantization awq"),
        (["--kv-cache-dtype", "fp8"], "--kv-cache-dtype fp8"),
        (["--speculative-config", "{}"], "--speculative-config"),
        (["--enable-lora"], "--enable-lora"),
    ],
)
def test_known_but_unsupported_vllm_flag_is_one_line_naming_it_and_exit_2(flags, named):
    proc = _run("-m", "engine", "serve", *flags)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert named in lines[0] and "Traceback" not in proc.stderr


def test_unknown_flag_is_one_line_and_exit_2():
    proc = _run("-m", "engine", "serve", "--no-such-flag", "3")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "--no-such-flag" in proc.stderr


def test_servops_serve_passes_flags_to_the_engine_and_names_itself():
    proc = _run("-m", "advisor", "serve", "--max-num-seqs", "zero")
    assert proc.returncode == 2
    assert proc.stderr.startswith("servops serve: error:")
    assert "--max-num-seqs" in proc.stderr and "Traceback" not in proc.stderr


def test_servops_serve_help_lists_the_engine_flags():
    proc = _run("-m", "advisor", "serve", "--help")
    assert proc.returncode == 0
    for flag in ("--max-model-len", "--enable-prefix-caching", "--max-num-queued-reqs", "--served-model-name"):
        assert flag in proc.stdout


def test_single_device_values_of_parallel_flags_are_accepted():
    args = parse_serve_args(["--tensor-parallel-size", "1", "--kv-cache-dtype", "auto"])
    assert args.tensor_parallel_size == "1"


def test_check_rejects_quantization_in_process():
    with pytest.raises(CliArgsError, match="--quantization gptq"):
        parse_serve_args(["--quantization", "gptq"])


def test_only_given_engine_flags_reach_engine_config():
    args = parse_serve_args(["m", "--max-model-len", "512", "--no-enable-prefix-caching", "--block-size", "8"])
    assert engine_config_kwargs(args) == {
        "model": "m",
        "max_model_len": 512,
        "enable_prefix_caching": False,
        "block_size": 8,
    }


def test_non_default_args_lists_what_the_user_typed():
    args = parse_serve_args(["tiny", "--port", "8123", "--max-num-seqs", "4"])
    assert non_default_args(args) == {"model": "tiny", "port": 8123, "max_num_seqs": 4}


def test_max_num_queued_reqs_must_be_positive():
    proc = _run("-m", "engine", "serve", "--max-num-queued-reqs", "0")
    assert proc.returncode == 2 and "--max-num-queued-reqs" in proc.stderr


def test_cpu_threads_leave_one_core_for_the_server_on_steps_of_few_rows(monkeypatch):
    parser = build_serve_parser()
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    policy = threads.engine_threads(parser.parse_args([]).cpu_threads)
    assert [policy.threads_for(n) for n in (0, 1, MEMORY_BOUND_ROWS)] == [3, 3, 3]
    assert policy.threads_for(MEMORY_BOUND_ROWS + 1) == 4
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: {0})
    assert threads.engine_threads(None).threads_for(1) == 1  # never zero
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    fixed = threads.engine_threads(None)
    assert (fixed.threads_for(1), fixed.threads_for(64), fixed.why) == (2, 2, "OMP_NUM_THREADS")
    chosen = threads.engine_threads(parser.parse_args(["--cpu-threads", "5"]).cpu_threads)
    assert (chosen.threads_for(1), chosen.threads_for(64), chosen.why) == (5, 5, "--cpu-threads")


def test_the_last_core_joins_memory_bound_steps_only_where_it_speeds_the_weight_pass_up(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: {0, 1})
    timed: list[tuple[int, ...]] = []

    def scaling(seconds_at: dict[int, float]):
        def weight_pass_s(counts) -> dict[int, float]:
            timed.append(tuple(counts))
            return {n: seconds_at[n] for n in counts}

        return weight_pass_s

    # each core reads at its own limit: two threads read the weights 1.5x faster
    bandwidth_per_core = threads.engine_threads(None, scaling({1: 0.045, 2: 0.030}))
    assert [bandwidth_per_core.threads_for(n) for n in (1, MEMORY_BOUND_ROWS, 64)] == [2, 2, 2]
    assert "45.0 ms on 1 thread(s), 30.0 ms on 2: 1.50x, at or above" in bandwidth_per_core.describe()
    # one core already saturates memory: keep the second for the server while few requests run
    saturated = threads.engine_threads(None, scaling({1: 0.040, 2: 0.038}))
    assert [saturated.threads_for(n) for n in (1, MEMORY_BOUND_ROWS, 64)] == [1, 1, 2]
    assert "1.05x, below the 1.1x" in saturated.describe()
    assert timed == [(1, 2), (1, 2)]  # both counts in one call, so they take turns
    # a fixed count and a single core measure nothing
    assert threads.engine_threads(3, scaling({})).threads_for(1) == 3
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: {0})
    assert threads.engine_threads(None, scaling({})).threads_for(1) == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert threads.engine_threads(None, scaling({})).threads_for(1) == 2
    assert timed == [(1, 2), (1, 2)]


def test_cpu_threads_must_be_positive():
    with pytest.raises(SystemExit):
        build_serve_parser().parse_args(["--cpu-threads", "0"])
