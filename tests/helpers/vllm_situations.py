"""Situations produced on a real vLLM: a server in a known state, its log, and two /metrics scrapes.

Why one module for both the live tests and the recorded corpus: the corpus under
tests/fixtures/vllm_cpu/ must be exactly what the live tests see, so the recorder
(`tests/fixtures/vllm_cpu/record.py`) and `tests/integration/vllm/` drive vLLM through the
same functions. Every load here is real: `servops ramp` (Locust) as a subprocess when its
per-step server signals are wanted, or the official `openai` client holding streams until the
observation beside it is done; every loop is bounded in count and time.

    with vllm_server(out_dir, "--max-num-seqs", "8") as server:        # advisor's launcher
        situation = held_streams(server, concurrency=32, name="saturated")
        situation.metrics_before, situation.metrics_after, situation.log_text
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from advisor.collect.cpu_features import BF16_ARITHMETIC_FLAGS, cpu_flags
from advisor.collect.server_args import ServeCommand
from advisor.servers.process import EngineProcess, display_command
from advisor.servers.vllm import reference_command, vllm_unavailable_reason
from rules.signals import CORRUPTED_COUNTER
from tests.helpers import load_trace, machine_state
from tests.integration.server.prom import samples
from tests.integration.server.prom import value as sample_value

# Served name used by every test server (short, so metric labels stay readable).
SERVED_NAME = "smol"
# vLLM's own startup can take ~2 min when it compiles (docs/vllm.md); the launcher waits this long.
STARTUP_TIMEOUT_S = 420.0
# Seconds between the two scrapes of a situation (triage's --metrics-interval).
SCRAPE_INTERVAL_S = 8.0
# Seconds after the load starts before the first scrape: Locust has spawned every user by then.
SETTLE_S = 10.0


@dataclass
class VllmServer:
    """A running vLLM: where it answers, its log, and the command it was started with."""

    process: EngineProcess
    command: ServeCommand

    @property
    def base_url(self) -> str:
        return self.process.base_url

    @property
    def log_path(self) -> Path:
        return self.process.log_path

    @property
    def shown_command(self) -> str:
        return display_command(self.command)

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def metrics_text(self) -> str:
        with urllib.request.urlopen(self.base_url + "/metrics", timeout=10) as response:
            return response.read().decode()

    def complete(self, prompt: str, max_tokens: int, timeout_s: float = 120.0, **fields: object) -> tuple[int, dict]:
        return complete(self.base_url, prompt, max_tokens, timeout_s, **fields)


def complete(
    base_url: str, prompt: str, max_tokens: int, timeout_s: float = 120.0, **fields: object
) -> tuple[int, dict]:
    """One /v1/completions request to the served model: (status, body). The one way the vLLM tests and the
    recordings ask vLLM for text; an HTTP error or a dead server raises (urllib's URLError / OSError), for the
    caller that expects one to catch."""
    body = {"model": SERVED_NAME, "prompt": prompt, "max_tokens": max_tokens, **fields}
    request = urllib.request.Request(
        base_url + "/v1/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        return response.status, json.loads(response.read())


@dataclass
class Situation:
    """What one situation left behind: two scrapes, the log so far, and what the client did."""

    name: str
    metrics_before: str
    metrics_after: str
    log_text: str
    interval_s: float
    client_concurrency: int | None = None
    ramp: dict | None = None
    notes: dict = field(default_factory=dict)


def vllm_command(*flags: str, kv_space_gib: int | None = None) -> ServeCommand:
    """The reference vLLM command for the embedded SmolLM2 with `flags` (served as 'smol')."""
    return reference_command(list(flags), served_model_name=SERVED_NAME, kv_space_gib=kv_space_gib)


@contextlib.contextmanager
def vllm_server(
    log_dir: Path,
    *flags: str,
    kv_space_gib: int | None = None,
    label: str = "vllm",
    command: ServeCommand | None = None,
) -> Iterator[VllmServer]:
    """A healthy vLLM on a free loopback port for the block; always stopped afterwards."""
    reason = vllm_unavailable_reason()
    if reason:
        raise RuntimeError(reason)
    command = command or vllm_command(*flags, kv_space_gib=kv_space_gib)
    process = EngineProcess(
        command,
        Path(log_dir) / f"{label}.log",
        startup_timeout_s=STARTUP_TIMEOUT_S,
        progress=lambda line: print(f"[{label}] {line}", file=sys.stderr, flush=True),
    )
    with process:
        give_way(process)
        yield VllmServer(process=process, command=command)


# The niceness of every vLLM this tier starts, once it is healthy (19: the lowest priority).
VLLM_NICE = 19


def give_way(process: EngineProcess, nice: int = VLLM_NICE) -> None:
    """Lower a started vLLM's CPU priority below the test's own processes (to `nice`; 0 undoes it
    for a process that may raise priority, as benchmarks/harness_priority.py does as root).

    Why: under load vLLM's CPU backend keeps both cores of a 2-core box busy, its worker on one
    and its scheduler spinning on the other (docs/reference.md §6), and everything the tests judge
    it with (the client's streams, the live triages, the scrapes) runs beside it. On the CI box
    those observers starved: a held load collapsed while vLLM kept its throughput, and a live
    triage child got 0.3 CPU seconds in 180 s. At nice 19 a waking observer runs first and vLLM
    still gets every cycle the observers leave: here a live triage beside 32 streams waited 0.01 s
    for a CPU instead of 0.6 s, and vLLM generated 0.93x its tokens while it ran (BENCHMARKS.md,
    "The vLLM tier's vLLM at nice 19").

    Both knobs: setpriority on vLLM's process group reaches every thread of the API server, the
    engine core and the worker (threads started later inherit it); and vLLM runs in its own
    session, which a kernel with autogroup schedules as one group against the test's session
    whatever the nice of its members, so the group's own nice is set too (/proc/PID/autogroup).
    """
    pid = process.pid
    if pid is None:
        return
    os.setpriority(os.PRIO_PGRP, os.getpgid(pid), nice)
    with contextlib.suppress(OSError):  # a kernel without autogroup has no such file
        Path(f"/proc/{pid}/autogroup").write_text(str(nice))


# Work to run while a situation holds (e.g. `servops triage --endpoint …` against the loaded server).
During = Callable[[], object]


class Background:
    """Runs `work` in a thread beside the scrapes and hands back its result (or its error)."""

    def __init__(self, work: During | None, what: str = "work") -> None:
        self.box: dict = {}
        self.what = what
        self.thread = threading.Thread(target=self._run, args=(work,), daemon=True) if work else None
        if self.thread:
            self.thread.start()

    def _run(self, work: During) -> None:
        try:
            self.box["result"] = work()
        except Exception as exc:  # noqa: BLE001 (handed to the test, which reports it)
            self.box["error"] = exc

    def result(self, timeout_s: float = 300.0) -> object:
        """The work's result; its error re-raised; a TimeoutError naming it when it outlives timeout_s,
        so a stuck side job fails the fixture with a reason instead of running into pytest's timeout."""
        if self.thread is None:
            return None
        self.thread.join(timeout_s)
        if self.thread.is_alive():
            state = machine_state.snapshot(self.thread)
            raise TimeoutError(f"{self.what} still running after {timeout_s:g} s\n{state}")
        if "error" in self.box:
            raise self.box["error"]
        return self.box.get("result")


def idle(
    server: VllmServer, name: str = "idle", interval_s: float = SCRAPE_INTERVAL_S, during: During | None = None
) -> Situation:
    """Two scrapes of a server nobody is using."""
    return _observe(server, name, interval_s, during)


def _observe(
    server: VllmServer,
    name: str,
    interval_s: float,
    during: During | None,
    until_rises: str | None = None,
    max_window_s: float | None = None,
) -> Situation:
    """The situation as it holds now: a scrape, another `interval_s` later, the log so far, and
    what `during` returned, run beside the scrapes.

    With `until_rises` (a counter's name) the window stays open past `interval_s`, polled each
    second up to `max_window_s`, until that counter has risen: an event that comes in bursts seconds
    apart (vLLM preempts only when a running request needs a block and none is free) otherwise falls
    between the scrapes of a slower machine, and the situation would not be the one asked for. The
    situation's `interval_s` is the window's real length, so rates stay honest."""
    background = Background(during, "the work beside the scrapes")
    before = server.metrics_text()
    started = time.monotonic()
    time.sleep(interval_s)
    after = server.metrics_text()
    if until_rises is not None:
        deadline = started + (max_window_s or interval_s)
        start_count = sample_value(before, until_rises)
        while sample_value(after, until_rises) <= start_count and time.monotonic() < deadline:
            time.sleep(1.0)
            after = server.metrics_text()
    interval_s = time.monotonic() - started
    log_text = server.log_text()
    try:
        during_result = background.result(DURING_MAX_S)
    except TimeoutError as exc:  # vLLM's side first: the overrun's own verdict ends the message
        raise TimeoutError(f"({name}) {diagnosis(server)}\n{exc}") from None
    return Situation(
        name=name,
        metrics_before=before,
        metrics_after=after,
        log_text=log_text,
        interval_s=interval_s,
        notes={"during": during_result},
    )


# vLLM counts requests answered from NaN logits only when asked (0.11.1+), in rules.signals.CORRUPTED_COUNTER.
NANS_ENV = "VLLM_COMPUTE_NANS_IN_LOGITS"
NAN_REQUESTS = 3
NAN_WINDOW_MAX_S = 30.0


def broken_model_copy(folder: Path) -> Path:
    """The embedded SmolLM2 with NaN in its final norm's weight, so every logit it computes is NaN: a checkpoint
    broken the way a bad conversion or quantization breaks one, served by the real vLLM."""
    import torch  # noqa: PLC0415 (the model's tools, imported only when a situation needs them)
    from safetensors.torch import load_file, save_file  # noqa: PLC0415

    from engine.model.default_model import ensure_default_model  # noqa: PLC0415

    copy = Path(folder) / "smol-nan"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(ensure_default_model(), copy)
    weights = copy / "model.safetensors"
    tensors = load_file(weights)
    tensors["model.norm.weight"] = torch.full_like(tensors["model.norm.weight"], float("nan"))
    save_file(tensors, weights, metadata={"format": "pt"})
    return copy


def nan_logits(work: Path, name: str = "nan_logits", requests: int = NAN_REQUESTS) -> Situation:
    """The broken copy served with NANS_ENV=1 (eager: nothing here depends on compilation), two scrapes around
    `requests` greedy completions sent one after another; the window stays open until vLLM counted them all."""
    command = reference_command(["--enforce-eager"], model=str(broken_model_copy(work)), served_model_name=SERVED_NAME)
    command = command.model_copy(update={"env": {**command.env, NANS_ENV: "1"}})
    with vllm_server(work, label=name, command=command) as server:
        situation = _observe(server, name, SCRAPE_INTERVAL_S, lambda: _complete_each(server, requests))
        opened = time.monotonic() - situation.interval_s
        while sample_value(situation.metrics_after, CORRUPTED_COUNTER) < requests and (
            time.monotonic() - opened < NAN_WINDOW_MAX_S
        ):  # the window stays open, and its length honest, until vLLM counted every request
            time.sleep(0.5)
            situation.metrics_after, situation.log_text = server.metrics_text(), server.log_text()
            situation.interval_s = time.monotonic() - opened
    return situation


def _complete_each(server: VllmServer, requests: int) -> dict:
    """`requests` greedy completions of 4 tokens, one after another: their HTTP statuses and texts."""
    statuses, texts = [], []
    for i in range(requests):
        status, answer = server.complete(f"Request {i} of a broken model:", 4, temperature=0)
        statuses.append(status)
        texts.append(answer["choices"][0]["text"])
    return {"statuses": statuses, "texts": texts}


def diagnosis(server: VllmServer, lines: int = 4) -> str:
    """What a failure message needs to tell a slow vLLM from a broken test: the CPU's bf16 flags,
    the dtype vLLM runs in, the cores it bound its engine to, and its last throughput lines."""
    flags = " ".join(sorted(cpu_flags() & SPEED_CPU_FLAGS)) or "none"
    dtype = server.command.flags.get("--dtype", "auto (the checkpoint's)")
    log = server.log_text().splitlines()
    binding = [line for line in log if any(mark in line for mark in _BINDING_MARKS)]
    engine = [line for line in log if "Avg prompt throughput" in line][-lines:]
    return (
        f"CPU flags: {flags}; vLLM --dtype {dtype}; its CPU binding:\n"
        + "\n".join(binding)
        + "\nits last throughput lines:\n"
        + "\n".join(engine)
    )


# The CPU flags that decide vLLM's CPU speed here: its AVX2 or AVX512 kernels, and bf16 arithmetic
# (without it a bf16 model runs float32, advisor.servers.vllm). Failure messages and the recorded
# corpus's metadata name these.
SPEED_CPU_FLAGS = BF16_ARITHMETIC_FLAGS | {"avx2", "avx512f"}

# vLLM's log lines that say which cores its engine threads were bound to and which it left free
# (vllm/utils/ompmultiprocessing.py): on a 2-core box, whether the test's processes share the
# engine's core.
_BINDING_MARKS = ("core ids=", "reserved_cpus=", "reserved CPU core number")


# Upper bound on the work beside a situation's scrapes (the two live triages, run side by side,
# take ~12 s here; each is bounded on its own by its caller).
DURING_MAX_S = 240.0
# Default step of a ramp used as load; situations that must outlast live triages use held_streams.
LOAD_STEP_S = 45.0
# Seconds a ramp keeps sampling after the observation before `stop_when_observed` interrupts it.
RAMP_SAMPLES_AFTER_S = 4.0


def under_ramp_load(
    server: VllmServer,
    concurrency: int | str,
    out_dir: Path,
    name: str,
    step_s: float = LOAD_STEP_S,
    input_len: int = 128,
    output_len: int = 64,
    interval_s: float = SCRAPE_INTERVAL_S,
    settle_s: float = SETTLE_S,
    during: During | None = None,
    until_rises: str | None = None,
    max_window_s: float | None = None,
    cooldown_s: float = 5.0,
    request_timeout_s: float | None = None,
    stop_when_observed: bool = False,
) -> Situation:
    """`servops ramp` holds `concurrency` streams for `step_s` (or steps through "1,2,4,…", `step_s`
    each); scrapes at settle_s and +interval_s (longer, up to max_window_s, while the counter
    `until_rises` has not risen: see _observe). With `stop_when_observed` the ramp is interrupted
    (SIGTERM, as `timeout` or a cancelled CI job would) once the scrapes are done: it writes the
    finished steps and the partial one, and the rest of a long step is not waited for.

    Why SIGTERM and not Ctrl-C's SIGINT: a suite started from a script in the background (`cmd &`,
    nohup, some CI runners) hands its children SIGINT ignored, as POSIX has background jobs
    inherit it, and Python keeps an inherited SIG_IGN: the ramp then ran its whole 120 s step after
    the preemptions were seen (a 2-core run of this tier, 2026-12-02). servops turns SIGTERM into
    the same interruption, and SIGTERM is never ignored that way."""
    out_dir.mkdir(parents=True, exist_ok=True)
    ramp_json = out_dir / f"{name}-ramp.json"
    argv = [
        sys.executable,
        "-m",
        "advisor",
        "ramp",
        "--endpoint",
        server.base_url,
        "--model",
        SERVED_NAME,
        "--concurrency",
        str(concurrency),
        "--step-seconds",
        str(step_s),
        "--warmup-seconds",
        "3",
        "--cooldown-seconds",
        f"{cooldown_s:g}",
        "--input-len",
        str(input_len),
        "--output-len",
        str(output_len),
        "--seed",
        "7",
        "--json",
        str(ramp_json),
        *(["--request-timeout", f"{request_timeout_s:g}"] if request_timeout_s else []),
    ]
    # Output into a file, not a pipe: nobody reads a pipe while the scrapes and `during` run, and a
    # ramp that filled one would stall on its next progress line.
    ramp_log = out_dir / f"{name}-ramp.log"
    with open(ramp_log, "w") as log_file:
        ramp = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT)
    try:
        time.sleep(settle_s)
        situation = _observe(server, name, interval_s, during, until_rises, max_window_s)
        if stop_when_observed:
            # The ramp samples /metrics once a second (loadtest.server_signals.MetricsSampler) and ends
            # the partial step's window at the interruption: give it samples after what the scrapes saw,
            # or a rise seen by the last scrape can fall outside the ramp's own window (it did on CI).
            time.sleep(RAMP_SAMPLES_AFTER_S)
            ramp.send_signal(signal.SIGTERM)
        ramp.wait(timeout=step_s * (str(concurrency).count(",") + 1) + cooldown_s + 120)
    finally:
        if ramp.poll() is None:
            ramp.kill()
            ramp.wait(30)
    output = ramp_log.read_text(errors="replace")
    print(f"[{name}] servops ramp exited {ramp.returncode}: {output[-600:]}", file=sys.stderr, flush=True)
    if not ramp_json.is_file():
        raise RuntimeError(
            f"servops ramp exited {ramp.returncode} with no JSON: {output[-2000:]}\n{diagnosis(server)}\n"
            f"{machine_state.snapshot()}"
        )
    # Exit 2 with a JSON is a ramp whose every request was still in flight at the end of the step
    # on a slow vLLM: the load still happened and the scrapes saw it, so the situation stands, and
    # the ramp's own verdict goes into the notes for the test to read.
    situation.client_concurrency = int(str(concurrency).split(",")[-1])  # the streams the window saw
    situation.ramp = json.loads(ramp_json.read_text())
    situation.notes["ramp_output"] = output[-3000:]
    situation.notes["ramp_exit"] = ramp.returncode
    return situation


# Words for the held streams' prompts: common English words, about one SmolLM2 token each.
_PROMPT_WORDS = (
    "time year people way day man thing woman life child world school state family student "
    "group country problem hand part place case week company system program question work "
    "number night point home water room mother area money story fact month lot right study "
    "book eye job word business issue side kind head house service friend father power hour "
    "game line end member law car city community name president team minute idea kid body"
).split()
# Upper bound on how long a held load runs if the observation beside it never returns.
HELD_LOAD_MAX_S = 300.0
# Seconds the held streams get to cancel their requests and close once told to stop.
STOP_GRACE_S = 30.0
# Seconds to wait for the first finished requests under a held load before giving up with the log.
STEADY_STATE_MAX_S = 180.0
# Finished requests a held load waits for before its window opens, at most one per connection. Why not one
# per connection at 32: the streams start together, so their first requests end together, over about a
# minute on a 2-core AVX2 box (float32, ~80 s a 64-token request at 32 running); the window needs finishes
# inside it, and after the eighth the rest of that wave is still ending through it. Waiting for all 32
# held the saturated case about 50 s longer for nothing the window needed.
STEADY_COMPLETIONS = 8
# A held load holds when vLLM runs at least this share of the client's connections on average over
# the observation (4 streams here: 3-4; 32: 28-32; seen 2 of 4 with two CPU burners beside it).
HELD_SHARE = 0.5
# Observations of one held situation before its failure to hold is reported.
OBSERVE_ATTEMPTS = 3


def held_streams(
    server: VllmServer,
    concurrency: int,
    name: str,
    pool_size: int | None = None,
    input_len: int = 128,
    output_len: int = 64,
    interval_s: float = SCRAPE_INTERVAL_S,
    during: During | None = None,
) -> Situation:
    """`concurrency` closed-loop streams through the official `openai` client, held until the two
    scrapes and `during` are done (bounded by HELD_LOAD_MAX_S), then cancelled.

    Why held rather than timed: the live triages beside the scrapes import, probe and scrape twice;
    on a loaded 2-core CI box they once outlasted a fixed 45 s load step, so the last scrape saw an
    idle server. Why cancelled rather than drained: waiting for the requests in flight to finish
    once hung a CI run past pytest's timeout with nothing said. `pool_size` below `concurrency`
    makes the client the bottleneck: the application has `concurrency` requests in flight, vLLM
    sees `pool_size`."""
    stop = threading.Event()
    connections = min(concurrency, pool_size or concurrency)
    counts: dict = {"completed": 0, "failed": 0, "last_error": None}
    completed_before = _completed_requests(server)
    load = Background(
        lambda: asyncio.run(_streams(server.base_url, concurrency, connections, input_len, output_len, stop, counts)),
        f"{concurrency} held openai streams",
    )
    try:
        _wait_for_steady_state(server, completed_before, min(connections, STEADY_COMPLETIONS), counts)
        situation = _observe_held(server, name, interval_s, during, connections, counts)
    except BaseException:
        stop.set()
        with contextlib.suppress(Exception):  # the first failure is the one to report
            load.result(STOP_GRACE_S)
        raise
    stop.set()
    load.result(STOP_GRACE_S)
    situation.client_concurrency = concurrency
    situation.notes.update({k: v for k, v in counts.items() if k != "last_error"})
    return situation


def _observe_held(
    server: VllmServer, name: str, interval_s: float, during: During | None, connections: int, counts: dict
) -> Situation:
    """The observation under a held load, traced; observed again (at most OBSERVE_ATTEMPTS times in
    all) while vLLM ran fewer than HELD_SHARE of the held connections on average, so the situation
    the tests judge is the one they asked for. The trace's summary goes into the situation's notes
    (`load`) for the tests' own messages."""
    wanted = HELD_SHARE * connections
    summaries = []
    for attempt in range(1, OBSERVE_ATTEMPTS + 1):
        with load_trace.LoadTrace(server.metrics_text, counts) as trace:
            situation = _observe(server, name, interval_s, during)
        summaries.append(f"attempt {attempt}: {trace.summary()}")
        if trace.held(wanted):
            situation.notes["load"] = summaries[-1]
            return situation
        if attempt < OBSERVE_ATTEMPTS:
            print(f"[{name}] the load did not hold, observing again; {summaries[-1]}", file=sys.stderr, flush=True)
    raise RuntimeError(
        f"({name}) the held load never held: vLLM ran fewer than {wanted:g} requests on average while the client "
        f"held {connections} connections, in each of {OBSERVE_ATTEMPTS} observations\n"
        + "\n".join(summaries)
        + f"\n{diagnosis(server)}\n{machine_state.snapshot()}"
    )


def client_pool_overload(
    server: VllmServer,
    clients: int = 64,
    pool_size: int = 4,
    output_len: int = 64,
    interval_s: float = SCRAPE_INTERVAL_S,
    name: str = "client_overload",
    during: During | None = None,
) -> Situation:
    """64 application requests in flight through one `openai` client whose HTTP pool holds 4
    connections: the client, not vLLM, is the bottleneck."""
    return held_streams(
        server,
        clients,
        name,
        pool_size=pool_size,
        input_len=8,
        output_len=output_len,
        interval_s=interval_s,
        during=during,
    )


def _completed_requests(server: VllmServer) -> float:
    """vLLM's own count of finished requests (`vllm:request_success_total`, every finish reason)."""
    return sum(
        value for (name, _), value in samples(server.metrics_text()).items() if name == "vllm:request_success_total"
    )


def _wait_for_steady_state(
    server: VllmServer, since: float, completions: int, counts: dict, timeout_s: float = STEADY_STATE_MAX_S
) -> None:
    """Until `completions` requests have finished after `since` (vLLM's own counter); past timeout_s
    a RuntimeError with the client's counts and the end of vLLM's log.

    Why completions and not a fixed settle time: the rules read latency histograms over the scrape
    window, which fill only as requests finish; at 32 streams a request takes ~12 s in bf16 and ~80 s
    in float32 here, so a window opened as soon as the streams were running held no finished request."""
    deadline = time.monotonic() + timeout_s
    while _completed_requests(server) < since + completions:
        if time.monotonic() >= deadline:
            finished = _completed_requests(server) - since
            raise RuntimeError(
                f"vLLM finished {finished:g} of {completions} requests in {timeout_s:g} s under held load "
                f"(client: {counts['completed']} completed, {counts['failed']} failed, "
                f"last error {counts['last_error']!r}); end of its log:\n{_log_tail(server)}"
            )
        time.sleep(0.5)


def _log_tail(server: VllmServer, lines: int = 40) -> str:
    return "\n".join(server.log_text().splitlines()[-lines:])


async def _streams(
    base_url: str, clients: int, pool_size: int, input_len: int, output_len: int, stop: threading.Event, counts: dict
) -> None:
    """`clients` closed-loop streams until `stop` (or HELD_LOAD_MAX_S); then the requests in flight
    are cancelled, which closes their connections so vLLM aborts them. Tallies go into `counts`."""
    import random

    import openai

    # openai's own HTTP client class, built on whichever transport this openai version ships
    # (httpx before 3.x, httpx2 since): its module provides the matching Limits.
    transport = importlib.import_module(openai.DefaultAsyncHttpxClient.__mro__[1].__module__.split(".")[0])
    http_client = openai.DefaultAsyncHttpxClient(
        limits=transport.Limits(max_connections=pool_size, max_keepalive_connections=pool_size), timeout=120.0
    )
    # No retries: a failed request is counted (and reported if the load never settles), not hidden.
    client = openai.AsyncOpenAI(base_url=base_url + "/v1", api_key="unused", http_client=http_client, max_retries=0)
    deadline = time.monotonic() + HELD_LOAD_MAX_S

    async def one_client(index: int) -> None:
        draw = random.Random(index)
        # Staggered starts and output lengths drawn around output_len: streams in lockstep all
        # finish in the same engine step, and a scrape in the gap after it reads 0 running.
        await asyncio.sleep(index * 0.1)
        while True:
            # A fresh random prompt each time: no prefix is shared, as with the ramp's generator.
            prompt = " ".join(draw.choice(_PROMPT_WORDS) for _ in range(input_len))
            tokens = draw.randint(max(1, output_len // 2), output_len * 3 // 2)
            try:
                await client.completions.create(
                    model=SERVED_NAME, prompt=prompt, max_tokens=tokens, extra_body={"ignore_eos": True}
                )
                counts["completed"] += 1
            except openai.OpenAIError as exc:
                counts["failed"] += 1
                counts["last_error"] = f"{type(exc).__name__}: {exc}"[:300]
                await asyncio.sleep(0.5)  # a refusing server is not hammered in a tight loop

    tasks = [asyncio.create_task(one_client(i)) for i in range(clients)]
    try:
        while not stop.is_set() and time.monotonic() < deadline and not any(t.done() for t in tasks):
            await asyncio.sleep(0.2)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await client.close()
    for task in tasks:  # a client that died of something other than the cancel: its error is the result
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()


def failed_start_log(
    log_dir: Path,
    *flags: str,
    label: str,
    kv_space_gib: int | None = None,
    env_drop: tuple[str, ...] = (),
    timeout_s: float = STARTUP_TIMEOUT_S,
) -> tuple[int, str]:
    """Start vLLM with flags that make it fail; (exit code, log text). Bounded by timeout_s."""
    command = vllm_command(*flags, kv_space_gib=kv_space_gib)
    command = command.model_copy(update={"env": {k: v for k, v in command.env.items() if k not in env_drop}})
    process = EngineProcess(command, Path(log_dir) / f"{label}.log", startup_timeout_s=timeout_s)
    try:
        process.start()
    except Exception:  # noqa: BLE001 (the failure is the point; its log is the result)
        code = 1
    else:
        process.stop()
        code = 0
    return code, process.log_path.read_text(errors="replace")
