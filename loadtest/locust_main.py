"""The load-generator process: Locust headless, as a local runner, a master or a worker.

Why a separate process: Locust monkey-patches the whole interpreter with gevent on import;
servops and the test suite must never load it in their own process. The controller
(runner.py) starts `python -m loadtest.locust_main local|master --plan FILE` and reads one
JSON object per line from its stdout; everything else (Locust's logging) goes to stderr.

Protocol lines: `started` (with the absolute start time), `step_closed` (one per step per
load process, with that process's records), `done` (final records), `error`, and, when a local
run is interrupted (SIGINT), `interrupted` (the records so far and the moment it stopped).

Distributed: `master --workers N` waits for N workers (`worker --master-host H`), gives each
the plan and its index with a custom message, and relays their records, which travel at full
precision (msgpack doubles) in custom messages. `local --workers N` starts N local worker
processes and a master in this process, and always stops them.
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import gevent  # noqa: E402
import locust.runners as locust_runners  # noqa: E402
from locust.env import Environment  # noqa: E402
from locust.log import setup_logging  # noqa: E402

from loadtest.config import WORKER_CONNECT_TIMEOUT_S, ramp_default  # noqa: E402
from loadtest.errors import EXIT_NO_MASTER  # noqa: E402
from loadtest.generator import LoadGenerator  # noqa: E402
from loadtest.plan import RampPlan  # noqa: E402
from loadtest.user import RampShape, StreamingOpenAIUser, fire_locust_request_event  # noqa: E402

START_LEAD_S = 1.5
END_GRACE_S = 30.0
_protocol_out = sys.stdout
_worker_procs: list[subprocess.Popen] = []


def emit(message: dict) -> None:
    _protocol_out.write(json.dumps(message) + "\n")
    _protocol_out.flush()


def run_local(plan: RampPlan) -> int:
    plan.workers = 1
    plan.start_ts = time.time() + START_LEAD_S
    env = Environment(user_classes=[StreamingOpenAIUser], shape_class=RampShape(plan))
    generator = LoadGenerator(plan, 0, emit, on_record=lambda r: fire_locust_request_event(env, r))
    env.servops_generator = generator  # type: ignore[attr-defined]
    runner = env.create_local_runner()
    gevent.signal_handler(signal.SIGINT, lambda: _interrupt_local(generator))
    emit({"type": "started", "start_ts": plan.start_ts, "workers": 1})
    closer = gevent.spawn(generator.run_closer)
    runner.start_shape()
    closer.join(timeout=plan.run_end - time.time() + END_GRACE_S)
    runner.quit()
    return 0 if generator.finished else 1


def run_master(
    plan: RampPlan, bind_host: str, bind_port: int, workers: int, worker_procs: list[subprocess.Popen] | None = None
) -> int:
    plan.workers = workers
    env = Environment(user_classes=[StreamingOpenAIUser], shape_class=RampShape(plan))
    runner = env.create_master_runner(master_bind_host=bind_host, master_bind_port=bind_port)
    closed: dict[int | None, set[int]] = {}

    def relay(environment, msg) -> None:  # noqa: ARG001
        data = msg.data
        emit(data)
        closed.setdefault(data["step"], set()).add(data["worker"])

    runner.register_message("servops_step", relay)
    deadline = time.time() + WORKER_CONNECT_TIMEOUT_S
    while len(runner.clients.ready) < workers and time.time() < deadline:
        if worker_procs and any(p.poll() is not None for p in worker_procs):
            break
        gevent.sleep(0.1)
    if len(runner.clients.ready) < workers:
        emit(
            {
                "type": "error",
                "message": f"only {len(runner.clients.ready)} of {workers} Locust workers "
                f"connected to {bind_host}:{bind_port} within {WORKER_CONNECT_TIMEOUT_S:g} s; start them with "
                f"`servops ramp --worker --master-host <this host>`",
            }
        )
        runner.quit()
        return 2
    plan.start_ts = time.time() + START_LEAD_S + 0.5 * workers
    for index, client in enumerate(sorted(runner.clients.ready, key=lambda c: c.id)):
        runner.send_message("servops_plan", {"plan": plan.model_dump(), "worker": index}, client.id)
    emit({"type": "started", "start_ts": plan.start_ts, "workers": workers})
    runner.start_shape()
    final = plan.run_end + END_GRACE_S
    while len(closed.get(None, ())) < workers and time.time() < final:
        gevent.sleep(0.1)
    runner.quit()
    return 0 if len(closed.get(None, ())) == workers else 1


def run_worker(master_host: str, master_port: int, connect_timeout_s: float = ramp_default("master_timeout_s")) -> int:
    """Serve a master's plans; EXIT_NO_MASTER when none answers within connect_timeout_s."""
    # Locust retries every CONNECT_TIMEOUT s, CONNECT_RETRY_COUNT times (5 min), silently at WARNING.
    locust_runners.CONNECT_TIMEOUT = min(5.0, connect_timeout_s)
    locust_runners.CONNECT_RETRY_COUNT = max(0, math.ceil(connect_timeout_s / locust_runners.CONNECT_TIMEOUT) - 1)
    env = Environment(user_classes=[StreamingOpenAIUser])
    try:
        runner = env.create_worker_runner(master_host, master_port)
    except ConnectionError:
        return EXIT_NO_MASTER

    def on_plan(environment, msg) -> None:
        worker = int(msg.data["worker"])
        try:
            plan = RampPlan.model_validate(msg.data["plan"])
            generator = LoadGenerator(
                plan,
                worker,
                lambda m: runner.send_message("servops_step", m),
                on_record=lambda r: fire_locust_request_event(environment, r),
            )
        except Exception as exc:  # e.g. a prompt file missing on this machine: tell the controller
            runner.send_message(
                "servops_step",
                {"type": "error", "step": None, "worker": worker, "message": f"Locust worker {worker}: {exc}"},
            )
            return
        environment.servops_generator = generator
        gevent.spawn(generator.run_closer)

    runner.register_message("servops_plan", on_plan)
    runner.greenlet.join()
    sys.stderr.flush()
    os._exit(0)  # ZeroMQ's context teardown can block interpreter exit; nothing is left to flush


def run_local_workers(plan: RampPlan, workers: int) -> int:
    port = _free_port()
    procs = _worker_procs
    procs += [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "loadtest.locust_main",
                "worker",
                "--master-host",
                "127.0.0.1",
                "--master-port",
                str(port),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(workers)
    ]
    try:
        return run_master(plan, "127.0.0.1", port, workers, worker_procs=procs)
    finally:
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


def _on_sigterm() -> None:
    """The controller stops us with SIGTERM: stop the local workers we started, then leave."""
    for proc in _worker_procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in _worker_procs:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
    os._exit(143)


def _interrupt_local(generator: LoadGenerator) -> None:
    """SIGINT in a local run (the user's Ctrl-C reaches the whole process group; the controller
    forwards it too): send what was measured, then leave at once, like SIGTERM."""
    generator.interrupt()
    _protocol_out.flush()
    os._exit(130)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main(argv: list[str] | None = None) -> int:
    global _protocol_out
    parser = argparse.ArgumentParser(prog="python -m loadtest.locust_main", description=__doc__.splitlines()[0])
    parser.add_argument("role", choices=["local", "master", "worker"], help="which Locust runner to be")
    parser.add_argument("--plan", help="RampPlan JSON file (local and master)")
    parser.add_argument("--workers", type=int, default=0, help="worker processes: local starts them, master waits")
    # Defaults are the ramp's (loadtest/config.py); the controller and `servops ramp --worker` pass them anyway.
    parser.add_argument("--master-host", default=ramp_default("master_host"), help="worker: the master's address")
    parser.add_argument(
        "--master-port", type=int, default=ramp_default("master_port"), help="master: port to bind; worker: to connect"
    )
    parser.add_argument(
        "--master-bind-host", default=ramp_default("master_bind_host"), help="master: interface to bind"
    )
    parser.add_argument(
        "--connect-timeout",
        type=float,
        default=ramp_default("master_timeout_s"),
        help=f"worker: exit {EXIT_NO_MASTER} when no master answers within this many seconds",
    )
    args = parser.parse_args(argv)
    # The protocol owns the real stdout; anything else printed goes to stderr.
    _protocol_out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    setup_logging("WARNING")
    gevent.signal_handler(signal.SIGTERM, _on_sigterm)
    if args.role == "worker":
        return run_worker(args.master_host, args.master_port, args.connect_timeout)
    plan = RampPlan.model_validate_json(open(args.plan, encoding="utf-8").read())
    if args.role == "master" or args.workers > 0:  # distributed: the unclosed step's records stay with the workers
        gevent.signal_handler(signal.SIGINT, _on_sigterm)
    if args.role == "master":
        return run_master(plan, args.master_bind_host, args.master_port, max(1, args.workers))
    if args.workers > 0:
        return run_local_workers(plan, args.workers)
    return run_local(plan)


if __name__ == "__main__":
    exit_code = main()
    _protocol_out.flush()
    sys.stderr.flush()
    os._exit(exit_code)  # skip ZeroMQ/greenlet teardown, which can block exit; everything is flushed
