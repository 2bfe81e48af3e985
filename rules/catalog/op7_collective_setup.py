"""OP-7.88: a device's collectives refuse the way the launch set them up (Gaudi's lazy collectives under HPU graphs,
Ascend's HCCL listen port, oneCCL's libfabric transport, torch's CUDA IPC on a kernel without pidfd_open).

Why a rule of its own: each is the collective layer of one device saying which setting it lacks, in words vLLM never
prints, and each has one documented fix outside vLLM's flags:

- Intel Gaudi: tensor-parallel inference with HPU graphs needs PT_HPU_ENABLE_LAZY_COLLECTIVES=true (vLLM's Gaudi
  plugin says so beside its all-reduce, vllm_gaudi/distributed/device_communicators/hpu_communicator.py); without it
  the warm-up's graph capture meets `collective nonSFG is not supported during hpu graph capturing`
  (HabanaAI/vllm-fork PR #170's multi-card run).
- Huawei Ascend: HCCL cannot listen on its port (`[HcclSocket][Listen] … listen on ip[…] and specific port[16666]
  fail. Please check the port status …`, vllm-ascend#1955): a process still holds it (an engine from an earlier run),
  or the OS gave it out as an ephemeral port. CANN's environment reference documents HCCL_IF_BASE_PORT for HCCL's host
  ports (60000 on, 32 of them) and reserving them with `sysctl -w net.ipv4.ip_local_reserved_ports=…`.
- Intel GPUs: oneCCL's transport (ATL over libfabric) finds no provider (`init_transport: EXCEPTION: failed to
  initialize ATL`); llm-d PR #2270 fixed its XPU pods' crash loop by pointing FI_PROVIDER_PATH at the image's provider
  libraries and using tcp.
- torch's CUDA IPC (how RLHF frameworks hand weights to vLLM) under `expandable_segments:True` needs Linux's
  pidfd_open syscall (Linux 5.3 on), and torch refuses on an older kernel, naming the fix itself: expandable segments
  off (OpenRLHF#957, a 3.x kernel, where a call left in the framework's init had turned them on).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity


def _check_collective_setup(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.COLLECTIVE_SETUP)
    if not events:
        return []
    event = events[0]
    build = {"hpu": _hpu, "hccl": _hccl, "pidfd": _pidfd, "atl": _atl}[event.component or "pidfd"]
    return [build(event)]


def _hpu(event: LogEvent) -> Finding:
    return RULE_COLLECTIVE_SETUP.finding(
        Severity.CRITICAL,
        "Gaudi's HPU graphs captured a collective without lazy collectives: tensor parallelism with HPU graphs needs "
        "PT_HPU_ENABLE_LAZY_COLLECTIVES=true",
        summary="On Intel Gaudi the warm-up captures HPU graphs; with tensor parallelism they hold the all-reduce, "
        "which Habana's PyTorch bridge captures only in its lazy-collectives mode.",
        evidence=[c.log_evidence(event, name="the collective's refusal", value=event.message)],
        changes=[
            ConfigChange(
                flag="PT_HPU_ENABLE_LAZY_COLLECTIVES",
                current=None,
                proposed="true",
                reason="required for tensor-parallel inference with HPU graphs (vLLM's Gaudi plugin, hpu_communicator)",
                kind="env",
            )
        ],
        actions=["Or run without HPU graphs (`--enforce-eager`), slower, to confirm the collective is the cause."],
        confidence=0.8,
    )


def _hccl(event: LogEvent) -> Finding:
    where = event.address or "its port"
    port = where.rsplit(":", 1)[-1] if ":" in where else "<port>"
    return RULE_COLLECTIVE_SETUP.finding(
        Severity.CRITICAL,
        f"Ascend's HCCL could not listen on {where}: a process holds the port, or the OS gave it out",
        summary="HCCL, the collective library under vLLM on Ascend, listens on fixed ports on each rank; a port "
        "still held by a process (an engine of an earlier run) or handed out by the OS as an ephemeral port stops "
        "the ranks from connecting.",
        evidence=[c.log_evidence(event, name="HCCL's listen", value=event.message)],
        actions=[
            f"`ss -ltnp | grep {port}` on that host: stop the process that holds it (a vLLM engine that did not exit: "
            "`pkill -f vllm`, or the container of the earlier run).",
            "Reserve HCCL's ports so the OS does not hand them out (`sysctl -w net.ipv4.ip_local_reserved_ports=…`, "
            "as CANN's environment reference describes for HCCL_IF_BASE_PORT's 32 ports), or move them with "
            "HCCL_IF_BASE_PORT.",
        ],
        confidence=0.7,
    )


def _atl(event: LogEvent) -> Finding:
    return RULE_COLLECTIVE_SETUP.finding(
        Severity.CRITICAL,
        "oneCCL (vLLM's collectives on Intel GPUs) could not start its transport: libfabric found no provider",
        summary="oneCCL's ATL layer carries the collectives over libfabric (OFI), which loads a provider for the "
        "network (tcp, shm, verbs); with none found, or none it may use, tensor parallelism stops at its first "
        "collective while one GPU serves.",
        evidence=[c.log_evidence(event, name="oneCCL's transport", value=event.message)],
        changes=[
            ConfigChange(
                flag="FI_PROVIDER",
                current=None,
                proposed="tcp",
                reason="libfabric's plain TCP provider needs no special network; llm-d PR #2270 fixed this crash "
                "with it",
                kind="env",
            )
        ],
        actions=[
            "Point libfabric at its providers: FI_PROVIDER_PATH to the directory of the provider libraries the image "
            "ships (Intel MPI's or oneAPI's libfabric `prov` folder), as llm-d PR #2270 did for its XPU decode pods.",
            "`fi_info -l` (libfabric's tool) inside the container lists the providers it finds.",
        ],
        confidence=0.7,
    )


def _pidfd(event: LogEvent) -> Finding:
    return RULE_COLLECTIVE_SETUP.finding(
        Severity.CRITICAL,
        "torch's CUDA IPC with expandable segments needs the pidfd_open syscall, which this host's kernel lacks: "
        "turn expandable segments off",
        summary="Frameworks hand weights to vLLM over CUDA IPC; with PyTorch's expandable segments the memory is "
        "shared through pidfd_open (Linux 5.3 on), which an older kernel does not have. torch names the fix itself.",
        evidence=[c.log_evidence(event, name="torch's refusal", value=event.message)],
        changes=[
            ConfigChange(
                flag="PYTORCH_CUDA_ALLOC_CONF",
                current="expandable_segments:True",
                proposed="expandable_segments:False",
                reason="CUDA IPC of ordinary segments needs no pidfd_open",
                kind="env",
            )
        ],
        actions=[
            "Find what turned expandable segments on: PYTORCH_CUDA_ALLOC_CONF in the environment, or a call in the "
            "framework's own start-up (OpenRLHF#957: one left in its distributed init).",
            "Or run on a host with a Linux kernel 5.3 or newer (`uname -r`).",
        ],
        confidence=0.8,
    )


RULE_COLLECTIVE_SETUP = Rule(
    code="OP-7.88",
    title="a device's collectives refuse the way the launch set them up",
    category=Category.CONFIGURATION,
    check=_check_collective_setup,
    needs=("events",),
    page=RulePage(
        checks="Gaudi's `collective nonSFG is not supported during hpu graph capturing`, HCCL's `[HcclSocket][Listen] "
        "… listen on ip[…] and specific port[…] fail`, and torch's `does not support the pidfd_open syscall needed to "
        "use IPC for CUDA tensors`.",
        why="Each device's collective layer needs one setting the launch lacked: lazy collectives for HPU graphs, a "
        "free port for HCCL, pidfd_open (or no expandable segments) for CUDA IPC.",
        example="`RuntimeError: collective nonSFG is not supported during hpu graph capturing` in a multi-card Gaudi "
        "warm-up (HabanaAI/vllm-fork PR #170): PT_HPU_ENABLE_LAZY_COLLECTIVES=true.",
        fix="PT_HPU_ENABLE_LAZY_COLLECTIVES=true; the HCCL port freed or reserved (HCCL_IF_BASE_PORT); FI_PROVIDER "
        "and FI_PROVIDER_PATH for oneCCL; expandable_segments:False, or a kernel 5.3 or newer.",
        limits="Which process holds an HCCL port, and what turned expandable segments on, are on the host.",
        references=[
            "https://docs.vllm.ai/projects/gaudi/en/0.13.0/api/vllm_gaudi/distributed/device_communicators/"
            "hpu_communicator.html",
            "https://github.com/HabanaAI/vllm-fork/pull/170",
            "https://github.com/vllm-project/vllm-ascend/issues/1955",
            "https://www.hiascend.com/document/detail/zh/canncommercial/latest/maintenref/envvar/envref_07_0074.html",
            "https://github.com/OpenRLHF/OpenRLHF/issues/957",
            "https://github.com/llm-d/llm-d/pull/2270",
        ],
    ),
)

RULES: list[Rule] = [RULE_COLLECTIVE_SETUP]
