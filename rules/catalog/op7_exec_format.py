"""OP-7.104: the program that starts the server is built for another CPU architecture than the host's.

Why a rule of its own: `exec format error` is the kernel refusing a binary it cannot run (ENOEXEC), and for a
container that almost always means an image built for another architecture: an x86-64 (linux/amd64) image pulled on
an Arm host (Graviton, Grace, Ampere, Apple silicon under Linux) or the reverse. Nothing of vLLM runs, so no vLLM
line explains it, and the words are the runtime's: runc's and Docker's `exec /usr/bin/python3: exec format error`,
crun's and Podman's `exec container process `/opt/venv/bin/vllm`: Exec format error`, Python's `[Errno 8] Exec
format error`. The container engine usually warned first, naming both platforms (Podman: `image platform
(linux/amd64) does not match the expected platform (linux/arm64)`). Source: vllm-project/vllm#30076 (v0.12.0's CPU
image, linux/amd64, on an aarch64 host under Podman; a contributor pointed to the arm64 CPU images, published in a
repository of their own).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_exec_format(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.EXEC_FORMAT)
    refused = [e for e in events if e.message]
    if not refused:
        return []
    platforms = next((e.component for e in events if e.component), None)
    which = f" (the image is {platforms.replace(' on ', ', the host ')})" if platforms else ""
    program = refused[0].message
    return [
        RULE_EXEC_FORMAT.finding(
            Severity.CRITICAL,
            f"{program} is built for another CPU architecture than this host's{which}: the kernel cannot run it "
            "(exec format error)",
            summary="The kernel refused to execute the program that starts the server: its binary (or the "
            "interpreter its first line names) is for another architecture. In a container that is an image built "
            "for another platform than the host, an amd64 image on an Arm host or the reverse; nothing of vLLM ran.",
            evidence=[
                c.log_evidence(e, name="exec format error", value=e.message)
                if e.message
                else c.log_evidence(e, name="image platform on host platform", value=e.component)
                for e in events[:2]
            ],
            actions=[
                "Compare the two: `uname -m` on the host, `docker image inspect --format '{{.Os}}/{{.Architecture}}' "
                "IMAGE` (or `podman image inspect`) for the image; pull the image built for the host "
                "(`--platform linux/arm64` where the tag is multi-architecture). vLLM publishes its arm64 CPU images "
                "in a repository of their own (vllm#30076).",
                "Without an image for the host, build vLLM there (its CPU or GPU install guide for the architecture); "
                "running the other architecture under emulation (qemu binfmt) starts, but far too slowly to serve.",
            ],
            confidence=0.85,
        )
    ]


RULE_EXEC_FORMAT = Rule(
    code="OP-7.104",
    title="the server's program is built for another CPU architecture (exec format error)",
    category=Category.STARTUP,
    check=_check_exec_format,
    needs=("events",),
    page=RulePage(
        checks="`exec … : exec format error` from runc, Docker, crun or Podman, Python's `[Errno 8] Exec format "
        "error`, with the engine's warning that the image's platform is not the host's when it is there.",
        why="The kernel runs only binaries of its own architecture; an image for another one never starts.",
        example="vllm#30076: `exec container process `/opt/venv/bin/vllm`: Exec format error` for the amd64 CPU image "
        "on an aarch64 host.",
        fix="Pull or build the image for the host's architecture (`--platform linux/arm64`, vLLM's arm64 images).",
        limits="A script whose first line names a missing or foreign interpreter gives the same words; the program's "
        "path says which file to check.",
        references=["https://github.com/vllm-project/vllm/issues/30076"],
    ),
)

RULES: list[Rule] = [RULE_EXEC_FORMAT]
