"""The twentieth probe's classes: OP-7.151 to OP-7.153 and the readings widened for it, each from the verbatim line
its thread quoted, with a near miss left alone."""

from __future__ import annotations

import pytest

from tests.unit.rules.factories import top_finding


def test_a_ray_task_header_names_the_exception_and_for_imports_both_causes():
    imported = top_finding(  # microsoft/agent-lightning PR #144, verbatim
        "ray.exceptions.RayTaskError(ModuleNotFoundError): ray::WorkerDict.actor_rollout_init_model() (pid=10928, "
        "ip=10.1.1.104, actor_id=3b846a02a80aa8b92c91fcfb01000000, repr=<verl.single_controller.ray.base.WorkerDict "
        "object at 0x78f9a5c11e50>)"
    )
    assert imported.rule == "OP-7.151" and "WorkerDict.actor_rollout_init_model" in imported.title
    assert "runtime-env-json" in imported.actions[0] and "vLLM its requirements name" in imported.actions[1]
    raised = top_finding(  # NovaSky-AI/SkyRL PR #1788, verbatim: pytest's summary line
        "FAILED tests/backends/skyrl_train/gpu/gpu_ci/test_engine_generation.py::test_pd_generation - "
        "ray.exceptions.RayTaskError(RuntimeError): ray::VLLMServerActor.start() (pid=59962, ip=10.1.137.178, "
        "actor_id=1b2ed6e627c06ebf3c298df228000000, repr=<skyrl.backends.skyrl_train.inference_servers."
        "vllm_server_actor.VLLMServerActor object at 0x7ed25ead5970>)"
    )
    assert raised.rule == "OP-7.151" and raised.title.startswith("a Ray task raised RuntimeError in VLLMServerActor")


def test_a_ray_header_gives_way_to_the_exception_it_wraps():
    lines = [
        "ray.exceptions.RayTaskError(ModuleNotFoundError): ray::WorkerDict.actor_rollout_init_model() (pid=1)",
        "ModuleNotFoundError: No module named 'vllm'",
    ]
    assert top_finding(*lines).rule == "OP-7.16"


def test_a_process_started_during_import_asks_for_the_main_guard():
    top = top_finding("        An attempt has been made to start a new process before the")  # tpu-inference PR #1708
    assert top.rule == "OP-7.152" and '__name__ == "__main__"' in top.actions[0]


def test_a_logging_error_is_harmless_and_a_message_line_without_a_placeholder_is_none():
    top = top_finding(
        "Message: 'Chunked prefill is enabled with max_num_batched_tokens=%d.'"
    )  # vllm PR #6694, verbatim
    assert top.rule == "OP-7.153" and top.severity.value == "low"
    plain = top_finding("Message: 'hello'")
    assert plain is None or plain.rule != "OP-7.153"


@pytest.mark.parametrize(
    "line",
    [
        "ModuleNotFoundError: No module named 'vllm'",  # OpenRLHF/OpenRLHF#400, verbatim
        "It will report ModuleNotFoundError: No module named 'vllm'",  # intel/ipex-llm#11944, verbatim
    ],
)
def test_no_vllm_at_all_is_the_interpreter_not_vllm(line: str):
    top = top_finding(line)
    assert top.rule == "OP-7.16" and "has none" in top.title and "/llm" in top.actions[0]
    assert "runtime-env-json" in top.actions[2]


def test_a_module_name_cut_after_vllm_is_not_read_as_no_vllm():
    top = top_finding("ModuleNotFoundError: No module named 'vllm")  # the quote never closed: vllm.X may have followed
    assert top is None or "has none" not in top.title


def test_an_xpu_build_that_counts_no_device_is_the_container_or_its_sycl_runtime():
    line = "/opt/venv/lib/python3.12/site-packages/torch/xpu/__init__.py:74: UserWarning: XPU device count is zero!"
    top = top_finding(line)  # vllm#48625, verbatim
    assert top.rule == "OP-7.32" and "Intel GPU" in top.title and "LD_LIBRARY_PATH" in top.actions[1]


def test_pytorchs_cuda_library_missing_is_a_torch_without_cuda():
    line = "  ImportError: libtorch_cuda.so: cannot open shared object file: No such file or directory"
    top = top_finding(line)  # docker/model-runner#1018, verbatim
    assert top.rule == "OP-7.48" and top.evidence[0].value.startswith("libtorch_cuda.so")


def test_pips_newer_build_summary_names_the_package():
    top = top_finding("ERROR: Failed to build installable wheels for some pyproject.toml based projects (vllm)")
    assert top.rule == "OP-7.55" and "vllm" in top.title  # vllm#14034, verbatim


def test_envoys_ext_proc_timeout_is_the_gateways_plugin_not_vllm():
    line = (  # vllm-project/aibrix#916, verbatim
        '{"start_time":"2025-03-28T09:08:20.758Z","method":"POST","x-envoy-origin-path":"/v1/chat/completions",'
        '"protocol":"HTTP/1.1","response_code":"504","response_flags":"-","response_code_details":"ext_proc_error_'
        'per-message_timeout_exceeded","connection_termination_details":"-","upstream_transport_failure_reason":"-",'
        '"bytes_received":"374","bytes_sent":"0","duration":"5001","x-envoy-upstream-service-time":"-",'
        '"x-forwarded-for":"xxx","user-agent":"modelscope_bench","x-request-id":"a57d1ac1-bf52-4654-97b7-082139eaae9d",'
        '":authority":"xxx","upstream_host":"-","upstream_cluster":"original_destination_cluster",'
        '"upstream_local_address":"-","downstream_local_address":"xxx","downstream_remote_address":"xxx",'
        '"requested_server_name":"-","route_name":"original_route"}'
    )
    top = top_finding(line)
    assert top.rule == "OP-5.25" and top.title.startswith("HTTP 504 from Envoy") and "external processor" in top.title


def test_urllib3s_cut_body_is_an_answer_cut_mid_stream():
    top = top_finding("requests.exceptions.ChunkedEncodingError: Response ended prematurely")  # EchoSwift#1, verbatim
    assert top.rule == "OP-5.37"


def test_a_ray_header_with_the_message_on_its_line_is_read_by_the_message():
    line = (
        "ray.exceptions.RayTaskError(ValueError): ray::RayWorker.execute_method() ValueError: Bfloat16 is only "
        "supported on GPUs with compute capability of at least 8.0. Your Tesla V100-SXM2-32GB GPU has compute "
        "capability 7.0."
    )
    assert top_finding(line).rule != "OP-7.151"
