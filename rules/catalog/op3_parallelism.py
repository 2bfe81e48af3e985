"""OP-3: parallelism — tensor parallel over a slow link, and the failures of multi-GPU ranks.

TP all-reduces activations twice per layer per step; over PCIe (32–64 GB/s instead of NVLink's
300–900) that dominates small-batch decode, so ITL suffers (docs/reference.md §5: "high ITL with
one user → TP over PCIe or memory-bandwidth bound"). Rank failures show up as the PyTorch NCCL
watchdog text and vLLM's "Worker proc … died unexpectedly" lines. The TP-over-PCIe remedy
(`common.pcie_tp_changes`) is shared with OP-5 and AP-7.
"""

from __future__ import annotations

from rules import signals
from rules.catalog import common as c
from rules.catalog import floors
from rules.events import STARTUP_FAILURE_KINDS, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity
from rules.signals import fmt

# A start-up that already failed: workers that die after it are being shut down, not the cause.
_START_FAILED = (LogEventKind.ENGINE_CORE_FAILED, *STARTUP_FAILURE_KINDS)


# --- OP-3.1 tensor parallel over PCIe ----------------------------------------------------------


def _check_pcie_tp_itl(facts: Facts) -> list[Finding]:
    tp = c.tensor_parallel_size(facts)
    link = facts.hardware.interconnect if facts.hardware else None
    itl = signals.quantile(facts, c.ITL, "p50")
    if tp < 2 or link != "pcie" or itl is None or itl.value <= c.itl_slo(facts):
        return []
    floor = floors.decode_floor(facts)
    if floor is not None and itl.value <= floors.AT_FLOOR * floor.step_s:
        # The step takes about what its memory traffic plus all-reduces at NCCL's best need: the PCIe
        # traffic is not slowing it beyond physics, and fewer GPUs per replica would read more bytes each.
        return []
    evidence = [
        Evidence(source="config", name="--tensor-parallel-size", value=tp),
        Evidence(source="advisor", name="GPU interconnect", value=link),
        itl.evidence.model_copy(update={"threshold": c.itl_slo(facts), "comparison": ">", "unit": "s"}),
    ]
    changes, alternatives = c.pcie_tp_changes(facts, f"TP={tp} all-reduces over PCIe every layer")
    return [
        RULE_PCIE_TP.finding(
            Severity.HIGH,
            f"ITL p50 {fmt(itl.value, 3)} s > {fmt(c.itl_slo(facts), 3)} s with TP={tp} over PCIe",
            summary="Every decode step waits on all-reduces over PCIe.",
            evidence=evidence,
            changes=changes,
            alternatives=alternatives,
            confidence=0.7,
            actions=["Or move to NVLink-connected GPUs."],
        )
    ]


RULE_PCIE_TP = Rule(
    code="OP-3.1",
    title="tensor parallel over PCIe slows decode",
    category=Category.PARALLELISM,
    check=_check_pcie_tp_itl,
    needs=("window",),
    page=RulePage(
        checks="--tensor-parallel-size >= 2 on a PCIe interconnect, with windowed ITL p50 above the ITL target "
        f"(default {c.DEFAULT_ITL_SLO_S:g} s) and, when model and GPU are known, above {floors.AT_FLOOR:g}x the "
        "decode floor (weights and KV per GPU over its bandwidth plus the all-reduces at NCCL's best, "
        "docs/triage.md): at the floor the all-reduces are not what makes the step slow.",
        why="TP all-reduces twice per layer per step; PCIe is 5–15x slower than NVLink, and at small batch the "
        "step time is dominated by that traffic.",
        example=f"TP=2 on two L40S (PCIe Gen4), ITL p50 0.14 s > {c.DEFAULT_ITL_SLO_S:g} s -> --tensor-parallel-size 1 "
        "--data-parallel-size 2 when the model fits one GPU.",
        fix="If the model fits one GPU: TP=1 replicas (data parallel). Otherwise pipeline parallel across the "
        "PCIe GPUs, or NVLink hardware. With a ramp (or a live window) and the model and GPU known, triage "
        "proposes instead the layout of the same GPUs the performance model predicts to carry most within the "
        "SLOs, or keeps the current one (docs/triage.md, 'The layout of the GPUs').",
        limits="Uses p50 ITL; memory-bandwidth-bound models also show high ITL without TP.",
        references=["https://docs.vllm.ai/en/latest/serving/parallelism_scaling.html"],
    ),
)


# --- OP-3.2 NCCL watchdog timeout --------------------------------------------------------------


def _op(event) -> str:
    """The collective's type as the title's adjective (`a COALESCED collective`), when the text kept it."""
    return f"{event.op_type} " if event.op_type else ""


def _check_nccl_timeout(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.NCCL_WATCHDOG_TIMEOUT)
    if not events:
        return []
    first = next((e for e in events if e.ran_ms is not None), events[0])
    library = first.component or "NCCL"
    evidence = [c.log_evidence(first, f"{library} collective ran", first.ran_ms, first.timeout_ms, ">", "ms")]
    ranks = sorted({e.rank for e in events if e.rank is not None})
    ranked = f"on rank(s) {', '.join(map(str, ranks))}" if ranks else "(the rank is not in the text)"
    flags = facts.config.flags if facts.config else {}
    custom_off = "--disable-custom-all-reduce" in flags
    ascend = library == "HCCL"  # torch_npu's watchdog: neither vLLM's CUDA all-reduce kernel nor CUDA graphs
    return [
        RULE_NCCL.finding(
            Severity.CRITICAL,
            f"{library} {first.op_type or 'collective'} ran {fmt(first.ran_ms)} ms > timeout "
            f"{fmt(first.timeout_ms)} ms {ranked}"
            if first.ran_ms is not None
            # a line cut after its colon: the watchdog fired, how long the collective ran is not in the text
            else f"the {library} watchdog timed out a {_op(first)}collective {ranked}",
            summary="A rank stopped participating in a collective; the process group is taken down.",
            evidence=evidence,
            confidence=0.9,
            alternatives=[]
            if ascend
            else ([] if custom_off else [_without_custom_all_reduce()])
            + ([] if facts.config is not None and facts.config.enforce_eager else [_eager_collectives()]),
            actions=[
                "Find the rank that hung or died first (its log ends earliest).",
                "Check the NPUs' health (npu-smi info) and HCCL's settings (HCCL_CONNECT_TIMEOUT, HCCL_EXEC_TIMEOUT), "
                "and re-run with ASCEND_GLOBAL_LOG_LEVEL=1 for HCCL's own log."
                if ascend
                else "Check GPU health (Xid errors in dmesg), NCCL_P2P/IB settings, and re-run with NCCL_DEBUG=INFO.",
                "Restart the server: after a watchdog timeout the data may be corrupted.",
                "If no rank failed first and it recurs after hours or days of serving, upgrade vLLM: collectives "
                "that hang in a long-running server have been vLLM bugs fixed in later releases (an all-reduce "
                "hang of 0.3.1, fixed in 0.3.2: vllm#3071).",
            ],
        )
    ]


def _without_custom_all_reduce() -> ConfigChange:
    """NCCL for every all-reduce, to rule vLLM's own kernel out of a hang. Why offered on a timeout: the
    custom all-reduce kernel (peer-to-peer, for small tensors) has hung ranks in several releases, which
    then surfaces as the watchdog timing out the next NCCL collective (vllm#4653, 0.4.x: resolved by the
    flag); with it off, a timeout that remains is not the kernel's."""
    return c.custom_all_reduce_off(
        "rules out vLLM's custom all-reduce kernel, whose hangs surface as a timed-out NCCL collective "
        "on another rank; NCCL then does every all-reduce"
    )


def _eager_collectives() -> ConfigChange:
    """NCCL calls replayed inside CUDA graphs beside eager ones can deadlock (NCCL's documentation on CUDA
    graphs, NCCL_GRAPH_MIXING_SUPPORT); vllm#2770 (0.2.7, tensor parallel all-reduce timing out mid-serving)
    stopped with --enforce-eager, and vllm#2731's hang with running requests was in the same path."""
    return c.eager_mode(
        "NCCL collectives captured in CUDA graphs can deadlock against eager ones; without graphs every "
        "all-reduce is an ordinary NCCL call, so a timeout that remains is not graph capture's",
        cost="slower decode at small batches (kernel launches instead of graph replays)",
    )


RULE_NCCL = Rule(
    code="OP-3.2",
    title="NCCL watchdog timeout",
    category=Category.PARALLELISM,
    check=_check_nccl_timeout,
    needs=("events",),
    page=RulePage(
        checks="PyTorch's `Watchdog caught collective operation timeout: WorkNCCL(… Timeout(ms)=600000) ran for N "
        "milliseconds` on any rank (torch_npu's `WorkHCCL(…)` on Ascend, without the CUDA-only alternatives).",
        why="One rank stopped (hang, crash, link error); the others wait until the timeout, then abort.",
        example="[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=11, OpType=ALLREDUCE, …) "
        "ran for 600060 milliseconds before timing out.",
        fix="Find the first rank to fail and its cause; check GPU/NCCL health; restart. Unless it is already set, "
        "--disable-custom-all-reduce as the alternative that rules vLLM's own all-reduce kernel out, and "
        "--enforce-eager the one that rules CUDA-graph-captured collectives out (vllm#2770); an upgrade when it "
        "recurs in a long-running server with no rank failing first (vllm#3071: 0.3.1's hang, fixed in 0.3.2).",
        limits="The timeout names the victim, not the culprit.",
        references=["https://github.com/vllm-project/vllm/issues/3071"],
    ),
)


# --- OP-3.3 a worker or the engine core died ----------------------------------------------------


def _after_failed_start(facts: Facts, death) -> bool:
    """vLLM 0.32 prints `Worker proc VllmWorker-0 died unexpectedly (exit code: None)` while it shuts
    down after `EngineCore failed to start.`: that death follows the failure, it did not cause it."""
    return c.printed_after(facts, death, *_START_FAILED)


def _check_worker_died(facts: Facts) -> list[Finding]:
    events = [
        e
        for e in facts.events_of(LogEventKind.WORKER_DIED)
        if not _after_failed_start(facts, e) and not c.follows_engine_death(facts, e)
    ]
    if not events:
        return []
    first = events[0]
    code = f" (exit code {first.exit_code})" if first.exit_code is not None else ""
    actions = [
        "Read the dying process's last lines: OOM, NCCL error or a signal (exit code -9 = killed, often host OOM)."
    ]
    if first.exit_code in (-9, 137):
        actions.insert(0, "Exit code -9/137 is SIGKILL: check host memory (dmesg: Out of memory: Killed process).")
    return [
        RULE_WORKER_DIED.finding(
            Severity.CRITICAL,
            f"{first.process or 'a worker process'} died unexpectedly{code}",
            summary="A worker or engine-core process exited; the server shuts down.",
            evidence=[c.log_evidence(e) for e in events[:3]],
            confidence=0.9,
            actions=actions,
        )
    ]


RULE_WORKER_DIED = Rule(
    code="OP-3.3",
    title="worker or engine process died",
    category=Category.PARALLELISM,
    check=_check_worker_died,
    needs=("events",),
    fallback="failure",  # the death dates the failure; a finding that names its cause, as severe, explains it
    page=RulePage(
        checks="`Worker proc … died unexpectedly`, `Engine core proc … died unexpectedly`, `WorkerProc failed to "
        "start` / `hit an exception`, and V1's `Executor failed.` (raised only once its worker monitor saw a worker "
        "exit).",
        why="vLLM shuts the executor down when any rank exits.",
        example="Worker proc VllmWorker-1 died unexpectedly, shutting down executor. (exit code: -9)",
        fix="Read the dead process's last lines; SIGKILL usually means host memory ran out.",
        limits="The cause is in another line; this rule only dates the death, and yields to any finding as severe that "
        "names a cause. A death printed after a failed start-up (`EngineCore failed to start.`, a startup error) is "
        "the shutdown and is not reported.",
        references=[],
    ),
)


# --- OP-3.4 NCCL out of memory -----------------------------------------------------------------


def _check_nccl_oom(facts: Facts) -> list[Finding]:
    events = [e for e in facts.events_of(LogEventKind.NCCL_ERROR) if "out of memory" in (e.message or e.raw).lower()]
    if not events:
        return []
    util = c.gpu_memory_utilization(facts)
    change = ConfigChange(
        flag="--gpu-memory-utilization",
        current=c.util_text(util),
        proposed=c.util_text(util - c.UTIL_STEP),
        reason="NCCL allocates ~2 GiB per GPU outside vLLM's budget at TP >= 2",
        cost="a smaller KV cache",
    )
    eager = facts.config is not None and facts.config.enforce_eager
    return [
        RULE_NCCL_OOM.finding(
            Severity.CRITICAL,
            "NCCL failed with CUDA out of memory",
            evidence=[c.log_evidence(events[0])],
            summary="NCCL could not allocate its buffers: the GPU was filled up to the budget.",
            changes=[change],
            alternatives=[] if eager else [_eager_for_nccl()],
            confidence=0.8,
        )
    ]


def _eager_for_nccl() -> ConfigChange:
    """Why eager mode is the alternative: NCCL's buffers and, before 0.20, the CUDA graph pool are both
    allocated outside the share vLLM sized its KV cache with, and graph capture runs the collectives that
    make NCCL allocate; vLLM's maintainers answer V1's larger graph memory with --enforce-eager (vllm#18446)."""
    return c.eager_mode(
        "without CUDA graph capture, the graph pool (outside vLLM's budget before 0.20, and larger in V1 "
        "than in V0) leaves the GPU, and NCCL gets the memory its buffers need",
        cost="slower decode at small batches (kernel launches instead of graph replays); the KV cache keeps its size",
    )


RULE_NCCL_OOM = Rule(
    code="OP-3.4",
    title="NCCL out of GPU memory",
    category=Category.PARALLELISM,
    check=_check_nccl_oom,
    needs=("events",),
    page=RulePage(
        checks="`torch.distributed.DistBackendError: NCCL error … Cuda failure 'out of memory'`, with NCCL's "
        "`Cuda failure 'out of memory'` on the message's own line or on a line of its own under `Last error:`.",
        why="NCCL buffers (~2 GiB per GPU at TP >= 2) live outside vLLM's accounting.",
        example="NCCL error in: …NCCLUtils.cpp:…, unhandled cuda error … Last error: Cuda failure 'out of memory'",
        fix=f"Lower --gpu-memory-utilization by {c.UTIL_STEP:g}; or, keeping the KV cache, --enforce-eager (no CUDA "
        "graph pool outside the budget).",
        limits="Assumes no other process shares the GPU.",
        references=[],
    ),
)

RULES: list[Rule] = [RULE_PCIE_TP, RULE_NCCL, RULE_WORKER_DIED, RULE_NCCL_OOM]
