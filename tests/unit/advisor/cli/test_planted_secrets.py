"""Planted secrets: every command, run with a secret in every place a user can put one, must not let it
out anywhere: stdout, stderr, and every file it writes (JSON, HTML, history, windows).

Each secret is distinct, so a leak names its road. The places: a `--server-args` / `--server-command`
flag (`--api-key`, `--hf-token`, `--aws-secret-key`), a quoted key, a value starting `key-`, an
environment assignment (`HF_TOKEN=`, lower-case `hf_token=`), a URL password holding `@`, a URL query
token, an `Authorization` header of an unusual scheme, and the log text triage reads (vLLM's
`non-default args` line and an error body), and the environment servops runs in (`HF_TOKEN`,
`VLLM_API_KEY`, AWS keys), which `probe`, `advise` and every command that starts an engine inherit.

The commands: `triage` (one-off, `--save-window`, scheduled), `report`, `ramp`, `predict`, `tune`,
`advise`, `probe` here; `demo`, whose engines run with an `--api-key`, in
tests/integration/demo/test_demo_and_tune.py (it shares that module's one demo run, ~90 s).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.planted_secrets import ENVIRONMENT, SECRETS

FIXTURES = Path(__file__).parents[3] / "fixtures"
SERVER_ARGS = (
    f"HF_TOKEN={SECRETS['hf_token']} hf_token={SECRETS['env_lower']} vllm serve m --max-num-seqs 8 "
    f'--api-key {SECRETS["api_key"]} --hf-token "{SECRETS["quoted"]}" --aws-secret-key {SECRETS["aws"]} '
    f"--served-model-name m"
)
LOG = (
    "(APIServer pid=1) INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version 0.10.1\n"
    f"(APIServer pid=1) INFO 01-01 00:00:00 [utils.py:1] non-default args: {{'model': 'm', 'api_key': "
    f"['{SECRETS['log_key']}'], 'max_num_seqs': 8}}\n"
    f"ERROR 01-01 00:00:01 [serving.py:1] request failed: Authorization: ApiKey {SECRETS['header']}\n"
)


def _leaks(outcome, folder: Path) -> list[str]:
    """Every (secret, where) that came out."""
    places = {"stdout": outcome.out, "stderr": outcome.err}
    places |= {str(path): path.read_text(errors="replace") for path in folder.rglob("*") if path.is_file()}
    return [f"{name} in {where}" for where, text in places.items() for name, value in SECRETS.items() if value in text]


@pytest.fixture
def log_file(tmp_path: Path) -> Path:
    path = tmp_path / "inputs" / "server.log"
    path.parent.mkdir()
    path.write_text(LOG)
    return path


def test_triage_with_secrets_in_every_input_lets_none_out(servops, tmp_path, log_file):
    out = tmp_path / "out"
    outcome = servops(
        "triage",
        "--logs",
        str(log_file),
        "--server-args",
        SERVER_ARGS,
        "--header",
        f"Authorization: ApiKey {SECRETS['header']}",
        "--json",
        str(out / "t.json"),
    )
    assert outcome.code == 0, outcome.err
    report = servops("report", str(out / "t.json"), "-o", str(out / "r.html"))
    assert report.code == 0, report.err
    assert _leaks(outcome, out) == [] and _leaks(report, out) == []


def test_scheduled_triage_keeps_secrets_out_of_results_latest_and_history(servops, tmp_path, log_file):
    out = tmp_path / "sched"
    outcome = servops(
        "triage", "--logs", str(log_file), "--server-args", SERVER_ARGS, "--out", str(out), "--count", "1"
    )
    assert outcome.code == 0, outcome.err
    assert {p.name for p in out.iterdir()} >= {"latest.json", "history.jsonl"}
    assert _leaks(outcome, out) == []


def test_a_saved_window_keeps_the_launchs_secrets_out_of_the_window_and_the_triage(servops, tmp_path):
    recorded, out = FIXTURES / "vllm_cpu" / "moderate", tmp_path / "window"
    metrics = ["--metrics", f"{recorded}_before.prom", "--metrics", f"{recorded}_after.prom"]
    outcome = servops(
        "triage",
        *metrics,
        "--metrics-interval",
        "8",
        "--server-args",
        SERVER_ARGS,
        "--save-window",
        str(out / "w.json"),
        "--json",
        str(out / "t.json"),
    )
    assert outcome.code == 0, outcome.err
    assert (out / "w.json").is_file()
    assert _leaks(outcome, out) == []


def test_advise_in_an_environment_holding_secrets_lets_none_out(servops, tmp_path, monkeypatch):
    for name, value in ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "advise"
    outcome = servops("advise", "--model", "Llama-3.1-8B", "--gpu", "H100-SXM-80GB", "--json", str(out / "a.json"))
    assert outcome.code == 0, outcome.err
    assert _leaks(outcome, out) == []


def test_ramp_against_an_endpoint_with_secrets_in_its_url_lets_none_out(servops, tmp_path):
    url = f"http://alice:{SECRETS['url_password']}@127.0.0.1:9/v1?token={SECRETS['query']}"
    out = tmp_path / "ramp"
    outcome = servops(
        "ramp", "--endpoint", url, "--concurrency", "1", "--step-seconds", "1", "--json", str(out / "r.json")
    )
    assert outcome.code != 0  # nothing listens on port 9
    assert _leaks(outcome, out if out.exists() else tmp_path) == []


def test_predict_with_a_keyed_launch_lets_none_out(servops, tmp_path):
    out = tmp_path / "predict"
    ramp = FIXTURES / "bundled" / "queue_seqs1_ramp.json"
    outcome = servops(
        "predict",
        "--ramp",
        str(ramp),
        "--server-args",
        SERVER_ARGS.replace("--max-num-seqs 8", "--max-num-seqs 1"),
        "--change",
        "--max-num-seqs 2",
        "--json",
        str(out / "p.json"),
    )
    assert outcome.code == 0, outcome.err
    assert _leaks(outcome, out) == []


def test_tune_that_cannot_start_its_command_names_it_without_its_secrets(servops, tmp_path):
    command = SERVER_ARGS.replace("vllm serve", "/nonexistent/vllm-binary serve")
    outcome = servops("tune", "--server-command", command, "--out", str(tmp_path / "tune"))
    assert outcome.code == 2, outcome.err
    assert _leaks(outcome, tmp_path) == []
