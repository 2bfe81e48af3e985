"""OP-7.114 (a TPU held by another process) and OP-7.115 (Gaudi module ids the process cannot see)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_accelerator_held
from rules.evaluate import evaluate
from rules.facts import Facts


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_busy_tpu_device_file_sends_the_reader_to_the_process_holding_it():
    # vllm-project/tpu-inference PR #2257, verbatim: a test's worker met the previous test's process
    line = (
        "(Worker pid=6625) ERROR 04-15 07:27:42 [multiproc_executor.py:871] RuntimeError: Unable to initialize backend "
        "'tpu': FAILED_PRECONDITION: TPU initialization failed: open(/dev/vfio/0): Device or resource busy: Device or "
        "resource busy; Couldn't open iommu group /dev/vfio/0"
    )
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-7.114" and "/dev/vfio/0 is busy" in top.title
    assert "lsof" in top.actions[0]


def test_gaudi_module_ids_outside_the_visible_ones_are_replaced_by_the_visible_ones():
    # vllm-project/vllm-gaudi PR #946, verbatim
    line = "RuntimeError: Invalid HABANA_VISIBLE_MODULES=5. Module IDs should be between 0 and 0."
    [finding] = op7_accelerator_held.RULE_GAUDI_MODULES.evaluate(_facts([line]))
    assert [(ch.flag, ch.current, ch.proposed, ch.kind) for ch in finding.changes] == [
        ("HABANA_VISIBLE_MODULES", "5", "0", "env")
    ]
    wider = "RuntimeError: Invalid HABANA_VISIBLE_MODULES=9. Module IDs should be between 0 and 3."
    [finding] = op7_accelerator_held.RULE_GAUDI_MODULES.evaluate(_facts([wider]))
    assert finding.changes[0].proposed == "0,1,2,3"


def test_gpu_uuids_in_cuda_visible_devices_are_replaced_by_indices():
    # vllm#13815, verbatim: a cluster whose scheduler sets GPU UUIDs
    line = "ValueError: invalid literal for int() with base 10: 'GPU-52a3a85d-3c55-ca3a-a955-82c69ed360fc'"
    top = evaluate(_facts([line])).findings[0]
    assert top.rule == "OP-7.117"
    assert [(ch.flag, ch.kind) for ch in top.changes] == [("CUDA_VISIBLE_DEVICES", "env")]
