"""OP-7.199: argparse's `ambiguous option`, an option the command lacks taken for the start of several."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_model_that_vllm_serve_lacks_is_its_positional_argument():
    # vllm PR #18999, verbatim: a --config YAML's `model:` key turned into --model
    top = top_finding(
        "vllm serve: error: ambiguous option: --model could match --model-impl, --model-loader-extra-config"
    )
    assert top is not None and top.rule == "OP-7.199"
    assert top.title.startswith("vLLM has no --model: argparse read it as the start of --model-impl")
    assert (top.changes[0].flag, top.changes[0].proposed) == ("--model", "")
    assert top.actions[0].startswith("Pass the model first")


def test_another_ambiguous_option_names_the_flags_it_could_be():
    top = top_finding(
        "api_server.py: error: ambiguous option: --enable-prefix could match --enable-prefix-caching, "
        "--enable-prefix-caching-v2"
    )
    assert top is not None and top.rule == "OP-7.199" and "--enable-prefix-caching" in top.actions[0]
