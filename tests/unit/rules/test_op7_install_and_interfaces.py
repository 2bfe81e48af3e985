"""OP-5.53, OP-7.125 to OP-7.131: each read from the verbatim line its thread quoted, and a near miss left alone."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.catalog import (
    op1_compile_time,
    op2_moe_backend,
    op5_mistral_tool_id,
    op5_platform_refusals,
    op6_draft_vocab,
    op6_mamba_page,
    op7_ascend_soc,
    op7_build_cmake,
    op7_build_no_cuda_runtime,
    op7_helm_chart,
    op7_hub_cache,
    op7_ipex,
    op7_mkl_threading,
    op7_nccl_graph,
    op7_packages,
    op7_parser_interface,
    op7_punica,
    op7_python_version,
    op7_ray_driver,
    op7_rdma_transport,
    op7_setup_platform,
    op7_transformers_loaders,
    op7_uvloop,
    op7_xformers_build,
)
from rules.facts import Facts, ServerConfig
from tests.unit.rules.factories import top_finding


def test_ncclss_graph_warning_names_its_build_or_the_driver_and_offers_eager_mode():
    # vllm#3069, verbatim: torch 2.2.0+cu118 had brought NCCL 2.19.3 built for CUDA 11.0
    top = top_finding(
        "NCCL WARN NCCL cannot be captured in a graph if either it wasn't built with CUDA runtime >= 11.3 or if the "
        "installed CUDA driver < R465."
    )
    assert top.rule == "OP-7.125" and "CUDA runtime before 11.3" in top.title
    assert [a.flag for a in top.alternatives] == ["--enforce-eager"] and "torch.cuda.nccl.version()" in top.actions[0]


def test_xformers_built_for_another_torch_names_both_when_the_next_line_is_pasted():
    # vllm#13116, verbatim first line; the second in xFormers' own format
    first = "`WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:"
    assert top_finding(first).rule == "OP-7.126"
    top = top_finding(first, "    PyTorch 2.6.0+cu124 with CUDA 1204 (you have 2.5.1+cu121)")
    assert "(built for PyTorch 2.6.0+cu124; installed 2.5.1+cu121)" in top.title


def test_setup_refusing_a_platform_other_than_linux_is_the_operating_system():
    top = top_finding("> AssertionError: vLLM only supports Linux platform (including WSL).")  # RUC-NLPIR/FlashRAG#5
    assert top.rule == "OP-7.127" and "WSL 2" in top.actions[0] and "without vllm" in top.actions[1]


def test_a_missing_hub_cache_directory_is_named_with_the_mount_to_fix_it():
    top = top_finding(  # HabanaAI/vllm-fork#1474, verbatim
        "ERROR 06-24 15:31:46 engine.py:389] Cache directory not found: /data/.cache/huggingface. Please use "
        "`cache_dir` argument or set `HF_HUB_CACHE` environment variable."
    )
    assert top.rule == "OP-7.128" and "/data/.cache/huggingface does not exist" in top.title
    assert "-v <host dir>:/data/.cache/huggingface" in top.actions[0]


def test_mistral_tool_call_ids_point_at_the_fix_and_the_ids_shape():
    top = top_finding(  # vllm PR #12332, verbatim
        "mistral_common.exceptions.InvalidFunctionCallException: Tool call id ... must be a-z, A-Z, 0-9, with a "
        "length of 9."
    )
    assert top.rule == "OP-5.53" and "#12332" in top.actions[0] and "nine letters and digits" in top.actions[1]


def test_a_parser_refusing_vllms_keywords_is_its_interface_not_the_request():
    top = top_finding(  # vllm PR #27973, verbatim
        "(APIServer pid=1533093) TypeError: Ernie45ReasoningParser.__init__() got an unexpected keyword argument "
        "'chat_template_kwargs'"
    )
    assert top.rule == "OP-7.129" and "reasoning parser Ernie45ReasoningParser" in top.title
    assert "--reasoning-parser-plugin" in top.actions[0] and "without --reasoning-parser" in top.actions[1]
    tool = top_finding("TypeError: MyToolParser.__init__() takes 2 positional arguments but 3 were given")
    assert tool.rule == "OP-7.129" and "--tool-parser-plugin" in tool.actions[0]
    # vllm#38837, verbatim: the refusal as the client got it, an HTTP status before Python's words without a class
    status = top_finding("400 Gemma4ToolParser.__init__() takes 2 positional arguments but 3 were given")
    assert status.rule == "OP-7.129" and "Gemma4ToolParser" in status.title


def test_cmakes_failed_configure_points_at_nvcc_for_the_cuda_target():
    top = top_finding(  # vllm#4011, verbatim (its leading spaces kept)
        "      subprocess.CalledProcessError: Command '['cmake', '/mnt/workspace1/vllm', '-G', 'Ninja', "
        "'-DCMAKE_BUILD_TYPE=RelWithDebInfo', '-DCMAKE_LIBRARY_OUTPUT_DIRECTORY=/tmp/tmpgo2jq6e_.build-lib/vllm', "
        "'-DCMAKE_ARCHIVE_OUTPUT_DIRECTORY=/tmp/tmp3986w80c.build-temp', '-DVLLM_TARGET_DEVICE=cuda', "
        "'-DVLLM_PYTHON_EXECUTABLE=/mnt/workspace1/vllm/bin/python', '-DNVCC_THREADS=1', "
        "'-DCMAKE_JOB_POOL_COMPILE:STRING=compile', '-DCMAKE_JOB_POOLS:STRING=compile=54']' returned non-zero exit "
        "status 1."
    )
    assert top.rule == "OP-7.130" and "(target cuda)" in top.title and "CUDACXX=" in top.actions[0]


def test_a_missing_ipex_names_where_it_exists():
    top = top_finding(  # vllm#11342, verbatim
        "ERROR 01-16 09:14:13 engine.py:135] ModuleNotFoundError: No module named 'intel_extension_for_pytorch'"
    )
    assert top.rule == "OP-7.131" and "ppc64le" in top.actions[1]


def test_a_build_without_a_cuda_runtime_on_linux_asks_which_torch_and_where_it_built():
    top = top_finding("No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda-11.8'")  # vllm#341, verbatim
    assert top.rule == "OP-7.132" and "/usr/local/cuda-11.8" in top.title and "TORCH_CUDA_ARCH_LIST" in top.actions[1]
    windows = top_finding("No CUDA runtime is found, using CUDA_HOME='C:\\Program Files\\NVIDIA GPU Computing Toolkit'")
    assert windows.rule == "OP-7.62"  # the platform first, as before


def test_transformers_refusing_a_gguf_architecture_offers_the_original_config():
    top = top_finding("ValueError: Architecture chatglm not supported")  # huggingface/transformers#32577, verbatim
    assert top.rule == "OP-7.133" and "(chatglm)" in top.title and "--hf-config-path" in top.actions[0]


def test_an_unrecognised_image_processor_points_at_the_models_preprocessor_config():
    top = top_finding(  # tulerfeng/Video-R1#55, verbatim (the paste stops after its trailing space)
        "ValueError: Unrecognized image processor in Video-R1/Video-R1-7B. Should have a `image_processor_type` key "
        "in its preprocessor_config.json of config.json, "
    )
    assert top.rule == "OP-7.134" and "Video-R1/Video-R1-7B" in top.title
    assert "preprocessor_config.json" in top.actions[0]


def test_a_plugin_refusing_logprobs_asks_the_client_to_stop_asking():
    top = top_finding(  # vllm-project/vllm-gaudi PR #1098, verbatim
        "{\"error\":{\"message\":\"Gaudi doesn't support logprobs. Please remove 'logprobs'/'top_logprobs' from your "
        'request to receive a response.","type":"BadRequestError","param":null,"code":400}}'
    )
    assert top.rule == "OP-5.54" and "Gaudi" in top.title and "logprobs" in top.actions[0]


def test_an_rdma_retry_count_running_out_names_the_nic_pair():
    top = top_finding(  # kvcache-ai/Mooncake#35, verbatim
        "E1213 02:57:10.528410 5811 worker_pool.cpp:274] Worker: Process failed for slice (opcode: 0, source_addr: "
        "0x7efdf3ffd010, length: 404, dest_addr: 140532604981264, local_nic: mlx5_1, peer_nic: 127.0.0.1:8149@mlx5_0, "
        "dest_rkey: 2105088, retry_cnt: 0): transport retry counter exceeded"
    )
    assert top.rule == "OP-7.135" and "(mlx5_1 to 127.0.0.1:8149@mlx5_0)" in top.title
    assert "ib_write_bw" in top.actions[0]


def test_helms_missing_chart_names_the_production_stacks_chart():
    top = top_finding(  # vllm-project/production-stack#37, verbatim (its Markdown indentation kept)
        '   Error: INSTALLATION FAILED: chart "production-stack" matching not found in vllm index. (try \'helm repo '
        "update'): no chart name found"
    )
    assert top.rule == "OP-7.136" and "production-stack in the vllm repository's index" in top.title
    assert "vllm/vllm-stack" in top.actions[0] and "helm search repo vllm/" in top.actions[1]
    other = top_finding('Error: chart "redis" matching 99.0.0 not found in bitnami index')
    assert other.rule == "OP-7.136" and "vllm-stack" not in " ".join(other.actions)


def test_a_platform_refusing_a_runner_says_the_model_needs_other_hardware():
    top = top_finding("NotImplementedError: 310P does not support runner_type='pooling'`")  # vllm-ascend#6471, verbatim
    assert top.rule == "OP-5.54" and "does not run pooling models" in top.title and "A2 or A3" in top.actions[0]


def test_v0s_draft_vocab_assert_alone_names_the_vocabularies():
    top = top_finding("assert all(vocab_sizes[0] == vocab_size for vocab_size in vocab_sizes)")  # vllm#14939, verbatim
    assert top.rule == "OP-6.4" and "vocab size differs" in top.title and "vocab_size" in top.actions[0]
    # another bare assert's source line is still not read as a failure by itself (it may have raised deeper)
    assert not parse_lines(["    assert check(x), 'check failed'"]).events


def test_a_hybrid_mamba_page_assert_alone_names_speculative_decoding_and_sees_it_on_the_command_line():
    line = "  assert self.page_size_padded >= page_size"  # vllm PR #47635, verbatim (FalconH1 with ngram)
    top = top_finding(line)
    assert top.rule == "OP-6.5" and "the known cause is speculative decoding" in top.title
    assert top.actions[0].startswith("Serve the model without speculative decoding")
    config = ServerConfig(flags={"--speculative-config": '{"method":"ngram","num_speculative_tokens":3}'})
    [seen] = op6_mamba_page.RULE.evaluate(Facts(events=parse_lines([line]).events, config=config))
    assert "while --speculative-config is set" in seen.title


def test_uvloop_missing_names_both_hosts_and_a_windows_path_makes_it_the_platforms():
    top = top_finding("ModuleNotFoundError: No module named 'uvloop'")  # SystemPanic/vllm-windows#45, verbatim
    assert top.rule == "OP-7.137" and "a Windows host or an install made without dependencies" in top.title
    assert top.actions[0].startswith("On Windows: run vLLM under WSL 2") and "--no-deps" in top.actions[1]
    frame = '  File "C:\\Users\\me\\Lib\\site-packages\\vllm\\entrypoints\\cli\\main.py", line 1, in <module>'
    assert top_finding(frame, "ModuleNotFoundError: No module named 'uvloop'").rule == "OP-7.62"


def test_a_submodule_missing_from_an_installed_package_is_that_package_in_another_version():
    top = top_finding("ModuleNotFoundError: No module named 'outlines.fsm'")  # vllm#3139, verbatim (vLLM 0.3.3)
    assert top.rule == "OP-7.8" and top.title.startswith("the installed outlines has no module outlines.fsm")
    assert top.actions[0].startswith("Compare `pip show outlines`")
    # vLLM's own modules stay OP-7.16's; a top-level package missing altogether is no version question
    assert top_finding("ModuleNotFoundError: No module named 'vllm.benchmarks.serve'").rule == "OP-7.16"
    assert (
        op7_packages.RULE_API_MISMATCH.evaluate(Facts(events=parse_lines(["No module named 'outlines'"]).events)) == []
    )


def test_mkl_refusing_pytorchs_openmp_runtime_asks_for_the_gnu_threading_layer():
    line = (  # vllm#9678, verbatim (the model inspection subprocess's log)
        "ERROR 10-25 10:55:54 registry.py:267] Error: mkl-service + Intel(R) MKL: MKL_THREADING_LAYER=INTEL is "
        "incompatible with libgomp-a34b3233.so.1 library."
    )
    top = top_finding(line)
    assert top.rule == "OP-7.138" and [(c.flag, c.proposed, c.kind) for c in top.changes] == [
        ("MKL_THREADING_LAYER", "GNU", "env")
    ]


def test_a_subscripted_built_in_type_is_a_python_older_than_the_code():
    top = top_finding("TypeError: 'type' object is not subscriptable")  # vllm#4617, verbatim (0.4.2 on Python 3.8)
    assert top.rule == "OP-7.139" and "Python 3.9" in top.title and "vllm#4617" in top.actions[0]


def test_early_vllms_ray_refusals_name_the_second_engine_and_the_engine_actor():
    reinit = (  # vllm PR #465, verbatim
        "RuntimeError: Maybe you called ray.init twice by accident? This error can be suppressed by passing in "
        "'ignore_reinit_error=True' or by calling 'ray.shutdown()' prior to 'ray.init()'."
    )
    assert top_finding(reinit).rule == "OP-7.140"
    said = (  # vllm PR #2664, verbatim: the reporter's sentence with the error in Markdown's inline code
        "When requesting a model serving with `--engine-use-ray`, the request will fail with status code 500, and the "
        "vLLM server will raise an error: `TypeError: Actor methods cannot be called directly. Instead of running "
        "'object.encode_request_async()', try 'object.encode_request_async.remote'.`"
    )
    top = top_finding(said)
    assert top.rule == "OP-7.141" and [(c.flag, c.proposed) for c in top.changes] == [("--engine-use-ray", "")]
    assert not top.evidence[0].value.endswith("`")


def test_a_seeded_request_on_a_device_without_a_torch_generator_drops_the_seed():
    line = "`RuntimeError: Device type HPU is not supported for torch.Generator() api.`"  # HabanaAI/vllm-fork PR #246
    top = top_finding(line)
    assert top.rule == "OP-5.54" and "seed" in top.title and top.actions[0].startswith("Drop `seed`")


def test_aiters_unknown_arch_and_its_fp4_gemm_on_mi300_name_the_variable_to_turn_off():
    arch = (  # vllm PR #30952, verbatim (pytest shortened it)
        'ERROR test_basic_correctness.py - RuntimeError: Get GPU arch from rocminfo failed "Unknown GPU architecture: '
        "gfx1201. Supported architec..."
    )
    top = top_finding(arch)
    assert top.rule == "OP-7.86" and "gfx1201" in top.title and top.actions[0].startswith("Upgrade vLLM: before PR")
    assert not top.changes  # AITER off did not help there: vLLM looked its arch up at import
    fp4 = top_finding("# Error: RuntimeError: MXFP4 quantization is not supported on gfx942")  # vllm#34641, verbatim
    assert fp4.rule == "OP-7.86" and [(c.flag, c.proposed) for c in fp4.changes] == [
        ("VLLM_ROCM_USE_AITER_FP4BMM", "0")
    ]


def test_ptx_of_an_older_version_than_the_gpu_is_a_triton_older_than_the_gpu():
    line = (  # NixOS/nixpkgs#406675, verbatim: vLLM 0.9.1 on an RTX 5090
        "[rank0]:E0701 14:28:21.083000 911603 torch/_inductor/runtime/triton_heuristics.py:539] [0/0] ptxas "
        "/tmp/tmpmwke15zw.ptx, line 6; error   : PTX .version 8.4 does not support .target sm_120a"
    )
    top = top_finding(line)
    assert top.rule == "OP-7.36" and top.title.startswith("Triton wrote PTX 8.4 for sm_120a")
    assert not top.changes  # a newer ptxas (TRITON_PTXAS_PATH) does not help: the PTX itself is old


def test_punicas_missing_size_names_the_tp_at_which_each_gpus_share_fits():
    line = (  # vllm#4708, verbatim: Qwen1.5-32B with LoRA at TP 8 on vLLM 0.4.1
        "(RayWorkerWrapper pid=1566630) ERROR 04-26 16:28:41 worker_base.py:157] RuntimeError: No suitable kernel. "
        "h_in=64 h_out=3424 dtype=Float out_dtype=BFloat16"
    )
    top = top_finding(line)
    assert top.rule == "OP-7.142" and top.title.endswith("3424 per GPU is not a multiple of 64")
    facts = Facts(events=parse_lines([line]).events, config=ServerConfig(tensor_parallel_size=8))
    [finding] = op7_punica.RULE.evaluate(facts)
    assert finding.actions[1].startswith("Or serve at --tensor-parallel-size 4: the layer's 27392 features")


def test_punicas_rank_side_is_no_layers_size_and_a_listed_multiple_of_64_is_a_size_its_list_lacks():
    # vllm#4640, verbatim (h_in is the LoRA rank 16, h_out a 55,552-wide layer, a multiple of 64): a maintainer said
    # punica had no build for that size; the Triton kernels (PR #5036) resolve it
    top = top_finding("RuntimeError: No suitable kernel. h_in=16 h_out=55552 dtype=Float out_dtype=BFloat16")
    assert top.rule == "OP-7.142" and top.title.endswith("h_out=55552: a size its list lacks")
    assert top.actions[0].startswith("Upgrade vLLM: the Triton LoRA kernels")


def test_an_ascend_soc_version_vllm_ascend_does_not_know_is_an_unsupported_device():
    line = (  # vllm-ascend#6796, verbatim
        "(EngineCore_DP0 pid=13770) ERROR 02-25 03:11:49 [multiproc_executor.py:751] RuntimeError: Can not support "
        "soc_version: 104."
    )
    top = top_finding(line)
    assert top.rule == "OP-7.143" and "(104)" in top.title and top.actions[0].startswith("`npu-smi info`")


def test_a_moe_backend_refusal_drops_a_forced_backend_and_names_the_missing_piece():
    line = (  # flashinfer-ai/flashinfer#3486, verbatim
        "ValueError: NvFp4 MoE backend 'FLASHINFER_CUTLASS' does not support the deployment configuration since "
        "kernel does not support MoEActivation.SWIGLUSTEP activation."
    )
    top = top_finding(line)
    assert top.rule == "OP-2.4" and top.title.endswith("kernel does not support MoEActivation.SWIGLUSTEP activation")
    assert [(ch.flag, ch.proposed) for ch in top.changes] == [("--moe-backend", "")]
    facts = Facts(events=parse_lines([line]).events, config=ServerConfig())
    [chosen] = op2_moe_backend.RULE.evaluate(facts)  # the launch is known and forced none: vLLM chose it
    assert chosen.changes == [] and chosen.actions[0].startswith("vLLM chose FLASHINFER_CUTLASS itself")


@pytest.mark.parametrize(
    ("rule", "line"),
    [
        (op7_nccl_graph.RULE, "NCCL WARN Cuda failure 'out of memory'"),
        (op7_xformers_build.RULE, "WARNING: xFormers not available for this GPU"),
        (op7_setup_platform.RULE, "AssertionError: vLLM only supports CUDA devices"),
        (op7_hub_cache.RULE, "OSError: Cache directory is read-only"),
        (op5_mistral_tool_id.RULE, "mistral_common.exceptions.InvalidMessageStructureException: Unexpected role"),
        (op7_parser_interface.RULE, "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'x_y'"),
        (op7_build_cmake.RULE, "subprocess.CalledProcessError: Command '['nvcc', '--version']' returned non-zero"),
        (op7_ipex.RULE, "ModuleNotFoundError: No module named 'intel_extension'"),
        (op7_build_no_cuda_runtime.RULE, "No CUDA GPUs are available"),
        (op7_transformers_loaders.RULE_GGUF, "ValueError: Architecture of the model is not recognised"),
        (op7_transformers_loaders.RULE_IMAGE_PROCESSOR, "ValueError: Unrecognized configuration class"),
        (op5_platform_refusals.RULE, "logprobs are not supported with speculative decoding"),
        (op7_rdma_transport.RULE, "NIXL_ERR_BACKEND: transfer failed"),
        (op7_helm_chart.RULE, "Error: INSTALLATION FAILED: cannot re-use a name that is still in use"),
        (op6_draft_vocab.RULE, "assert len(vocab_sizes) == 2"),
        (op6_mamba_page.RULE, "assert self.page_size >= page_size"),
        (op7_uvloop.RULE, "ModuleNotFoundError: No module named 'uvloop_ext'"),
        (op7_mkl_threading.RULE, "Error: mkl-service failed to load"),
        (op7_python_version.RULE, "TypeError: 'NoneType' object is not subscriptable"),
        (op7_ray_driver.RULE_REINIT, "RuntimeError: Ray has not been initialized"),
        (op7_ray_driver.RULE_ACTOR, "TypeError: Actor methods must be called with .remote()"),
        (op7_punica.RULE, "RuntimeError: No suitable kernel for this device"),
        (op7_ascend_soc.RULE_UNKNOWN_SOC, "RuntimeError: Can not support this soc"),
        (op2_moe_backend.RULE, "ValueError: Unsupported MoE backend: FOO"),
    ],
)
def test_a_near_miss_is_left_to_other_rules(rule, line):
    assert rule.evaluate(Facts(events=parse_lines([line]).events)) == []


def test_a_long_torch_compile_asks_for_a_kept_cache_and_offers_eager_mode():
    line = (  # vllm#34399, verbatim
        "(MapWorker(MapBatches(vLLMEngineStageUDF)) pid=4385) (EngineCore_DP0 pid=6448) INFO 02-12 15:00:36 "
        "[monitor.py:34] torch.compile takes 2222.52 s in total"
    )
    top = top_finding(line)
    assert top.rule == "OP-1.14" and top.title == "torch.compile took 2,223 s (37 min) of the start-up"
    assert "VLLM_CACHE_ROOT" in top.actions[0] and [a.flag for a in top.alternatives] == ["--enforce-eager"]
    quick = "INFO 02-12 15:00:36 [monitor.py:34] torch.compile takes 21.5 s in total"
    assert op1_compile_time.RULE.evaluate(Facts(events=parse_lines([quick]).events)) == []


def test_a_kernel_refusal_cut_before_the_capability_names_the_source_builds_arch_list():
    # vllm PR #49904, verbatim: a source build on DGX Spark (12.1), its arch misread by torch's CMake: no CUTLASS kernel
    top = top_finding("NotImplementedError: No compiled cutlass_scaled_mm for a compute capability")
    assert top.rule == "OP-7.105" and "for this GPU's architecture" in top.title
    assert "TORCH_CUDA_ARCH_LIST" in top.actions[0] and "#49904" in top.actions[0]
    # quoted mid-sentence, the same reading
    quoted = top_finding("Error: `No compiled cutlass_scaled_mm for a compute capability` when serving FP8")
    assert quoted.rule == "OP-7.105" and "TORCH_CUDA_ARCH_LIST" in quoted.actions[0]
    # a capability the release's source does not have (its required list), or a backend's own device check: no
    # rebuild helps, so none is offered
    for line in (
        "No compiled cutlass_scaled_mm for CUDA device capability: 120. Required capability: 90 or 100",
        "ValueError: FlashInfer-CUTLASS MoE kernel does not support current device sm_120",
    ):
        finding = top_finding(line)
        assert finding.rule == "OP-7.105" and not any("TORCH_CUDA_ARCH_LIST" in a for a in finding.actions)
