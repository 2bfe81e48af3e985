"""OP-7.190: a model's download waits on a lock file: another process downloads it, or an interrupted one left it.

Why a rule of its own: huggingface_hub and ModelScope take a file lock per model (or per file) in their cache before
they download, so that two processes do not write the same files, and say so while they wait: `Still waiting to
acquire lock on /root/.cache/modelscope/hub/.lock/Qwen___Qwen3-VL-235B-A22B-Instruct-FP8` (filelock's words, with
the time waited in huggingface_hub's). The server looks hung at start, with no error. Either another process is
downloading the same model into the same cache (another replica on a shared volume, a second server started
beside the first), and waiting is right, or a download that was interrupted left its lock behind on a file system
where the lock outlived its process: gpustack/gpustack#3054's reporter deleted that lock file and the download went on.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _lock_finding(facts: Facts, event: LogEvent, _match: object) -> Finding:
    path = event.message or "the hub's lock file"
    hub = "ModelScope's" if "modelscope" in path.lower() else "Hugging Face's"
    return RULE_DOWNLOAD_LOCK.finding(
        Severity.MEDIUM,  # waiting on another process's download is right: only a lock no process holds is a fault
        f"the model's download waits on {hub} lock {path}: another process downloads the model, or an interrupted "
        "download left the lock",
        summary=f"{hub} hub client locks the model in its cache before it downloads, and waits while another holder "
        "has the lock. The server is not hung in vLLM: it has not started loading, and waits as long as the lock "
        "stays.",
        evidence=[c.log_evidence(event, name="download lock", value=path)],
        actions=[
            "See whether another process is downloading the same model into the same cache (another replica on a "
            "shared volume, a second server, a `huggingface-cli download`): if so, let it finish, or give each its "
            "own cache directory.",
            f"If none is, the lock was left by a download that was interrupted: stop the server, delete {path} "
            "(the lock file, not the model's files), and start again (gpustack/gpustack#3054's reporter did so for "
            "ModelScope's lock).",
            "Download the model once before the servers start (`huggingface-cli download` or `modelscope download` "
            "into the shared cache), so no server waits on another's download.",
        ],
        confidence=0.75,
    )


RULE_DOWNLOAD_LOCK = Rule(
    code="OP-7.190",
    title="a model's download waits on a lock in the hub's cache",
    category=Category.STARTUP,
    check=c.on_kind(LogEventKind.DOWNLOAD_LOCK_WAIT, _lock_finding),
    needs=("events",),
    page=RulePage(
        checks="filelock's `Still waiting to acquire lock on <path>` from huggingface_hub's or ModelScope's download.",
        why="The server waits at start with no error while another process, or a stale lock, holds the model's "
        "download.",
        example="`Still waiting to acquire lock on /root/.cache/modelscope/hub/.lock/Qwen___Qwen3-VL-235B-A22B-"
        "Instruct-FP8` (gpustack/gpustack#3054: a lock left by an interrupted download; deleting it let the download "
        "go on).",
        fix="Wait for the other download, or delete a lock no process holds; download once before servers start.",
        limits="Whether a process still holds the lock is not in the line.",
        references=["https://github.com/gpustack/gpustack/issues/3054"],
    ),
)

RULES: list[Rule] = [RULE_DOWNLOAD_LOCK]
