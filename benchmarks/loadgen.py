"""How many concurrent SSE streams one load-generator process can time to within 1 ms.

Method: one gevent process (exactly like a Locust worker: monkey-patched, our raw streaming
client from loadtest.http_stream) runs N concurrent streams against the fake OpenAI server,
which stamps every chunk with its wall-clock send time (`servops_sent_at`). For every event
the *timing error* is (time our client stamped it) - (time the server wrote it), both on the
same machine clock. It includes loopback delivery and the time the event waited for the
gevent hub: exactly the error a TTFT/ITL measurement carries. The sustained concurrency is the
largest N whose p99 error stays within the bound (default 1 ms).

Baseline, measured in the same run: Locust FastHttpUser's way of reading a stream
(geventhttpclient, `read(1024)` as in FastResponse.iter_content, used by iter_lines) at one
stream. Its reads return only when 1024 bytes have arrived, so several small SSE events
merge and the earlier ones are stamped late; the ratio shows why loadtest has its own client.

Run: `.venv/bin/python benchmarks/loadgen.py --json /tmp/loadgen.json`
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import gevent  # noqa: E402
import psutil  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from loadtest.http_stream import Endpoint, stream_post  # noqa: E402
from loadtest.stats import percentile  # noqa: E402
from tests.helpers.fake_openai_server import FakeServer  # noqa: E402

BODY = {"model": "fake-model", "messages": [{"role": "user", "content": "benchmark"}], "stream": True}


def _wall_offset() -> float:
    return time.time() - time.perf_counter()


def run_level(endpoint: Endpoint, streams: int, seconds: float) -> dict:
    """N greenlets stream back to back for `seconds`; returns timing-error percentiles."""
    errors: list[float] = []
    offset = _wall_offset()
    failures = {"count": 0}
    stop_at = time.perf_counter() + seconds

    def on_event(recv_perf: float, event) -> None:
        try:
            sent = json.loads(event.data).get("servops_sent_at")
        except ValueError:
            return
        if sent is not None:
            errors.append(recv_perf + offset - sent)

    def client() -> None:
        for _ in range(10_000):
            if time.perf_counter() >= stop_at:
                return
            outcome = stream_post(endpoint, "/v1/chat/completions", BODY, on_event, timeout_s=30)
            if outcome.error_type:
                failures["count"] += 1
                gevent.sleep(0.05)

    process = psutil.Process()
    cpu0 = process.cpu_times()
    wall0 = time.perf_counter()
    greenlets = [gevent.spawn(client) for _ in range(streams)]
    gevent.joinall(greenlets, timeout=seconds + 60)
    gevent.killall(greenlets, timeout=5)
    cpu1 = process.cpu_times()
    cpu_percent = 100 * ((cpu1.user + cpu1.system) - (cpu0.user + cpu0.system)) / (time.perf_counter() - wall0)
    return {
        "streams": streams,
        "events": len(errors),
        "failures": failures["count"],
        "error_p50_ms": _ms(percentile(errors, 50)),
        "error_p99_ms": _ms(percentile(errors, 99)),
        "error_max_ms": _ms(max(errors) if errors else None),
        "client_cpu_percent": round(cpu_percent, 1),
    }


def run_fasthttp_baseline(url: str, seconds: float) -> dict:
    """One stream read the FastHttpUser way: geventhttpclient response.read(1024)."""
    from geventhttpclient import HTTPClient

    errors: list[float] = []
    stop_at = time.perf_counter() + seconds
    client = HTTPClient.from_url(url, concurrency=1, network_timeout=30)
    for _ in range(1000):
        if time.perf_counter() >= stop_at:
            break
        response = client.post(
            "/v1/chat/completions", body=json.dumps(BODY), headers={"Content-Type": "application/json"}
        )
        buffer = ""
        for _ in range(100_000):
            chunk = response.read(1024)
            if not chunk:
                break
            now = time.time()
            buffer += chunk.decode("utf-8", errors="replace")
            while "\n\n" in buffer:
                event, buffer = buffer.split("\n\n", 1)
                data = event.removeprefix("data: ")
                if data.startswith("{"):
                    sent = json.loads(data).get("servops_sent_at")
                    if sent is not None:
                        errors.append(now - sent)
        response.release()
    client.close()
    return {
        "client": "geventhttpclient read(1024) (Locust FastHttpUser iter_lines)",
        "events": len(errors),
        "error_p50_ms": _ms(percentile(errors, 50)),
        "error_p99_ms": _ms(percentile(errors, 99)),
    }


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value * 1e3, 3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="1,8,32,64,128,256,512", help="concurrent streams to try")
    parser.add_argument("--seconds", type=float, default=6.0, help="measurement time per level")
    parser.add_argument("--gap", type=float, default=0.05, help="server inter-token gap, s")
    parser.add_argument("--tokens", type=int, default=40, help="tokens per stream")
    parser.add_argument("--bound-ms", type=float, default=1.0, help="timing-error bound on p99")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    levels = [int(x) for x in args.levels.split(",")]
    with FakeServer("--ttft", "0.02", "--gap", str(args.gap), "--tokens", str(args.tokens)) as server:
        endpoint = Endpoint.parse(server.url)
        run_level(endpoint, 1, 1.0)  # warm the server and the client
        baseline = run_fasthttp_baseline(server.url, args.seconds)
        rows = []
        for streams in levels:
            row = run_level(endpoint, streams, args.seconds)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    within = [
        r for r in rows if r["error_p99_ms"] is not None and r["error_p99_ms"] <= args.bound_ms and r["failures"] == 0
    ]
    single = rows[0]
    result = {
        "benchmark": "loadgen timing error per SSE event vs server send time",
        "machine": {"cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2)},
        "server": {"gap_s": args.gap, "tokens": args.tokens},
        "bound_ms": args.bound_ms,
        "sustained_streams_p99_within_bound": max((r["streams"] for r in within), default=0),
        "sustained_streams_p50_within_bound": max(
            (
                r["streams"]
                for r in rows
                if r["error_p50_ms"] is not None and r["error_p50_ms"] <= args.bound_ms and r["failures"] == 0
            ),
            default=0,
        ),
        "levels": rows,
        "baseline": baseline,
        "baseline_to_ours_p50_ratio_at_1_stream": (
            round(baseline["error_p50_ms"] / single["error_p50_ms"], 1)
            if baseline["error_p50_ms"] and single["error_p50_ms"]
            else None
        ),
    }
    text = json.dumps(result, indent=2)
    if args.json:
        Path(args.json).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
