"""OP-7.211: a FlashAttention version this GPU cannot run.

Why a rule of its own: vLLM's FlashAttention backend picks a version of its bundled flash-attention per GPU (FA3 on
Hopper, FA2 elsewhere from Ampere on) and says `Cannot use FA version N is not supported due to <reason>` when the
version it was to use does not run on the GPU (vllm/attention/backends/utils.py in 0.7-0.8, fa_utils.py later; the
reason is flash-attention's own `_is_fa2_supported` / `_is_fa3_supported` text, which in 0.7.3-0.8.1 gave FA3's reason
for FA2 too). The two versions mean different things:

- FA2 below compute capability 8.0 (a T4, a V100): FlashAttention does not exist there. vLLM picks another attention
  backend where its release has one (V0's xformers; later V1's FlexAttention or Triton kernels: MinerU#3705 runs on a
  Colab T4 with this line in its log), so the line alone is not the failure (vllm#15853 is such a report).
- FA3 where the GPU is not a Hopper: vLLM only chooses FA3 by itself on sm_90, so it was forced
  (VLLM_FLASH_ATTN_VERSION=3), and the backend's assertion follows. FA3 does not target Blackwell's sm_120 and FA2
  runs there (Dao-AILab/flash-attention#1853, the maintainer's answer for an RTX PRO 4500).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# The check that fails after a forced version was refused: 0.7-0.12's `Unsupported FA version: None` and V1's
# backend asserting it (`FlashAttention version not detected.`)
_VERSION_CHECK = re.compile(r"Unsupported FA version|FlashAttention version not detected")
# flash-attention's reason when the build, not the GPU, lacks the version (its own spelling, `unavaible`)
_NOT_BUILT = re.compile(r"unava\w*ble due to")


def _fa_version_finding(facts: Facts, event: LogEvent, _words: re.Match[str]) -> Finding:
    version, why = event.version or "3", event.message or "flash-attention's check"
    if version == "2":
        return _fa2_refused(event)
    lacks = "this vLLM build has no FA3" if _NOT_BUILT.search(why) else "FA3 does not run on this GPU"
    return RULE.finding(
        Severity.CRITICAL,
        f"FlashAttention 3 was forced and {lacks}: let vLLM choose the version",
        summary="vLLM chooses FA3 by itself only on a Hopper (sm_90) whose build has it, and FA2 on the other GPUs "
        "from Ampere on, so FA3 here was asked for: VLLM_FLASH_ATTN_VERSION=3 in the server's environment (0.12 "
        "and before), or --attention-config.flash_attn_version=3 (0.13 on). flash-attention says why it refuses, "
        "and the backend's check then stops the engine. FA3 does not target Blackwell's sm_120 (RTX 50xx, RTX PRO) "
        "and FA2 serves it (Dao-AILab/flash-attention#1853).",
        evidence=[
            c.log_evidence(event, name="FlashAttention's refusal", value=why),
            *c.consequences(facts, _VERSION_CHECK, "the backend's check that follows"),
        ],
        changes=[
            ConfigChange(
                flag="VLLM_FLASH_ATTN_VERSION",
                proposed="",
                reason="unset, vLLM picks the version this GPU runs (FA2 outside Hopper)",
                kind="env",
            )
        ],
        actions=[
            "Remove VLLM_FLASH_ATTN_VERSION from the server's environment (or set it to 2), or drop flash_attn_version "
            "from --attention-config (or pass --attention-config.flash_attn_version=2), and restart.",
        ],
        confidence=0.85,
    )


def _fa2_refused(event: LogEvent) -> Finding:
    why = event.message or ""
    below_ampere = "compute capability >= 8" in why  # FA2's reason, or FA3's text that 0.7.3-0.8.1 gave for FA2
    if "No module named" in why:  # the extension itself missing: the install, not the GPU
        return _fa2_not_installed(event, why)
    gpu = "this GPU (compute capability below 8.0)" if below_ampere else f"this GPU or build ({why})"
    return RULE.finding(
        Severity.LOW,
        f"FlashAttention 2 does not run on {gpu}: vLLM uses another attention backend",
        summary=(
            "FlashAttention needs an Ampere GPU or later (compute capability 8.0); on a T4 or a V100 "
            if below_ampere
            else "vLLM's bundled FlashAttention 2 was not built for this GPU (its own reason is quoted); "
        )
        + "vLLM logs this when it checks, and picks another attention backend where its release has one (V0's "
        "xformers; later V1 releases' FlexAttention or Triton kernels, MinerU#3705 on a Colab T4). The line is "
        "vLLM's own check, not the failure: an engine that stops afterwards says why in the lines after it.",
        evidence=[c.log_evidence(event, name="FlashAttention's refusal", value=why or None)],
        actions=[
            "If the server then runs, nothing to do: the attention backend it chose is in its log (`Using … backend`).",
            "If the engine stops after this line, triage the error that follows; on a release whose V1 engine had no "
            "backend for this GPU, serve with a newer vLLM (or V0, VLLM_USE_V1=0, on releases that still had it).",
        ],
        confidence=0.7,
    )


def _fa2_not_installed(event: LogEvent, why: str) -> Finding:
    return RULE.finding(
        Severity.HIGH,
        "vLLM's compiled FlashAttention extension is missing from this install: FA2 cannot load",
        summary=f"flash-attention could not import its compiled module ({why}): the installed vLLM lacks the "
        "FlashAttention build its released wheels carry (a source build made without it, or a package copied from "
        "another platform). vLLM may fall back to another attention backend, but the install is incomplete.",
        evidence=[c.log_evidence(event, name="FlashAttention's refusal", value=why)],
        actions=[
            "Reinstall vLLM from its released wheel for this CUDA (`pip install --force-reinstall vllm`), or rebuild "
            'from source with its FlashAttention extension, and check `python -c "import '
            "vllm.vllm_flash_attn._vllm_fa2_C\"` in the server's environment.",
        ],
        confidence=0.75,
    )


RULE = Rule(
    code="OP-7.211",
    title="a FlashAttention version this GPU cannot run",
    category=Category.STARTUP,
    check=c.on_kind(LogEventKind.FA_VERSION_UNSUPPORTED, _fa_version_finding),
    needs=("events",),
    page=RulePage(
        checks="vLLM's `Cannot use FA version N is not supported due to …` (and the same words without `Cannot "
        "use`), with flash-attention's reason, for FA2 and FA3.",
        why="FA2 below compute capability 8.0 is vLLM's check before it picks another backend; FA3 outside Hopper "
        "is a forced version (VLLM_FLASH_ATTN_VERSION, or the attention config's) that stops the engine.",
        example="`FA version 3 is not supported due to FA3 is only supported on devices with compute capability >= 8 "
        "excluding 8.6 and 8.9 and Blackwell archs (>=10)` on an RTX PRO 4500 (sm_120): FA2 runs there "
        "(Dao-AILab/flash-attention#1853).",
        fix="Unset VLLM_FLASH_ATTN_VERSION (drop --attention-config.flash_attn_version); below sm_80, nothing "
        "unless the engine stops (then a release with a backend for the GPU).",
        limits="The GPU is not in the line; a forced version is read from the version the line names, not from the "
        "environment.",
        references=[
            "https://github.com/Dao-AILab/flash-attention/issues/1853",
            "https://github.com/vllm-project/vllm/issues/15853",
            "https://github.com/opendatalab/MinerU/issues/3705",
        ],
    ),
)

RULES: list[Rule] = [RULE]
