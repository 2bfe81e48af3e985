"""`--header` reaches an endpoint that demands it, and never lands in the JSON."""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path

import pytest

from advisor.collect.metrics import MetricsError, scrape
from advisor.triage.collect import run_triage
from advisor.triage.result import TriageRequest

METRICS = (Path(__file__).parents[2] / "fixtures" / "collect" / "metrics_v0_33_0.txt").read_bytes()
TOKEN = "Bearer s3cret-token"


class _Guarded(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        if self.headers.get("Authorization") != TOKEN:
            self.send_error(401)
            return
        self.send_response(200)
        self.end_headers()
        self.wfile.write(METRICS if self.path == "/metrics" else b"{}")

    def log_message(self, *args):
        pass


@pytest.fixture
def guarded():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Guarded)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_without_the_header_the_401_is_named(guarded):
    with pytest.raises(MetricsError, match="HTTP 401"):
        scrape(guarded)


def test_with_the_header_triage_runs_and_the_token_is_not_written(guarded):
    result = run_triage(TriageRequest(endpoint=guarded, headers={"Authorization": TOKEN}))
    assert result.top.rule == "OP-5.3"
    document = result.model_dump_json()
    assert "s3cret" not in document and "headers" not in json.loads(document)["inputs"]


def test_a_malformed_header_is_refused_without_echoing_it(capsys):
    from advisor.cli.main import main

    assert main(["triage", "--endpoint", "http://127.0.0.1:9", "--header", "Authorization Bearer s3cret"]) == 2
    err = capsys.readouterr().err
    assert "--header" in err and "s3cret" not in err and len(err.strip().splitlines()) == 1
