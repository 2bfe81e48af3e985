"""OP-7.29: a package one of vLLM's extras installs is missing: the feature that imports it fails at first use.
OP-7.58: a package a model's remote code imports is missing.

Why a rule of its own: vLLM keeps the libraries of some features out of its own requirements and lists them under
extras of its package (`pip install 'vllm[video]'` installed decord, `vllm[audio]` librosa and soundfile, in the
releases whose METADATA says so). It imports them lazily (a placeholder module whose first attribute access
imports the real one), so the server starts without them and the first request that needs one fails:
`ModuleNotFoundError: No module named 'decord'` inside an HTTP 500 for a video request (QwenLM/Qwen3-VL#806). Python's
words, no vLLM message; the catalog's `extras` table (every release's METADATA, scripts/extract_vllm_messages.py)
says which extra installs the package and in which releases.

OP-7.58: a model served with --trust-remote-code brings Python files of its own (its configuration, processor or
modeling code), and transformers checks every package such a file imports before loading it
(`dynamic_module_utils.check_imports`: `This modeling file requires the following packages that were not found in
your environment: flash_attn. Run `pip install flash_attn``). It reads the imports from the file's text, conditional
ones included (huggingface/transformers#28459), so a package the model only uses optionally is required too (the
mdlm maintainers: "you still need to install it even though the model doesn't use it", kuleshov-group/mdlm#28);
and a package that is installed but fails to import reads the same (Kangaroo#9: flash_attn 2.5.5 in `pip list`).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import MISSING_MODULE, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_missing_extra(facts: Facts) -> list[Finding]:
    event = next((e for e in facts.events_of(LogEventKind.UNPLACED_ERROR) if e.vllm_extra), None)
    return [_finding(event)] if event is not None else []


def _finding(event: LogEvent) -> Finding:
    named = MISSING_MODULE.search(event.message or "")
    package = named["module"].split(".")[0] if named else "the package"
    extra, releases = event.vllm_extra, event.extra_releases or "some releases"
    evidence = c.log_evidence(event, name="missing module", value=package)
    evidence.description = f"Python could not import {package}, which vLLM's {extra} extra installs"
    return RULE_MISSING_EXTRA.finding(
        Severity.HIGH if event.phase == "serving" else Severity.CRITICAL,
        f"{package} is not installed: vLLM imports it only for the feature that needs it (its {extra} extra "
        "installs it)",
        summary=f"vLLM {releases} list {package} under the {extra} extra of its package, not among its requirements, "
        "and import it when a request or a setting first uses that feature: the server started without it and fails "
        "there.",
        evidence=[evidence],
        actions=[
            f"Install it in the server's environment (its image): `pip install 'vllm[{extra}]'` (vLLM {releases} "
            f"install {package} with that extra), or `pip install {package}`; then restart the server.",
            f"Or stop sending the input that needs it (the {extra} part of the requests) until it is installed.",
        ],
        confidence=0.85,
    )


RULE_MISSING_EXTRA = Rule(
    code="OP-7.29",
    title="a package one of vLLM's extras installs is missing",
    category=Category.STARTUP,
    check=_check_missing_extra,
    needs=("events",),
    page=RulePage(
        checks="Python's `No module named 'X'` where X is a package one of vLLM's extras installs in some release "
        "(the catalog's `extras` table, read from every release's METADATA).",
        why="vLLM imports the libraries of its optional features lazily; without them the server starts, and the "
        "first request or setting that uses the feature fails.",
        example="`ModuleNotFoundError: No module named 'decord'` in a video request's HTTP 500 (QwenLM/Qwen3-VL#806; "
        "vLLM 0.7's video extra installs decord).",
        fix="`pip install 'vllm[<extra>]'` (or the package itself) in the server's environment, then restart.",
        limits="Knows the packages of vLLM's extras only; another missing package is VC-2's.",
        references=["https://github.com/QwenLM/Qwen3-VL/issues/806"],
    ),
)

# --- OP-7.58 a package a model's remote code imports ---------------------------------------------------------------


def _check_remote_code_imports(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.REMOTE_CODE_IMPORTS)
    if not events:
        return []
    event = events[0]
    packages = event.message or "a package"
    names = [name.strip() for name in packages.split(",") if name.strip()]
    actions = [
        f"Install them where the server runs: `pip install {' '.join(names)}` (transformers reads the file's imports "
        "from its text, conditional ones too, so a package the model uses only optionally is required as well).",
        f"If `pip show {names[0] if names else 'the package'}` finds it installed, its import fails: `python -c "
        f'"import {names[0] if names else "it"}"` shows why (a build for another torch reads as an undefined '
        "symbol, OP-7.6).",
    ]
    if "flash_attn" in names:
        actions.insert(
            1,
            "flash_attn has compiled kernels: install the wheel built for the installed torch and CUDA (its releases "
            "list them), or build it against them (`pip install flash-attn --no-build-isolation`); vLLM does not need "
            "it, only the model's own file imports it.",
        )
    return [
        RULE_REMOTE_CODE_IMPORTS.finding(
            Severity.CRITICAL,
            f"the model's remote code imports {packages}, which the server's environment does not have",
            summary="The model's own Python files (trusted with --trust-remote-code) import packages transformers "
            "checks before loading them; one or more cannot be imported here, so the model does not load.",
            evidence=[c.log_evidence(event, name="remote code imports", value=packages)],
            actions=actions,
            confidence=0.85,
        )
    ]


RULE_REMOTE_CODE_IMPORTS = Rule(
    code="OP-7.58",
    title="a package a model's remote code imports is missing",
    category=Category.STARTUP,
    check=_check_remote_code_imports,
    needs=("events",),
    page=RulePage(
        checks="transformers' `This modeling file requires the following packages that were not found in your "
        "environment: X. Run `pip install X``, and the warning its check logs first, `Encountered exception while "
        "importing X: No module named 'X'`.",
        why="transformers checks every import of a remote-code file before it loads it, conditional ones included, "
        "and reads an installed package that fails to import as missing.",
        example="`… not found in your environment: flash_attn. Run `pip install flash_attn`` for a model whose "
        "modeling file imports flash_attn under a condition.",
        fix="The package installed where the server runs (flash_attn as the wheel for the installed torch and CUDA); "
        "an installed one that fails to import, its own error.",
        limits="Does not know whether the model needs the package on vLLM's path; transformers asks for it either way.",
        references=[
            "https://github.com/huggingface/transformers/issues/28459",
            "https://github.com/kuleshov-group/mdlm/issues/28",
            "https://github.com/vllm-project/vllm/pull/22514",
        ],
    ),
)

RULES: list[Rule] = [RULE_MISSING_EXTRA, RULE_REMOTE_CODE_IMPORTS]
