"""vLLM's CPU backend KV sizing against what a real vLLM 0.32.0 printed (tests/fixtures/vllm_cpu/).

The expected numbers are read from the recorded logs and /metrics scrapes, not typed here: the
`CPU KV cache size: N tokens, Maximum concurrency for M tokens per request: Xx` line, the
startup ValueError, and `vllm:cache_config_info`. The launch inputs come from the same
recording (vLLM's own "non-default args" line, or the recorded command's env assignment). The
model is the SmolLM2-135M config in tests/unit/advisor/data, the shape of the recorded model.
"""

from __future__ import annotations

import ast
import json
import math
import re
from pathlib import Path

import pytest

from advisor.catalog.models import resolve_model
from advisor.cli.main import main
from advisor.collect.kv_space import parse_kv_cache_memory_bytes
from advisor.collect.server_args import parse_command
from advisor.errors import UserError
from advisor.memory.budget import LaunchConfig
from advisor.memory.cpu_backend import CpuKvSpace, fitting_len, size_cpu_kv
from tests.unit.advisor.data_paths import DATA_DIR

RECORDED = Path(__file__).resolve().parents[3] / "fixtures" / "vllm_cpu"
MODEL_DIR = DATA_DIR / "smollm2-135m"
CAPACITY_LINE = re.compile(
    r"CPU KV cache size: (?P<tokens>[\d,]+) tokens, Maximum concurrency for "
    r"(?P<len>[\d,]+) tokens per request: (?P<x>[\d.]+)x"
)
MEMORY_KEYS = {
    "total_gib",
    "requested_gib",
    "weights_gib",
    "activation_gib",
    "non_torch_gib",
    "cudagraph_gib",
    "kv_pool_gib",
    "kv_bytes_per_token",
    "kv_cache_tokens",
    "num_blocks",
    "max_concurrency",
}


def recorded(name: str) -> str:
    path = RECORDED / name
    assert path.is_file(), f"{path} is missing: record it with `python -m tests.fixtures.vllm_cpu.record`"
    return path.read_text()


def capacity_line(log: str) -> re.Match[str]:
    match = CAPACITY_LINE.search(log)
    assert match, "the recorded log has no 'CPU KV cache size' line"
    return match


def non_default_args(log: str) -> dict:
    """vLLM's `non-default args: {...}` startup line, as the dict it printed."""
    match = re.search(r"non-default args: (\{.*\})", log)
    assert match, "the recorded log has no 'non-default args' line"
    return ast.literal_eval(match[1])


def cache_config_info(prom: str) -> dict[str, str]:
    match = re.search(r"vllm:cache_config_info\{([^}]*)\}", prom)
    assert match, "the scrape has no vllm:cache_config_info"
    return dict(re.findall(r'(\w+)="([^"]*)"', match[1]))


def recorded_env_space_gib() -> int:
    """VLLM_CPU_KVCACHE_SPACE of the recorded server (the env assignment of its command)."""
    command = json.loads(recorded("recording.json"))["situations"]["idle"]["command"]
    return int(parse_command(command).env["VLLM_CPU_KVCACHE_SPACE"])


def launch_from(args: dict) -> tuple[LaunchConfig, CpuKvSpace]:
    config = LaunchConfig(max_model_len=args.get("max_model_len"), block_size=args.get("block_size"))
    return config, CpuKvSpace(kv_cache_memory_bytes=args["kv_cache_memory_bytes"])


@pytest.fixture(scope="module")
def model():
    return resolve_model(str(MODEL_DIR))


def assert_matches_vllm(sizing, log: str, prom: str) -> None:
    line, info = capacity_line(log), cache_config_info(prom)
    assert sizing.fits and sizing.log_line == line[0]
    assert sizing.kv_cache_tokens == int(line["tokens"].replace(",", "")) == int(info["kv_cache_size_tokens"])
    assert f"{sizing.max_concurrency:.2f}" == line["x"]
    assert sizing.max_concurrency == float(info["kv_cache_max_concurrency"])
    assert sizing.num_blocks == int(info["num_gpu_blocks"])
    assert sizing.block_size == int(info["block_size"])
    assert sizing.kv_space_bytes == int(info["kv_cache_memory_bytes"])
    assert sizing.max_model_len == int(line["len"].replace(",", ""))


def test_env_kv_space_gives_vllms_tokens_concurrency_and_blocks(model):
    sizing = size_cpu_kv(model, LaunchConfig(), CpuKvSpace(cpu_kvcache_space_gib=recorded_env_space_gib()))
    assert_matches_vllm(sizing, recorded("idle.log"), recorded("idle_before.prom"))


def test_preempting_launch_gives_vllms_figures(model):
    log = recorded("preempting.log")
    config, space = launch_from(non_default_args(log))
    assert config.max_model_len and space.kv_cache_memory_bytes  # the recording's own flags
    assert_matches_vllm(size_cpu_kv(model, config, space), log, recorded("preempting_before.prom"))


def test_too_small_kv_space_fails_with_vllms_text_and_estimate(model):
    log = recorded("kv_too_small.log")
    error = re.search(r"^ValueError: (To serve at least one request.*)$", log, re.MULTILINE)
    assert error, "the recorded log has no startup ValueError"
    sizing = size_cpu_kv(model, *launch_from(non_default_args(log)))
    assert not sizing.fits and sizing.log_line is None
    assert sizing.failure == error[1]
    estimate = int(re.search(r"estimated maximum model length is (\d+)", error[1])[1])
    assert sizing.estimated_max_model_len == estimate == sizing.max_model_len_that_fits


def vllm_estimate(usable: int, page: int, block_size: int, max_model_len: int) -> int:
    """vLLM 0.32.0's _estimate_max_model_len_from_groups for one full-attention group, verbatim."""

    def fits(length: int) -> bool:
        return page * math.ceil(length / block_size) <= usable

    left, right = 1, max_model_len
    if not fits(left):
        return 0
    result = 1
    while left <= right:
        mid = (left + right) // 2
        if fits(mid):
            result = mid
            left = mid + 1
        else:
            right = mid - 1
    return result


@pytest.mark.parametrize("usable_blocks_x4", [-1, 0, 3, 4, 5, 59, 60, 63, 255, 256, 257, 1000])
@pytest.mark.parametrize("max_model_len", [1, 127, 1024, 8192])
def test_closed_form_estimate_equals_vllms_binary_search(usable_blocks_x4, max_model_len):
    page, block = 2_949_120, 128
    usable = usable_blocks_x4 * page // 4
    assert fitting_len(usable, page, block, max_model_len) == vllm_estimate(usable, page, block, max_model_len)


def test_env_space_replaces_the_flag_as_in_vllm(model):
    both = CpuKvSpace(cpu_kvcache_space_gib=1, kv_cache_memory_bytes=50_000_000)
    assert size_cpu_kv(model, LaunchConfig(), both).kv_space_bytes == 1024**3
    assert both.env() == {"VLLM_CPU_KVCACHE_SPACE": "1"}


@pytest.mark.parametrize(
    "text, expected",
    [("50000000", 50_000_000), ("50m", 50_000_000), ("45M", 47_185_920), ("1G", 1024**3), ("25.6k", 25_600)],
)
def test_kv_cache_memory_bytes_parses_like_vllm(text, expected):
    assert parse_kv_cache_memory_bytes(text) == expected


def test_mla_and_sliding_window_are_refused_rather_than_guessed():
    for name in ("DeepSeek-V3", "Mistral-7B-v0.1"):
        with pytest.raises(UserError, match="not modelled"):
            size_cpu_kv(resolve_model(name), LaunchConfig(), CpuKvSpace(cpu_kvcache_space_gib=1))


# --- through the CLI -------------------------------------------------------------------------


def advise(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(["advise", "--model", str(MODEL_DIR), *argv])
    except SystemExit as exit_:  # argparse-level errors exit from inside parse_args
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def test_json_reports_vllms_kv_tokens_and_an_env_prefixed_command(capsys):
    gib = recorded_env_space_gib()
    code, out, _ = advise(capsys, "--device", "cpu", "--cpu-kvcache-space-gib", str(gib), "--json", "-")
    doc = json.loads(out)
    line = capacity_line(recorded("idle.log"))
    assert code == 0 and doc["kind"] == "advise" and doc["fits"] is True
    assert (
        doc["vllm_cpu"]["kv_cache_tokens"] == doc["memory"]["kv_cache_tokens"] == int(line["tokens"].replace(",", ""))
    )
    assert doc["vllm_cpu"]["log_line"] == line[0]
    assert set(doc["memory"]) == MEMORY_KEYS and doc["gpu"] is None
    command = parse_command(doc["command"])
    assert command.env == {"VLLM_CPU_KVCACHE_SPACE": str(gib)} and command.program == ["vllm", "serve"]
    assert command.model == str(MODEL_DIR)


def test_text_quotes_vllms_error_and_recommends_its_estimate(capsys):
    log = recorded("kv_too_small.log")
    kv_bytes = str(non_default_args(log)["kv_cache_memory_bytes"])
    code, out, _ = advise(capsys, "--device", "cpu", "--kv-cache-memory-bytes", kv_bytes)
    estimate = re.search(r"estimated maximum model length is (\d+)", log)[1]
    assert code == 0 and "starts: NO" in out
    assert re.search(r"^ValueError: (.*)$", log, re.MULTILINE)[1] in out
    recommended = parse_command(out.split("Recommended launch:\n", 1)[1].splitlines()[0].strip())
    assert recommended.flags == {"--kv-cache-memory-bytes": kv_bytes, "--max-model-len": estimate}


def test_pinned_max_model_len_raises_the_space_to_what_vllm_accepts(capsys, model):
    code, out, _ = advise(
        capsys, "--device", "cpu", "--kv-cache-memory-bytes", "50000000", "--max-model-len", "8192", "--json", "-"
    )
    doc = json.loads(out)
    assert code == 0 and doc["fits"] is False and doc["recommended"]["fits"] is True
    space = int(parse_command(doc["command"]).flags["--kv-cache-memory-bytes"])
    smaller = size_cpu_kv(model, LaunchConfig(max_model_len=8192), CpuKvSpace(kv_cache_memory_bytes=space - 1))
    assert not smaller.fits  # the smallest space that starts


def test_fractional_kv_space_is_one_line_and_exit_2(capsys):
    code, _, err = advise(capsys, "--device", "cpu", "--cpu-kvcache-space-gib", "0.05")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "--cpu-kvcache-space-gib" in err and "invalid literal for int()" in err


@pytest.mark.parametrize(
    "argv, names",
    [
        (["--kv-cache-memory-bytes", "1G"], "--device cpu"),
        (["--device", "cpu", "--kv-cache-memory-bytes", "1G", "--gpu-memory-gib", "2"], "--gpu-memory-gib"),
        (["--device", "cpu", "--cpu-kvcache-space-gib", "1", "--gpus", "2"], "--gpus"),
        (["--device", "cpu"], "--cpu-kvcache-space-gib"),
        (["--device", "cpu", "--kv-cache-memory-bytes", "1.5G"], "--kv-cache-memory-bytes"),
    ],
)
def test_cpu_flag_mistakes_are_one_line_and_exit_2(capsys, argv, names):
    code, _, err = advise(capsys, *argv)
    assert code == 2 and names in err and len(err.strip().splitlines()) == 1
