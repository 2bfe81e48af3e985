"""OP-7.216: vLLM-Omni and vLLM of different major/minor releases."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# vllm-project/vllm-omni PR #2691, verbatim: vLLM-Omni 0.19.0rc2 over vLLM 0.18.0
MISMATCH = (
    "/home/alex-jw-brooks/vllm-omni/vllm_omni/version.py:55: RuntimeWarning: vLLM and vLLM-Omni appear to have "
    "mismatched major/minor versions:"
)


def test_the_warning_pairs_the_releases_first():
    top = top_finding(MISMATCH)
    assert (
        top.severity.name == "HIGH"
        and top.rule == "OP-7.216"
        and top.title.startswith("vLLM-Omni and vLLM are different major/minor releases")
    )
    assert "same major.minor" in top.actions[0]


def test_it_outranks_the_errors_the_mismatch_causes():
    # constructed: the warning, then an import error its patches would meet
    top = top_finding(
        MISMATCH, "ImportError: cannot import name 'GPUModelRunner' from 'vllm.v1.worker.gpu_model_runner'"
    )
    assert top.rule == "OP-7.216" and top.severity.name == "CRITICAL"
