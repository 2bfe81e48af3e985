"""Failures worded outside vLLM (OP-7.1 … OP-7.5, HL-4), V0's prompt limit (OP-5.15), the client's
max_tokens and the over-long prompt (OP-5.12), and OP-1.1's close fit: each from the text, through the
real log reader and launch-command parser, to the top finding and its change
(docs/environment-failures.md). The incidents these come from are in tests/fixtures/incidents/."""

from __future__ import annotations

from advisor.collect.facts import server_config
from advisor.collect.logs import parse_lines
from advisor.collect.server_args import parse_command
from rules.evaluate import evaluate
from rules.facts import Facts


def _top(text: str, server_args: str | None = None):
    events = parse_lines(text.splitlines()).events
    config = server_config(parse_command(server_args), events, None) if server_args else None
    result = evaluate(Facts(events=events, config=config))
    assert result.errors == [] and result.findings, [f.title for f in result.findings]
    return result.findings[0]


def _changes(finding) -> dict[str, tuple[str, str]]:
    return {c.flag: (c.proposed, c.kind) for c in [*finding.changes, *finding.alternatives]}


def test_an_nccl_shared_memory_segment_that_cannot_be_created_asks_for_a_larger_shm_before_the_worker_death():
    top = _top(
        "[rank0]: Error while creating shared memory segment /dev/shm/nccl-eQz2sT (size 5767520)\n"
        "ERROR 07-23 22:46:18 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 82 died, exit code: -15\n"
    )
    assert top.rule == "OP-7.1" and top.changes[0].command_line() == "--shm-size 10g"
    assert top.changes[0].kind == "setting" and any("--ipc=host" in a for a in top.actions)


def test_nccls_own_warning_that_it_could_not_extend_its_segment_is_the_same_shm_too_small():
    # a GitCode post on Dynamo serving through vLLM with TP above 1 in a container, verbatim; NCCL's shmutils.cc
    top = _top("Error: failed to extend /dev/shm/nccl-YrFC5V to 33030532 bytes, error: No space left on device\n")
    assert top.rule == "OP-7.1" and top.changes[0].command_line() == "--shm-size 10g"


def test_rays_shm_warning_gives_the_size_the_container_has():
    top = _top(
        "WARNING: The object store is using /tmp instead of /dev/shm because /dev/shm has only 67108864 bytes "
        "available."
    )
    assert top.rule == "OP-7.1" and "64 MiB, Docker’s default" in top.title
    assert top.changes[0].current == "64 MiB"


def test_cuda_in_a_forked_worker_proposes_spawned_workers_as_an_environment_variable():
    top = _top(
        "Exception in worker VllmWorkerProcess while processing method init_device: Cannot re-initialize CUDA in "
        "forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method"
    )
    assert top.rule == "OP-7.2"
    assert _changes(top) == {"VLLM_WORKER_MULTIPROC_METHOD": ("spawn", "env")}


def test_a_failing_custom_all_reduce_kernel_falls_back_to_nccl():
    top = _top("[Bug]: Failed: /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:310 'invalid argument'")
    assert top.rule == "OP-7.3" and _changes(top) == {"--disable-custom-all-reduce": ("true", "flag")}


def test_an_nccl_system_error_lists_what_the_host_refuses_nccl_buffsize_first_and_how_to_see_which():
    # vllm#19613: the paste ends at cupy's NcclError; the reporter found NCCL_BUFFSIZE set too large
    top = _top(
        "ERROR 06-13 07:35:59 [core.py:517] cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_SYSTEM_ERROR: "
        "unhandled system error (run with NCCL_DEBUG=INFO for details)"
    )
    assert top.rule == "OP-7.5" and top.changes == []
    assert "NCCL_DEBUG=INFO" in top.actions[0] and "NCCL_BUFFSIZE first" in top.actions[1]
    # with /dev/shm's own error in the log, OP-7.1 names the cause and this rule stays silent
    shm = _top(
        "[rank0]: Error while creating shared memory segment /dev/shm/nccl-eQz2sT (size 5767520)\n"
        "torch.distributed.DistBackendError: NCCL error in: x.cpp:1, unhandled system error\n"
    )
    assert shm.rule == "OP-7.1"


def test_remote_code_refused_in_any_letter_case_asks_for_trust_remote_code():
    top = _top(
        "valueerror: loading internvl2-8b/ requires you to execute the configuration file in that repo on your "
        "local machine. make sure you have read the code there to avoid malicious use, then set the option "
        "'trust_remote_code=true’ to remove this error."
    )
    assert top.rule == "OP-7.4" and _changes(top) == {"--trust-remote-code": ("true", "flag")}


def test_transformers_newer_words_for_remote_code_cut_after_must_be_ask_for_it_too():
    # vllm-project/tpu-inference PR #2927, verbatim: a benchmark client's tokenizer without trust_remote_code (adding
    # --trust-remote-code to the benchmark call made the job pass)
    top = _top("ValueError: The repository moonshotai/Kimi-K2.6 contains custom code which must be")
    assert top.rule == "OP-7.4" and _changes(top) == {"--trust-remote-code": ("true", "flag")}


def test_a_kernel_fault_first_turns_off_the_attention_backend_the_environment_forced():
    fault = "RuntimeError: CUDA error: an illegal memory access was encountered"
    args = (
        "VLLM_ATTENTION_BACKEND=FLASH_ATTN python -m vllm.entrypoints.openai.api_server --enable-prefix-caching -tp 2"
    )
    top = _top(fault, args)
    assert top.rule == "HL-4" and "attention backend (FLASH_ATTN" in top.title
    assert top.changes[0].flag == "VLLM_ATTENTION_BACKEND" and top.changes[0].kind == "env"
    assert top.changes[0].proposed.startswith("<another backend")  # no version in the text: both named
    assert [c.flag for c in top.alternatives] == [
        "--enable-prefix-caching",
        "--disable-custom-all-reduce",
        "--enforce-eager",
    ]
    plain = _top(fault)
    assert [c.flag for c in plain.changes] == ["--enforce-eager"]  # nothing chosen on purpose: graphs first


def test_a_kernel_fault_names_the_attention_backend_the_log_says_vllm_chose_last():
    """Not forced, so not first: after the launch's own choices, the backend the selector printed, swapped for
    another of its kind (FlashInfer -> FlashAttention, an MLA backend -> another MLA backend)."""
    fault = "RuntimeError: CUDA error: an illegal memory access was encountered"
    chosen = "(VllmWorker TP0 pid=1) INFO 07-01 10:00:00 [cuda.py:214] Using FlashInfer backend on V1 engine."
    top = _top(f"{chosen}\n{fault}")
    assert [c.flag for c in top.changes] == ["--enforce-eager"]
    [backend] = top.alternatives
    assert (backend.flag, backend.kind, backend.proposed) == ("VLLM_ATTENTION_BACKEND", "env", "FLASH_ATTN")
    mla = _top(f"INFO 07-01 10:00:00 [cuda.py:205] Using FlashMLA backend on V1 engine.\n{fault}")
    assert mla.alternatives[-1].proposed == "TRITON_MLA"


def test_a_v0_prompt_over_the_token_budget_raises_the_budget_not_the_context():
    top = _top(
        "WARNING 02-16 15:37:32 scheduler.py:947] Input prompt (2501 tokens) is too long and exceeds limit of 2048",
        "vllm serve m --max-model-len 128000 --tensor-parallel-size 8",
    )
    assert top.rule == "OP-5.15" and "too long" in top.title and "2048" in top.title
    assert _changes(top) == {"--max-num-batched-tokens": ("4096", "flag")}
    unknown = _top(
        "WARNING 02-16 15:37:32 scheduler.py:947] Input prompt (2501 tokens) is too long and exceeds limit of 2048"
    )
    assert unknown.rule == "OP-5.15" and unknown.changes == []  # without the launch flags the limit may be the context


def test_a_reporters_placeholder_for_the_prompt_count_still_gives_the_limit():
    # xorbitsai/inference PR #2385, verbatim: Xinference had passed vLLM max_model_len=4096
    top = _top("> Input prompt (xxxx tokens) is too long and exceeds limit of 4096")
    assert top.rule == "OP-5.15" and "limit of 4096 tokens" in top.title
    assert top.actions[0].startswith("If --max-model-len is 4096 (set by you, or by a framework")


def test_a_v0_prompt_over_the_whole_kv_cache_asks_for_cache_memory_not_a_budget():
    # vllm#2198, verbatim: V0's block manager drops a prompt needing more blocks than the GPU cache holds
    line = (
        "WARNING 12-19 10:21:05 scheduler.py:161] Input prompt (1217 tokens) is too long and exceeds the capacity "
        "of block_manager"
    )
    top = _top(line, "python -m vllm.entrypoints.openai.api_server --model m --gpu-memory-utilization 0.9")
    assert top.rule == "OP-5.52" and "1,217 tokens" in top.title
    assert _changes(top) == {"--gpu-memory-utilization": ("0.95", "flag")}
    already = _top(line, "python -m vllm.entrypoints.openai.api_server --model m --gpu-memory-utilization 0.99")
    assert already.rule == "OP-5.52" and already.changes == []  # nothing left to raise: the actions free memory
    assert "--enforce-eager" in already.actions[0] and "--max-model-len below 1,217" in already.actions[1]


def test_a_prompt_alone_over_the_context_offers_a_longer_context_as_an_unsafe_alternative():
    top = _top(
        "{'object': 'error', 'message': \"This model's maximum context length is 32768 tokens. However, you "
        "requested 41648 tokens (37552 in the messages, 4096 in the completion). Please reduce the length of the "
        "messages or completion. None\", 'type': 'BadRequestError', 'param': None, 'code': 400}"
    )
    assert top.rule == "OP-5.12" and "context length" in top.title and "--max-model-len 32768" in top.title
    assert top.changes == [] and top.alternatives[0].proposed == "41984" and top.alternatives[0].safety == "unsafe"


def test_a_max_tokens_that_fills_the_context_is_lowered_in_the_client():
    top = _top(
        "An error occurred: `This model's maximum context length is 8192 tokens. However, you requested 8204 tokens "
        "(12 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.`"
    )
    assert top.rule == "OP-5.12" and top.changes == [] and top.alternatives == []
    assert top.actions[0].startswith("Lower the request's max_tokens in the client to at most 8,180")


def test_a_kv_cache_a_few_percent_short_raises_the_memory_share_and_keeps_the_context():
    close = _top(
        "ValueError: To serve at least one request with the model's max seq len (196608), 23.25 GiB KV cache is "
        "needed, which is larger than the available KV cache memory (22.5 GiB). Based on the available memory, the "
        "estimated maximum model length is 190272."
    )
    assert close.rule == "OP-1.1" and close.changes[0].flag == "--gpu-memory-utilization"
    assert float(close.changes[0].proposed) > float(close.changes[0].current)
    assert close.alternatives[0].flag == "--max-model-len"
    far = _top(
        "ValueError: To serve at least one request with the model's max seq len (131072), (16.00 GiB KV cache is "
        "needed, which is larger than the available KV cache memory (0.71 GiB). Based on the available memory, the "
        "estimated maximum model length is 5632."
    )
    assert far.changes[0].flag == "--max-model-len"


def test_rays_raylet_asking_dev_shm_for_more_than_it_has_proposes_a_larger_shm_size():
    # gpustack/gpustack#5014, verbatim: the raylet's object store in a container with ~9 GB of /dev/shm
    top = _top(
        "[2026-03-25 05:44:29,435 W 39 39] (raylet) store_runner.cc:83: System memory request exceeds memory available "
        "in /dev/shm. The request is for 10200547328 bytes, and the amount available is 9663676416 bytes."
    )
    assert top.rule == "OP-7.1" and "9216 MiB" in top.title
    assert top.changes[0].flag == "--shm-size" and top.changes[0].proposed == "10g"
