"""OP-3.5: NCCL failed, and what its result says, when no rule names a cause of its own.

Why a rule of its own: torch prints NCCL's failures as `NCCL error in: <file>:<line>, <result's words>` (and
`ncclUnhandledCudaError: Call to CUDA function failed.` under it), vLLM's own NCCL wrapper (PyNcclCommunicator, used
for its all-reduce and weight-sync groups) as `NCCL error: <result's words>` (vllm/distributed/device_communicators/
pynccl_wrapper.py, 0.32), and without a rule for the result a person is
left with nothing: every tensor-parallel server talks through NCCL, so its failures are common and look alike.
NCCL's result codes each say where to look (NVIDIA's NCCL documentation, "Types", ncclResult_t): a CUDA call NCCL
made failed (1), a call to the system failed (2: OP-7.5), an internal check failed (3: a bug in NCCL or memory
corruption), an argument or the call itself was wrong (4, 5: usually a programming error), or a remote process
exited or the network failed (6). The words torch prints are ncclGetErrorString's; its detail line under them names
the result (`ncclRemoteError: A call failed possibly due to …`), and a paste may keep only that line (vllm#3722).
Out of memory (OP-3.4), a system error (OP-7.5) and a /dev/shm too small (OP-7.1) have rules of their own, and this
one stays silent beside them.
"""

from __future__ import annotations

from typing import NamedTuple

from rules.catalog import common as c
from rules.events import NCCL_LOG, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

NCCL_TYPES_DOC = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/api/types.html"


class NcclResult(NamedTuple):
    name: str
    meaning: str  # NVIDIA's documentation of the result, in a few words
    actions: tuple[str, ...]


PEER_ACCESS = "peer access is not supported"
_DEBUG = "Rerun with NCCL_DEBUG=INFO (or WARN): NCCL's own WARN line names the call that failed and why."
_IB_FABRIC = (
    "Check the fabric on both nodes: `ibstat` (ports Active, LinkUp, the expected rate), `ibv_devinfo`, the switch's "
    "port counters; in a container the RDMA devices (/dev/infiniband) and a memlock limit high enough (IPC_LOCK) "
    "must be given to it."
)
_IB_SOCKETS = (
    "To confirm it is the fabric, run once with NCCL_IB_DISABLE=1: NCCL then talks over TCP sockets (much slower "
    "between nodes, but it starts); keep it only as a stopgap."
)
# ncclGetErrorString's words, as torch prints them after `NCCL error in: <file>:<line>, `.
# NCCL's NVLS transport (NVLink SHARP: multicast memory through an HGX/DGX system's NVSwitches) failing its CUDA
# setup, as NCCL_DEBUG's WARN line names its file (`transport/nvls.cc:246 NCCL WARN Cuda failure 3 'initialization
# error'`, vllm#9369: every TP above 1 on one host failed); NCCL_NVLS_ENABLE is NCCL's documented switch for it
_NVLS = NcclResult(
    "NVLS setup failed",
    "NCCL's NVLink SHARP transport (multicast memory through the NVSwitches) could not be set up",
    (
        "Set NCCL_NVLS_ENABLE=0 in the server's environment: NCCL leaves NVLS out and all-reduces with its "
        "other algorithms over NVLink (ring, tree), which need no multicast.",
        "NVLS needs the NVSwitch fabric up: on an HGX or DGX host `systemctl status nvidia-fabricmanager`, and "
        "`nvidia-smi -q | grep -A2 -i fabric` showing its state Completed; a VM or container may not allow "
        "multicast memory at all, where NVLS stays off.",
    ),
)


RESULTS: dict[str, NcclResult] = {
    # CUDA's cudaErrorPeerAccessUnsupported (217) as the "Last error:" under NCCL's result (`Cuda failure 217 'peer
    # access is not supported between these two devices'`, from NCCL's transport/shm.cc): the cause itself, read
    # first and answered even beside the system error NCCL reports for it (OP-7.5 then stays silent).
    PEER_ACCESS: NcclResult(
        "cudaErrorPeerAccessUnsupported",
        "CUDA refused NCCL peer access between two GPUs (peer access is not supported between these two devices)",
        (
            "Set NCCL_CUMEM_HOST_ENABLE=0 in the server's environment (or upgrade the GPU driver): vLLM's "
            "troubleshooting guide (Known issues) names this error on PCIe machines without NVLink as a driver bug "
            "in the host memory NCCL allocates through cuMem (NVIDIA/nccl#1838). If it stays, NCCL_P2P_DISABLE=1: "
            "NCCL then copies between the GPUs through host memory (a slower all-reduce, no peer access needed).",
            "Check what the host allows: `nvidia-smi topo -p2p r` prints which GPU pairs may read each other; "
            "consumer cards and many cloud VMs have no peer-to-peer between their GPUs.",
        ),
    ),
    # NCCL's own words under the result, when its init check found two ranks on one GPU (ncclInvalidUsage; an
    # older NCCL reported it as an internal error): the cause itself, so it is read first.
    "transport/nvls.cc": _NVLS,
    # the same transport's WARN pasted without its file (`Failed to bind NVLink SHARP (NVLS) Multicast memory`)
    "failed to bind nvlink sharp": _NVLS,
    "duplicate gpu detected": NcclResult(
        "ncclInvalidUsage",
        "two ranks of one NCCL group are on the same GPU (Duplicate GPU detected)",
        (
            "Give each rank its own GPU: processes that share one (an RL trainer and vLLM colocated for weight "
            "sync, workers whose CUDA_VISIBLE_DEVICES repeats a GPU, a worker that imported torch before its device "
            "list was set) cannot be two ranks of one NCCL group.",
            "For a weight sync on one GPU, sync through memory or disk instead of an NCCL group.",
        ),
    ),
    # NCCL's bootstrap finding no network interface to use (bootstrap.cc: ncclInternalError in older releases,
    # ncclInvalidUsage in newer ones), or its socket transport none to listen on (ncclSystemError): the cause itself
    "no socket interface found": NcclResult(
        "no network interface",
        "NCCL found no network interface to use (Bootstrap : no socket interface found)",
        (
            "NCCL_SOCKET_IFNAME names no interface this host has: set it to the one that carries the node's address "
            "(`ip -br addr`: eth0, ens5, bond0 …; a leading ^ excludes names, a leading = matches one exactly), or "
            "unset it to let NCCL choose; in a container, the interface names are the container's, not the host's "
            "(with host networking, the host's).",
            "Set GLOO_SOCKET_IFNAME the same way: vLLM's CPU-side groups use Gloo, which picks its interface alike.",
        ),
    ),
    "no usable listening interface found": NcclResult(
        "ncclSystemError",
        "NCCL's socket transport found no interface to listen on (No usable listening interface found)",
        (
            "NCCL_SOCKET_IFNAME names no interface this host has: set it to the one that carries the node's address "
            "(`ip -br addr`), or unset it.",
        ),
    ),
    # NCCL's InfiniBand transport (net_ib.cc, ibvwrap.c) between nodes: a verbs call refused, or a transfer that
    # completed with an error status; ibv_wc_status 12 is IBV_WC_RETRY_EXC_ERR (no acknowledgement after every retry)
    "call to ibv_": NcclResult(
        "InfiniBand verbs call failed",
        "NCCL's InfiniBand (or RoCE) transport could not set up or use a connection to a peer node",
        (
            _IB_FABRIC,
            "`Call to ibv_modify_qp failed … Connection timed out` is the queue pair to the peer never connecting: "
            "a port down or on another subnet, RoCE without the right GID (NCCL_IB_GID_INDEX), or an HCA NCCL "
            "should not use (NCCL_IB_HCA names the ones it may).",
            _IB_SOCKETS,
        ),
    ),
    "got completion": NcclResult(
        "InfiniBand transfer failed",
        "a transfer over InfiniBand (or RoCE) between nodes completed with an error",
        (
            "Read the peer's log first: a peer node whose process died or whose link dropped makes every transfer "
            "to it fail here. Status 12 (IBV_WC_RETRY_EXC_ERR) means no acknowledgement came back after every "
            "retry: the link or the peer; raising NCCL_IB_TIMEOUT (an exponent, 4.096 µs × 2^value per try) helps "
            "only a congested fabric.",
            _IB_FABRIC,
            _IB_SOCKETS,
        ),
    ),
    "unhandled cuda error": NcclResult(
        "ncclUnhandledCudaError",
        "a call NCCL made to CUDA failed",
        (
            "Read the CUDA error under it (`Last error: Cuda failure '…'`, or NCCL_DEBUG=INFO's WARN line): out of "
            "memory is NCCL's buffers not fitting beside vLLM's share; peer access between the GPUs failing (PCIe "
            "without P2P support, a VM or container that hides it) is tested with NCCL_P2P_DISABLE=1, which makes "
            "NCCL copy through host memory instead.",
            "A GPU fault at the same time (an Xid in the node's kernel log, `nvidia-smi` showing a GPU lost) is the "
            "hardware: triage the kernel log.",
        ),
    ),
    "internal error": NcclResult(
        "ncclInternalError",
        "an internal check of NCCL failed: a bug in NCCL or memory corruption",
        (
            _DEBUG,
            "Check that every process of the group loads the same NCCL (the nvidia-nccl-cu* package torch pins, "
            "not a system libnccl picked up through LD_LIBRARY_PATH or VLLM_NCCL_SO_PATH), then upgrade to a "
            "release with the fix if the WARN line names a known bug.",
        ),
    ),
    "invalid argument": NcclResult(
        "ncclInvalidArgument",
        "an argument of the call had an invalid value",
        (
            _DEBUG,
            "The processes of one group disagree: started with different tensor- or pipeline-parallel sizes, on a "
            "device list that differs between them (CUDA_VISIBLE_DEVICES), or a weight-sync group (an RL trainer "
            "beside vLLM) set up with ranks that do not match.",
        ),
    ),
    "invalid usage": NcclResult(
        "ncclInvalidUsage",
        "the call to NCCL was incorrect, usually a programming error",
        (
            _DEBUG,
            "Two ranks of one communicator on the same GPU is the usual one: processes that share a GPU (an RL "
            "trainer and vLLM colocated, CUDA_VISIBLE_DEVICES repeating a device) cannot be two ranks of one group.",
        ),
    ),
    "remote process exited or there was a network error": NcclResult(
        "ncclRemoteError",
        "a remote process exited early, or the network between them failed",
        (
            "Read the other ranks' logs first: a worker or node that died before this one (its own error, an OOM "
            "kill) is the cause, and this is its consequence.",
            "Across nodes, NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) must name the interface the nodes reach "
            "each other on; NCCL_DEBUG=INFO prints the interfaces NCCL chose.",
        ),
    ),
}


# torch's detail under an NCCL error (`getNcclErrorDetailStr`, torch/csrc/distributed/c10d/NCCLUtils.cpp) names the
# result and words it after NCCL's documentation, not ncclGetErrorString: `ncclRemoteError: A call failed possibly due
# to a network error or a remote process exiting prematurely.` (vllm#3722); each name reads as its result's words
TORCH_DETAIL_NAMES = {
    "ncclunhandledcudaerror:": "unhandled cuda error",
    "ncclinternalerror:": "internal error",
    "ncclinvalidargument:": "invalid argument",
    "ncclinvalidusage:": "invalid usage",
    "ncclremoteerror:": "remote process exited or there was a network error",
}


def _words(event: LogEvent) -> str:
    """The event's words in lower case, with the result's own words where torch's detail names it instead."""
    text = f"{event.message or ''} {event.raw or ''}".lower()  # the raw line keeps the file NCCL's WARN names
    return " ".join([text, *(words for name, words in TORCH_DETAIL_NAMES.items() if name in text)])


def _found(errors: list[LogEvent]) -> tuple[LogEvent, NcclResult] | None:
    """The first result, in RESULTS' order, that an event names, with that event."""
    texts = [(e, _words(e)) for e in errors]
    return next(((e, result) for words, result in RESULTS.items() for e, text in texts if words in text), None)


def peer_access_refused(facts: Facts) -> bool:
    """NCCL's CUDA call failed for peer access between GPUs: this rule's answer, over OP-7.5's system error."""
    return any(PEER_ACCESS in (e.message or e.raw or "").lower() for e in facts.events_of(LogEventKind.NCCL_ERROR))


def _check_nccl_result(facts: Facts) -> list[Finding]:
    # NCCL's own WARN lines (NCCL_DEBUG's), which no wording places, say the same in NCCL's words
    warned = [e for e in facts.events_of(LogEventKind.UNPLACED_LINE) if e.component == NCCL_LOG]
    errors = facts.events_of(LogEventKind.NCCL_ERROR) + warned
    if not errors:
        return []
    system_error = facts.events_of(LogEventKind.NCCL_SYSTEM_ERROR, LogEventKind.SHM_TOO_SMALL)
    if system_error and not peer_access_refused(facts):
        return []  # OP-7.5 and OP-7.1 name those causes themselves
    if any("out of memory" in (e.message or e.raw).lower() for e in errors):
        return []  # OP-3.4's
    found = _found(errors)
    if found is None:
        return []
    event, result = found
    cuda = [e for e in errors if "cuda failure" in (e.message or e.raw).lower() and e is not event]
    said = (
        f"NCCL's call to CUDA failed with {result.name}: {result.meaning}."
        if result.name.startswith("cuda")
        else f"NCCL's InfiniBand transport logged it (or the mlx5 verbs provider under it): {result.meaning}."
        if result.name.startswith("InfiniBand")
        else f"NCCL's own WARN line (NCCL_DEBUG) names its NVLS transport's file: {result.meaning}."
        if result.name.startswith("NVLS")
        else f"torch (or vLLM's own NCCL wrapper) reports NCCL's result {result.name}: {result.meaning}."
    )
    return [
        RULE_NCCL_RESULT.finding(
            Severity.HIGH,
            f"NCCL failed ({result.name}): {result.meaning}",
            summary=f"{said} Every process of a tensor- or pipeline-parallel vLLM talks through NCCL, so one failed "
            "call stops them all; what the result says decides where to look."
            + (f" NCCL's CUDA call failed with: {cuda[0].message}." if cuda else ""),
            evidence=[c.log_evidence(e, name="NCCL's failure") for e in [event, *cuda[:1]]],
            actions=list(result.actions),
            confidence=0.55,
        )
    ]


RULE_NCCL_RESULT = Rule(
    code="OP-3.5",
    title="NCCL failed, and what its result says",
    category=Category.PARALLELISM,
    check=_check_nccl_result,
    needs=("events",),
    page=RulePage(
        checks="torch's `NCCL error in: <file>:<line>, <result>` (and its older `NCCL Error <number>: <result>`, "
        "torch/csrc/cuda/nccl.cpp) and vLLM's PyNccl `NCCL error: <result>`: unhandled cuda error, internal error, "
        "invalid "
        "argument, invalid usage, remote process exited or there was a network error (NCCL's own words for its "
        "result codes); NCCL's `Duplicate GPU detected : rank … and rank … both on CUDA device …` and a `Cuda "
        "failure '…'` line under it (`peer access is not supported between these two devices` answered even under "
        "a system error); its bootstrap's `Bootstrap : no socket interface found` and socket transport's "
        "`NET/Socket : No usable listening interface found` (NCCL_SOCKET_IFNAME naming no interface the host has), "
        "under torch's error or as NCCL_DEBUG's WARN line; its InfiniBand transport's WARN lines (`Call to "
        "ibv_… failed`, `NET/IB : Got completion … with error 12`) and the mlx5 provider's `got completion with "
        "error`. Silent beside out of memory (OP-3.4), a system error (OP-7.5) or a /dev/shm too small (OP-7.1).",
        why="Each NCCL result says where to look (NVIDIA's documentation of ncclResult_t): CUDA, NCCL itself, the "
        "call's arguments or usage, or another process and the network.",
        example="`torch.distributed.DistBackendError: NCCL error in: …/ProcessGroupNCCL.cpp:1, remote process exited "
        "or there was a network error` on one node of two: the other node's log says why it exited first.",
        fix="Per result: the CUDA error under it (peer access refused: NCCL_CUMEM_HOST_ENABLE=0 or a newer driver, "
        "as vLLM's troubleshooting guide advises for PCIe machines, then NCCL_P2P_DISABLE=1); one NCCL for every "
        "process; ranks that agree and own their GPUs; the other ranks' logs and NCCL_SOCKET_IFNAME.",
        limits="The result narrows where to look; NCCL_DEBUG=INFO's WARN line names the call, which the text often "
        "does not hold.",
        references=[NCCL_TYPES_DOC],
    ),
)

RULES: list[Rule] = [RULE_NCCL_RESULT]
