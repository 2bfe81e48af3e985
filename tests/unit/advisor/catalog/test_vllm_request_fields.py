"""vllm_request_fields.json: vLLM's request field names, generated from its source, and the misspelling lookup."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from advisor.catalog.vllm_request_fields import nearest_field, request_fields

ROOT = Path(__file__).resolve().parents[4]
COMMITTED = ROOT / "advisor" / "catalog" / "vllm_request_fields.json"
_SPEC = importlib.util.spec_from_file_location("extract_request_fields", ROOT / "scripts" / "extract_request_fields.py")
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
