"""OP-7.36 (code built for other GPUs), OP-7.37 (out of file descriptors) and OP-7.38 (a model neither cached nor
fetchable), from the words torch, CUDA, vLLM and huggingface_hub print for them."""

from __future__ import annotations

from pathlib import Path

from advisor.collect.logs import parse_lines
from rules.catalog.op7_fd_limit import FEW_DESCRIPTORS, RULE_FD_LIMIT, VLLM_TARGET_LIMIT
from rules.catalog.op7_gpu_arch import RULE_GPU_ARCH
from rules.catalog.op7_hub import RULE_HUB_NOT_CACHED
from rules.evaluate import evaluate
from rules.facts import Facts

TORCH_WARNING = [
    "/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:262: UserWarning: ",
    "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
    "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.",
]
NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
ULIMIT = (
    "(APIServer pid=8561) WARNING 11-23 20:42:28 [system_utils.py:255] Found ulimit of {} and failed to automatically "
    "increase with error current limit exceeds maximum limit. This can cause fd limit errors like `OSError: [Errno "
    "24] Too many open files`. Consider increasing with ulimit -n"
)


def _findings(rule, *lines: str):
    return rule.evaluate(Facts(events=parse_lines(list(lines)).events))


def test_torchs_warning_names_the_gpu_its_capability_and_what_the_build_holds():
    [finding] = _findings(RULE_GPU_ARCH, *TORCH_WARNING, NO_KERNEL)
    assert finding.title == (
        "the installed PyTorch has no kernels for the NVIDIA GeForce RTX 5090 (sm_120): it was built for sm_50 sm_60 "
        "sm_70 sm_75 sm_80 sm_86 sm_90"
    )
    assert "CUDA 12.8 or later" in finding.actions[0]
    assert [e.location for e in finding.evidence] == ["log:2", "log:3", "log:4"]


def test_a_gpu_older_than_vllm_supports_is_told_so():
    old = [line.replace("NVIDIA GeForce RTX 5090", "NVIDIA GeForce GTX 1080 Ti").replace("sm_120", "sm_61")
           for line in TORCH_WARNING]  # fmt: skip
    [finding] = _findings(RULE_GPU_ARCH, *old)
    assert "below what any vLLM release's builds support (7.0 at the lowest" in finding.actions[0]


def test_a_v100_is_below_current_releases_and_sent_to_an_older_one_or_a_source_build():
    # vLLM's installation guide listed compute capability 7.0 (V100) through 0.14 at least, 7.5 by 0.31
    v100 = [line.replace("NVIDIA GeForce RTX 5090", "Tesla V100-SXM2-32GB").replace("sm_120", "sm_70")
            for line in TORCH_WARNING]  # fmt: skip
    [finding] = _findings(RULE_GPU_ARCH, *v100)
    assert "below the 7.5 current vLLM releases' installation guide lists" in finding.actions[0]
    assert "TORCH_CUDA_ARCH_LIST=7.0" in finding.actions[0]


# pip building vLLM 0.1.2's sdist on a machine with an A100 and a P100 (vllm#463, the reporter's paste, cut)
PIP_BUILD = [
    "  Getting requirements to build wheel ... error",
    "  error: subprocess-exited-with-error",
    "  × Getting requirements to build wheel did not run successfully.",
    "  │ exit code: 1",
    "  ╰─> [15 lines of output]",
    "      Traceback (most recent call last):",
    '        File "/usr/local/lib/python3.8/dist-packages/pip/_vendor/pyproject_hooks/_in_process/_in_process.py", '
    "line 353, in <module>",
    "          main()",
    "      RuntimeError: GPUs with compute capability less than 7.0 are not supported.",
    "      [end of output]",
]


def test_vllms_own_build_refusing_a_pascal_gpu_says_volta_or_newer_and_how_to_build_for_the_other_gpu():
    """vLLM 0.1-0.3's setup.py checks every GPU it sees when TORCH_CUDA_ARCH_LIST is unset (vllm#774, #963: no
    support before Volta); both of its wordings, bare (vllm#1284) or inside pip's build output (vllm#463)."""
    for lines in (PIP_BUILD, ["RuntimeError: GPUs with compute capability below 7.0 are not supported."]):
        [finding] = _findings(RULE_GPU_ARCH, *lines)
        assert finding.title == "vLLM's build from source refused a GPU below compute capability 7.0 (Pascal or older)"
        assert finding.actions[0].startswith("Serve on a GPU of compute capability 7.0 or newer")
        assert "TORCH_CUDA_ARCH_LIST" in finding.actions[1] and finding.evidence[0].value == "7.0"


def test_cudas_error_alone_says_what_to_check():
    [finding] = _findings(RULE_GPU_ARCH, NO_KERNEL)
    assert finding.title.startswith("a binary holds no code for this GPU")
    assert "torch.cuda.get_arch_list()" in finding.actions[0]


def test_out_of_file_descriptors_with_the_limit_vllm_could_not_raise():
    [finding] = _findings(RULE_FD_LIMIT, ULIMIT.format(1024), "OSError: [Errno 24] Too many open files")
    assert finding.title == "the server ran out of file descriptors (Too many open files): its limit stayed at 1024"
    assert f"nofile={VLLM_TARGET_LIMIT}:{VLLM_TARGET_LIMIT}" in finding.actions[0]


def test_vllms_warning_alone_warns_only_for_a_low_limit():
    """vLLM's own warning names `[Errno 24] Too many open files` as what may come: it is no hit by itself."""
    [low] = _findings(RULE_FD_LIMIT, ULIMIT.format(1024))
    assert low.severity.value == "low"
    assert _findings(RULE_FD_LIMIT, ULIMIT.format(FEW_DESCRIPTORS * 5)) == []


def test_the_real_vllm_recordings_with_a_limit_of_20000_get_no_warning():
    """vLLM 0.32 on this project's CPU recorders kept 20000 (tests/fixtures/vllm_cpu/kv_too_small.log)."""
    recorded = Path(__file__).resolve().parents[2] / "fixtures" / "vllm_cpu" / "kv_too_small.log"
    assert "Found ulimit of 20000" in recorded.read_text()
    assert _findings(RULE_FD_LIMIT, *recorded.read_text().splitlines()) == []


def test_a_model_neither_cached_nor_fetchable_says_offline_or_unreachable():
    """huggingface_hub's words when HF_HUB_OFFLINE (or local_files_only) forbade the Hub, transformers' when the Hub
    could not be reached; a Hub refusal beside them is OP-7.17's."""
    offline = (
        "huggingface_hub.errors.LocalEntryNotFoundError: Cannot find the requested files in the disk cache and "
        "outgoing traffic has been disabled. To enable hf.co look-ups and downloads online, set 'local_files_only' "
        "to False."
    )
    unreachable = (
        "OSError: We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them in the "
        "cached files."
    )
    [first] = _findings(RULE_HUB_NOT_CACHED, offline, unreachable)
    assert first.title.endswith("downloads are switched off (offline mode)")
    assert "HF_HOME" in first.actions[0] and "vllm serve /models/<name>" in first.actions[1]
    [second] = _findings(RULE_HUB_NOT_CACHED, unreachable)
    assert second.title.endswith("the Hub could not be reached")
    refused = "401 Client Error: Unauthorized for url: https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/main/x"
    assert _findings(RULE_HUB_NOT_CACHED, refused, unreachable) == []


def test_huggingface_hubs_own_words_for_a_hub_it_could_not_reach_are_the_unreachable_reading():
    """huggingface_hub 2.4's LocalEntryNotFoundError when the Hub's answer failed and nothing is cached: one file
    (hf_hub_download, file_download.py) or a whole snapshot (snapshot_download, _snapshot_download.py)."""
    one_file = (
        "huggingface_hub.errors.LocalEntryNotFoundError: An error happened while trying to locate the file on the Hub "
        "and we cannot find the requested files in the local cache. Please check your connection and try again or "
        "make sure your Internet connection is on."
    )
    snapshot = (
        "An error happened while trying to locate the files on the Hub, and we cannot find the appropriate snapshot "
        "folder for the specified revision on the local disk. Please check your internet connection and try again."
    )
    for line in (one_file, snapshot):
        [finding] = _findings(RULE_HUB_NOT_CACHED, line)
        assert finding.title.endswith("the Hub could not be reached"), line


def test_urllib3_giving_up_on_a_hub_host_is_the_unreachable_reading_with_its_quotes_escaped_or_not():
    # h2oai/h2ogpt#1186, verbatim (the error inside another's repr escapes its quotes; the paste ends with a backtick)
    escaped = (
        "requests.exceptions.ConnectionError: (MaxRetryError('HTTPSConnectionPool(host=\\'huggingface.co\\', "
        "port=443): Max retries exceeded with url: /api/models/meta-llama/Llama-2-13b-chat-hf/revision/main (Caused "
        'by NameResolutionError("<urllib3.connection.HTTPSConnection object at 0x7fb471e53400>: Failed to resolve '
        "\\'huggingface.co\\' ([Errno -3] Temporary failure in name resolution)\"))'), '(Request ID: "
        "180aa8f1-bd8d-4f1e-bc19-2ba285227928)')`"
    )
    plain = (
        "HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with url: /meta-llama/x/resolve/"
        "main/config.json (Caused by ConnectTimeoutError(<urllib3.connection.HTTPSConnection object>, 'timed out'))"
    )
    # vllm-project/guidellm#62, verbatim: pasted from `Max retries` on, the Hub host named only inside the cause
    from_max_retries = (
        "I got the error: Max retries exceeded with url: /MiniCPM3-4B/resolve/main/config.json (Caused by "
        "ConnectTimeoutError(<urllib3.connection.HTTPSConnection object at 0x7f1e0daaad70>, 'Connection to "
        "huggingface.co timed out. (connect timeout=10)'"
    )
    for line in (escaped, plain, from_max_retries):
        [finding] = _findings(RULE_HUB_NOT_CACHED, line)
        assert finding.title.endswith("the Hub could not be reached"), line


def test_a_new_connection_to_the_hub_refused_is_the_same_reading_from_the_error_the_collector_leaves_unplaced():
    # vllm#1432, verbatim (vLLM 0.1.7 on an offline cluster; the reporter served the model by its local path instead)
    line = (
        "`requests.exceptions.ConnectionError: (MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', port=443): "
        "Max retries exceeded with url: /api/models/huggyllama/llama-7b/revision/main (Caused by NewConnectionError"
        "('<urllib3.connection.HTTPSConnection object at 0x2b27fbfbe550>: Failed to establish a new connection: "
        "[Errno -3] Temporary failure in name resolution'))\"), '(Request ID: 3b8686a3-75ca-4258-bebc-83ef391708a8)')`"
    )
    [finding] = _findings(RULE_HUB_NOT_CACHED, line)
    assert finding.title.endswith("the Hub could not be reached") and "a path is read from disk" in finding.actions[1]
    assert evaluate(Facts(events=parse_lines([line]).events)).top.rule == "OP-7.38"
    # the same words for a server the client calls are not the Hub's
    assert _findings(RULE_HUB_NOT_CACHED, line.replace("huggingface.co", "vllm.internal")) == []


def test_an_untrusted_hub_certificate_asks_for_the_proxys_ca_never_for_verification_off():
    """requests' words for an inspecting proxy's certificate (huggingface/transformers#17611), and OpenSSL's for a
    bundle without the issuer; the same words for another host are not the Hub's."""
    inspected = (
        "requests.exceptions.SSLError: HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with "
        "url: /api/models/sentence-transformers/all-MiniLM-L6-v2 (Caused by SSLError(SSLCertVerificationError(1, "
        "'[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self signed certificate in certificate chain "
        "(_ssl.c:1091)')))"
    )
    [finding] = _findings(RULE_HUB_NOT_CACHED, inspected)
    assert finding.title == (
        "the Hub's certificate is not trusted where the server runs (self signed certificate in certificate chain): "
        "something between re-signs HTTPS"
    )
    assert "SSL_CERT_FILE" in finding.actions[0] and "not a fix" in finding.actions[2]
    no_issuer = inspected.replace(
        "self signed certificate in certificate chain", "unable to get local issuer certificate"
    )
    assert _findings(RULE_HUB_NOT_CACHED, no_issuer)[0].title.endswith("its CA bundle lacks the issuer")
    elsewhere = inspected.replace("huggingface.co", "example.com").replace("sentence-transformers/", "")
    assert _findings(RULE_HUB_NOT_CACHED, elsewhere) == []


def test_the_hubs_rate_limit_and_its_own_errors_are_not_the_token_or_the_id():
    """The Hub's 429 (its rate limits, by account with a token and by address without one) and its 5xx."""
    limited = (
        "requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: "
        "https://huggingface.co/api/models/Qwen/Qwen3-8B/revision/main"
    )
    [finding] = _findings(RULE_HUB_NOT_CACHED, limited)
    assert finding.title.startswith("the Hub rate-limited the model's download (HTTP 429)")
    assert "HF_TOKEN" in finding.actions[0] and "PersistentVolumeClaim" in finding.actions[0]
    failed = (
        "huggingface_hub.errors.HfHubHTTPError: 504 Server Error: Gateway Time-out for url: https://huggingface.co/x"
    )
    [hub] = _findings(RULE_HUB_NOT_CACHED, failed)
    assert hub.title.endswith("(HTTP 504): trouble on the Hub's side")


def test_rocms_words_for_a_gpu_its_build_has_no_code_for_name_the_target():
    rocblas = (
        "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: No such file or directory for "
        "GPU arch : gfx1103"
    )
    [finding] = _findings(RULE_GPU_ARCH, rocblas)
    assert finding.title == (
        "a binary holds no code for this AMD GPU's architecture (gfx1103): ROCm found no kernel for it"
    )
    assert "rocminfo" in finding.actions[0] and "PYTORCH_ROCM_ARCH" in finding.actions[1]
    assert "HSA_OVERRIDE_GFX_VERSION" in finding.actions[2]
    for line in (
        "RuntimeError: HIP error: invalid device function",
        "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",
    ):
        [hip] = _findings(RULE_GPU_ARCH, line)
        assert hip.title.startswith("a binary holds no code for this AMD GPU's architecture: ROCm"), line


def test_tritons_amd_backend_without_the_target_is_a_triton_kernel_that_cannot_be_built():
    # Said-Akbar/triton-gcn5#4's title line, verbatim: vLLM's Triton flash attention on an MI50-class gfx906
    line = (
        'loc("/home/x670e/vllm/ogvllm/vllm/attention/ops/triton_flash_attention.py":309:0): error: unsupported '
        "target: 'gfx906'"
    )
    [finding] = _findings(RULE_GPU_ARCH, line)
    assert finding.title.startswith("Triton's compiler has no target for this AMD GPU's architecture (gfx906)")
    assert "VLLM_USE_TRITON_FLASH_ATTN=0" in finding.actions[2]


def test_rocblas_names_the_target_whatever_stale_reason_it_prints_before_it():
    """rocBLAS prints strerror(errno) after the generic TensileLibrary.dat once no file for the target was found; the
    errno may be an earlier call's (vllm#28460: `Illegal seek` on a Radeon 890M, gfx1150)."""
    line = (
        "rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: Illegal seek for GPU arch : "
        "gfx1150"
    )
    [finding] = _findings(RULE_GPU_ARCH, line)
    assert "(gfx1150)" in finding.title


def test_ptxas_refusing_an_instruction_in_vllms_own_build_is_a_source_build_for_an_older_gpu():
    # vllm#1063, verbatim: vLLM 0.2.0's AWQ GEMM built on a Turing GPU (nvcc's tmpxft_ temporary file)
    line = (
        "ptxas /tmp/tmpxft_0006e7c4_00000000-6_gemm_kernels.ptx, line 928; error   : Feature '.m16n8k16' requires "
        ".target sm_80 or higher"
    )
    [finding] = _findings(RULE_GPU_ARCH, line)
    assert finding.title == ("building vLLM from source for a GPU older than one of its kernels: .m16n8k16 needs sm_80")
    assert "TORCH_CUDA_ARCH_LIST" in finding.actions[1]
    assert finding.changes == []


def test_ptxas_refusing_a_triton_kernels_bfloat16_proposes_half_and_fp8_proposes_none():
    # hiyouga/LlamaFactory#7417's form: Triton's own temporary .ptx at run time on a GPU before Ampere
    bf16 = "ptxas /tmp/tmpmfrp_3wp.ptx, line 277; error   : Feature 'cvt.bf16.f32' requires .target sm_80 or higher"
    [finding] = _findings(RULE_GPU_ARCH, bf16)
    assert finding.title == "a Triton kernel needs sm_80 for cvt.bf16.f32: this GPU is older"
    assert [(change.flag, change.proposed) for change in finding.changes] == [("--dtype", "half")]
    fp8 = bf16.replace("cvt.bf16.f32", "cvt.rn.satfinite.e4m3x2.f32").replace("sm_80", "sm_89")
    [finding] = _findings(RULE_GPU_ARCH, fp8)
    assert "FP8" in finding.summary and "--kv-cache-dtype fp8" in finding.actions[0]
    assert finding.changes == []


def test_tritons_own_refusal_of_fp8_e4m3_is_the_fp8_reading():
    # vllm-project/vllm#54318, verbatim: an FP8 MoE checkpoint's Triton kernel compiled on A100s (sm_80)
    line = (
        "ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', "
        "'fp8e5')\")"
    )
    [finding] = _findings(RULE_GPU_ARCH, line)
    assert finding.title == "a Triton kernel needs sm_89 for fp8e4nv: this GPU is older"
    assert "no FP8 checkpoint" in finding.actions[0]


def test_tritons_older_fp8_assertion_is_a_gpu_before_ada():
    # vllm#8641, verbatim: an FP8 model with an FP8 KV cache on a GPU below sm_89
    [finding] = _findings(RULE_GPU_ARCH, "AssertionError: fp8e4nv data type is not supported on CUDA arch < 89")
    assert "needs sm_89" in finding.title
    assert "--kv-cache-dtype fp8" in finding.actions[0]


def test_a_ptxas_that_does_not_know_the_gpu_is_pointed_at_a_newer_toolkits_ptxas():
    # nvidia-cosmos/cosmos-reason2#30, verbatim: vllm serve on a DGX Spark (GB10, sm_121)
    [finding] = _findings(RULE_GPU_ARCH, "Value 'sm_121a' is not defined for option 'gpu-name'")
    assert "ptxas does not know sm_121a" in finding.title
    assert [(ch.flag, ch.kind) for ch in finding.changes] == [("TRITON_PTXAS_PATH", "env")]


def test_an_offline_call_to_the_hubs_api_proposes_the_cached_snapshots_path():
    # vllm#3719, verbatim: HF_HUB_OFFLINE=1 and vLLM 0.4 still asked the Hub's API about the model
    line = (
        "huggingface_hub.utils._http.OfflineModeIsEnabled: Cannot reach https://huggingface.co/api/models/bigcode/"
        "starcoder: offline mode is enabled. To disable it, please unset the `HF_HUB_OFFLINE` environment variable."
    )
    [finding] = _findings(RULE_HUB_NOT_CACHED, line)
    assert "Hub's API while offline mode is on" in finding.title
    assert "snapshots/<revision>" in finding.actions[0]


def test_a_tool_fetching_config_json_through_urllib_names_the_hub_in_words_and_is_the_same_certificate_reading():
    # ai-dynamo/aiconfigurator#1361, verbatim: fixed by adding ca-certificates to the image (#1362)
    line = (
        "aiconfigurator default: error: argument --model-path/--model: 'Qwen/Qwen3-Coder-Next' is not a valid "
        "HuggingFace model path or local path with config.json. Error: Failed to download Qwen/Qwen3-Coder-Next's "
        "config.json from HuggingFace: <urlopen error [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
        "unable to get local issuer certificate (_ssl.c:1010)>"
    )
    [finding] = _findings(RULE_HUB_NOT_CACHED, line)
    assert "unable to get local issuer certificate" in finding.title and "ca-certificates" in finding.summary
    # a certificate refused by a server that is not the Hub is not this reading
    assert _findings(RULE_HUB_NOT_CACHED, line.replace("HuggingFace", "the registry")) == []


def test_an_amd_gpu_offering_no_e4m3_is_one_before_mi300_and_fp8_goes():
    # vllm#16394, verbatim: DeepSeek-R1's FP8 checkpoint on an MI210 (gfx90a)
    line = "ValueError(\"type fp8e4b8 not supported in this architecture. The supported fp8 dtypes are ('fp8e5',)\")"
    [finding] = _findings(RULE_GPU_ARCH, line)
    assert finding.title.endswith("an AMD GPU without FP8 (before MI300, or a Radeon before RDNA4)")
    assert "fp8e5 offered" in finding.title
    assert "--kv-cache-dtype auto" in finding.actions[0]


def test_a_kernel_asking_for_tritons_own_fp8e4b15_was_written_for_other_gpus():
    # vllm PR #43804, verbatim: a ROCm attention kernel's fp8e4b15 on MI300 (gfx942)
    [finding] = _findings(RULE_GPU_ARCH, "type fp8e4b15 not supported in this architecture")
    assert "written for other GPUs" in finding.title and finding.actions[0].startswith("Upgrade vLLM")


def test_an_e4m3_type_refused_where_triton_offers_another_is_a_kernel_for_other_gpus():
    # MI300 (gfx942) offers both E4M3 flavours' names in its list but not this one; NVIDIA's list holds fp8e4b15
    for line in (
        "type fp8e4b15 not supported in this architecture. The supported fp8 dtypes are ('fp8e4b8', 'fp8e4nv', "
        "'fp8e5', 'fp8e5b16')",
        "type fp8e4b8 not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')",
    ):
        [finding] = _findings(RULE_GPU_ARCH, line)
        assert "written for other GPUs" in finding.title, line
