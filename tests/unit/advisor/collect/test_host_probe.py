"""`servops probe`: this host measured, and the profile triage reads for a CPU server's floors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor.cli.main import main
from advisor.collect.host import HostProfile, ThreadFigures, probe, thread_counts
from tests.helpers.planted_secrets import ENVIRONMENT


def test_thread_counts_double_up_to_every_core():
    assert thread_counts(1) == [1]
    assert thread_counts(2) == [1, 2]
    assert thread_counts(6) == [1, 2, 4, 6]
    assert thread_counts(8) == [1, 2, 4, 8]


def test_the_probe_measures_read_bandwidth_and_gemm_throughput_at_each_thread_count():
    profile = probe(max_threads=2, read_mib=64, gemm_size=256)
    assert [f.threads for f in profile.figures] == thread_counts(min(2, profile.usable_cores))
    for row in profile.figures:
        assert row.read_gbps > 0.1 and row.bf16_gflops > 0.1 and row.fp32_gflops > 0.1
        assert row.peak_gflops == max(row.bf16_gflops, row.fp32_gflops)
    assert profile.cpu_model and "torch.mm" in profile.method


def test_the_figures_for_a_core_count_are_the_largest_measured_count_not_above_it():
    rows = [ThreadFigures(threads=n, read_gbps=10.0 * n, bf16_gflops=1.0, fp32_gflops=2.0) for n in (1, 2, 4)]
    profile = HostProfile(cpu_model="x", usable_cores=4, bf16_arithmetic=False, figures=rows, method="m")
    assert profile.at(1).threads == 1 and profile.at(3).threads == 2 and profile.at(64).threads == 4
    assert profile.at(None).threads == 4  # unknown binding: every probed core


def test_probe_writes_a_profile_triage_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The planted-secret check for probe (tests/unit/advisor/cli/test_planted_secrets.py lists the
    # others) shares this run: its one input a user can put a secret in is the environment.
    for name, value in ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "host.json"
    assert main(["probe", "--max-threads", "1", "--json", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["kind"] == "host_profile" and [f["threads"] for f in document["figures"]] == [1]
    printed = capsys.readouterr()
    assert "read GB/s" in printed.out
    for value in ENVIRONMENT.values():
        assert value not in printed.out + printed.err + out.read_text()


FIGURES = {"threads": 1, "read_gbps": 9.5, "bf16_gflops": 40.0, "fp32_gflops": 80.0}


def _profile(**fields) -> str:
    """A host profile as `servops probe --json` writes it, with `fields` replaced."""
    document = {"kind": "host_profile", "cpu_model": "x", "usable_cores": 2, "bf16_arithmetic": False}
    return json.dumps({**document, "figures": [FIGURES], "method": "m", **fields})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read it"),
        ('{"kind": "ramp"}', "not a host profile"),
        ("not json", "not a host profile"),
        (b"\xff\xfe\x00 binary", "not text"),
        (_profile(figures=[]), "figures: List should have at least 1 item"),
        (_profile(usable_cores=0), "usable_cores: Input should be greater than or equal to 1"),
        (_profile(figures=[{**FIGURES, "read_gbps": -3.0}]), "figures.0.read_gbps: Input should be greater than 0"),
        (_profile(figures=[{**FIGURES, "fp32_gflops": "NaN"}]), "figures.0.fp32_gflops: Input should be a finite"),
    ],
)
def test_a_bad_host_profile_is_one_line_error_naming_the_fix(tmp_path, capsys, content, message):
    path = tmp_path / "host.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    code = main(["triage", "--server-args", "vllm serve m", "--host-profile", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "servops probe --json" in err and "Traceback" not in err


def test_bad_max_threads_is_refused(capsys):
    assert main(["probe", "--max-threads", "0"]) == 2
    assert "--max-threads 0" in capsys.readouterr().err
