"""OP-7.64: the TPU compiler ran out of the chip's scalar memory (SMEM) compiling the paged-attention kernel.

Why a rule of its own: on a TPU, XLA compiles each kernel for the shapes it will run, and the compiler refuses a
kernel whose on-chip memory does not fit with `RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory
in memory space smem`. The server dies at startup or at the first batch of a new shape, with nothing of vLLM's in
the line. vLLM's Pallas paged-attention kernel keeps the whole block table of the batch in SMEM, one 4-byte entry
per KV block of each sequence, so the table grows with --max-model-len (blocks per sequence) and with the batch
(vllm/attention/backends/pallas.py, whose comment says so from 0.6.3.post1). vllm#8318: Llama-3.1-8B on v5e with
--max-model-len 32768 failed this way, 16384 too; the reporter ran with 8192, and a maintainer called it an SMEM out
of memory at compile time. vLLM PR #9350 (first in 0.6.3.post1) splits the batch into chunks whose block tables fit
(512 KiB), at some cost in speed and compile time.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# XLA's words for a TPU kernel whose scalar memory does not fit, with what it used and by how much it exceeded.
_SMEM_OOM = re.compile(
    r"XLA:TPU compile permanent error\. Ran out of memory in memory space smem\."
    r"(?: Used (?P<used>[\d.]+[KMG]?) of (?P<capacity>[\d.]+[KMG]?) smem\.)?"
    r"(?: Exceeded smem capacity by (?P<over>[\d.]+[KMG]?)\.)?"
)
# The release proposed for the batch split (PR #9350): 0.6.3.post1 was the first to ship it (0.6.3 did not), but a
# (major, minor, patch) version cannot tell the two apart, so the proposal names 0.6.4, which has it too.
BATCH_SPLIT_FROM = (0, 6, 4)
BATCH_SPLIT_RELEASE = "0.6.4"
# Below this, a shorter context is no longer worth proposing: the thread's working value was 8192.
SHORTEST_PROPOSED = 2048


def _check_tpu_smem(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR):
        found = _SMEM_OOM.search(event.message or "")
        if found is None:
            continue
        evidence = c.log_evidence(event, name="tpu_smem", value=found.group(0))
        used = f" (used {found['used']} of {found['capacity']}, {found['over']} over)" if found["over"] else ""
        evidence.description = f"XLA could not fit a TPU kernel in the chip's scalar memory{used}"
        changes, actions = _shrink_the_table(facts)
        return [
            RULE_TPU_SMEM.finding(
                Severity.CRITICAL,
                "the TPU compiler ran out of the chip's scalar memory (SMEM): the paged-attention kernel's block "
                "table grows with --max-model-len and the batch",
                summary="XLA compiles each TPU kernel for its shapes and refused one whose scalar memory does not fit. "
                "vLLM's Pallas paged-attention kernel keeps the batch's block tables there (one entry per KV block "
                "of each sequence), so a long --max-model-len or a large batch makes that kernel fail to compile.",
                evidence=[evidence],
                changes=changes[:1],
                alternatives=changes[1:],
                actions=actions,
                confidence=0.85,
            )
        ]
    return []


def _shrink_the_table(facts: Facts) -> tuple[list[ConfigChange], list[str]]:
    """A shorter context first (what vllm#8318's reporter ran with), fewer sequences per batch after; an upgrade to
    the release that splits the batch when the server's is older or unknown."""
    changes: list[ConfigChange] = []
    actions: list[str] = []
    length = facts.config.max_model_len if facts.config else None
    if length and length // 2 >= SHORTEST_PROPOSED:
        changes.append(
            ConfigChange(
                flag="--max-model-len",
                current=str(length),
                proposed=str(length // 2),
                reason="half the blocks per sequence in the kernel's block table (vllm#8318: 8192 compiled where "
                "16384 and 32768 did not)",
            )
        )
    else:
        actions.append(
            "Lower --max-model-len (vllm#8318: 8192 compiled on a v5e where 16384 and 32768 did not): each sequence's "
            "block table holds max-model-len / block size entries."
        )
    seqs = c.max_num_seqs(facts)
    if seqs and seqs > 1:
        changes.append(c.halved_max_num_seqs(seqs, "half the sequences whose block tables the kernel holds at once"))
    release = c.vllm_release(facts)
    if release is None or release < BATCH_SPLIT_FROM:
        actions.append(
            f"Upgrade vLLM to {BATCH_SPLIT_RELEASE} or later (0.6.3.post1 was the first): its TPU attention splits the "
            "batch so each kernel call's block tables fit (PR #9350; a little slower, and longer to compile)."
        )
    return changes, actions


RULE_TPU_SMEM = Rule(
    code="OP-7.64",
    title="the TPU compiler ran out of scalar memory (SMEM) for the paged-attention kernel",
    category=Category.STARTUP,
    check=_check_tpu_smem,
    needs=("events",),
    page=RulePage(
        checks="XLA's `XLA:TPU compile permanent error. Ran out of memory in memory space smem` on an error line.",
        why="vLLM's Pallas paged-attention kernel keeps the batch's block tables in the TPU's scalar memory, which "
        "grows with --max-model-len and the batch; XLA refuses to compile a kernel that does not fit.",
        example="Llama-3.1-8B on v5e, --max-model-len 32768: `Ran out of memory in memory space smem. Used 1.00M of "
        "1.00M smem. Exceeded smem capacity by 1.7K.` (vllm#8318; the reporter ran with 8192).",
        fix="A shorter --max-model-len (half, or what the thread ran: 8192), fewer --max-num-seqs, or vLLM "
        f"{BATCH_SPLIT_RELEASE} or later, which splits the batch (PR #9350).",
        limits="Only scalar memory (smem): XLA's running out of HBM while compiling is another cause. The upgrade is "
        "proposed when the server's release is unknown or older than the split; the split is per kernel call, so "
        "a context long enough that one sequence's table does not fit still fails.",
        references=[
            "https://github.com/vllm-project/vllm/issues/8318",
            "https://github.com/vllm-project/vllm/pull/9350",
        ],
    ),
)

RULES: list[Rule] = [RULE_TPU_SMEM]
