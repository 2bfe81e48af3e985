"""OP-7: the environment around vLLM — the container's shared memory, CUDA initialised before the
workers fork, custom all-reduce on a platform without what it needs, a model's code not trusted.

These failures are worded by NCCL, Ray, PyTorch, CUDA or transformers, not by vLLM's own checks, so
its message catalog (VC-1) does not hold them; each has one documented fix, and the worker deaths
and engine failures that follow are its consequence. The facts and their sources are in
docs/environment-failures.md.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.catalog.op3_nccl_result import peer_access_refused
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# Enough for NCCL's segments and PyTorch's tensors between tensor-parallel workers; vLLM's Docker
# page uses --ipc=host, or a --shm-size sized for the workload (docs/environment-failures.md).
PROPOSED_SHM_SIZE = "10g"
DOCKER_DEFAULT_SHM_BYTES = 64 * 1024 * 1024
CONFIDENCE = 0.95  # the text names the failure and the cause has one documented fix
# NCCL's system error names no call: the causes are listed, none is known (confidence by elimination).
NCCL_SYSTEM_CONFIDENCE = 0.6
NCCL_BUFFSIZE_DEFAULT_MIB = 4  # NCCL's environment reference: NCCL_BUFFSIZE defaults to 4194304 bytes


def _first(facts: Facts, kind: LogEventKind):
    events = facts.events_of(kind)
    return events[0] if events else None


# --- OP-7.1 /dev/shm too small ------------------------------------------------------------------


def _check_shm(facts: Facts) -> list[Finding]:
    event = _first(facts, LogEventKind.SHM_TOO_SMALL)
    if event is None:
        return []
    size = f"{event.shm_bytes / 2**20:.0f} MiB" if event.shm_bytes else None
    default = event.shm_bytes == DOCKER_DEFAULT_SHM_BYTES
    said = f" (it holds {size}{', Docker’s default' if default else ''})" if size else ""
    return [
        RULE_SHM.finding(
            Severity.CRITICAL,
            f"/dev/shm too small for the workers' shared memory{said}",
            summary="The workers exchange tensors (and NCCL its segments) through shared memory; a container "
            "started without --ipc=host or a larger --shm-size has 64 MiB of it.",
            evidence=[c.log_evidence(event, name="shared_memory", value=size or event.message)],
            changes=[
                ConfigChange(
                    flag="--shm-size",
                    current=size,
                    proposed=PROPOSED_SHM_SIZE,
                    reason="the container's /dev/shm cannot hold the workers' shared-memory segments",
                    cost="host memory, used only as the segments need it",
                    kind="setting",
                )
            ],
            actions=["Or run the container with --ipc=host (what vLLM's Docker instructions use)."],
            confidence=CONFIDENCE,
        )
    ]


RULE_SHM = Rule(
    code="OP-7.1",
    title="container shared memory (/dev/shm) too small",
    category=Category.PARALLELISM,
    check=_check_shm,
    needs=("events",),
    page=RulePage(
        checks="NCCL's `Error while creating shared memory segment /dev/shm/nccl-…`, or Ray's `/dev/shm has only "
        "N bytes available`.",
        why="Tensor-parallel workers share tensors and NCCL's buffers through /dev/shm; Docker gives a container "
        "64 MiB unless it runs with --ipc=host or --shm-size.",
        example="Error while creating shared memory segment /dev/shm/nccl-eQz2sT (size 5767520)",
        fix=f"docker run --ipc=host, or --shm-size {PROPOSED_SHM_SIZE} (Kubernetes: an emptyDir with medium Memory "
        "mounted at /dev/shm).",
        limits="Reads the text only: the container's real /dev/shm size is known when Ray prints it.",
        references=["docs/environment-failures.md"],
    ),
)


# --- OP-7.2 CUDA initialised before the workers fork ----------------------------------------------


def _check_forked(facts: Facts) -> list[Finding]:
    event = _first(facts, LogEventKind.CUDA_FORKED)
    if event is None:
        return []
    return [
        RULE_FORKED.finding(
            Severity.CRITICAL,
            "CUDA was initialised before vLLM forked its workers: a forked subprocess cannot use it",
            summary="Something in the parent process touched CUDA (an import, a device query) before the worker "
            "processes were forked; CUDA cannot be re-initialised in a fork, so the workers must be spawned.",
            evidence=[c.log_evidence(event)],
            changes=[
                ConfigChange(
                    flag="VLLM_WORKER_MULTIPROC_METHOD",
                    current=None,
                    proposed="spawn",
                    reason="spawned workers start a fresh interpreter and initialise CUDA themselves",
                    cost="a slower start (each worker re-imports vLLM)",
                    kind="env",
                )
            ],
            actions=["If vLLM is embedded, keep CUDA calls out of the parent before the engine starts."],
            confidence=CONFIDENCE,
        )
    ]


RULE_FORKED = Rule(
    code="OP-7.2",
    title="CUDA initialised in the parent of forked workers",
    category=Category.PARALLELISM,
    check=_check_forked,
    needs=("events",),
    page=RulePage(
        checks="`Cannot re-initialize CUDA in forked subprocess`.",
        why="vLLM forks its worker processes by default; a fork of a process that already initialised CUDA "
        "cannot use CUDA.",
        example="Exception in worker VllmWorkerProcess while processing method init_device: Cannot re-initialize "
        "CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method",
        fix="VLLM_WORKER_MULTIPROC_METHOD=spawn in the server's environment.",
        limits="Does not find what initialised CUDA; vLLM warns when it switches to spawn itself.",
        references=["docs/environment-failures.md"],
    ),
)


# --- OP-7.3 custom all-reduce fails on the platform -----------------------------------------------


def _check_custom_all_reduce(facts: Facts) -> list[Finding]:
    event = _first(facts, LogEventKind.CUSTOM_ALL_REDUCE_FAILED)
    if event is None:
        return []
    return [
        RULE_CUSTOM_ALL_REDUCE.finding(
            Severity.CRITICAL,
            "vLLM's custom all-reduce kernel failed (custom_all_reduce): the GPUs cannot run it",
            summary="Custom all-reduce needs peer-to-peer access between the GPUs (and a driver and topology "
            "that allow it); where it fails, NCCL's all-reduce does the same work.",
            evidence=[c.log_evidence(event)],
            changes=[c.custom_all_reduce_off("NCCL's all-reduce replaces the kernel that fails on this platform")],
            actions=["Check peer access between the GPUs (nvidia-smi topo -m) and the driver version."],
            confidence=CONFIDENCE,
        )
    ]


RULE_CUSTOM_ALL_REDUCE = Rule(
    code="OP-7.3",
    title="custom all-reduce kernel fails on this platform",
    category=Category.PARALLELISM,
    check=_check_custom_all_reduce,
    needs=("events",),
    page=RulePage(
        checks="An error raised in vLLM's custom all-reduce (`custom_all_reduce.cuh:N 'invalid argument'`).",
        why="The kernel relies on CUDA peer-to-peer access and IPC memory handles; some drivers, virtualised "
        "GPUs and PCIe topologies do not provide them.",
        example="Failed: /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:310 'invalid argument'",
        fix="--disable-custom-all-reduce.",
        limits="The error itself says the kernel ran, so the flag was not set.",
        references=["docs/environment-failures.md"],
    ),
)


# --- OP-7.4 the model's own code not trusted -------------------------------------------------------


def _check_remote_code(facts: Facts) -> list[Finding]:
    event = _first(facts, LogEventKind.REMOTE_CODE_REFUSED)
    if event is None:
        return []
    return [
        RULE_REMOTE_CODE.finding(
            Severity.CRITICAL,
            "the model needs its repository's code, and the server does not trust_remote_code",
            summary="The model's configuration or modelling code is Python shipped in its repository; "
            "transformers runs it only when the server is started with --trust-remote-code.",
            evidence=[c.log_evidence(event)],
            changes=[
                ConfigChange(
                    flag="--trust-remote-code",
                    current=None,
                    proposed="true",
                    reason="the model's configuration is code in its repository, run only when trusted",
                    cost="the repository's code runs in the server: read it first",
                )
            ],
            confidence=CONFIDENCE,
        )
    ]


RULE_REMOTE_CODE = Rule(
    code="OP-7.4",
    title="model code from its repository not trusted",
    category=Category.RELIABILITY,
    check=_check_remote_code,
    needs=("events",),
    page=RulePage(
        checks="transformers' `… requires you to execute the configuration file in that repo … set the option "
        "trust_remote_code=True`.",
        why="Some models (InternVL, many new architectures) ship their configuration and modelling code in the "
        "repository; loading runs that code, which transformers allows only when asked.",
        example="ValueError: Loading internvl2-8b/ requires you to execute the configuration file in that repo on "
        "your local machine.",
        fix="--trust-remote-code, after reading the repository's code.",
        limits="The refusal itself says the flag was not set; whether the code is safe to run is the reader's call.",
        references=["docs/environment-failures.md"],
    ),
)

# --- OP-7.5 NCCL's call to the system refused -------------------------------------------------------


def _check_nccl_system(facts: Facts) -> list[Finding]:
    event = _first(facts, LogEventKind.NCCL_SYSTEM_ERROR)
    # OP-7.1 names a /dev/shm too small itself, OP-3.5 a CUDA failure of peer access under the system error
    if event is None or facts.events_of(LogEventKind.SHM_TOO_SMALL) or peer_access_refused(facts):
        return []
    return [
        RULE_NCCL_SYSTEM.finding(
            Severity.CRITICAL,
            "NCCL failed a call to the system (NCCL_ERROR_SYSTEM_ERROR): the host refused it memory or a device",
            summary="ncclSystemError means a system call NCCL made failed. In a container it is most often memory "
            "NCCL could not get: /dev/shm for its transport between processes, or pinned and registered memory for "
            "its buffers, which NCCL_* overrides such as NCCL_BUFFSIZE enlarge.",
            evidence=[c.log_evidence(event)],
            actions=[
                "Rerun with NCCL_DEBUG=INFO: NCCL's own WARN line names the call that failed (a memory "
                "registration such as ibv_reg_dmabuf_mr 'Cannot allocate memory', shm_open, a socket).",
                f"Unset the NCCL_* overrides the deployment sets, NCCL_BUFFSIZE first: its default is "
                f"{NCCL_BUFFSIZE_DEFAULT_MIB} MiB per channel, and a larger one multiplies the memory NCCL pins "
                "and registers (vllm#19613 started once it was back to the default).",
                "In a container, give /dev/shm room (--ipc=host or --shm-size, as OP-7.1) and let RDMA lock memory "
                "(--ulimit memlock=-1).",
            ],
            confidence=NCCL_SYSTEM_CONFIDENCE,
        )
    ]


RULE_NCCL_SYSTEM = Rule(
    code="OP-7.5",
    title="NCCL's call to the system refused",
    category=Category.PARALLELISM,
    check=_check_nccl_system,
    needs=("events",),
    page=RulePage(
        checks="NCCL's system error as torch or cupy print it: `NCCL_ERROR_SYSTEM_ERROR: unhandled system error "
        "(run with NCCL_DEBUG=INFO for details)`.",
        why="NCCL returns ncclSystemError when a call it made to the system failed (NCCL's API types); for a "
        "server starting its ranks that is memory (shared, pinned, registered for RDMA) or a device the host "
        "would not give.",
        example="cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_SYSTEM_ERROR: unhandled system error (run "
        "with NCCL_DEBUG=INFO for details)",
        fix="NCCL_DEBUG=INFO to name the call; unset NCCL_* overrides (NCCL_BUFFSIZE first); /dev/shm and "
        "locked-memory limits in containers.",
        limits="The text names no call, so the causes are listed in the order they are met; a /dev/shm error in "
        "the same log is OP-7.1's, and a CUDA failure of peer access under it OP-3.5's: this rule stays silent.",
        references=["docs/environment-failures.md"],
    ),
)

RULES: list[Rule] = [RULE_SHM, RULE_FORKED, RULE_CUSTOM_ALL_REDUCE, RULE_NCCL_SYSTEM, RULE_REMOTE_CODE]
