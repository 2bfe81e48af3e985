"""OP-7.166: FlashInfer's prebuilt-kernel package at another release than FlashInfer itself."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# vllm#49804, verbatim: vLLM 0.26.0 serving gemma-4 at TP 2; the reporter bypassed the check
SKEW = (
    "flashinfer-cubin version (0.6.13) does not match flashinfer version (0.6.14). Please install the same version of "
    "both packages. Set FLASHINFER_DISABLE_VERSION_CHECK=1 to bypass this check."
)


def test_the_package_is_pinned_to_flashinfers_release_and_the_bypass_is_only_an_unsafe_alternative():
    top = top_finding(SKEW)
    assert top.rule == "OP-7.166" and top.title.startswith("flashinfer-cubin 0.6.13 is not the release of flashinfer")
    assert (
        "`pip install 'flashinfer-cubin==0.6.14'`" in top.actions[0]
        and "pin flashinfer-python to 0.6.13" in (top.actions[0])
    )
    [bypass] = top.alternatives
    assert (bypass.flag, bypass.proposed, bypass.kind, bypass.safety) == (
        "FLASHINFER_DISABLE_VERSION_CHECK",
        "1",
        "env",
        "unsafe",
    )


def test_the_jit_cache_package_and_the_exception_class_read_the_same():
    top = top_finding(
        "RuntimeError: flashinfer-jit-cache version (0.6.10+cu130) does not match flashinfer version (0.6.1)"
    )
    assert top.rule == "OP-7.166" and top.title.startswith("flashinfer-jit-cache 0.6.10+cu130 is not the release")
