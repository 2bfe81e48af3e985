"""A saved log or /metrics dump is read in the encoding it was written in; a binary file is still refused."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.collect.logs import LogReadError, read_log
from advisor.collect.metrics import load_file
from advisor.collect.text_files import encoding_of
from rules.events import LogEventKind as K

ROOT = Path(__file__).parents[4]
METRICS = ROOT / "tests" / "fixtures" / "collect" / "metrics_v0_33_0.txt"
LOG = (
    "(APIServer pid=1) INFO 11-30 21:47:14 [api_server.py:1] vLLM API server version 0.32.0\r\n"
    "ValueError: Total number of attention heads (12) must be divisible by tensor parallel size (8).\r\n"
)


@pytest.mark.parametrize(
    ("encoding", "told"),
    [
        ("utf-16", "utf-16"),  # PowerShell 5's `>` and Out-File: UTF-16 LE with its byte-order mark
        ("utf-16-le", "utf-16-le"),
        ("utf-16-be", "utf-16-be"),
        ("utf-8-sig", "utf-8-sig"),  # Notepad's UTF-8 with a byte-order mark
        ("utf-32", "utf-32"),
        ("utf-8", "utf-8"),
    ],
)
def test_each_unicode_encoding_is_told_from_the_first_bytes_and_read(tmp_path, encoding, told):
    saved = tmp_path / "vllm.log"
    saved.write_bytes(LOG.encode(encoding))
    assert encoding_of(saved.read_bytes()[:4096]) == told
    result = read_log(str(saved))
    assert [event.kind for event in result.events] == [K.VERSION, K.VLLM_MESSAGE]
    assert result.events[1].catalog is not None and result.lines_read == 2


def test_a_stray_byte_of_another_encoding_is_one_replaced_character_not_an_error(tmp_path):
    saved = tmp_path / "latin1.log"
    saved.write_bytes("caf\xe9 ".encode("latin-1") + LOG.encode())
    assert read_log(str(saved)).events[1].catalog is not None


def test_a_binary_file_is_still_refused(tmp_path):
    saved = tmp_path / "core.bin"
    saved.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(LogReadError, match="NUL bytes, so this is not text"):
        read_log(str(saved))


def test_a_metrics_dump_saved_in_utf16_reads_as_the_utf8_one(tmp_path):
    saved = tmp_path / "metrics.txt"
    saved.write_bytes(METRICS.read_text(encoding="utf-8").encode("utf-16"))
    assert load_file(saved).value("vllm:kv_cache_usage_perc") == load_file(METRICS).value("vllm:kv_cache_usage_perc")


def test_a_utf16_pipe_into_triage_on_stdin_is_read():
    """`kubectl logs pod | servops triage --logs -` from PowerShell 5 pipes UTF-16 with a byte-order mark."""
    done = subprocess.run(
        [sys.executable, "-m", "advisor", "triage", "--logs", "-"],
        input=LOG.encode("utf-16"),
        capture_output=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert b"must be divisible by tensor parallel size" in done.stdout


def test_a_rotated_gzip_log_is_read_and_a_cut_one_is_one_clear_error(tmp_path):
    """A node rotates container logs to `0.log.<date>.gz`: read through gzip, in its own encoding; a file cut short
    (copied while written, a partial download) is one line naming the fix, never a traceback."""
    rotated = tmp_path / "0.log.20261130-214700.gz"
    rotated.write_bytes(gzip.compress(LOG.encode("utf-16")))
    assert [event.kind for event in read_log(str(rotated)).events] == [K.VERSION, K.VLLM_MESSAGE]
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(gzip.compress(LOG.encode() * 200)[:60])
    with pytest.raises(LogReadError, match="the gzip file is cut short or corrupt .*zcat FILE > FILE.log"):
        read_log(str(cut))
