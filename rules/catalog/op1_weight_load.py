"""OP-1.12: the weights loaded far slower than any local disk reads: the checkpoint sits on a slow volume.

Why a rule of its own: vLLM says how long loading took (`Model loading took 15.26 GiB memory and 1200.5 seconds`,
the GPU model runner) but not that it was slow, and a start that spends twenty minutes reading weights is the
restart an on-call engineer waits through, and the one a Kubernetes startup probe or the engine-ready wait (OP-1.11)
cuts short. Below SLOW_LOAD_MIB_S the read is slower than any local SSD: a network or object-store mount, or a
throttled cloud disk. vLLM 0.32 also names the checkpoint's filesystem (`Filesystem type for checkpoints: NFS.
Checkpoint size: … GiB. Available RAM: … GiB.`, model_loader/weight_utils.py) and prefetches the files into the page
cache by itself on NFS and Lustre when they fit in 90 % of the RAM (`--safetensors-load-strategy`, default unset);
on a filesystem it does not recognise as a network one, `prefetch` is the flag's value that reads the files ahead.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# A load at least this long and slower than this is named: a local SATA SSD reads ~500 MB/s, NVMe several GB/s.
SLOW_LOAD_MIB_S = 100
SLOW_LOAD_MIN_S = 120
# vLLM 0.32 prefetches by itself on these (weight_utils.py: is_net_fs) when the checkpoint fits RAM_SHARE of the RAM
AUTO_PREFETCH_FS = ("NFS", "NFS4", "LUSTRE")
RAM_SHARE = 0.9
# Block-device filesystems of a local or attached disk (a container's overlay sits on one): prefetching does not
# make the device faster
DISK_FS = ("EXT4", "EXT3", "XFS", "BTRFS", "ZFS", "F2FS", "OVERLAY", "TMPFS")
LOAD_STRATEGY_FLAG = "--safetensors-load-strategy"


def _check_weight_load(facts: Facts) -> list[Finding]:
    loaded = next(
        (
            e
            for e in reversed(facts.events_of(LogEventKind.MODEL_LOADING))
            if e.weights_gib and e.load_seconds and e.load_seconds >= SLOW_LOAD_MIN_S
        ),
        None,
    )
    if loaded is None or (speed := _mib_s(loaded)) >= SLOW_LOAD_MIB_S:
        return []
    where = facts.last_event(LogEventKind.CHECKPOINT_FILESYSTEM)
    fs = (where.message or "").upper() if where else ""
    evidence = [c.log_evidence(loaded, "weight load speed", round(speed), SLOW_LOAD_MIB_S, "<", "MiB/s")]
    if where is not None:
        evidence.append(c.log_evidence(where, name="checkpoint filesystem", value=where.message))
    prefetch = _prefetch_change(where, fs)
    return [
        RULE_WEIGHT_LOAD.finding(
            Severity.LOW,
            f"the weights loaded at about {speed:.0f} MiB/s ({loaded.weights_gib:g} GiB in "
            f"{c.clock(loaded.load_seconds)}): slower than any local disk" + (f", from {fs}" if fs else ""),
            summary="Every restart reads the whole checkpoint again; at this speed the start is spent reading "
            "weights, and a startup probe or the engine-ready wait (OP-1.11) that is shorter kills the server while "
            "it loads. Reads this slow come from a network or object-store mount, or a throttled cloud disk."
            + _fs_sentence(where, fs),
            evidence=evidence,
            changes=[prefetch] if prefetch else [],
            actions=_actions(fs),
            confidence=0.6,
        )
    ]


def _mib_s(event: LogEvent) -> float:
    return (event.weights_gib or 0) * 1024 / (event.load_seconds or 1)


def _fits_in_ram(where: LogEvent | None) -> bool:
    return bool(where and where.weights_gib and where.free_gib and where.weights_gib <= RAM_SHARE * where.free_gib)


def _fs_sentence(where: LogEvent | None, fs: str) -> str:
    if not fs:
        return ""
    if fs in AUTO_PREFETCH_FS:
        did = "so vLLM read the files ahead by itself" if _fits_in_ram(where) else "but too large to read ahead"
        return f" vLLM named the filesystem {fs}, a network one it recognises ({did})."
    if fs in DISK_FS:
        return f" vLLM named the filesystem {fs}: a disk, so the device itself is slow (or throttled)."
    return f" vLLM named the filesystem {fs}, which it does not read ahead by itself."


def _prefetch_change(where: LogEvent | None, fs: str) -> ConfigChange | None:
    """`prefetch` where vLLM did not read ahead by itself and the checkpoint fits the RAM it reported."""
    if not fs or fs in AUTO_PREFETCH_FS or fs in DISK_FS or not _fits_in_ram(where):
        return None
    return ConfigChange(
        flag=LOAD_STRATEGY_FLAG,
        current="(default)",
        proposed="prefetch",
        reason=f"the checkpoint ({where.weights_gib:g} GiB) fits the RAM vLLM reported, and vLLM reads ahead by "
        f"itself only on {', '.join(AUTO_PREFETCH_FS)}",
        cost="page cache as large as the checkpoint while it loads",
    )


def _actions(fs: str) -> list[str]:
    local = (
        "Put the weights on a local disk: copy the model to the node's NVMe before the server starts (an init "
        "container into an emptyDir or a node-local volume, or a host cache) and serve that path."
    )
    unknown = (
        f"Find the filesystem in vLLM's own line `Filesystem type for checkpoints: …` (0.32); on a network mount "
        f"that fits in memory, `{LOAD_STRATEGY_FLAG} prefetch` reads the files ahead."
    )
    probe = (
        "Until then, give the start its time: a startup probe (and VLLM_ENGINE_READY_TIMEOUT_S) longer than the load."
    )
    return [local, probe] if fs else [local, unknown, probe]


RULE_WEIGHT_LOAD = Rule(
    code="OP-1.12",
    title="the weights loaded slower than any local disk reads",
    category=Category.STARTUP,
    check=_check_weight_load,
    needs=("events",),
    page=RulePage(
        checks=f"vLLM's `Model loading took <GiB> GiB [memory] and <s> seconds`: a load of at least "
        f"{SLOW_LOAD_MIN_S} s at under {SLOW_LOAD_MIB_S} MiB/s; with vLLM 0.32's `Filesystem type for checkpoints: "
        "<FS>. Checkpoint size: … GiB. Available RAM: … GiB.` it names the filesystem.",
        why="Each restart reads the whole checkpoint again; a slow read makes every start long, and a startup probe "
        "or engine-ready wait shorter than it kills a healthy server.",
        example="`Model loading took 15.26 GiB memory and 1200.5 seconds` (13 MiB/s) with the model on a FUSE mount "
        "of an object store.",
        fix=f"The weights on a local disk; on a network filesystem vLLM does not read ahead itself, "
        f"`{LOAD_STRATEGY_FLAG} prefetch` when the checkpoint fits in memory (vLLM 0.32 does it on "
        f"{', '.join(AUTO_PREFETCH_FS)} by itself); probes as long as the load meanwhile.",
        limits="The time vLLM prints covers building the model as well as reading it, so the speed is a lower bound "
        "on the read; the GiB are the weights in GPU memory, about the checkpoint's size.",
        references=["docs/environment-failures.md"],
    ),
)

RULES: list[Rule] = [RULE_WEIGHT_LOAD]
