"""OP-7.42: a weights file of the model is not a whole safetensors file (a Git LFS pointer, an HTML page, a download
cut short).

Why a rule of its own: a safetensors file starts with 8 bytes giving its JSON header's length, and safetensors refuses
a length above 100 MB. A text file in a weights file's place reads as an absurd length: the 130-byte pointer a
repository cloned without git-lfs leaves (`version https://git-lfs…`: its first 8 bytes, `version `, read as about
2.3 × 10^18), or an HTML error page saved by a download. safetensors calls that `HeaderTooLarge` (`header too large`
in 0.8.0), a file shorter than its header says `MetadataIncompleteBuffer` (`incomplete metadata, file not fully
covered`), an empty one `header too small`. The project's tests make each of these files and read the installed
safetensors' words for them (0.8.0 when written); the older names are as reported, e.g. turboderp/exllama#242
(fixed by downloading with git-lfs). vLLM reads every weights file with `safe_open` and adds nothing to the error, so
its words are safetensors' alone, and the file is the model's (or a LoRA adapter's), not vLLM's.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

_FIND = (
    "Find it: `ls -lS <model dir>/*.safetensors` (a file of a few hundred bytes, or smaller than the Hub lists it) "
    "and `head -c 120 <file>`; in the Hugging Face cache the model's files are under "
    "$HF_HOME/hub/models--<org>--<name>/snapshots/."
)
_DOWNLOAD_AGAIN = (
    "Download it again: `hf download <repo> --local-dir <dir>` (or delete the model's folder in the cache and let "
    "vLLM fetch it); a directory cloned with git needs `git lfs install && git lfs pull`."
)
_SPACE_FIRST = "First check free space where it is written (`df -h`): a disk that filled cuts a transfer short."
# What safetensors' words say stands in the file's place: (title, what happened, actions).
_STATES: dict[str, tuple[str, str, list[str]]] = {
    "not_safetensors": (
        "a weights file holds text, not safetensors data: a Git LFS pointer or a saved error page",
        "Its first 8 bytes, read as the header's length, ask for more than safetensors allows: the file is text. A "
        "repository cloned without git-lfs holds 130-byte pointers (`version https://git-lfs.github.com/spec/v1 …`) "
        "in place of the weights; a download that saved an HTML page (a login or an error) does the same.",
        [_FIND, _DOWNLOAD_AGAIN],
    ),
    "empty": (
        "a weights file is empty or a few bytes long: a download or copy that wrote nothing",
        "The file is shorter than safetensors' 8-byte header length: nothing was written into it.",
        [_FIND, _SPACE_FIRST, _DOWNLOAD_AGAIN],
    ),
    "truncated": (
        "a weights file is shorter than its header says: a download or copy cut short",
        "Its header describes more tensor data than the file holds: the transfer stopped (interrupted, or the disk "
        "filled while writing).",
        [_FIND, _SPACE_FIRST, _DOWNLOAD_AGAIN],
    ),
    "corrupt": (
        "a weights file's header is not valid: the file is damaged",
        "Its header's JSON does not parse: bytes were changed in the file (a failed copy, a damaged disk).",
        [_FIND, _DOWNLOAD_AGAIN],
    ),
}


def _check(facts: Facts) -> list[Finding]:
    events = [e for e in facts.events_of(LogEventKind.WEIGHTS_FILE_DAMAGED) if e.message in _STATES]
    return [_finding(events[0])] if events else []


def _finding(event: LogEvent) -> Finding:
    title, summary, actions = _STATES[event.message or ""]
    return RULE.finding(
        Severity.CRITICAL,
        title,
        summary=summary + " vLLM reads every weights file of the model (or of a LoRA adapter) with safetensors, "
        "which names no file: the model's files, not vLLM, need mending.",
        evidence=[c.log_evidence(event, name="safetensors refused a file's header", value=event.message)],
        actions=actions,
        confidence=0.85,
    )


RULE = Rule(
    code="OP-7.42",
    title="a weights file that is not a whole safetensors file",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="safetensors' `Error while deserializing header:` with `HeaderTooLarge` / `header too large` (text "
        "where data should be), `HeaderTooSmall` / `header too small` (empty), `MetadataIncompleteBuffer` / "
        "`incomplete metadata, file not fully covered` (cut short), `InvalidHeaderDeserialization` / `invalid JSON "
        "in header` (damaged).",
        why="safetensors reads a file's first 8 bytes as its header's length; a Git LFS pointer or an HTML page in "
        "the file's place reads as an impossible length, a cut download as a header promising more than the file "
        "holds.",
        example="`safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge` from a model "
        "directory cloned with git but without git-lfs (turboderp/exllama#242: downloading with git-lfs fixed it).",
        fix="Find the file (its size, its first bytes) and download it again; `git lfs pull` in a clone; free space "
        "first when a transfer was cut short.",
        limits="safetensors names no file: the finding says how to find it, not which it is.",
        references=[
            "https://github.com/turboderp/exllama/issues/242",
            "https://huggingface.co/docs/safetensors/index",
        ],
    ),
)

RULES: list[Rule] = [RULE]
