"""OP-7.109: NIXL, vLLM's KV transfer for disaggregated prefill, failed in its UCX backend.

Why a rule of its own: vLLM's NixlConnector moves the KV cache between prefill and decode instances through NIXL,
whose default backend is UCX, and NIXL reports any failure of UCX as one status, `NIXL_ERR_BACKEND` (its Python
binding raises `nixlBackendError`; Dynamo logs it bare). The cause is in UCX's own lines, and the threads show the
same two: a UCX without CUDA support loaded, so GPU memory cannot be registered (UCX's `transports 'cuda_ipc',
'cuda_copy' are not available`: LMCache/LMCache#605 under vLLM's EngineCore; ai-dynamo/nixl#177, where registering
DRAM worked and VRAM did not), or a UCX older than the one NIXL was built against (`UCP version is incompatible,
required: 1.18, actual: 1.12`, sgl-project/sglang#5709). NIXL's wheel bundles its own UCX (ai-dynamo/nixl#616, a
maintainer); a system UCX or HPC-X found first on the library path replaces it, and vLLM's issue #32375 traced a crash
to such a mix (its reporter confirmed rebuilding NIXL cured it; PR #32379 proposed detecting the mix).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

NIXL_STATUS = "NIXL_ERR_BACKEND"  # as another program's logger writes it (Dynamo's), a line VC-4 keeps
_CAUSES = {
    "ucx_no_cuda": "the UCX it loaded has no CUDA transports (cuda_copy, cuda_ipc), so GPU memory cannot be "
    "registered: a UCX built without CUDA, or a system one found before the UCX NIXL's wheel bundles",
    "ucx_version": "the UCX it loaded ({version}) is older than the one NIXL requires: an image that ships an older "
    "UCX, or a system UCX or HPC-X found before the UCX NIXL's wheel bundles",
}


def _check_nixl(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.NIXL_BACKEND_ERROR)
    logged = [e for e in facts.events_of(LogEventKind.UNPLACED_LINE) if NIXL_STATUS in (e.message or "")]
    cause = next((e for e in events if e.message in _CAUSES), None)
    # the status, or a cause pasted without it (nixlbench and NIXL's agent print the UCX version check alone)
    failed = next((e for e in events if e.message == "backend"), None) or next(iter(logged), None) or cause
    if failed is None:
        return []
    why = _CAUSES[cause.message or ""].format(version=cause.version or "?") if cause else None
    shown = [failed] if cause is None or cause is failed else [failed, cause]
    evidence = [c.log_evidence(e, name="NIXL and UCX", value=e.raw or e.message) for e in shown]
    return [
        RULE_NIXL.finding(
            Severity.CRITICAL if cause else Severity.HIGH,
            ("NIXL's UCX backend failed (NIXL_ERR_BACKEND): " if failed is not cause else "NIXL's UCX backend: ")
            + (why or "UCX's own lines above it say why"),
            summary="vLLM's NixlConnector moves the KV cache between prefill and decode instances through NIXL, whose "
            "UCX backend registers the GPUs' memory and connects the instances; "
            + (
                "NIXL reports any failure of UCX as NIXL_ERR_BACKEND, so the cause is in UCX's lines (its WARN and "
                "ERROR lines before it)."
                if failed is not cause
                else "the line names what UCX lacks, and NIXL's backend cannot start without it."
            ),
            evidence=evidence,
            changes=[
                ConfigChange(
                    flag="UCX_LOG_LEVEL",
                    proposed="info",
                    reason="UCX then prints the transports and devices it chose, and why one failed",
                    cost="more log at start",
                    kind="env",
                )
            ],
            actions=[
                "See which UCX the process loads and what it supports: `ucx_info -v` and `ucx_info -d | grep -i cuda` "
                "in the server's environment, and LD_LIBRARY_PATH: NIXL's wheel bundles its own UCX, and a system "
                "UCX or HPC-X earlier on the path replaces it.",
                "Keep one UCX: take the system one off LD_LIBRARY_PATH (or LD_PRELOAD) so NIXL's bundled one loads, "
                "or build NIXL against the system UCX, with CUDA support (vllm#32375: rebuilding NIXL cured a mix).",
                *_image_ucx_action(cause),
            ],
            confidence=0.75 if cause else 0.55,
        )
    ]


def _image_ucx_action(cause: LogEvent | None) -> list[str]:
    """For a UCX older than NIXL's: an image may ship no newer one to switch to."""
    if cause is None or cause.message != "ucx_version":
        return []
    return [
        "An image that ships only the older UCX needs a newer one built in (ai-dynamo/nixl#1023: Dynamo's vLLM "
        "runtime image had UCX 1.16.0, and rebuilding it with UCX 1.19.0 fixed NIXL)."
    ]


RULE_NIXL = Rule(
    code="OP-7.109",
    title="NIXL's UCX backend failed (disaggregated prefill's KV transfer)",
    category=Category.STARTUP,
    check=_check_nixl,
    needs=("events",),
    page=RulePage(
        checks="`NIXL_ERR_BACKEND` (nixlBackendError), with UCX's `transports 'cuda_ipc','cuda_copy' are not "
        "available` or `UCP version is incompatible, required: X, actual: Y` when pasted.",
        why="NIXL reports every UCX failure with one status; UCX's own lines name a UCX without CUDA or an older UCX "
        "loaded instead of the one NIXL bundles.",
        example="LMCache#605: vLLM's EngineCore failing to start with NIXL_ERR_BACKEND after UCX found no CUDA "
        "transports.",
        fix="One UCX with CUDA support: NIXL's bundled one (the system's off the library path), or NIXL built "
        "against the system's.",
        limits="Without UCX's lines the cause is not in the text; UCX_LOG_LEVEL=info prints them.",
        references=[
            "https://github.com/LMCache/LMCache/issues/605",
            "https://github.com/ai-dynamo/nixl/issues/177",
            "https://github.com/ai-dynamo/nixl/issues/616",
            "https://github.com/sgl-project/sglang/issues/5709",
            "https://github.com/vllm-project/vllm/issues/32375",
        ],
    ),
)

RULES: list[Rule] = [RULE_NIXL]
