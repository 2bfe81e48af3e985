"""OP-7.181: code ran a part of vLLM outside the configuration context vLLM sets around its own work.

Why a rule of its own: vLLM's layers and custom ops read the engine's configuration from a context
(`set_current_vllm_config(...)`) that vLLM sets while it builds and loads the model. Code that drives those parts
itself, above all RL frameworks that reload weights into a running engine ("refit"), calls them outside it: vLLM 0.8
to 0.13 logged `Current vLLM config is not set.` and went on with a default configuration, and from 0.14 it raises
an AssertionError that says so (the catalog: vllm/config.py, vllm/config/__init__.py, vllm/config/vllm.py).
NVIDIA-NeMo/RL PR #3168: newer vLLM requires `process_weights_after_loading()` to run under set_current_vllm_config(),
and NeMo RL's collective refit did not set it, so every worker failed the weight update; the merged fix wraps the
call in the context. vLLM's own paths have missed it too: vllm#30240 (the warning filling the log during FlashInfer's
warm-up, which its reporter traced to vllm PR #26315).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

NOT_SET = re.compile(r"Current vLLM config is not set\.")


def _context_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    warned = event.level in ("WARNING", "WARN") and "AssertionError" not in (event.message or "")
    return RULE_CONFIG_CONTEXT.finding(
        Severity.LOW if warned else Severity.HIGH,
        "vLLM's layers or custom ops ran outside vLLM's configuration context (set_current_vllm_config): a "
        "framework calling them itself, or a vLLM path that missed it",
        summary="vLLM sets its configuration as a context while it builds, loads and warms up the model; code that "
        "runs model code outside it (a framework reloading weights into a running engine, a custom op built at "
        "import, or one of vLLM's own paths that forgot the context) gets no configuration. vLLM 0.8 to 0.13 warn "
        "and fall back to a default one; vLLM 0.14 and later stop with an AssertionError."
        + (" Here it is a warning: the work went on." if warned else ""),
        evidence=[c.log_evidence(event, name="vLLM's words", value=match.group(0))],
        actions=[
            "Look at the frames above vLLM's in the traceback (or what ran just before the line). A framework's "
            "call (an RL trainer's weight refit, a plugin): wrap it in vLLM's context, `from vllm.config import "
            "set_current_vllm_config` and `with set_current_vllm_config(vllm_config): "
            "model.process_weights_after_loading(...)` (NVIDIA-NeMo/RL PR #3168 did this for its refit), or install "
            "the framework release written for the installed vLLM.",
            "Only vLLM's own frames (its warm-up, its CPU backend): vLLM's bug, not a setting; the warning during "
            "FlashInfer's warm-up came with a vLLM change (vllm#30240, PR #26315). Upgrade vLLM if it stops the "
            "engine.",
        ],
        confidence=0.7,
    )


RULE_CONFIG_CONTEXT = Rule(
    code="OP-7.181",
    title="vLLM's layers ran outside vLLM's configuration context",
    category=Category.CONFIGURATION,
    check=c.on_phrase(NOT_SET, _context_finding, kinds=(*c.UNPLACED, LogEventKind.VLLM_MESSAGE)),
    needs=("events",),
    page=RulePage(
        checks="vLLM's `Current vLLM config is not set.` (logged by 0.8 to 0.13, an AssertionError from 0.14 on).",
        why="A framework's weight reload or custom op fails (or runs with a default configuration) inside vLLM's "
        "code, which reads like vLLM's fault; vLLM's own paths have missed the context too.",
        example="`Current vLLM config is not set.` on every vLLM worker of a NeMo RL GRPO run during its weight "
        "refit (NVIDIA-NeMo/RL PR #3168: process_weights_after_loading() outside set_current_vllm_config()).",
        fix="`with set_current_vllm_config(vllm_config):` around the call in the calling code, or matching releases "
        "of the framework and vLLM.",
        limits="The words do not name the caller; the traceback's frames above vLLM's do.",
        references=["https://github.com/NVIDIA-NeMo/RL/pull/3168", "https://github.com/vllm-project/vllm/issues/30240"],
    ),
)

RULES: list[Rule] = [RULE_CONFIG_CONTEXT]
