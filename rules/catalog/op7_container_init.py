"""OP-7.191: Docker could not stop vLLM's container: its main process exited but was never reaped (a zombie).

Why a rule of its own: vLLM's server is a tree of processes (the API server, the engine core, a worker per GPU, and
compile and tokenizer helpers), and in a container started without an init the server itself is PID 1, the process
that must reap what exits in the container. On `docker stop` or `docker restart` the daemon found PID 1 exited but not
reaped, and gave up: `container <id> PID <n> is zombie and can not be killed. Use the --init option when creating
containers to run an init inside the container that forwards signals and reaps processes` (the daemon's own advice).
Docker's `--init` runs a small init (tini) as PID 1 that forwards signals and reaps. The words do not say whether the
container already had one: when it did, what keeps the container alive is usually a process that cannot die, such as
one stuck in the GPU driver (state D), which only the host's driver log explains. Source: NVIDIA/NemoClaw#7219
(`docker restart` of a managed vLLM container created without `--init`, on DGX Station GB300; starting the stopped
container again restored inference; the reporter proposes `--init` for every such container).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity


def _zombie_finding(facts: Facts, event: LogEvent, _match: object) -> Finding:
    return RULE_CONTAINER_INIT.finding(
        Severity.HIGH,
        "Docker could not stop the vLLM container: its main process exited but was never reaped (a zombie), which "
        "an init in the container would do",
        summary="vLLM's server runs as a tree of processes (API server, engine core, a worker per GPU), and in a "
        "container without an init the server is PID 1, which must reap what exits. On stop or restart Docker found "
        "PID 1 exited but not reaped, which no signal removes; its message names its own fix, an init as PID 1. "
        "Whether this container had one is not in the words.",
        evidence=[c.log_evidence(event, name="Docker's refusal to kill the container")],
        changes=[
            ConfigChange(
                flag="docker run --init",
                proposed="--init",
                reason="Docker's own advice: tini as PID 1 forwards stop signals to vLLM's server and reaps the "
                "processes that exit, so stop and restart complete",
                cost="none worth naming: one small process",
                kind="setting",
            )
        ],
        actions=[
            "See whether the container has an init: `docker inspect -f '{{.HostConfig.Init}}' <container>`. If "
            "false, recreate it with `docker run --init …` (Compose: `init: true` under the service); a restart "
            "policy or `docker restart` keeps the old container's settings, so it must be recreated.",
            "If it already has one, a process in it cannot die: `ps -eo pid,stat,cmd | awk '$2 ~ /D/'` on the host "
            "lists those stuck in the kernel (the GPU driver, a network file system), and `dmesg` shows NVIDIA Xid "
            "errors if the GPU is why.",
            "Meanwhile `docker start` the stopped container to serve again (it did in NVIDIA/NemoClaw#7219).",
        ],
        confidence=0.65,
    )


RULE_CONTAINER_INIT = Rule(
    code="OP-7.191",
    title="Docker cannot stop a vLLM container whose main process is a zombie",
    category=Category.RELIABILITY,
    check=c.on_kind(LogEventKind.CONTAINER_ZOMBIE, _zombie_finding),
    needs=("events",),
    page=RulePage(
        checks="Docker's `container <id> PID <n> is zombie and can not be killed. Use the --init option …` on stop or "
        "restart (quoted with or without the id and PID).",
        why="vLLM's server is PID 1 of a container without an init and must reap what exits; Docker cannot stop a "
        "container whose PID 1 exited unreaped.",
        example="`docker restart` of a vLLM container created without `--init` timing out with the zombie message "
        "(NVIDIA/NemoClaw#7219).",
        fix="Create the container with `--init` (Compose `init: true`); with an init already, find the process that "
        "cannot die.",
        limits="Whether the container had an init is not in the message; Kubernetes says it in other words (a pod "
        "stuck Terminating), which are not read here.",
        references=["https://github.com/NVIDIA/NemoClaw/issues/7219"],
    ),
)

RULES: list[Rule] = [RULE_CONTAINER_INIT]
