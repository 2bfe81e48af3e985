"""OP-1.16: nvidia-smi's row of vLLM's engine holding most of a GPU is vLLM's reservation; one reading shows no leak."""

from __future__ import annotations

from tests.unit.rules.factories import config, top_finding

# eugr/spark-vllm-docker#43, verbatim: the engine's row after some use, which its reporter read as a leak; the
# maintainer said it is not one (the growth stops and stays)
ENGINE_ROW = "|    0   N/A  N/A          342697      C   VLLM::EngineCore                      83521MiB |"


def test_the_engines_row_alone_is_its_reservation_with_how_to_tell_a_leak():
    top = top_finding(ENGINE_ROW)
    assert top.rule == "OP-1.16" and top.severity.value == "info"
    assert top.title.startswith("nvidia-smi shows VLLM::EngineCore holding 81.56 GiB of GPU 0: vLLM's own reservation")
    assert "(0.9, vLLM's default)" in top.summary
    assert "--query-compute-apps" in top.actions[0]
    assert not top.changes  # the row supports no change: holding less is the operator's choice, named in actions


def test_the_configured_fraction_is_the_one_named():
    top = top_finding(ENGINE_ROW, config=config(gpu_memory_utilization=0.8))
    assert "(0.8, here)" in top.summary


def test_beside_a_startup_memory_failure_the_rows_are_that_failures_evidence():
    top = top_finding(
        "ValueError: Free memory on device (31.44/47.38 GiB) on startup is less than desired GPU memory utilization "
        "(0.95, 45.01 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
        ENGINE_ROW,
    )
    assert top.rule == "OP-1.3"


def test_a_process_vllm_did_not_title_is_not_read_as_vllms():
    top = top_finding("|    0   N/A  N/A     12345      C   python3                                 40000MiB |")
    assert top is None or top.rule != "OP-1.16"
