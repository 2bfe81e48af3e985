"""OP-7.82: AWS Neuron's runtime, driver or compiler refused the model (Inferentia, Trainium).

Why a rule of its own: on Neuron, vLLM hands the model to AWS's stack (transformers-neuronx, NxDI, or the
vllm-neuron plugin), which compiles it ahead of time with neuronx-cc for fixed shapes (batch slots, sequence
length, tensor-parallel degree) and loads the compiled graph (a NEFF) onto NeuronCores through the Neuron runtime.
None of CUDA's words appear: the runtime answers with a numbered status from its `nrt_status.h` (Neuron's Runtime API
reference), `nrt_<call> status=<n> message="<words>"`, or names it (`Failure: NRT_RESOURCE in nrt_load()`), and the
number says which resource failed. Status 4 (NRT_RESOURCE, "Allocation Failure") is the common one: the NeuronCores'
device memory cannot hold the weights' shard with the KV cache that the compile sized for every batch slot at the
full sequence length (vllm#12443: while transformers-neuronx allocated the KV caches; transformers-neuronx#92: a
70B model on an inf2.24xlarge; aws-neuron-samples#96: a 16k-token Llama-3.1-8B at TP 8). The driver's own words for
it are `TDRV:dmem_alloc_internal Failed to alloc DEVICE memory` (optimum-neuron#668). A failed compile is worded by
the compiler's wrapper (`Failed compilation with ['neuronx-cc', …]`, `neuronx-cc failed with -9`): the reason is in
the compiler's lines before it (`Too many instructions after unroll` for a graph too large per core,
aws-neuron-samples#40), and an exit status of -9 is the compiler killed by the kernel, most often for host memory.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# nrt_status.h's statuses by number and by name (AWS Neuron Runtime API, nrt_status.h), with what each means for a
# model being loaded or run.
_STATUS: dict[str, tuple[str, str]] = {
    "1": ("NRT_FAILURE", "a failure the runtime does not classify"),
    "2": ("NRT_INVALID", "the compiled graph (NEFF) or its inputs do not match what it was compiled for"),
    "4": ("NRT_RESOURCE", "the NeuronCores' device memory could not hold what was loaded"),
    "5": ("NRT_TIMEOUT", "an operation on the device timed out"),
    "6": ("NRT_HW_ERROR", "the device reported a hardware error"),
    "9": ("NRT_LOAD_NOT_ENOUGH_NC", "fewer free NeuronCores than the model was compiled for"),
    "10": ("NRT_UNSUPPORTED_NEFF_VERSION", "the compiled graph comes from a compiler this runtime does not support"),
    "11": ("NRT_FAIL_HOST_MEM_ALLOC", "the host's memory could not be allocated"),
}
_BY_NAME = {name: number for number, (name, _) in _STATUS.items()}
_HARDWARE = ("1200", "1201", "1202", "1203", "1205")  # collectives, HBM and NeuronCore uncorrectable, DMA abort

_SIZES = (
    "Compile smaller shapes or spread them wider: fewer batch slots (`--max-num-seqs`) and a shorter "
    "`--max-model-len` (the compile sizes the KV cache for every slot at the full length), or more NeuronCores "
    "(`--tensor-parallel-size`, up to the instance's count: 2 on an inf2.xlarge or inf2.8xlarge, 12 on an "
    "inf2.24xlarge, 24 on an inf2.48xlarge, 32 on a trn1.32xlarge)."
)
_OTHERS = (
    "Check that no other process holds the NeuronCores or their memory (`neuron-top`, `neuron-ls`), and that "
    "NEURON_RT_VISIBLE_CORES (or the container's /dev/neuron devices) gives the server the cores it was compiled for."
)
_VERSIONS = (
    "Use the Neuron SDK's matched set (its release notes name the neuronx-cc, runtime and vLLM versions that go "
    "together; AWS's Neuron deep-learning AMI or container has them), and clear the compile cache "
    "(/var/tmp/neuron-compile-cache, or NEURON_COMPILE_CACHE_URL) after changing it."
)


def _check_neuron(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.NEURON_FAILED)
    if not events:
        return []
    event = next((e for e in events if e.component != "compiler"), events[0])
    evidence = [c.log_evidence(event, name="Neuron's refusal", value=event.message)]
    if event.component == "compiler":
        return [_compiler(event, evidence)]
    number = _BY_NAME.get(event.error_code or "", event.error_code) if event.component == "runtime" else "4"
    if number == "4":
        return [_device_memory(event, evidence)]
    name, meaning, actions = _runtime_status(number or "")
    return [
        RULE_NEURON.finding(
            c.phase_severity(event),
            f"AWS Neuron's runtime refused the model ({name}): {meaning}",
            summary="On Inferentia and Trainium vLLM runs the model through AWS's Neuron stack, which loads a graph "
            "compiled for fixed shapes onto NeuronCores; the runtime's status number says what failed (nrt_status.h).",
            evidence=evidence,
            actions=actions,
            confidence=0.6,
        )
    ]


def _runtime_status(number: str) -> tuple[str, str, list[str]]:
    """The status's name, what it means for a model being loaded or run, and what to do, for a status other than 4."""
    if number in _HARDWARE or number == "6":
        return (
            _STATUS.get(number, (f"status {number}", ""))[0],
            "the device reported a hardware error",
            ["Drain the instance and replace it: `neuron-top` and the kernel log (`dmesg`) name the device."],
        )
    unnamed = number if not number.isdigit() else f"status {number}"
    name, meaning = _STATUS.get(number, (unnamed, "a status this table does not hold"))
    host = "Give the host more memory, or start fewer workers at once: the weights pass through host memory first."
    actions = {"9": [_OTHERS, _SIZES], "10": [_VERSIONS], "2": [_VERSIONS, _OTHERS], "11": [host]}
    return name, meaning, actions.get(number, [_VERSIONS])


def _device_memory(event: LogEvent, evidence: list) -> Finding:
    return RULE_NEURON.finding(
        Severity.CRITICAL,
        "AWS Neuron's device memory cannot hold the model as compiled (NRT_RESOURCE, Allocation Failure): the "
        "weights' shard and the KV cache for every batch slot at the full length do not fit the NeuronCores",
        summary="The Neuron runtime's status 4 is a failed allocation on the device: the compiled graph, the weights "
        "each NeuronCore holds and the KV cache sized for `--max-num-seqs` slots of `--max-model-len` tokens exceed "
        "the cores' memory (vllm#12443, transformers-neuronx#92). vLLM's --gpu-memory-utilization does not apply here.",
        evidence=evidence,
        actions=[_SIZES, _OTHERS],
        confidence=0.7,
    )


def _compiler(event: LogEvent, evidence: list) -> Finding:
    killed = event.error_code == "-9"
    title = (
        "AWS Neuron's compiler (neuronx-cc) was killed (exit -9): most often the host ran out of memory compiling"
        if killed
        else "AWS Neuron's compiler (neuronx-cc) failed on the model's graph: its reason is in the compiler's lines "
        "before this one"
    )
    actions = (
        [
            "Compile on a host with more memory (or free it: `dmesg | grep -i oom` confirms the kill), or compile "
            "fewer graphs at once."
        ]
        if killed
        else [
            "Read the compiler's own error above the wrapper's line (and its log in the neuroncc_compile_workdir it "
            "names); `Too many instructions after unroll` means the graph is too large for one NeuronCore: " + _SIZES,
            _VERSIONS,
        ]
    )
    return RULE_NEURON.finding(
        Severity.CRITICAL,
        title,
        summary="On Neuron the model is compiled ahead of time for its shapes (batch slots, sequence length, "
        "tensor-parallel degree); the server cannot start until neuronx-cc produces the graph.",
        evidence=evidence,
        actions=actions,
        confidence=0.55,
    )


RULE_NEURON = Rule(
    code="OP-7.82",
    title="AWS Neuron's runtime, driver or compiler refused the model",
    category=Category.STARTUP,
    check=_check_neuron,
    needs=("events",),
    page=RulePage(
        checks='The Neuron runtime\'s `nrt_<call> status=<n> message="…"` and `Failure: NRT_<NAME> in nrt_<call>()`, '
        "the driver's `Failed to alloc DEVICE memory`, and the compiler wrapper's `Failed compilation with "
        "['neuronx-cc', …]`, `neuronx-cc failed with <n>` and `Compilation failed for …neuroncc_compile_workdir…`.",
        why="On Inferentia and Trainium the model is compiled for fixed shapes and loaded onto NeuronCores; the "
        "runtime's status number (nrt_status.h) says which resource failed, and status 4, device memory, is the "
        "common one at start-up.",
        example='`RuntimeError: nrt_tensor_allocate status=4 message="Allocation Failure"` while transformers-'
        "neuronx allocated the KV caches (vllm#12443).",
        fix="For device memory: fewer `--max-num-seqs`, a shorter `--max-model-len`, or more NeuronCores "
        "(`--tensor-parallel-size`); for a failed compile: the compiler's own lines, host memory for exit -9; "
        "otherwise the Neuron SDK's matched versions.",
        limits="Statuses outside nrt_status.h's common ones are named by number only; the compiler's own reason is "
        "in its lines, which the wrapper's line does not carry.",
        references=[
            "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/neuron-runtime/api/nrt_status.html",
            "https://github.com/vllm-project/vllm/issues/12443",
            "https://github.com/aws-neuron/transformers-neuronx/issues/92",
            "https://github.com/aws-neuron/aws-neuron-samples/issues/96",
            "https://github.com/aws-neuron/aws-neuron-samples/issues/40",
            "https://github.com/huggingface/optimum-neuron/pull/668",
        ],
    ),
)

RULES: list[Rule] = [RULE_NEURON]
