"""OP-7.23: vLLM's CPU KV offload region in /dev/shm could not be backed at start-up.

Why a rule of its own: vLLM's CPU KV offload keeps its blocks in one file, `/dev/shm/vllm_offload_<id>.mmap`,
that every worker maps (v1/kv_offload/cpu/shared_offload_region.py). /dev/shm is a tmpfs: the file is created
sparse at the region's size, so creating it succeeds and touching its pages fails when the tmpfs cannot hold
them, in the kernel's words (`OSError: [Errno 14] Bad address` from madvise, a SIGBUS), not vLLM's. Releases
before the fix kept the file until a clean exit, so a crashed engine left its region behind; in Kubernetes an
emptyDir /dev/shm survives a container's restart, so every restart found the old region there and could not
fit a second (vllm#54002). vLLM 0.32 removes the file's name once every worker has mapped it (with its barrier)
and checks /dev/shm's free space before creating it ("Insufficient space in /dev/shm for CPU KV offload shared
region", which VC-1 reads).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# The kernel's words for a tmpfs page it could not back, as Python raises them.
_UNBACKED = ("Bad address", "No space left on device", "Cannot allocate memory", "Bus error")


def _failed_region(event: LogEvent) -> bool:
    """An error raised in the offload region's code, or in the kernel's words for an unbacked page."""
    in_region = "kv_offload" in (event.code_file or "") or "offload_region" in (event.code_file or "")
    return in_region or any(words in (event.message or "") for words in _UNBACKED)


def _check_offload_region(facts: Facts) -> list[Finding]:
    regions = facts.events_of(LogEventKind.KV_OFFLOAD_REGION)
    failed = [e for e in facts.events_of(LogEventKind.UNPLACED_ERROR) if _failed_region(e)]
    if not regions or not failed:
        return []
    region = regions[-1]
    size = f"{(region.shm_bytes or 0) / 1e9:.2f} GB"
    evidence = c.log_evidence(region, name="KV offload region", value=region.message)
    evidence.description = f"the CPU KV offload region vLLM created in /dev/shm: {size}"
    error = c.log_evidence(failed[0], name="error backing it", value=failed[0].message)
    error.description = "the error touching the region's pages"
    return [
        RULE_OFFLOAD_REGION.finding(
            Severity.CRITICAL,
            f"the CPU KV offload region ({size} in /dev/shm) could not be backed: /dev/shm is too small for it, or "
            "holds a region leaked by an earlier run",
            summary="vLLM's CPU KV offload maps one file of the region's size in /dev/shm; the tmpfs holds its pages "
            "only when they are touched, so a full /dev/shm fails there (the kernel's 'Bad address', a bus error). "
            "A crashed engine of a release before 0.32 leaves its vllm_offload_*.mmap behind, and a Kubernetes "
            "emptyDir /dev/shm survives a container's restart: each restart then finds the leaked region beside its "
            "new one, and a tmpfs sized for one region cannot hold two.",
            evidence=[evidence, error],
            actions=[
                "Look in /dev/shm where the server runs (`ls -la /dev/shm`): with no server running, delete the "
                "leftover /dev/shm/vllm_offload_*.mmap, or delete the pod (a container restart keeps an emptyDir).",
                f"Give /dev/shm at least the region's {size} plus what vLLM's workers share (an emptyDir with medium "
                "Memory and a sizeLimit, `docker run --shm-size`), or offload less (a smaller CPU KV offload size).",
                "Upgrade vLLM: 0.32 removes the region's file name once every worker has mapped it, so a crash leaks "
                "nothing, and checks /dev/shm's free space before creating it.",
            ],
            confidence=0.8,
        )
    ]


RULE_OFFLOAD_REGION = Rule(
    code="OP-7.23",
    title="the CPU KV offload region in /dev/shm could not be backed",
    category=Category.STARTUP,
    check=_check_offload_region,
    needs=("events",),
    page=RulePage(
        checks="vLLM's `Created mmap file /dev/shm/vllm_offload_<id>.mmap (N GB)` followed by an error raised in the "
        "offload region's code or in the kernel's words for an unbacked page (`[Errno 14] Bad address`, `No space "
        "left on device`).",
        why="The region is a sparse file on a tmpfs: only touching its pages needs the memory, so a /dev/shm too "
        "small for it, or still holding a region a crashed run left, fails at start-up with the kernel's errno.",
        example="17.18 GB region, then `OSError: [Errno 14] Bad address` in madvise after a container restart in a "
        "pod whose emptyDir /dev/shm still held the last run's region (vllm#54002).",
        fix="Delete the leftover region (or the pod), size /dev/shm for the region, upgrade vLLM (0.32 cannot leak "
        "it).",
        limits="Needs the region's creation line in the text; without it the errno alone is VC-2's.",
        references=["https://github.com/vllm-project/vllm/issues/54002"],
    ),
)

RULES: list[Rule] = [RULE_OFFLOAD_REGION]
