"""OP-7.213: xformers refused the flash-attn release installed beside it."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# OpenBMB/MiniCPM-V#974, verbatim: vLLM 0.10.2's attention layer importing xformers beside flash-attn 2.8.3
REFUSED = "(EngineCore_DP0 pid=15858) ImportError: Requires Flash-Attention version >=2.7.1,<=2.8.2 but got 2.8.3."


def test_the_range_and_the_installed_release_become_the_install_line():
    top = top_finding(REFUSED)
    assert top.rule == "OP-7.213" and "2.7.1 to 2.8.2 and 2.8.3 is installed" in top.title
    assert '`pip install "flash-attn>=2.7.1,<=2.8.2" --no-build-isolation`' in top.actions[0]
    assert "pip uninstall flash-attn" in top.actions[0]
    assert "only hides the check" in top.actions[1]


def test_relayed_inside_another_programs_import_error_it_is_the_same_check():
    # diffusers' import error as project READMEs quote it, its two lines joined on one
    top = top_finding(
        "RuntimeError: Failed to import diffusers.models.autoencoders.autoencoder_kl because of the following error "
        "(look up to see its traceback): Requires Flash-Attention version >=2.7.1,<=2.8.0 but got 2.8.3."
    )
    assert top.rule == "OP-7.213" and "2.7.1 to 2.8.0" in top.title
