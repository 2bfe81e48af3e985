"""Secrets: one redaction function (advisor/redact.py) on every road out of servops.

Unit cases pin what `redact` masks and what it must leave alone; the command cases put a
password in --endpoint/--prometheus URLs and an --api-key in --server-args, then look for it
in the JSON, the text on stdout, the HTML report and the error line. A tiny /metrics server
on 127.0.0.1 records the Authorization header it receives (Basic from the URL, unless --header).
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from advisor.redact import MASK, redact, redact_document, split_url_credentials

SECRET = "s3cr3t-P4ss"
METRICS = (
    "# TYPE vllm:num_requests_running gauge\n"
    'vllm:num_requests_running{model_name="m"} 1\n'
    "# TYPE vllm:kv_cache_usage_perc gauge\n"
    'vllm:kv_cache_usage_perc{model_name="m"} 0.5\n'
)


@pytest.mark.parametrize(
    "text, expected",
    [
        (f"http://alice:{SECRET}@h:8000/v1", f"http://alice:{MASK}@h:8000/v1"),
        (f"https://bob:{SECRET}@prom.example/api", f"https://bob:{MASK}@prom.example/api"),
        (f"vllm serve m --api-key {SECRET} --port 8000", f"vllm serve m --api-key {MASK} --port 8000"),
        (f"vllm serve m --api-key={SECRET}", f"vllm serve m --api-key={MASK}"),
        (f"vllm serve m --api-key '{SECRET} x'", f"vllm serve m --api-key '{MASK}'"),
        (f"--hf-token {SECRET}", f"--hf-token {MASK}"),
        (f"HF_TOKEN={SECRET} vllm serve m", f"HF_TOKEN={MASK} vllm serve m"),
        (f"VLLM_API_KEY={SECRET}", f"VLLM_API_KEY={MASK}"),
        (f"AWS_SECRET_ACCESS_KEY={SECRET}", f"AWS_SECRET_ACCESS_KEY={MASK}"),
        (f"Authorization: Bearer {SECRET}", f"Authorization: Bearer {MASK}"),
        (f"authorization: basic {SECRET}", f"authorization: basic {MASK}"),
        (f"X-Api-Key: {SECRET}", f"X-Api-Key: {MASK}"),
        (
            f"non-default args: {{'api_key': ['{SECRET}'], 'model': 'm'}}",
            f"non-default args: {{'api_key': ['{MASK}'], 'model': 'm'}}",
        ),
        (f'{{"hf_token": "{SECRET}"}}', f'{{"hf_token": "{MASK}"}}'),
        (f'{{"--api-key": "{SECRET}", "--port": "1"}}', f'{{"--api-key": "{MASK}", "--port": "1"}}'),
        (f'["serve", "--api-key", "{SECRET}", "--port"]', f'["serve", "--api-key", "{MASK}", "--port"]'),
        ("token hf_abcdefghijklmnopqrstuvwxyz0123 here", f"token {MASK} here"),
        ("key sk-proj-abcdefghijklmnopqrstuvwx1234", f"key {MASK}"),
        # shapes a red-team round found leaking
        ("vllm serve m --api-key key-4f9a2b --port 8000", f"vllm serve m --api-key {MASK} --port 8000"),
        ("vllm serve m --api-key token-77", f"vllm serve m --api-key {MASK}"),
        (f"--aws-secret-key {SECRET} --region x", f"--aws-secret-key {MASK} --region x"),
        (f"hf_token={SECRET} python serve.py", f"hf_token={MASK} python serve.py"),
        (f"Authorization: ApiKey {SECRET}", f"Authorization: ApiKey {MASK}"),
        (f"Authorization: {SECRET}", f"Authorization: {MASK}"),
        (f"Proxy-Authorization: Basic {SECRET}", f"Proxy-Authorization: Basic {MASK}"),
        ("http://alice:p@ss@w0rd@h:8000/v1", f"http://alice:{MASK}@h:8000/v1"),
        (
            f"http://h:8000/v1/models?token={SECRET}&api_key={SECRET}&model=m",
            f"http://h:8000/v1/models?token={MASK}&api_key={MASK}&model=m",
        ),
        ("clone with ghp_" + "a1B2" * 9 + " now", f"clone with {MASK} now"),
        ("AWS_ACCESS_KEY_ID AKIAIOSFODNN7EXAMPLE", f"AWS_ACCESS_KEY_ID {MASK}"),
    ],
)
def test_redact_masks_the_value_and_keeps_the_name(text, expected):
    assert redact(text) == expected
    assert redact(expected) == expected  # idempotent


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=999 cannot be greater than max_model_len=256.",
        "vllm serve m --max-num-batched-tokens 2048 --tokenizer /models/tok --max-model-len 4096",
        "http://127.0.0.1:8000/metrics",
        "prompt_tokens 12, total_tokens 20",
        "pass the server's key with --api-key",
        "ramp authenticates with --api-key TOKEN",  # ordinary words, not a secret
        '{"max_tokens": 16, "usage": {"prompt_tokens": 3}}',
        "vllm serve m --max-num-batched-tokens 8192 --ssl-keyfile /etc/tls/key.pem",
        "http://h:8000/v1/completions?model=m&stream=true",
        "token_budget=2048 max_tokens=16",
    ],
)
def test_redact_leaves_ordinary_text_alone(text):
    assert redact(text) == text


def test_an_argv_list_masks_the_words_after_a_secret_flag_up_to_the_next_flag():
    # `demo` keeps its engine flags as argv words; each key alone looks like any other value
    flags = ["--max-model-len", "256", "--api-key", "key-1f", "k2", "--port", "8000", "--hf-token=abc", "x"]
    assert redact_document({"base_flags": flags})["base_flags"] == [
        "--max-model-len",
        "256",
        "--api-key",
        MASK,
        MASK,
        "--port",
        "8000",
        f"--hf-token={MASK}",
        "x",
    ]


def test_redact_document_masks_secret_keys_and_walks_strings():
    document = {
        "inputs": {"api_key": SECRET, "max_tokens": 5, "endpoint": f"http://a:{SECRET}@h"},
        "runs": [{"command": f"vllm serve m --api-key {SECRET}"}],
        "token_count": 3,
    }
    assert SECRET not in json.dumps(redact_document(document))
    assert redact_document(document)["inputs"]["max_tokens"] == 5
    assert redact_document(document)["token_count"] == 3


@pytest.mark.parametrize(
    "url, clean, basic",
    [
        ("http://alice:pw@127.0.0.1:9090/x", "http://127.0.0.1:9090/x", "Basic YWxpY2U6cHc="),
        ("alice:pw@host:1", "host:1", "Basic YWxpY2U6cHc="),
        ("http://user%40corp:p%3Aw@[::1]:80", "http://[::1]:80", "Basic dXNlckBjb3JwOnA6dw=="),
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000", None),
        (None, None, None),
    ],
)
def test_split_url_credentials(url, clean, basic):
    assert split_url_credentials(url) == (clean, basic)


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[str | None] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        type(self).seen.append(self.headers.get("Authorization"))
        body = METRICS.encode() if self.path.endswith("/metrics") else b"{}"
        self.send_response(200 if self.path.endswith(("/metrics", "/health")) else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def metrics_server() -> Iterator[tuple[str, list]]:
    _Recorder.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", _Recorder.seen
    finally:
        server.shutdown()
        server.server_close()


def test_triage_never_copies_url_password_or_api_key(servops, metrics_server, tmp_path):
    hostport, seen = metrics_server
    json_path = tmp_path / "triage.json"
    outcome = servops(
        "triage",
        "--endpoint",
        f"http://alice:{SECRET}@{hostport}",
        "--server-args",
        f"HF_TOKEN={SECRET} vllm serve m --api-key {SECRET} --max-model-len 4096",
        "--json",
        str(json_path),
        "--timeout",
        "5",
    )
    assert outcome.code == 0, outcome.err
    assert SECRET not in outcome.out + outcome.err
    assert SECRET not in json_path.read_text()
    assert f"alice:{SECRET}" not in json_path.read_text() and hostport in json_path.read_text()
    assert seen and all(header == "Basic YWxpY2U6czNjcjN0LVA0c3M=" for header in seen)  # alice:s3cr3t-P4ss
    html = tmp_path / "report.html"
    assert servops("report", str(json_path), "-o", str(html)).code == 0
    assert SECRET not in html.read_text()


def test_explicit_header_wins_over_url_credentials(servops, metrics_server, tmp_path):
    hostport, seen = metrics_server
    outcome = servops(
        "triage",
        "--endpoint",
        f"http://alice:{SECRET}@{hostport}",
        "--header",
        "Authorization: Bearer from-header",
        "--timeout",
        "5",
    )
    assert outcome.code == 0, outcome.err
    assert seen and set(seen) == {"Bearer from-header"}


def test_report_redacts_a_secret_already_in_an_old_result(servops, tmp_path):
    document = json.loads((Path(__file__).parents[3] / "fixtures/reports/triage.json").read_text())
    document["current_command"] = f"vllm serve m --api-key {SECRET}"
    source = tmp_path / "old.json"
    source.write_text(json.dumps(document))
    html = tmp_path / "r.html"
    assert servops("report", str(source), "-o", str(html)).code == 0
    assert SECRET not in html.read_text()


@pytest.mark.parametrize(
    "argv",
    [
        ("ramp", "--endpoint", f"http://alice:{SECRET}@127.0.0.1:9", "--concurrency", "1"),
        ("triage", "--endpoint", f"http://alice:{SECRET}@127.0.0.1:9", "--timeout", "1"),
        ("triage", "--prometheus", f"http://alice:{SECRET}@127.0.0.1:9", "--timeout", "1"),
        ("ramp", "--endpoint", "http://127.0.0.1:9", "--api-key", SECRET, "--concurrency", "1", "--step-seconds", "2"),
    ],
)
def test_error_lines_never_echo_a_secret(servops, argv):
    outcome = servops(*argv)
    outcome.assert_one_line_error(argv[0])
    assert SECRET not in outcome.err + outcome.out


def test_ramp_sends_url_credentials_as_basic_auth_unless_api_key_is_given(servops, metrics_server):
    hostport, seen = metrics_server
    outcome = servops(
        "ramp",
        "--endpoint",
        f"http://alice:{SECRET}@{hostport}",
        "--concurrency",
        "1",
        "--step-seconds",
        "2",
        "--warmup-seconds",
        "0",
    )
    assert SECRET not in outcome.out + outcome.err and "Traceback" not in outcome.err
    assert seen and seen[0] == "Basic YWxpY2U6czNjcjN0LVA0c3M="  # alice:s3cr3t-P4ss, on GET /v1/models
    seen.clear()
    outcome = servops(
        "ramp",
        "--endpoint",
        f"http://alice:{SECRET}@{hostport}",
        "--api-key",
        "k-123",
        "--concurrency",
        "1",
        "--step-seconds",
        "2",
        "--warmup-seconds",
        "0",
    )
    assert seen and set(seen) == {"Bearer k-123"} and SECRET not in outcome.out + outcome.err


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("vllm serve m --api-key k1 k2 --port 8000", f"vllm serve m --api-key {MASK} {MASK} --port 8000"),
        ("vllm serve m --api-key=k1 k2", f"vllm serve m --api-key={MASK} {MASK}"),
        ("vllm serve m --api-key k1 --port 1", f"vllm serve m --api-key {MASK} --port 1"),
    ],
)
def test_every_key_after_a_multi_key_api_key_flag_is_masked(text, expected):
    """vLLM's --api-key takes several keys (nargs='+')."""
    assert redact(text) == expected and redact(expected) == expected
