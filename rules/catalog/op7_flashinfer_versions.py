"""OP-7.166: FlashInfer's prebuilt-kernel package is another release than FlashInfer itself.

Why a rule of its own: FlashInfer ships its kernels in packages beside `flashinfer-python`: `flashinfer-cubin`
(prebuilt binaries) and `flashinfer-jit-cache` (kernels compiled ahead of time), and refuses to load when either is
another release: `RuntimeError: flashinfer-cubin version (0.6.13) does not match flashinfer version (0.6.14). Please
install the same version of both packages. Set FLASHINFER_DISABLE_VERSION_CHECK=1 to bypass this check.`
(flashinfer/jit/env.py). vLLM pins flashinfer-python, so the skew comes from installing or upgrading one package on its
own, or from an image that mixes them. Sources: vllm#49804 (vLLM 0.26.0; the reporter bypassed the check); projects
that pin both to one release report the fix (a cubin release can lag flashinfer-python's, so the pin may have to be
the older of the two).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

CHECK_VARIABLE = "FLASHINFER_DISABLE_VERSION_CHECK"


def _skew_finding(facts: Facts, event: LogEvent, match: object) -> Finding:
    package, mine, theirs = event.component or "flashinfer-cubin", event.message or "?", event.version or "?"
    return RULE_FLASHINFER_SKEW.finding(
        Severity.CRITICAL,
        f"{package} {mine} is not the release of flashinfer {theirs} beside it: FlashInfer refuses to load mixed "
        "releases",
        summary=f"FlashInfer checks that {package} (its prebuilt kernels) is its own release before it loads, and "
        "stops the engine otherwise. vLLM pins flashinfer-python; the other package was installed or upgraded on its "
        "own, or the image mixes them.",
        evidence=[c.log_evidence(event, name=f"{package} version", value=f"{mine} ≠ flashinfer {theirs}")],
        actions=[
            f"Install the release of {package} that matches the flashinfer-python vLLM uses: `pip install "
            f"'{package}=={theirs}'` (from the index you took it from; FlashInfer's own index for jit-cache). If "
            f"{package} has no {theirs} release yet, pin flashinfer-python to {mine} instead, or uninstall {package} "
            "(FlashInfer then compiles what it needs at start, which needs nvcc).",
        ],
        alternatives=[
            ConfigChange(
                flag=CHECK_VARIABLE,
                current=None,
                proposed="1",
                reason="skips the check and loads the mixed releases: what vllm#49804's reporter did, at the risk of "
                "kernels that do not match the library calling them",
                kind="env",
                safety="unsafe",
            )
        ],
        confidence=0.9,
    )


RULE_FLASHINFER_SKEW = Rule(
    code="OP-7.166",
    title="FlashInfer's prebuilt-kernel package is another release than FlashInfer",
    category=Category.STARTUP,
    check=c.on_kind(LogEventKind.FLASHINFER_VERSION_SKEW, _skew_finding),
    needs=("events",),
    page=RulePage(
        checks="FlashInfer's `flashinfer-cubin version (X) does not match flashinfer version (Y)` (and the same for "
        "flashinfer-jit-cache).",
        why="FlashInfer stops loading, and vLLM's engine with it, until the packages are one release.",
        example="`RuntimeError: flashinfer-cubin version (0.6.13) does not match flashinfer version (0.6.14).` serving "
        "gemma-4 with vLLM 0.26.0 (vllm#49804).",
        fix="The package pinned to flashinfer's release (or flashinfer-python to the package's); "
        f"{CHECK_VARIABLE}=1 only as a stopgap.",
        limits="The words do not say which side moved: `pip show flashinfer-python flashinfer-cubin` does.",
        references=["https://github.com/vllm-project/vllm/issues/49804"],
    ),
)

RULES: list[Rule] = [RULE_FLASHINFER_SKEW]
