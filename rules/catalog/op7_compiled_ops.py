"""OP-7.78: vLLM's Python code calls one of its compiled ops with a signature the loaded extension does not have.

Why a rule of its own: vLLM's CUDA and C++ kernels are registered as PyTorch ops in its extensions (`_C`, `_moe_C`,
`_rocm_C` …), and its Python code calls them through torch.ops. When the Python files and the compiled extension
come from different vLLM sources, PyTorch's dispatcher refuses the call with the op's declared schema:
`_moe_C::topk_softmax() expected at most 6 argument(s) but received 7 argument(s). Declaration: …`, `… is missing
value for argument 'x'`, or `No such operator _C::x` for an op the extension lacks. That happens to a source checkout
pulled or patched without rebuilding its extensions, to an editable install with VLLM_USE_PRECOMPILED whose wheel
is from another commit, and to two vLLMs on one path. vllm#48979 met it on a pull request that added an argument to
topk_softmax: the commenter's extension predated the change. Nothing in the model or the flags causes it.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import NOT_REGISTERED, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

_NOT_LOADED = (
    "If the extension did not load at all, vLLM said why earlier, as a warning: `Failed to import from vllm._C with "
    "ImportError(…)` (an undefined symbol: another PyTorch than it was built for; a missing library), or the install "
    "holds no compiled extension (a source checkout never built: vllm#5454, where copying in the built _C.abi3.so "
    "and its siblings fixed it)."
)


def _check_compiled_ops(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.VLLM_OP_SCHEMA_MISMATCH)
    if not events:
        return []
    event = events[0]
    op = event.component or "a vLLM op"
    if (event.message or "").startswith("backend:"):
        return [_no_kernel_for_the_device(event, op)]
    return [
        RULE_COMPILED_OPS.finding(
            Severity.CRITICAL,
            f"vLLM's compiled extension does not provide `{op}()`: it did not load, or it is from another vLLM "
            "source than the Python code"
            if event.message == NOT_REGISTERED
            else f"vLLM's Python code and its compiled extension are from different sources: `{op}()` {event.message}",
            summary="vLLM calls its kernels as PyTorch ops registered by its compiled extensions; PyTorch refused "
            "the call because the op the extension registered has another signature (or none at all). The Python "
            "files were changed without rebuilding the extension: a checkout pulled or patched, an editable install "
            "whose precompiled wheel is from another commit, or a second vLLM earlier on the path.",
            evidence=[c.log_evidence(event, name="compiled op", value=op)],
            actions=[
                *([_NOT_LOADED] if event.message == NOT_REGISTERED else []),
                'Find which vLLM is imported and where its extension comes from: `python -c "import vllm, vllm._C; '
                'print(vllm.__file__, vllm._C.__file__)"`; two different trees is the cause.',
                "A source checkout: rebuild the extensions from the same commit (`pip install -e . "
                "--no-build-isolation`); an editable install with VLLM_USE_PRECOMPILED=1 (the installation guide's "
                "Python-only build) takes a precompiled wheel, which must be the one of that commit, or build instead.",
                "Otherwise reinstall one release into a fresh environment (`pip install vllm==<version>`), so its "
                "Python files and its extension are the ones built together.",
            ],
            confidence=0.8,
        )
    ]


def _no_kernel_for_the_device(event, op: str) -> Finding:
    """PyTorch's `Could not run '<op>' with arguments from the '<device>' backend`: the extension registered the op
    for other devices only (a ROCm build's HIP kernels on an NVIDIA host: vllm#13075; an x86-only CPU op on ARM:
    vllm#25155's `_C::onednn_mm`)."""
    backend, _, built_for = (event.message or "").removeprefix("backend:").partition("|")
    built = f" (it registered it for {built_for.replace(',', ', ')} only)" if built_for else ""
    return RULE_COMPILED_OPS.finding(
        Severity.CRITICAL,
        f"vLLM's compiled extension has no {backend} kernel for `{op}`{built}: "
        + ("it was built for another device" if built_for else "built for another device, or one that leaves it out"),
        summary="vLLM's kernels are PyTorch ops its extension registers per device; PyTorch found none for the "
        f"device the call ran on ({backend}). The installed vLLM's binary was built for another platform (a ROCm "
        "build on an NVIDIA host, a CUDA build on a CPU-only one), or the op is one this platform's build leaves "
        "out (an x86-only CPU kernel on ARM).",
        evidence=[c.log_evidence(event, name="compiled op", value=op)],
        actions=[
            "Install the vLLM built for this device: the default wheel is CUDA's; ROCm, CPU, XPU and the others come "
            "from their own images, wheels or source builds (VLLM_TARGET_DEVICE), and one built for another device "
            '(`python -c "import vllm, torch; print(vllm.__version__, torch.version.cuda, torch.version.hip)"`) '
            "cannot serve here.",
            "On a CPU build for ARM (aarch64, Apple silicon), an op registered only for x86 is a gap of that "
            "build: a release whose CPU backend supports the machine, or the x86 host the op needs.",
        ],
        confidence=0.75,
    )


RULE_COMPILED_OPS = Rule(
    code="OP-7.78",
    title="vLLM's compiled ops do not match its Python code",
    category=Category.STARTUP,
    check=_check_compiled_ops,
    needs=("events",),
    page=RulePage(
        checks="PyTorch's dispatcher refusing a call to one of vLLM's ops (`_C::`, `_moe_C::`, `_rocm_C::` …): "
        "`… expected at most N argument(s) but received M argument(s). Declaration: …`, `… is missing value for "
        "argument '…'`, `No such operator _C::…`, and `Could not run '_C::…' with arguments from the '<device>' "
        "backend` (an op with no kernel for the device).",
        why="The Python files and the compiled extension come from different vLLM sources, so an op's signature "
        "differs between the caller and what the extension registered.",
        example="`RuntimeError: _moe_C::topk_softmax() expected at most 6 argument(s) but received 7 argument(s).` "
        "on a pull request that added an argument (vllm#48979).",
        fix="Rebuild the extensions from the same commit, or reinstall one release into a fresh environment.",
        limits="A third-party plugin that registers ops under vLLM's namespaces would read the same.",
        references=["https://github.com/vllm-project/vllm/issues/48979"],
    ),
)

RULES: list[Rule] = [RULE_COMPILED_OPS]
