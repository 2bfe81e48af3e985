"""OP-7.34: the disk is full where the server writes (ENOSPC), with the path it could not write.

Why a rule of its own: a full disk fails in Python's words (`OSError: [Errno 28] No space left on device:
'/root/.cache/huggingface/hub/…'`), never vLLM's, and the lever is where the writer puts its files, not a vLLM flag.
What vLLM writes at start: the model's files through Hugging Face's cache (HF_HOME), its own cache (VLLM_CACHE_ROOT,
~/.cache/vllm by default, with torch.compile's artifacts under torch_compile_cache: vllm/envs.py and
vllm/compilation/backends.py, 0.32), and its libraries' kernel caches (Triton, inductor, FlashInfer); OP-7.19 holds
the variable that moves each (`op7_container.CACHE_VARIABLES`). In Kubernetes a container's writable layer and its
emptyDir volumes count as the pod's ephemeral storage, whose limit and the node's room bound them (Kubernetes,
"Local ephemeral storage"). /dev/shm is shared memory, not disk: OP-7.1 and OP-7.23 read it.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.catalog.op7_container import cache_variable
from rules.events import NO_PATH, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

EPHEMERAL_STORAGE_DOCS = (
    "https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/#local-ephemeral-storage"
)


_K8S_STORAGE = (
    "In Kubernetes the container's writable layer and emptyDir volumes count as the pod's ephemeral storage: mount a "
    "volume for the cache (a PersistentVolumeClaim keeps the download across restarts) rather than writing into the "
    "image's file system, and check the pod's ephemeral-storage limit and the node's free disk (a node short of it "
    "evicts pods)."
)


def _check(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.DISK_FULL)
    named = [e for e in events if e.component != NO_PATH]
    if not named:  # a pathless one beside NCCL's or Ray's words for /dev/shm is OP-7.1's: they name the store
        shm = facts.events_of(LogEventKind.SHM_TOO_SMALL)
        return [_no_path(events[0])] if events and not shm else []
    events = named
    path = events[0].message or ""
    quota = events[0].component == "quota"  # EDQUOT: the user's (or group's) quota, not the disk, is full
    cache = cache_variable(path)
    full = "the disk quota is used up" if quota else "no space left"
    return [
        RULE.finding(
            Severity.CRITICAL,
            f"{full} on the file system holding {path}" + (f" ({cache[1]})" if cache else ""),
            summary=f"A write was refused for {'the quota (EDQUOT)' if quota else 'space (ENOSPC)'}. A model's "
            "weights go through Hugging Face's cache (tens to hundreds of GB), and vLLM, torch.compile, Triton and "
            "FlashInfer write their caches at start, all under the home directory or XDG_CACHE_HOME unless their own "
            "variables move them.",
            evidence=[c.log_evidence(e, name="no space left on device", value=e.message) for e in events[:3]],
            changes=[_move(cache)] if cache else [],
            actions=[_look(path, quota), _K8S_STORAGE],
            confidence=0.9,
        )
    ]


def _no_path(event: LogEvent) -> Finding:
    """ENOSPC with no path: the disk, or in a container the shared memory at /dev/shm, which fails the same way."""
    return RULE.finding(
        Severity.CRITICAL,
        "a write was refused for space (ENOSPC), and the words name no path: a full disk, or a container's /dev/shm",
        summary="A write was refused for space, and the error does not say where. The server writes the model "
        "through Hugging Face's cache, its own and its libraries' caches, and /tmp; in a container it also writes "
        "shared memory at /dev/shm (NCCL's buffers, vLLM's CPU KV offload), which Docker gives 64 MiB unless told "
        "otherwise and which fails in the same words.",
        evidence=[c.log_evidence(event, name="no space left on device")],
        actions=[
            "`df -h` where the server runs, and `df -h /dev/shm` in its container: the one at 100 % is the one; "
            "the traceback's frames above the error name the writer (a download, a cache, NCCL).",
            "A full /dev/shm in a container: `--ipc=host` or a larger `--shm-size` (Kubernetes: an emptyDir with "
            "medium Memory mounted at /dev/shm); a full disk: " + _K8S_STORAGE[0].lower() + _K8S_STORAGE[1:],
        ],
        confidence=0.6,
    )


def _move(cache: tuple[str, str]) -> ConfigChange:
    return ConfigChange(
        flag=cache[0],
        proposed="<a directory on a volume with room, e.g. one mounted for the cache>",
        reason=f"moves {cache[1]} off the full file system",
        cost="none, if the volume persists (a fresh cache downloads or compiles again)",
        kind="env",
    )


def _look(path: str, quota: bool) -> str:
    """Where to see what filled it: the quota's own tool for a quota, the file system's use otherwise."""
    caches = "the caches under the home directory (~/.cache/huggingface, ~/.cache/vllm, ~/.triton)"
    if quota:
        return (
            f"See the quota and what filled it: `quota -s` (or the cluster's own quota tool), then `du -sh` over "
            f"{caches}; a home directory with a small quota is the usual one on shared clusters: move the caches to "
            "scratch or project space."
        )
    directory = path.rsplit("/", 1)[0] or "/"
    return (
        f"See how full it is and what filled it: `df -h {directory}`, then `du -sh` over {caches} and /tmp; remove "
        "what is not needed (old models, stale compile caches), or give the cache a volume with room."
    )


RULE = Rule(
    code="OP-7.34",
    title="the disk is full where the server writes (ENOSPC)",
    category=Category.RELIABILITY,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="Python's `[Errno 28] No space left on device: '<path>'` for a path outside /dev/shm (shared memory "
        "is OP-7.1's and OP-7.23's), and the same error with no path.",
        why="A full disk stops a model download, a compile cache or a log write with an OS error that names no "
        "vLLM setting; the path says whose files filled it and which variable moves them.",
        example="OSError: [Errno 28] No space left on device: '/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/"
        "blobs/…incomplete'",
        fix="Space on that file system, or the cache moved to a volume with room: HF_HOME, VLLM_CACHE_ROOT, "
        "TRITON_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR, FLASHINFER_WORKSPACE_BASE (by the path's words); in Kubernetes "
        "a volume for the cache and a look at the pod's ephemeral storage.",
        limits="A bare `No space left on device` names no store: the finding then asks `df -h` of the disk and of "
        "/dev/shm. Does not know the file system's size or what else filled it.",
        references=[EPHEMERAL_STORAGE_DOCS],
    ),
)

RULES: list[Rule] = [RULE]
