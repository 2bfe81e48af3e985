"""OP-5.29: vLLM gave up FlashAttention-2 for XFormers, and says why in one INFO line.

Why a rule of its own: V0's attention selector (vLLM 0.4 to 0.7: attention/selector.py, then platforms/cuda.py)
tries FlashAttention-2 on an NVIDIA GPU and falls back to XFormers, a slower kernel, for seven reasons, each
printed once at start as `Cannot use FlashAttention-2 backend …` at INFO level, so vLLM's message catalog (warnings
and errors) does not hold it and nothing else in the log says the server runs slower than it could. Some reasons
are the hardware's or the model's (nothing to change), some are a flag, and one is a package: before 0.6 the
kernels came as the separate `vllm-flash-attn` wheel, which PyPI has only for CUDA 12 (every release links
libcudart.so.12, and each pins one torch: 2.6.1 needs torch==2.4.0), so a CUDA 11.8 install has none; from 0.6 the
kernels are inside vLLM's wheel (`vllm.vllm_flash_attn`) and a build without them is a source build. Sources:
vLLM 0.5.4, 0.6.3 and 0.7.3 read; vllm#7254 and vllm#6639 (no vllm-flash-attn for CUDA 11.8).
"""

from __future__ import annotations

from typing import NamedTuple

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

SLIDING_WINDOW_FIXED_IN = "0.6.4"  # the first release whose selector keeps FlashAttention-2 for a sliding window


class Fallback(NamedTuple):
    """What one reason means and what to do about it."""

    severity: Severity
    cause: str
    actions: tuple[str, ...] = ()
    changes: tuple[ConfigChange, ...] = ()
    alternatives: tuple[ConfigChange, ...] = ()


def _package_missing(event: LogEvent, facts: Facts) -> Fallback:
    """Before 0.6 a separate wheel built for CUDA 12 only; from 0.6 part of vLLM's own wheel."""
    if "vllm.vllm_flash_attn" in (event.message or ""):
        return Fallback(
            Severity.MEDIUM,
            "this vLLM was built without its FlashAttention kernels (vllm.vllm_flash_attn)",
            actions=(
                "Install vLLM's released wheel for this CUDA, or rebuild from source with the FlashAttention "
                "kernels built (they are on by default; a build that turned them off or failed to build them "
                "leaves vllm/vllm_flash_attn empty).",
            ),
        )
    cuda = facts.last_event(LogEventKind.TORCH_CUDA_BUILD)
    on_cuda_11 = cuda is not None and (cuda.version or "").split(".")[0] == "11"
    return Fallback(
        Severity.MEDIUM,
        "the vllm-flash-attn package is not installed"
        + (f" and has no build for the CUDA {cuda.version} PyTorch here" if on_cuda_11 and cuda else ""),
        actions=(
            "Install the vllm-flash-attn package at the version this vLLM pins (`pip show vllm` lists it under "
            "Requires; not flash_attn, which vLLM does not import): its wheels are built for CUDA 12 only (they "
            "link libcudart.so.12) and each for one torch, so with a CUDA 11.8 build of torch and vLLM there is no "
            "build available and XFormers stays until the install moves to CUDA 12.",
        ),
    )


def _fp8_kv_cache(event: LogEvent, facts: Facts) -> Fallback:
    return Fallback(
        Severity.LOW,
        "FlashAttention-2 here cannot read an FP8 KV cache",
        changes=(
            ConfigChange(
                flag=c.ATTENTION_BACKEND_ENV,
                proposed="FLASHINFER",
                reason="vLLM's own advice from 0.6 on: FlashInfer reads an FP8 KV cache at better speed than XFormers",
                cost="FlashInfer must be installed for this vLLM and CUDA",
                kind="env",
            ),
        ),
        alternatives=(
            ConfigChange(
                flag="--kv-cache-dtype",
                current="fp8",
                proposed="auto",
                reason="FlashAttention-2 back",
                cost="the KV cache holds half as many tokens",
            ),
        ),
    )


def _dtype(event: LogEvent, facts: Facts) -> Fallback:
    return Fallback(
        Severity.LOW,
        "the model runs in float32, which FlashAttention-2 does not take",
        changes=(
            ConfigChange(
                flag="--dtype",
                proposed="bfloat16",
                reason="FlashAttention-2 back (this GPU reached the check, so it is compute capability 8.0 or newer "
                "and has bfloat16), half the weight memory",
                cost="bfloat16 numerics instead of float32",
                safety="unsafe",
            ),
        ),
    )


def _block_size(event: LogEvent, facts: Facts) -> Fallback:
    return Fallback(
        Severity.LOW,
        "--block-size is not a multiple of 16",
        changes=(ConfigChange(flag="--block-size", proposed="16", reason="FlashAttention-2 back (vLLM's default)"),),
    )


def _sliding_window(event: LogEvent, facts: Facts) -> Fallback:
    return Fallback(
        Severity.LOW,
        "the model uses sliding-window attention, which this vLLM's FlashAttention-2 path does not serve",
        actions=(
            f"Upgrade vLLM to {SLIDING_WINDOW_FIXED_IN} or later: its selector keeps FlashAttention-2 for a sliding "
            "window.",
        ),
    )


def _head_size(event: LogEvent, facts: Facts) -> Fallback:
    return Fallback(Severity.INFO, f"FlashAttention-2 has no kernel {event.message} (the model's)")


def _old_gpu(event: LogEvent, facts: Facts) -> Fallback:
    return Fallback(
        Severity.INFO,
        "FlashAttention-2 needs compute capability 8.0 (Ampere) or newer: on this GPU XFormers is vLLM's choice",
    )


_REASONS = (
    ("because", _package_missing),
    ("for FP8 KV cache", _fp8_kv_cache),
    ("for dtype", _dtype),
    ("for block size", _block_size),
    ("due to sliding window", _sliding_window),
    ("for head size", _head_size),
    ("for Volta and Turing", _old_gpu),
)


def _check_fallback(facts: Facts) -> list[Finding]:
    event = facts.last_event(LogEventKind.ATTENTION_FALLBACK)
    if event is None:
        return []
    reason = event.message or ""
    explain = next((explain for prefix, explain in _REASONS if reason.startswith(prefix)), None)
    return [_fallback_finding(event, explain(event, facts))] if explain else []


def _fallback_finding(event: LogEvent, fallback: Fallback) -> Finding:
    return RULE_ATTENTION_FALLBACK.finding(
        fallback.severity,
        f"attention runs on XFormers, not FlashAttention-2: {fallback.cause}",
        summary="vLLM's V0 attention selector tried FlashAttention-2 and fell back to XFormers, a slower kernel for "
        f"the same work; it says why in one INFO line at start ({event.message}). Nothing fails: the server is "
        "slower than this GPU allows.",
        evidence=[c.log_evidence(event, name="attention backend fallback")],
        changes=list(fallback.changes),
        alternatives=list(fallback.alternatives),
        actions=list(fallback.actions),
        confidence=0.8,
    )


RULE_ATTENTION_FALLBACK = Rule(
    code="OP-5.29",
    title="attention fell back from FlashAttention-2 to XFormers",
    category=Category.LATENCY,
    check=_check_fallback,
    needs=("events",),
    page=RulePage(
        checks="V0's `Cannot use FlashAttention-2 backend …` line (vLLM 0.4 to 0.7), read by its reason.",
        why="XFormers does the same attention more slowly; the reason says whether a flag, a package, the model or "
        "the GPU decided it.",
        example="`Cannot use FlashAttention-2 backend because the vllm_flash_attn package is not found` then `Using "
        "XFormers backend.` on vLLM 0.5.4 with torch 2.4.0+cu118: vllm-flash-attn has no CUDA 11.8 build "
        "(vllm#7254).",
        fix="By reason: the vllm-flash-attn version vLLM pins (CUDA 12 only) or vLLM's own wheel; "
        "VLLM_ATTENTION_BACKEND=FLASHINFER or `--kv-cache-dtype auto` for an FP8 KV cache; `--dtype bfloat16` for "
        f"float32; `--block-size 16`; vLLM {SLIDING_WINDOW_FIXED_IN}+ for a sliding window; nothing for a Volta or "
        "Turing GPU or the model's head size.",
        limits="V1 (the default from 0.8) chooses among its own backends and prints no such line; a pasted log from "
        "it is not read by this rule.",
        references=[
            "https://github.com/vllm-project/vllm/issues/7254",
            "https://github.com/vllm-project/vllm/issues/6639",
        ],
    ),
)

RULES: list[Rule] = [RULE_ATTENTION_FALLBACK]
