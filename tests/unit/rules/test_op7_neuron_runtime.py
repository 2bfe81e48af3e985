"""OP-7.82: AWS Neuron's runtime, driver and compiler refusing the model (vllm#12443's and vllm#5738's lines, and
Neuron's own wordings as aws-neuron-samples#96, optimum-neuron#668 and aws-neuron-sdk#690 print them, verbatim)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_neuron_runtime
from rules.evaluate import evaluate
from rules.facts import Facts

ALLOCATE = 'ERROR 02-11 14:20:32 engine.py:389] RuntimeError: nrt_tensor_allocate status=4 message="Allocation Failure"'
NRT_LOAD = (
    "2024-Jul-30 14:22:31.305961 65191:69012 ERROR   NRT:nrt_infodump                            Failure: "
    "NRT_RESOURCE in nrt_load()"
)
DMEM = (
    "2024-Jul-30 14:22:30.244701 65191:65191 ERROR  TDRV:dmem_alloc_internal                     Failed to alloc "
    "DEVICE memory: 10485760"
)
COMPILE = (
    "(task, pid=34615) 2024-06-21 09:33:40.000866:  38168  ERROR ||NEURON_CC_WRAPPER||: Failed compilation with "
    "['neuronx-cc', 'compile', '--target=trn1', '--framework=XLA', '/tmp/ubuntu/neuroncc_compile_workdir/270aa309-fc42-"
    "41dc-8e08-d69177b6ded8/model.MODULE_39ea0777b538681fb821+2c2d707e.hlo_module.pb"
)


def _facts(*lines: str) -> Facts:
    return Facts(events=parse_lines(list(lines)).events)


def test_status_4_is_device_memory_and_proposes_smaller_shapes_or_more_cores():
    top = evaluate(_facts(ALLOCATE)).top
    assert top.rule == "OP-7.82" and "device memory cannot hold the model" in top.title
    assert "`--max-num-seqs`" in top.actions[0] and "`--tensor-parallel-size`" in top.actions[0]
    assert "neuron-top" in top.actions[1]
    assert "--gpu-memory-utilization does not apply" in top.summary


def test_the_runtimes_status_name_and_the_drivers_allocator_are_the_same_answer():
    for line in (NRT_LOAD, DMEM):
        [finding] = op7_neuron_runtime.RULE_NEURON.evaluate(_facts(line))
        assert "device memory cannot hold the model" in finding.title


def test_other_statuses_are_named_from_nrt_status_h():
    titles = {
        line: op7_neuron_runtime.RULE_NEURON.evaluate(_facts(line))[0].title
        for line in (
            "RuntimeError: nrt_load_collectives status=2",
            "RuntimeError: nrt_load status=9",
            "RuntimeError: nrt_execute status=1201",
            "RuntimeError: nrt_execute status=77",
        )
    }
    assert list(titles.values()) == [
        "AWS Neuron's runtime refused the model (NRT_INVALID): the compiled graph (NEFF) or its inputs do not match "
        "what it was compiled for",
        "AWS Neuron's runtime refused the model (NRT_LOAD_NOT_ENOUGH_NC): fewer free NeuronCores than the model was "
        "compiled for",
        "AWS Neuron's runtime refused the model (status 1201): the device reported a hardware error",
        "AWS Neuron's runtime refused the model (status 77): a status this table does not hold",
    ]


def test_a_failed_compile_points_at_the_compilers_own_lines_and_exit_9_at_host_memory():
    [failed] = op7_neuron_runtime.RULE_NEURON.evaluate(_facts(COMPILE))
    assert "failed on the model's graph" in failed.title and "Too many instructions after unroll" in failed.actions[0]
    [killed] = op7_neuron_runtime.RULE_NEURON.evaluate(_facts("RuntimeError: neuronx-cc failed with -9"))
    assert "killed (exit -9)" in killed.title and "dmesg" in killed.actions[0]


def test_a_cuda_allocation_status_is_not_neurons():
    assert op7_neuron_runtime.RULE_NEURON.evaluate(_facts("cudaMalloc status=2 out of memory")) == []
