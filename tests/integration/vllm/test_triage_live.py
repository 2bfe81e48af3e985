"""`servops triage` against a live vLLM: idle, moderate, saturated and a client-side overload.

Each situation is held for real on the shared `vllm_serving` server (tests.helpers.vllm_situations);
while it holds, triage runs twice through the real CLI against the live endpoint (one scrape;
two scrapes with --metrics-interval) and its log, and once more offline from the two scrapes the
situation saved, as a user would with `curl …/metrics > before.txt`.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from advisor.servers.vllm import find_vllm_python
from tests.helpers import cli_child
from tests.helpers import vllm_situations as vs

# A live triage takes 1-12 s here. The bound is wide so that a box stalled for minutes (as CI's once
# was) still finishes; run side by side, the pair with cli_child's signal graces stays inside
# vs.DURING_MAX_S, so the child's own overrun report, with its stack, is the one that fails first.
TRIAGE_TIMEOUT_S = 180
SEVERE = {"high", "critical"}


def servops(*args: str, timeout_s: float = TRIAGE_TIMEOUT_S) -> subprocess.CompletedProcess:
    """The real CLI in a child process (`python -m advisor …`), every wait bounded (cli_child)."""
    return cli_child.run(*args, timeout_s=timeout_s)


def live_triage_args(server: vs.VllmServer, out: Path, interval_s: float | None, *extra: str) -> list[str]:
    """`triage --endpoint URL --logs LOG [--metrics-interval S] --json OUT`."""
    args = ["triage", "--endpoint", server.base_url, "--logs", str(server.log_path), "--json", str(out), *extra]
    return [*args, "--metrics-interval", str(interval_s)] if interval_s else args


def finished_triage(child: cli_child.CliChild, out: Path) -> dict:
    """A started live triage once it ends: the parsed JSON and its stdout."""
    done = child.finish(TRIAGE_TIMEOUT_S)
    # Said on stderr so a CI failure beside a slow load shows how long each live triage took.
    took_s = time.monotonic() - child.started
    print(f"[{out.parent.name}] live triage → {out.name} took {took_s:.1f} s", file=sys.stderr)
    assert done.returncode == 0, f"triage exited {done.returncode}: {done.stderr[-2000:]}"
    return {"json": json.loads(out.read_text()), "stdout": done.stdout}


def live_triage(server: vs.VllmServer, out: Path, interval_s: float | None, *extra: str) -> dict:
    """One live triage, started and finished here."""
    return finished_triage(cli_child.start(*live_triage_args(server, out, interval_s, *extra)), out)


SATURATION_FAMILY = {"OP-5.1", "OP-5.2", "OP-5.4"}


def offline_triage(situation: vs.Situation, folder: Path, *extra: str) -> dict:
    """Triage of the situation's saved scrapes and log, as files."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "before.prom").write_text(situation.metrics_before)
    (folder / "after.prom").write_text(situation.metrics_after)
    (folder / "server.log").write_text(situation.log_text)
    out = folder / "triage.json"
    done = servops(
        "triage",
        "--metrics",
        str(folder / "before.prom"),
        "--metrics",
        str(folder / "after.prom"),
        "--metrics-interval",
        str(situation.interval_s),
        "--logs",
        str(folder / "server.log"),
        "--json",
        str(out),
        *extra,
    )
    assert done.returncode == 0, f"offline triage exited {done.returncode}: {done.stderr[-2000:]}"
    return json.loads(out.read_text())


def both_live_triages(server: vs.VllmServer, folder: Path, *extra: str):
    """What to run while a situation holds: one-scrape and two-scrape live triage, side by side.

    Why side by side: the pair then holds the load for one triage's time, not two; each reads its
    own scrapes, so neither disturbs the other's window."""
    folder.mkdir(parents=True, exist_ok=True)

    def run() -> dict:
        one, two = folder / "one.json", folder / "two.json"
        children = {
            "one_scrape": (cli_child.start(*live_triage_args(server, one, None, *extra)), one),
            "two_scrapes": (cli_child.start(*live_triage_args(server, two, vs.SCRAPE_INTERVAL_S, *extra)), two),
        }
        try:
            return {name: finished_triage(child, out) for name, (child, out) in children.items()}
        finally:  # the first failure ends both: no triage outlives its situation
            for child, _ in children.values():
                child.close()

    return run


@pytest.fixture(scope="module")
def idle_case(vllm_serving: vs.VllmServer, vllm_work: Path) -> vs.Situation:
    return vs.idle(vllm_serving, during=both_live_triages(vllm_serving, vllm_work / "idle"))


@pytest.fixture(scope="module")
def moderate_case(vllm_serving: vs.VllmServer, vllm_work: Path, idle_case: vs.Situation) -> vs.Situation:
    return vs.held_streams(vllm_serving, 4, "moderate", during=both_live_triages(vllm_serving, vllm_work / "moderate"))


@pytest.fixture(scope="module")
def saturated_case(vllm_serving: vs.VllmServer, vllm_work: Path, moderate_case: vs.Situation) -> vs.Situation:
    return vs.held_streams(
        vllm_serving, 32, "saturated", during=both_live_triages(vllm_serving, vllm_work / "saturated")
    )


@pytest.fixture(scope="module")
def overload_case(vllm_serving: vs.VllmServer, vllm_work: Path, saturated_case: vs.Situation) -> vs.Situation:
    return vs.client_pool_overload(
        vllm_serving,
        clients=64,
        pool_size=4,
        during=both_live_triages(vllm_serving, vllm_work / "overload", "--concurrency", "64"),
    )


def findings(document: dict) -> list[dict]:
    return document.get("findings") or []


def told(situation: vs.Situation) -> str:
    """What the two-scrape triage printed, and what the held load did meanwhile (vs.held_streams)."""
    load = situation.notes.get("load", "not traced")
    return f"{situation.notes['during']['two_scrapes']['stdout']}\nthe load meanwhile: {load}"


def severe(document: dict) -> list[str]:
    return [f"{f['rule']} {f['title']}" for f in findings(document) if f["severity"] in SEVERE]


def vllm_accepts(command: str) -> None:
    """vLLM's own argument parser takes the proposed command's flags (no server is started)."""
    words = shlex.split(command)
    while words and "=" in words[0] and not words[0].startswith("-"):
        words.pop(0)  # NAME=value environment assignments
    assert words[:2] == ["vllm", "serve"], f"not a vllm serve command: {command}"
    code = (
        "import sys; from vllm.entrypoints.launchers.cli_args import make_arg_parser; "
        "from vllm.utils.argparse_utils import FlexibleArgumentParser; "
        "make_arg_parser(FlexibleArgumentParser()).parse_args(sys.argv[1:])"
    )
    done = subprocess.run(
        [str(find_vllm_python()), "-c", code, *words[2:]], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, f"vLLM's parser refused {command!r}: {done.stderr[-1500:]}"


def test_idle_vllm_triage_finds_nothing_severe_from_one_or_two_scrapes(idle_case: vs.Situation) -> None:
    live = idle_case.notes["during"]
    for form in ("one_scrape", "two_scrapes"):
        assert severe(live[form]["json"]) == [], live[form]["stdout"]


def test_idle_vllm_log_and_metrics_read_back_the_launch_flags(idle_case: vs.Situation) -> None:
    document = idle_case.notes["during"]["two_scrapes"]["json"]
    command = document["current_command"]
    words = shlex.split(command)
    assert words[words.index("--served-model-name") + 1] == vs.SERVED_NAME, command
    assert "SmolLM2-135M-Instruct" in command
    assert "['" not in command, command
    facts = json.dumps(document["facts"])
    # 46,592 tokens in bf16, 23,296 where vLLM runs float32 (a CPU without bf16 arithmetic)
    printed = re.search(r"CPU KV cache size: ([\d,]+) tokens", idle_case.log_text)
    assert printed, "the live vLLM log has no 'CPU KV cache size' line"
    tokens = printed.group(1)
    assert tokens in facts or tokens.replace(",", "") in facts, (
        f"the KV size vLLM printed ({tokens}) is not among the facts"
    )


def test_moderate_load_two_scrapes_see_the_running_requests(moderate_case: vs.Situation) -> None:
    document = moderate_case.notes["during"]["two_scrapes"]["json"]
    stdout = moderate_case.notes["during"]["two_scrapes"]["stdout"]
    # The gauge is an instant: a stream between two requests is not running, so under a busy box the
    # scrape may see fewer than 4 (seen: 2 with two CPU burners beside it), never 0 and never more.
    running = re.search(r"now: running (\d+)", stdout)
    assert running and 1 <= int(running.group(1)) <= 4, told(moderate_case)
    assert not [f for f in findings(document) if f["severity"] == "critical"], told(moderate_case)


def test_saturated_vllm_triage_names_the_bottleneck_from_its_own_metrics(saturated_case: vs.Situation) -> None:
    document = saturated_case.notes["during"]["two_scrapes"]["json"]
    stdout = told(saturated_case)
    top = findings(document)[0]
    assert top["severity"] in SEVERE, stdout
    assert any(e["name"].startswith("vllm:") for e in top["evidence"]), stdout


def test_saturated_vllm_proposed_command_is_one_vllm_serve_accepts(saturated_case: vs.Situation) -> None:
    document = saturated_case.notes["during"]["two_scrapes"]["json"]
    proposed = document.get("proposed_command") or document["current_command"]
    vllm_accepts(proposed)


def test_saturated_offline_triage_of_saved_scrapes_agrees_with_live(
    saturated_case: vs.Situation, vllm_work: Path
) -> None:
    # Two observations of one situation (the harness's scrapes and triage's own, seconds apart): a
    # saturated vLLM's queue flips between 0 and a few waiting, which moves the top between OP-5.1
    # (slow TTFT, no queue), OP-5.2 (queue) and OP-5.4 (slow steps): each must put one of them on top.
    offline = offline_triage(saturated_case, vllm_work / "saturated-offline")
    live = saturated_case.notes["during"]["two_scrapes"]["json"]
    for document in (offline, live):
        top = findings(document)[0]
        titles = [f["title"] for f in findings(document)]
        assert top["rule"] in SATURATION_FAMILY and top["severity"] in SEVERE, f"{titles}\n{told(saturated_case)}"


def test_client_pool_overload_is_triaged_as_an_upstream_bottleneck(overload_case: vs.Situation) -> None:
    document = overload_case.notes["during"]["two_scrapes"]["json"]
    stdout = told(overload_case)
    assert findings(document)[0]["rule"] == "OP-5.6", stdout
