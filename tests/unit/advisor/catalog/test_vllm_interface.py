"""vllm_interface.json: vLLM's request fields and command-line flags, generated from its source, and the lookups."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from advisor.catalog import vllm_interface
from advisor.catalog.vllm_interface import cli_flags, is_flag, nearest_field, nearest_flag, request_fields

ROOT = Path(__file__).resolve().parents[4]
COMMITTED = ROOT / "advisor" / "catalog" / "vllm_interface.json"
_SPEC = importlib.util.spec_from_file_location("extract_vllm_interface", ROOT / "scripts" / "extract_vllm_interface.py")
assert _SPEC is not None and _SPEC.loader is not None
script = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = script
_SPEC.loader.exec_module(script)


def test_the_names_cover_openais_fields_vllms_sampling_extras_and_the_removed_guided_ones():
    fields = request_fields()
    assert {"messages", "prompt", "max_tokens", "stream_options", "include_usage", "top_k", "guided_json"} <= fields


@pytest.mark.parametrize(
    ("written", "meant"),
    [("stream_otpions", "stream_options"), ("max_token", "max_tokens"), ("temprature", "temperature")],
)
def test_a_misspelt_name_finds_the_field_it_means(written: str, meant: str):
    assert nearest_field(written) == meant


@pytest.mark.parametrize("written", ["max_tokens", "my_tracing_id", "x"])
def test_a_real_name_or_an_unlike_one_finds_nothing(written: str):
    assert nearest_field(written) is None


@pytest.mark.skipif(
    not (script.DEFAULT_VLLM / "entrypoints").is_dir(), reason="no .venv-vllm here: scripts/install.sh builds it"
)
def test_the_committed_names_are_what_the_script_reads_from_the_installed_vllm(tmp_path: Path):
    out = tmp_path / "fields.json"
    assert script.main(["--out", str(out)]) == 0
    assert json.loads(out.read_text()) == json.loads(COMMITTED.read_text())


def test_a_folder_that_is_not_vllm_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert script.main(["--vllm", str(tmp_path), "--out", str(tmp_path / "x.json")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_the_flags_are_the_engines_the_front_ends_and_every_add_argument():
    assert {"--max-model-len", "--tensor-parallel-size", "--port", "--api-key", "--served-model-name"} <= cli_flags()


@pytest.mark.parametrize(
    ("written", "meant"),
    [("--max-model-length", "--max-model-len"), ("--tensor-paralel-size", "--tensor-parallel-size")],
)
def test_a_misspelt_flag_finds_the_flag_it_means(written: str, meant: str):
    assert nearest_flag(written) == meant


def test_a_flag_vllm_does_not_have_and_that_is_like_none_finds_nothing():
    # `--enable-mfu-metrics` is another flag, not a spelling of --enable-metrics (0.89 < CLOSE_FLAG)
    assert nearest_flag("--enable-metrics") is None and not is_flag("--enable-metrics")


@pytest.mark.parametrize("flag", ["--max_model_len=4096", "--no-enable-prefix-caching", "--port"])
def test_vllms_own_spellings_of_a_flag_are_flags(flag: str):
    assert is_flag(flag) and nearest_flag(flag) is None


def test_the_quantization_methods_are_the_ones_quantization_accepts():
    methods = vllm_interface.quantization_methods()
    assert {"awq", "gptq", "fp8", "compressed-tensors", "modelopt"} <= methods
    assert vllm_interface.interface_release() == "0.32.0"


@pytest.mark.parametrize(
    ("refused", "instead"),
    [("image", "image_url"), ("'video'", "video_url"), ("audio", "audio_url"), ("imageurl", "image_url")],
)
def test_a_refused_content_part_type_finds_the_one_vllm_takes(refused: str, instead: str):
    assert {"text", "image_url", "input_audio", "video_url"} <= vllm_interface.content_part_types()
    assert vllm_interface.part_type_instead(refused) == instead


def test_a_known_or_unlike_content_part_type_finds_nothing():
    assert vllm_interface.part_type_instead("text") is None and vllm_interface.part_type_instead("document") is None


def test_flags_with_listed_values_are_found_by_their_values_even_from_an_older_release():
    assert vllm_interface.flags_taking(["1", "8", "16", "32", "64", "128", "256", "320", "512"]) == ["--max-lora-rank"]
    assert vllm_interface.flags_taking(["8", "16", "32", "64", "128", "256", "320", "512"]) == ["--max-lora-rank"]
    assert vllm_interface.flags_taking(["'auto'", "'half'", "'float16'", "'bfloat16'", "'float'", "'float32'"]) == [
        "--dtype"
    ]
    assert vllm_interface.flags_taking(["none", "auto", "required"]) == []  # a request's tool_choice, no flag's
