"""OP-7.144: a package vLLM imports for one feature only (a KV connector, an all-to-all backend, a kernel library)
is missing, or a package vLLM's own source build needs is.

Why a rule of its own: vLLM's requirements leave out the libraries of features most servers never turn on, and not
all of them sit under an extra of its package (OP-7.29 reads those): the KV connectors import their transfer
library when the connector is built (NixlConnector through vllm/distributed/nixl_utils.py, `nixl`, or `nixl_rocm` on
ROCm; `rixl` in earlier ROCm releases: vllm#41637 found vllm-openai-rocm:v0.20.1 without it; LMCacheConnectorV1
`lmcache`; MooncakeConnector `mooncake`), the expert-parallel all-to-all backends import DeepEP (`deep_ep`,
model_executor/layers/fused_moe/prepare_finalize/deepep_*.py), ROCm's
AITER kernels `aiter`, ModelScope downloads `modelscope` (VLLM_USE_MODELSCOPE, transformers_utils/config.py), the
Mistral tokenizer mode `mistral_common` (tokenizers/mistral.py): all read in the 0.32 wheel. Python's `No module
named 'nixl'` says none of that; the flag that turned the feature on is what to change.

A source build of vLLM imports setuptools_scm in its setup.py for its version; `pip install --no-build-isolation`
does not install the build's requirements, so they must be installed first (vllm PR #12382 added that step to the
Gaudi guide after `No module named 'setuptools_scm'`).
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Evidence, Finding, Rule, RulePage, Severity


class FeatureModule(BaseModel):
    """What a missing module means: the feature that imports it, what turned the feature on, how to install it."""

    feature: str
    turned_on_by: str
    install: str


FEATURE_MODULES: dict[str, FeatureModule] = {
    "nixl": FeatureModule(
        feature="NixlConnector (prefill/decode disaggregation over NIXL)",
        turned_on_by='--kv-transfer-config with "kv_connector": "NixlConnector"',
        install="`pip install nixl` in the server's environment (vLLM's CUDA image ships it)",
    ),
    "nixl_rocm": FeatureModule(
        feature="NixlConnector on ROCm",
        turned_on_by='--kv-transfer-config with "kv_connector": "NixlConnector"',
        install="the ROCm build of NIXL (nixl_rocm) in the server's image",
    ),
    "rixl": FeatureModule(
        feature="NixlConnector on ROCm (RIXL, the ROCm port of NIXL)",
        turned_on_by='--kv-transfer-config with "kv_connector": "NixlConnector"',
        install="RIXL built into the image: vllm/vllm-openai-rocm:v0.20.1 did not ship it (vllm#41637), while the "
        "CUDA image ships NIXL",
    ),
    "lmcache": FeatureModule(
        feature="LMCache's KV connector",
        turned_on_by='--kv-transfer-config with "kv_connector": "LMCacheConnectorV1"',
        install="`pip install lmcache` of the release made for this vLLM (LMCache's compatibility table)",
    ),
    "mooncake": FeatureModule(
        feature="Mooncake's KV connector or store",
        turned_on_by='--kv-transfer-config with a Mooncake connector ("MooncakeConnector", "MooncakeStoreConnector")',
        install="`pip install mooncake-transfer-engine`",
    ),
    "deep_ep": FeatureModule(
        feature="DeepEP's all-to-all for expert parallelism",
        turned_on_by="--all2all-backend deepep_high_throughput or deepep_low_latency",
        install="DeepEP (deepseek-ai/DeepEP) built for this torch and CUDA, or another --all2all-backend",
    ),
    "aiter": FeatureModule(
        feature="AMD's AITER kernels",
        turned_on_by="VLLM_ROCM_USE_AITER=1 (or a backend that needs AITER)",
        install="vLLM's ROCm image (it builds AITER) or AITER built from ROCm/aiter, or VLLM_ROCM_USE_AITER=0",
    ),
    "modelscope": FeatureModule(
        feature="downloads from ModelScope instead of the Hugging Face Hub",
        turned_on_by="VLLM_USE_MODELSCOPE=True",
        install="`pip install modelscope`, or unset VLLM_USE_MODELSCOPE to download from the Hugging Face Hub",
    ),
    "mistral_common": FeatureModule(
        feature="Mistral's own tokenizer",
        turned_on_by="--tokenizer-mode mistral (and Mistral's checkpoint format)",
        install="`pip install 'mistral_common[image]'` (recent vLLM requires it; older releases did not)",
    ),
}

# setup.py's build-time imports: the build's requirements, which pip installs only with build isolation
BUILD_MODULES = ("setuptools_scm",)
# Modules a dependency imports at run time without requiring them: Triton's runtime/build.py imports setuptools (its
# package lists it only for building: triton-lang/triton#5090), and an environment made by `uv venv` (without
# --seed) or Python 3.12's venv has none (vllm#17529: vLLM's model inspection importing Triton; vllm PR #8510)
UNDECLARED_MODULES: dict[str, str] = {
    "setuptools": "Triton (vLLM's kernels and torch.compile import it), whose runtime/build.py imports setuptools at "
    "run time while its package requires it only to build",
}

# Stricter than rules.events.MISSING_MODULE on purpose: the name must close its quote, so `No module named
# 'rixl.foo'` (rixl installed, a submodule missing: another release) is not read as rixl missing
MISSING = re.compile(r"No module named '(?P<module>[A-Za-z_]\w*)'")


def _module_of(facts: Facts) -> tuple[LogEvent, str] | None:
    """The first unplaced error naming a missing module of the table or of the build."""
    found = c.first_match(facts, MISSING)
    if found is None:
        return None
    event, match = found
    name = match["module"]
    known = name in FEATURE_MODULES or name in BUILD_MODULES or name in UNDECLARED_MODULES
    return (event, name) if known else None


def _check(facts: Facts) -> list[Finding]:
    found = _module_of(facts)
    if found is None:
        return []
    event, name = found
    evidence = [c.log_evidence(event, name="missing module", value=name)]
    if name in BUILD_MODULES:
        return [
            RULE.finding(
                Severity.CRITICAL,
                f"building vLLM from source needs {name}, one of its build requirements, and it is not installed",
                summary="vLLM's setup.py imports it before anything is compiled; pip installs a project's build "
                "requirements only with build isolation, and vLLM's guides build with --no-build-isolation against "
                "the installed torch.",
                evidence=evidence,
                actions=[
                    "Install the build's requirements first, from the source tree: `pip install -r "
                    "requirements/build.txt` (requirements-build.txt in older trees; a device's guide, Gaudi's in "
                    "vllm PR #12382, adds its own file), then `pip install -e . --no-build-isolation`.",
                ],
                confidence=0.8,
            )
        ]
    if name in UNDECLARED_MODULES:
        return [_undeclared_finding(name, evidence)]
    module = FEATURE_MODULES[name]
    return [
        RULE.finding(
            Severity.CRITICAL,
            f"{name} is not installed: vLLM imports it only for {module.feature}, which {module.turned_on_by} turns on",
            summary=f"vLLM's requirements leave {name} out: a server that does not use {module.feature} never imports "
            "it, so it is missing from most installs and images, and the feature fails where it first loads.",
            evidence=evidence,
            actions=[
                f"Install it: {module.install}; then restart.",
                f"Or leave the feature off: drop {module.turned_on_by}.",
            ],
            confidence=0.8,
        )
    ]


def _undeclared_finding(name: str, evidence: list[Evidence]) -> Finding:
    return RULE.finding(
        Severity.CRITICAL,
        f"{name} is not installed: {UNDECLARED_MODULES[name]}",
        summary=f"pip installs what packages require; nothing requires {name} at run time, and an environment "
        "created by `uv venv` (without --seed) or by Python 3.12's venv starts without it, so the import fails where "
        "vLLM first loads Triton (model inspection, a kernel, torch.compile).",
        evidence=evidence,
        actions=[
            f"Install it in the server's environment: `pip install {name}` (or `uv pip install {name}`; `uv venv "
            "--seed` creates environments with it); then restart.",
        ],
        confidence=0.8,
    )


RULE = Rule(
    code="OP-7.144",
    title="a package vLLM imports for one feature only, or for its source build, is missing",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="Python's `No module named 'X'` for a package vLLM imports only for one feature (NIXL and RIXL, "
        "LMCache, Mooncake, DeepEP, AITER, ModelScope, mistral_common) or for its build (setuptools_scm).",
        why="The message names a package; the fix is the flag that turned its feature on, or installing it.",
        example="`ModuleNotFoundError: No module named 'rixl'` in vllm/vllm-openai-rocm:v0.20.1 with NixlConnector "
        "(vllm#41637); `No module named 'setuptools_scm'` building for Gaudi (vllm PR #12382).",
        fix="Install the package (the feature's install line), or turn the feature off.",
        limits="Packages of vLLM's extras are OP-7.29's; any other missing package is VC-2's.",
        references=[
            "https://github.com/vllm-project/vllm/issues/41637",
            "https://github.com/vllm-project/vllm/pull/12382",
        ],
    ),
)

RULES: list[Rule] = [RULE]
