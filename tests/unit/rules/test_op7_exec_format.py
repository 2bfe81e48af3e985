"""OP-7.104: the server's program is built for another CPU architecture (exec format error)."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.evaluate import evaluate
from rules.facts import Facts


def _top(*lines: str):
    return evaluate(Facts(events=parse_lines(list(lines)).events)).findings[0]


@pytest.mark.parametrize(
    ("line", "program"),
    [
        # vllm#30076: Podman's log shipper JSON for the amd64 CPU image on an aarch64 host
        (
            '{"msg":"exec container process `/opt/venv/bin/vllm`: Exec format error","level":"error",'
            '"time":"2025-12-04T15:15:35.826445Z"}',
            "/opt/venv/bin/vllm",
        ),
        ("exec /usr/bin/python3: exec format error", "/usr/bin/python3"),  # runc, as Docker prints it
        ("OSError: [Errno 8] Exec format error: '/opt/venv/bin/vllm'", "/opt/venv/bin/vllm"),
    ],
)
def test_each_runtimes_words_name_the_program_and_the_image_for_the_hosts_architecture(line: str, program: str):
    top = _top(line)
    assert top.rule == "OP-7.104" and top.title.startswith(f"{program} is built for another CPU architecture")
    assert "uname -m" in top.actions[0] and "--platform" in top.actions[0]


def test_the_engines_warning_names_both_platforms_and_alone_is_no_finding():
    warning = "WARNING: image platform (linux/amd64) does not match the expected platform (linux/arm64)"
    top = _top(warning, "exec container process `/opt/venv/bin/vllm`: Exec format error")
    assert "(the image is linux/amd64, the host linux/arm64)" in top.title
    assert all(f.rule != "OP-7.104" for f in evaluate(Facts(events=parse_lines([warning]).events)).findings)


def test_a_launcher_that_finds_no_vllm_file_is_a_missing_program():
    # gpustack/gpustack#363: GPUStack 0.3.0's image had no vLLM in it
    top = _top("Failed to run the vllm server: [Errno 2] No such file or directory: '/usr/local/bin/vllm'")
    assert top.rule == "OP-7.61" and "names vllm" in top.title and "launcher found no such file" in top.title
