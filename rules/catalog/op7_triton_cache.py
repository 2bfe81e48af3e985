"""OP-7.108: two processes compiled the same Triton kernel into one cache directory and one lost the race.

Why a rule of its own: Triton keeps compiled kernels in a cache directory (~/.triton/cache unless TRITON_CACHE_DIR
moves it), one folder per kernel key, and vLLM's tensor-parallel workers are separate processes compiling the same
kernels (fused MoE, LoRA's, attention's) at the same moment. Triton wrote each file to a temporary name
(`fused_moe_kernel.json.tmp.pid_72_…`) and renamed it, and a concurrent writer could remove or replace what another
was about to read: `FileNotFoundError` on a `.tmp.pid_` path (vllm-project/vllm#6103, where a vLLM maintainer traced
it to Triton's cache with TP>1; triton-lang/triton#2688). Triton fixed the race by writing each group into a
temporary directory (triton-lang/triton PR #4295, merged July 2024; #3544 before it); IBM's vLLM image gave each
process its own cache directory instead (IBM/vllm PR #35). A cache shared over a network filesystem races across
nodes even so (triton-lang/triton#11512, open): a node-local TRITON_CACHE_DIR avoids it (PrimeIntellect-ai/prime-rl
PR #2305).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity


def _check_triton_cache(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.TRITON_CACHE_RACE)
    if not events:
        return []
    event = events[0]
    kernel = event.message or "a kernel"
    return [
        RULE_TRITON_CACHE.finding(
            Severity.HIGH,
            f"two processes compiled Triton's {kernel} into one cache directory at once and one lost its file: "
            "Triton's cache race",
            summary="vLLM's workers (one process per GPU) compile the same Triton kernels at the same time into "
            f"Triton's cache ({event.component or '~/.triton/cache'}). Triton of mid-2024 and before could remove a "
            "temporary file another process was about to rename, and that process failed; a cache on a network "
            "filesystem shared by several nodes races even in later releases.",
            evidence=[c.log_evidence(event, name="file lost in Triton's cache", value=kernel)],
            changes=[
                ConfigChange(
                    flag="TRITON_CACHE_DIR",
                    proposed="<a node-local directory, e.g. /tmp/triton-cache>",
                    reason="a cache on local disk is not shared across nodes over a network filesystem",
                    cost="kernels compile again once per node",
                    kind="env",
                )
            ],
            actions=[
                "Upgrade to a Triton with triton-lang/triton PR #4295 (merged July 2024), which writes each "
                "kernel's files into a temporary directory: that comes with a newer vLLM and the torch it pins.",
                "Starting again usually works: the kernels the first start compiled are in the cache, and the race "
                "is only between two first compilations of one kernel.",
            ],
            confidence=0.8,
        )
    ]


RULE_TRITON_CACHE = Rule(
    code="OP-7.108",
    title="Triton's kernel cache raced between vLLM's processes",
    category=Category.STARTUP,
    check=_check_triton_cache,
    needs=("events",),
    page=RulePage(
        checks="`FileNotFoundError: [Errno 2] No such file or directory: '…/.triton/cache/<key>/<kernel>.<ext>.tmp"
        ".pid_…'`.",
        why="Tensor-parallel workers compile the same Triton kernels at once into one cache; older Tritons lost "
        "files between them, and a cache on a shared network filesystem still can.",
        example="vllm#6103: Triton LoRA kernels and fused_moe_kernel with TP>1, July 2024.",
        fix="A Triton with PR #4295 (a newer vLLM); a node-local TRITON_CACHE_DIR; a second start.",
        limits="The Triton version is not in the error; `pip show triton` says it.",
        references=[
            "https://github.com/vllm-project/vllm/issues/6103",
            "https://github.com/triton-lang/triton/pull/4295",
            "https://github.com/IBM/vllm/pull/35",
            "https://github.com/PrimeIntellect-ai/prime-rl/pull/2305",
        ],
    ),
)

RULES: list[Rule] = [RULE_TRITON_CACHE]
