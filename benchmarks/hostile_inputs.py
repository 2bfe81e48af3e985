"""The hostile and careless inputs of the edge round, tried again: how many, and what each does now.

The round that found the edge's faults tried 750 inputs on the commands added before it (`predict`,
`probe`, `triage --ramp/--host-profile/--save-window/--every`, `tune --server-command`, `report`) and
found 557 handled well: secrets printed in clear, results written unreadable or lost, tracebacks,
nonsense accepted, misreadings. This script tries the same classes again, each input built here
(deterministically, from the suite's fixtures), and judges every run the same way:

- traceback: an exception escaped `main()` or a child printed `Traceback`;
- leak: a planted secret appears in stdout, stderr or any file the run wrote;
- lost: a result the command computed is neither at its path nor rescued to a file the error names;
- otherwise handled: exit 0 (the work done, or the input's fault said in a note), or exit 2 with one
  `servops <command>: error: …` line.

    .venv/bin/python benchmarks/hostile_inputs.py               # the table, one row per class
    .venv/bin/python benchmarks/hostile_inputs.py --json out.json -v

Baseline: the round before the fixes (the issue's counts: 750 inputs, 557 handled, 30 leaks, 10
results lost, 76 tracebacks, 63 nonsense accepted). It is not re-run here: those faults are gone.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import math
import random
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from advisor.cli.main import main  # noqa: E402
from tests.helpers.hostile_json import exists, replaced, value_paths  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
RAMP = FIXTURES / "bundled" / "queue_seqs1_ramp.json"
HOST = FIXTURES / "host" / "epyc_2core.json"
CPU = FIXTURES / "vllm_cpu"
REPORTS = FIXTURES / "reports"
SEED = 20261129
HOSTILE_VALUES = [math.nan, math.inf, -math.inf, 1e308, 10**400, -(10**30), -1, 0, "text", "", True, None, [], {}]
SECRET = "s3cretZ"  # every planted secret holds it, so one search finds any of them


@dataclass
class Case:
    """One input: the argv (with `{tmp}` for the case's folder), files to write first, and how to run it."""

    klass: str
    name: str
    argv: list[str]
    files: dict[str, bytes] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    child: bool = False  # run as a process (pipes, /dev/full); else in-process
    shell_tail: str = ""  # for a child: what its stdout goes into (`| head -1`)
    keeps: str | None = None  # the result path (relative to tmp) that must exist or be rescued
    expect: Callable[[int, str, str], bool] | None = None  # what handling this input means, beyond no fault


@dataclass
class Outcome:
    case: Case
    code: int
    traceback: bool
    leak: bool
    lost: bool
    first_error: str
    as_expected: bool = True

    @property
    def handled(self) -> bool:
        one_line = self.code == 0 or (self.code == 2 and self.first_error.startswith("servops "))
        return one_line and self.as_expected and not (self.traceback or self.leak or self.lost)


def refused(code: int, out: str, err: str) -> bool:
    """Nonsense is refused: exit 2, one line."""
    return code == 2


# --- the classes ---------------------------------------------------------------------------------------

SECRET_SHAPES = {
    "--api-key": f"--api-key {SECRET}1",
    "--api-key quoted": f'--api-key "{SECRET}2"',
    "--hf-token": f"--hf-token {SECRET}3",
    "key- value": f"--api-key key-{SECRET}4",
    "token- value": f"--hf-token token-{SECRET}5",
    "HF_TOKEN=": f"HF_TOKEN=hf_{SECRET}6abcdefghijkl",
    "hf_token=": f"hf_token={SECRET}7",
    "VLLM_API_KEY=": f"VLLM_API_KEY={SECRET}8",
    "--aws-secret-key": f"--aws-secret-key {SECRET}9",
    "sk- token": f"--api-key sk-{SECRET}0abcdefghijklmnopqrstu",
    "ghp_ token": f"--hf-token ghp_{SECRET}abcdefghijklmnopqrstuvwxyz012",
    "--api-key several": f"--api-key {SECRET}a {SECRET}b",
}


def _launch(shape: str, seqs: int = 1) -> str:
    words = SECRET_SHAPES[shape]
    if "=" in words.split()[0] and not words.startswith("--"):
        return f"{words} vllm serve m --max-num-seqs {seqs}"
    return f"vllm serve m --max-num-seqs {seqs} {words}"


def secret_cases() -> Iterator[Case]:
    log = (CPU / "moderate.log").read_bytes()
    window = ["--metrics", str(CPU / "moderate_before.prom"), "--metrics", str(CPU / "moderate_after.prom")]
    for shape in SECRET_SHAPES:
        yield Case(
            "secrets",
            f"predict {shape}",
            [
                "predict",
                "--ramp",
                str(RAMP),
                "--server-args",
                _launch(shape),
                "--change",
                "--max-num-seqs 2",
                "--json",
                "{tmp}/p.json",
            ],
            keeps="p.json",
        )
        yield Case(
            "secrets",
            f"triage {shape}",
            ["triage", "--logs", "{tmp}/s.log", "--server-args", _launch(shape, 8), "--json", "{tmp}/t.json"],
            files={"s.log": log},
            keeps="t.json",
        )
        yield Case(
            "secrets",
            f"triage --save-window {shape}",
            [
                "triage",
                *window,
                "--metrics-interval",
                "8",
                "--server-args",
                _launch(shape, 8),
                "--save-window",
                "{tmp}/w.json",
                "--json",
                "{tmp}/t.json",
            ],
            keeps="t.json",
        )
        yield Case(
            "secrets",
            f"scheduled triage {shape}",
            [
                "triage",
                "--logs",
                "{tmp}/s.log",
                "--server-args",
                _launch(shape, 8),
                "--count",
                "1",
                "--out",
                "{tmp}/runs",
            ],
            files={"s.log": log},
        )
        yield Case(
            "secrets",
            f"tune that cannot start {shape}",
            [
                "tune",
                "--server-command",
                _launch(shape).replace("vllm serve", "/nonexistent/vllm serve"),
                "--out",
                "{tmp}/tune",
            ],
        )
    for where, header in (
        ("Bearer", "Authorization: Bearer"),
        ("ApiKey", "Authorization: ApiKey"),
        ("Basic", "Proxy-Authorization: Basic"),
        ("X-Api-Key", "X-Api-Key:"),
    ):
        yield Case(
            "secrets",
            f"triage --header {where}",
            [
                "triage",
                "--endpoint",
                "http://127.0.0.1:9",
                "--header",
                f"{header} {SECRET}h",
                "--timeout",
                "1",
                "--json",
                "{tmp}/t.json",
            ],
        )
    for url in (f"http://u:p@ss{SECRET}u@127.0.0.1:9", f"http://127.0.0.1:9/?token={SECRET}q&api_key={SECRET}r"):
        yield Case(
            "secrets",
            f"ramp {url[:18]}…",
            ["ramp", "--endpoint", url, "--concurrency", "1", "--step-seconds", "1", "--json", "{tmp}/r.json"],
        )
        yield Case("secrets", f"triage --endpoint {url[:18]}…", ["triage", "--endpoint", url, "--timeout", "1"])
    keyed_log = log + f"ERROR 01-01 00:00:01 [x.py:1] request failed: Authorization: ApiKey {SECRET}L\n".encode()
    yield Case(
        "secrets",
        "a log quoting a header",
        ["triage", "--logs", "{tmp}/s.log", "--json", "{tmp}/t.json"],
        files={"s.log": keyed_log},
        keeps="t.json",
    )
    for name in ("HF_TOKEN", "VLLM_API_KEY", "AWS_SECRET_ACCESS_KEY"):
        yield Case(
            "secrets",
            f"advise with {name} in the environment",
            ["advise", "--model", "Llama-3.1-8B", "--gpu", "L40S", "--json", "{tmp}/a.json"],
            env={name: f"{SECRET}e"},
            keeps="a.json",
        )


def lost_result_cases() -> Iterator[Case]:
    quoted = "vllm serve m --max-num-seqs 8 --api-key \"k1\" --hf-token 'k2'"
    log = (CPU / "moderate.log").read_bytes()
    yield Case(
        "results",
        "quoted key into triage JSON",
        ["triage", "--logs", "{tmp}/s.log", "--server-args", quoted, "--json", "{tmp}/t.json"],
        files={"s.log": log},
        keeps="t.json",
    )
    yield Case(
        "results",
        "quoted key into a scheduled latest.json",
        ["triage", "--logs", "{tmp}/s.log", "--server-args", quoted, "--count", "1", "--out", "{tmp}/runs"],
        files={"s.log": log},
        keeps="runs/latest.json",
    )
    predict = [
        "predict",
        "--ramp",
        str(RAMP),
        "--server-args",
        "vllm serve m --max-num-seqs 1",
        "--change",
        "--max-num-seqs 2",
    ]
    yield Case(
        "results",
        "predict --json | head -1",
        [*predict, "--json", "{tmp}/p.json"],
        child=True,
        shell_tail="| head -1",
        keeps="p.json",
    )
    yield Case(
        "results",
        "triage --json | head -1",
        ["triage", "--logs", "{tmp}/s.log", "--json", "{tmp}/t.json"],
        files={"s.log": log},
        child=True,
        shell_tail="| head -1",
        keeps="t.json",
    )
    for what, argv in (
        ("predict", [*predict, "--json", "/dev/full"]),
        ("triage", ["triage", "--logs", "{tmp}/s.log", "--json", "/dev/full"]),
        (
            "--save-window",
            [
                "triage",
                "--metrics",
                str(CPU / "moderate_before.prom"),
                "--metrics",
                str(CPU / "moderate_after.prom"),
                "--metrics-interval",
                "8",
                "--save-window",
                "/dev/full",
            ],
        ),
        ("rules list", ["rules", "list"]),
    ):
        yield Case(
            "results",
            f"{what} onto a full disk",
            argv,
            files={"s.log": log},
            child=True,
            shell_tail="> /dev/full" if what == "rules list" else "",
        )
    yield Case(
        "results",
        "a prefill probe no server can answer",
        ["ramp", "--endpoint", "http://127.0.0.1:9", "--prefill-probe", "100000000", "--json", "{tmp}/r.json"],
    )


def _hostile_documents(source: Path, count: int, rng: random.Random) -> Iterator[bytes]:
    document = json.loads(source.read_text())
    paths = value_paths(document)
    for index in range(count):
        how = ("values", "values", "values", "cut", "bytes")[index % 5]
        if how == "cut":
            text = json.dumps(document)
            yield text[: rng.randrange(len(text))].encode()
        elif how == "bytes":
            yield b"\xff\xfe" + json.dumps(document).encode()[:200]
        else:
            edited = document
            for _ in range(rng.randint(1, 3)):
                path = rng.choice(paths)
                if exists(edited, path):
                    edited = replaced(edited, path, rng.choice(HOSTILE_VALUES))
            yield json.dumps(edited).encode()


def traceback_cases(rng: random.Random) -> Iterator[Case]:
    for source in sorted(REPORTS.glob("*.json")):
        for index, content in enumerate(_hostile_documents(source, 24, rng)):
            yield Case(
                "tracebacks",
                f"report of a hostile {source.stem} #{index}",
                ["report", "{tmp}/in.json", "-o", "{tmp}/out.html"],
                files={"in.json": content},
            )
    for index, content in enumerate(_hostile_documents(RAMP, 10, rng)):
        yield Case(
            "tracebacks",
            f"predict on a hostile ramp #{index}",
            [
                "predict",
                "--ramp",
                "{tmp}/r.json",
                "--server-args",
                "vllm serve m --max-num-seqs 1",
                "--change",
                "--max-num-seqs 2",
            ],
            files={"r.json": content},
        )
        yield Case(
            "tracebacks",
            f"triage --ramp on a hostile ramp #{index}",
            ["triage", "--ramp", "{tmp}/r.json"],
            files={"r.json": content},
        )
    for index, content in enumerate(_hostile_documents(HOST, 20, rng)):
        yield Case(
            "tracebacks",
            f"triage --host-profile hostile #{index}",
            ["triage", "--logs", "{tmp}/s.log", "--host-profile", "{tmp}/h.json"],
            files={"h.json": content, "s.log": (CPU / "moderate.log").read_bytes()},
        )
    for name, history in (("not UTF-8", b"\xff\xfe\x00{}"), ("not JSON", b"{oops\n"), ("a list", b"[1, 2]\n")):
        yield Case(
            "tracebacks",
            f"scheduled triage, history {name}",
            ["triage", "--logs", "{tmp}/s.log", "--count", "1", "--out", "{tmp}/runs"],
            files={"runs/history.jsonl": history, "s.log": (CPU / "idle.log").read_bytes()},
            keeps="runs/latest.json",
        )


def nonsense_cases() -> Iterator[Case]:
    ramp = ["predict", "--ramp", str(RAMP)]
    for value in (
        "--tensor-parallel-size 0",
        "--gpu-memory-utilization 7",
        "--num-gpu-blocks-override -3",
        "--max-num-seqs 2.5",
        "--max-model-len 20T",
        "--kv-cache-memory-bytes 20000T",
        "--max-num-seqs 8 --max-num-seqs 16",
        "--max-num-batched-tokens nan",
    ):
        yield Case(
            "nonsense",
            f"--server-args {value}",
            [*ramp, "--server-args", f"vllm serve m {value}", "--change", "--max-num-seqs 2"],
        )
        yield Case("nonsense", f"triage --server-args {value}", ["triage", "--server-args", f"vllm serve m {value}"])
    for name, launch in (  # launches as people paste them, broken: advisor/collect/launch_text.py reads them
        ("a JSON exec form nested 50,000 deep", "[" * 50_000 + "]" * 50_000),
        ("a YAML list nested 50,000 deep", "- a\n- " + "[" * 50_000),
        ("docker run with no image", "docker run --gpus all -e"),
        ("a bash -c script whose quote does not close", "bash -c 'vllm serve m --x \"open'"),
        ("a pod's args that are mappings", "args:\n  - {a: 1}\n  - --max-num-seqs\n"),
    ):
        yield Case("nonsense", f"triage --server-args: {name}", ["triage", "--server-args", launch])
    for value in ("--max-num-seqs 0", "--gpu-memory-utilization 1.5", "--max-model-len 128", "--block-size -16"):
        yield Case(
            "nonsense",
            f"--change {value}",
            [*ramp, "--server-args", "vllm serve m --max-num-seqs 1", "--change", value],
        )
    yield Case(
        "nonsense", "two --change for one flag", [*ramp, "--change", "--max-num-seqs 4", "--change", "--max-num-seqs 8"]
    )
    for flags in (
        ["--kv-cache-tokens", "25769803776"],
        ["--kv-cache-tokens", "0"],
        ["--kv-cache-gib", "1e308", "--gpu-memory-gib", "80"],
        ["--kv-cache-gib", "20", "--gpu-memory-gib", "-1"],
    ):
        yield Case("nonsense", f"predict {' '.join(flags)}", [*ramp, "--change", "--max-num-seqs 2", *flags])
    for launch in ("--max-model-len 200000", "--tensor-parallel-size 3"):
        yield Case(
            "nonsense",
            f"an impossible launch: Llama-3.1-8B {launch}",
            [*ramp, "--server-args", f"vllm serve m {launch}", "--model", "Llama-3.1-8B", "--gpu", "L40S"],
        )
    yield Case("nonsense", "tune --server-command ''", ["tune", "--server-command", "", "--out", "{tmp}/t"])
    huge_log = (
        (CPU / "idle.log").read_text().replace("KV cache size: ", "KV cache size: 10,000,000,000,000 tokens, was ")
    )
    yield Case(
        "nonsense",
        "a log claiming 10^13 KV tokens",
        ["triage", "--logs", "{tmp}/s.log", "--ramp", str(RAMP)],
        files={"s.log": huge_log.encode()},
        expect=lambda code, out, err: code == 0,  # the figure is not taken; the triage runs in bounded memory
    )
    yield _braced_literal_case()
    # (a TTFT of 0.0 is not among them: a fast server's rounded figure can be 0, so it is read as measured)
    for value in (math.nan, math.inf, -5.0, 1e308):
        document = json.loads(RAMP.read_text())
        document["steps"][0]["ttft_s"]["p50"] = value
        yield Case(
            "nonsense",
            f"a ramp with TTFT p50 {value}",
            [*ramp[:1], "--ramp", "{tmp}/r.json", "--change", "--max-num-seqs 2"],
            files={"r.json": json.dumps(document).encode()},
        )

    host = json.loads(HOST.read_text())
    log = (CPU / "moderate.log").read_bytes()
    for field_name, value in (("read_gbps", 0), ("read_gbps", -27.2), ("fp32_gflops", math.inf), ("threads", 0)):
        edited = {**host, "figures": [{**host["figures"][0], field_name: value}]}
        yield Case(
            "nonsense",
            f"a host profile with {field_name} {value}",
            ["triage", "--logs", "{tmp}/s.log", "--host-profile", "{tmp}/h.json"],
            files={"h.json": json.dumps(edited).encode(), "s.log": log},
        )
    yield Case(
        "nonsense",
        "a host profile with no figures",
        ["triage", "--logs", "{tmp}/s.log", "--host-profile", "{tmp}/h.json"],
        files={"h.json": json.dumps({**host, "figures": []}).encode(), "s.log": log},
    )


def _braced_literal_case() -> Case:
    """A log holding literals Python parses and cannot build (a set of lists): torch prints a tensor's type so
    (vllm-omni#5348), and two readers raised on it before rules/literals.py read them once."""
    braced = (
        "RuntimeError: expand(CUDABoolType{[1, 1]}, size=[0]): the number of sizes\n"
        "(APIServer pid=1) INFO 01-01 00:00:00 [utils.py:1] non-default args: {'model': 'm', 'x': {[1, 1]}}\n"
    )
    return Case(
        "nonsense",
        "a log holding {[1, 1]} (vllm-omni#5348's torch type)",
        ["triage", "--logs", "{tmp}/s.log"],
        files={"s.log": braced.encode()},
        expect=lambda code, out, err: code == 0,
    )


def misreading_cases() -> Iterator[Case]:
    first = (CPU / "idle.log").read_text()
    second = first.replace("'max_num_seqs'", "'max_num_seqs_unused'")
    yield Case(
        "misreadings",
        "a log holding two server starts",
        ["triage", "--logs", "{tmp}/s.log"],
        files={"s.log": (first + second).encode()},
        expect=lambda code, out, err: code == 0 and "2 server starts" in out + err,
    )
    osc = f"INFO 01-01 00:00:00 [x.py:1] see \x1b]8;;http://evil\x07link\x1b]8;;\x07 and \x1b[31mred\x1b[0m\n{first}"
    yield Case(
        "misreadings",
        "OSC and CSI escapes in a log line",
        ["triage", "--logs", "{tmp}/s.log"],
        files={"s.log": osc.encode()},
        expect=lambda code, out, err: code == 0 and "\x1b" not in out + err and "\x07" not in out + err,
    )


# --- running and judging -----------------------------------------------------------------------------


def run_case(case: Case) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="servops-hostile-") as folder:
        tmp = Path(folder)
        for name, content in case.files.items():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_bytes(content)
        argv = [word.replace("{tmp}", folder) for word in case.argv]
        code, out, err, traceback = (_child if case.child else _in_process)(case, argv)
        written = "".join(
            p.read_text(errors="replace") for p in tmp.rglob("*") if p.is_file() and p.name not in case.files
        )
        leak = SECRET in out + err + written
        rescued = any(Path(word.strip("',.;:()")).is_file() for word in err.split() if "/" in word)
        lost = False
        if case.keeps is not None and code == 0:
            lost = not (tmp / case.keeps).is_file()
        if "/dev/full" in argv and code != 0 and case.argv[0] != "rules":
            lost = not rescued  # the write failed: the document must be saved elsewhere, and said where
        first_error = next((line for line in err.splitlines() if line.startswith("servops ")), "")
        as_expected = case.expect is None or case.expect(code, out, err)
        return Outcome(case, code, traceback, leak, lost, first_error, as_expected)


def _in_process(case: Case, argv: list[str]) -> tuple[int, str, str, bool]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        patch = stack.enter_context(_environment(case.env))
        del patch
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
        except Exception:  # noqa: BLE001 - a traceback is what this judges
            return 1, out.getvalue(), err.getvalue(), True
    return int(code), out.getvalue(), err.getvalue(), "Traceback" in out.getvalue() + err.getvalue()


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    import os

    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _child(case: Case, argv: list[str]) -> tuple[int, str, str, bool]:
    import shlex

    command = f"{shlex.quote(sys.executable)} -m advisor {shlex.join(argv)} {case.shell_tail}"
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, timeout=300, cwd=ROOT, check=False
    )
    code = done.returncode
    if case.shell_tail.startswith("| head"):
        code = 0 if code in (0, 141) else code  # head closing the pipe is the reader's choice, not a failure
    return code, done.stdout, done.stderr, "Traceback" in done.stdout + done.stderr


def _read_as_log(code: int, out: str, err: str) -> bool:
    """Read, not refused: exit 0 and vLLM's own lines recognised (not `0 read as vLLM log`)."""
    return code == 0 and " read as vLLM log" in out and "(0 read as vLLM log" not in out


def encoding_cases() -> Iterator[Case]:
    """Logs and dumps saved the ways other tools save them: PowerShell 5's UTF-16, a Windows editor's byte-order
    mark, a stray Latin-1 byte, a node's gzip-rotated log; and a gzip file cut short, which must be one clear line."""
    log = (CPU / "moderate.log").read_text(encoding="utf-8")
    saved = {
        "UTF-16 with BOM (PowerShell 5's >)": log.encode("utf-16"),
        "UTF-8 with BOM": log.encode("utf-8-sig"),
        "a stray Latin-1 byte": "caf\xe9 ".encode("latin-1") + log.encode(),
        "gzip-rotated (0.log.<date>.gz)": gzip.compress(log.encode()),
    }
    for name, content in saved.items():
        yield Case(
            "encodings",
            f"a log in {name}",
            ["triage", "--logs", "{tmp}/s.log"],
            {"s.log": content},
            expect=_read_as_log,
        )
    yield Case(
        "encodings",
        "a gzip log cut short",
        ["triage", "--logs", "{tmp}/s.log.gz"],
        {"s.log.gz": gzip.compress(log.encode())[:200]},
        expect=refused,
    )
    dump = (CPU / "moderate_after.prom").read_text(encoding="utf-8")
    yield Case(
        "encodings",
        "a /metrics dump in UTF-16",
        ["triage", "--metrics", "{tmp}/m.prom"],
        {"m.prom": dump.encode("utf-16")},
        expect=lambda code, out, err: code == 0,
    )


CLASSES: dict[str, Callable[[random.Random], Iterator[Case]]] = {
    "secrets": lambda rng: secret_cases(),
    "results": lambda rng: lost_result_cases(),
    "tracebacks": traceback_cases,
    "nonsense": lambda rng: (c if c.expect else replace(c, expect=refused) for c in nonsense_cases()),
    "misreadings": lambda rng: misreading_cases(),
    "encodings": lambda rng: encoding_cases(),
}


def main_script() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", default=None, metavar="OUT", help="every outcome as JSON")
    parser.add_argument("-v", action="store_true", help="one line per input that was not handled")
    parser.add_argument("--only", default=None, choices=list(CLASSES), help="one class")
    args = parser.parse_args()
    rng = random.Random(SEED)
    outcomes: list[Outcome] = []
    for klass, build in CLASSES.items():
        if args.only and klass != args.only:
            continue
        cases = list(build(rng))
        print(f"{klass}: {len(cases)} inputs …", file=sys.stderr, flush=True)
        outcomes += [run_case(case) for case in cases]
    print("| class | inputs | handled | exit 0 | exit 2, one line | tracebacks | leaks | lost results |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for klass in CLASSES:
        mine = [o for o in outcomes if o.case.klass == klass]
        if not mine:
            continue
        codes = Counter(o.code for o in mine)
        print(
            f"| {klass} | {len(mine)} | {sum(o.handled for o in mine)} | {codes[0]} | {codes[2]} | "
            f"{sum(o.traceback for o in mine)} | {sum(o.leak for o in mine)} | {sum(o.lost for o in mine)} |"
        )
    for outcome in outcomes:
        if args.v and not outcome.handled:
            print(
                f"NOT HANDLED {outcome.case.klass} / {outcome.case.name}: exit {outcome.code} "
                f"traceback={outcome.traceback} leak={outcome.leak} lost={outcome.lost} {outcome.first_error}"
            )
    if args.json:
        rows = [
            {
                "class": o.case.klass,
                "input": o.case.name,
                "exit": o.code,
                "handled": o.handled,
                "traceback": o.traceback,
                "leak": o.leak,
                "lost": o.lost,
                "error": o.first_error,
            }
            for o in outcomes
        ]
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0 if all(o.handled for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main_script())
