"""VC-1's remedies for three messages whose words do not say the whole fix, and VC-2's action for a module no rule
knows: each from a thread that confirmed it (the corpus's seventeenth batch, the 76th probe)."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# vllm#2448 (vLLM 0.2.7), verbatim
MIXTRAL_PT = (
    "ValueError: Currently, the 'pt' format is not supported for Mixtral. Please use the 'safetensors' format instead."
)
# vllm#1563 (Colab), verbatim: the reporter built the LLM a second time in the notebook
TP_GROUP_TWICE = "AssertionError: tensor model parallel group is already initialized."
# kserve/kserve#5987 (vLLM of 2026), verbatim
KV_PARAMS_NO_CONNECTOR = (
    "WARNING [core.py:367] Got kv_transfer_params, but no KVConnector found. Disabling KVTransfer for this request."
)


def test_mixtral_refused_in_pt_format_loads_the_safetensors_the_message_names():
    top = top_finding(MIXTRAL_PT)
    assert top.rule == "VC-1" and top.title.startswith("vLLM refused")
    assert [(ch.flag, ch.proposed) for ch in top.changes] == [("--load-format", "safetensors")]


def test_parallel_groups_already_set_up_are_a_second_engine_in_one_process_not_a_bug():
    top = top_finding(TP_GROUP_TWICE)
    assert top.rule == "VC-1" and "internal check" not in top.title
    assert "second LLM(" in top.actions[0] and "Restart the Python process" in top.actions[0]
    assert "Upgrade vLLM" not in " ".join(top.actions)


def test_kv_transfer_params_without_a_connector_start_the_engines_with_one():
    top = top_finding(KV_PARAMS_NO_CONNECTOR)
    assert top.rule == "VC-1" and top.severity.name == "MEDIUM"
    assert [ch.flag for ch in top.changes] == ["--kv-transfer-config"]
    assert "NixlConnector" in top.actions[0]


# vllm PR #7651's comment (vLLM 0.5.4 era), verbatim: V0's worker header holds the words, the traceback is cut
EINOPS_HEADER = (
    "(VllmWorkerProcess pid=4575) ERROR 08-23 16:49:54 multiproc_worker_utils.py:226] Exception in worker "
    "VllmWorkerProcess while processing method load_model: No module named 'einops', Traceback (most recent call "
    "last):"
)
EINOPS_FRAME = (
    "(VllmWorkerProcess pid=4575) ERROR 08-23 16:49:54 multiproc_worker_utils.py:226]   File "
    '"/usr/local/lib/python3.10/dist-packages/vllm/worker/model_runner.py", line 881, in load_model'
)


def test_v0s_worker_header_names_the_missing_module_even_when_the_traceback_is_cut():
    top = top_finding(EINOPS_HEADER, EINOPS_FRAME)
    assert top.rule == "VC-2" and "einops" in top.title
    assert "`pip install einops`" in top.actions[0]


def test_other_words_in_v0s_worker_header_keep_their_own_readings():
    # the first probe's line (vllm#7800): NCCL's words in the same header stay NCCL's
    line = (
        "(VllmWorkerProcess pid=232) ERROR 08-23 08:25:25 multiproc_worker_utils.py:226] Exception in worker "
        "VllmWorkerProcess while processing method init_device: NCCL error: unhandled system error (run with "
        "NCCL_DEBUG=INFO for details), Traceback (most recent call last):"
    )
    assert top_finding(line).rule == "OP-7.5"


def test_a_missing_submodule_is_a_release_mismatch_and_transformers_modules_is_no_package():
    # the fourth probe's line (huggingface/trl#3545), verbatim
    top = top_finding("RuntimeError:No module named 'vllm_ascend.distributed.device_communicators'")
    assert top.rule == "VC-2" and "another release" in top.actions[0] and "pip install" not in top.actions[0]
    # constructed after the 26th probe's vllm#6607, whose line the paste cut inside the name
    ray = top_finding("ray.exceptions.RaySystemError: System error: No module named 'transformers_modules'")
    assert "no package to install" in ray.actions[0] and "HF_HOME" in ray.actions[0]


def test_a_whole_v0_worker_traceback_of_a_missing_module_keeps_the_import_rules_reading():
    # constructed in V0's words: the header and the traceback's last line name vLLM's own compiled module (OP-7.16)
    prefix = "(VllmWorkerProcess pid=4575) ERROR 08-23 16:49:54 multiproc_worker_utils.py:226] "
    lines = (
        prefix + "Exception in worker VllmWorkerProcess while processing method load_model: No module named "
        "'vllm._C', Traceback (most recent call last):",
        prefix
        + '  File "/usr/local/lib/python3.10/dist-packages/vllm/worker/model_runner.py", line 881, in load_model',
        prefix + "    from vllm._C import ops",
        prefix + "ModuleNotFoundError: No module named 'vllm._C'",
    )
    assert top_finding(*lines).rule == "OP-7.16"
    assert top_finding(lines[0]).rule == "OP-7.16"
