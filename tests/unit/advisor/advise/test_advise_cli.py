"""`servops advise` end to end: human text, JSON with stable keys, one-line errors with exit 2."""

import json
import subprocess
import sys
from datetime import datetime

import pytest

from advisor.cli.main import main
from tests.unit.advisor.data_paths import DATA_DIR

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


def _run(capsys, *argv):
    code = main(["advise", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_human_output_shows_the_budget_verdict_and_command(capsys):
    code, out, _ = _run(capsys, "--model", "Llama-3.1-8B", "--gpu", "H100")
    assert code == 0
    assert "= KV pool" in out and "starts: yes" in out
    assert "vllm serve meta-llama/Llama-3.1-8B-Instruct" in out


def test_human_output_quotes_vllms_error_when_the_launch_fails(capsys):
    code, out, _ = _run(capsys, "--model", "Llama-3.3-70B", "--gpu", "H100", "--quantization", "fp8")
    assert code == 0
    assert "starts: NO" in out
    assert "--max-model-len" in out or "No available memory for the cache blocks" in out


def test_json_file_has_the_stable_keys_and_echoes_inputs(capsys, tmp_path):
    path = tmp_path / "advice.json"
    code, out, _ = _run(
        capsys,
        "--model",
        "Llama-3.1-70B",
        "--gpu",
        "H100",
        "--gpus",
        "2",
        "--p95-input-tokens",
        "3000",
        "--p95-output-tokens",
        "500",
        "--prefix-reuse",
        "0.5",
        "--target-concurrency",
        "64",
        "--json",
        str(path),
    )
    assert code == 0 and out == ""
    doc = json.loads(path.read_text())
    assert doc["kind"] == "advise" and doc["servops_version"]
    datetime.fromisoformat(doc["created_at"])
    assert set(doc["memory"]) == MEMORY_KEYS
    assert doc["fits"] is False and doc["failure"]  # 70B BF16 on one GPU, as given
    assert isinstance(doc["max_model_len_that_fits"], int)
    assert doc["command"].startswith("vllm serve ")
    assert all(set(r) == {"flag", "value", "reason"} for r in doc["recommendations"])
    assert isinstance(doc["warnings"], list)
    assert doc["inputs"]["gpus"] == 2 and doc["inputs"]["prefix_reuse"] == 0.5
    assert doc["recommended"]["fits"] is True


def test_json_dash_writes_to_stdout(capsys):
    code, out, _ = _run(capsys, "--model", "Qwen3-8B", "--gpu", "L40S", "--json", "-")
    doc = json.loads(out)
    assert code == 0 and doc["model"]["name"] == "Qwen3-8B"


def test_gpu_memory_gib_sizes_a_bundled_engine_model_dir(capsys):
    code, out, _ = _run(
        capsys, "--model", str(DATA_DIR / "smollm2-135m"), "--gpu-memory-gib", "2", "--enforce-eager", "--json", "-"
    )
    doc = json.loads(out)
    assert code == 0 and doc["fits"] is True
    assert doc["memory"]["total_gib"] == 2.0
    assert doc["memory"]["kv_bytes_per_token"] == 2 * 30 * 3 * 64 * 2
    assert doc["memory"]["cudagraph_gib"] == 0


@pytest.mark.parametrize(
    "argv, names",
    [
        (["--model", "Llama-3.1-8B", "--gpu", "H1000"], "--gpu 'H1000'"),
        (["--model", "Llama-9", "--gpu", "H100"], "--model 'Llama-9'"),
        (["--model", "Llama-3.1-8B", "--gpu", "H100", "--gpu-memory-utilization", "1.5"], "--gpu-memory-utilization"),
        (["--model", "Llama-3.1-8B", "--gpu", "H100", "--prefix-reuse", "2"], "--prefix-reuse"),
        (["--model", "Llama-3.1-8B", "--gpu", "H100", "--tensor-parallel-size", "3"], "--tensor-parallel-size 3"),
        (["--model", "Llama-3.1-8B", "--gpu", "H100", "--vllm-version", "latest"], "--vllm-version"),
        (["--model", "Llama-3.1-8B", "--gpu", "H100", "-tp", "4", "--gpus", "2"], "--gpus 2"),
        (["--model", "Llama-3.1-8B"], "--gpu"),
    ],
)
def test_bad_input_is_one_line_naming_the_flag_and_exit_2(capsys, argv, names):
    try:
        code = main(["advise", *argv])
    except SystemExit as exit_:  # argparse-level errors exit from inside parse_args
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2
    assert names in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_bad_input_in_a_real_process_has_no_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "advisor", "advise", "--model", "nope", "--gpu", "H100"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("servops advise: error: --model 'nope'")
    assert "Traceback" not in proc.stderr


def test_gpu_help_names_every_catalog_gpu():
    """The help is built from GPU_CATALOG: a GPU added to the catalog is offered without touching the CLI."""
    import argparse

    from advisor.catalog.gpus import GPU_CATALOG
    from advisor.cli.main import build_parser

    subcommands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    gpu = next(a for a in subcommands.choices["advise"]._actions if "--gpu" in a.option_strings)
    missing = [spec.name for spec in GPU_CATALOG if spec.name not in gpu.help]
    assert not missing, f"servops advise --help does not offer {missing}"
