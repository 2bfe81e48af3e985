"""Every real incident of tests/fixtures/incidents/ triaged as a user would paste it, one test per case.

A case passes when the top finding names the cause the thread confirmed and proposes its first fix
(benchmarks/incident_corpus.py says exactly how it is judged). The expectations were written from the
threads before servops ran and are never edited to fit; the cases servops gets wrong today are listed in
`WRONG_TODAY` and run as strict expected failures, so each still counts as wrong in the score and a fix
that makes one right fails here until it is moved off the list. Whatever a case holds, triage must read
it: no case may be refused.
"""

from __future__ import annotations

import pytest

from benchmarks.incident_corpus import judge, load_cases, triage_case

CASES = load_cases()
# Wrong at the top finding on 2026-12-07 (`.venv/bin/python benchmarks/incident_corpus.py`); see BENCHMARKS.md.
WRONG_TODAY = frozenset(
    {
        "perf-async-engine-enforce-eager",
        "perf-bmv2-prefix-warmup-slow",
        "perf-lmcache-prefix-hit-overhead",
        "performance-decode-tps-context-decay",
        "performance-olmocr-omp-threads-overload",
        "performance-outlines-guided-decoding-slow",
        "performance-structured-output-bitmask-regression",
        "performance-tt-multistep-metric-undercount",
        "runtime-arctic-suffix-decoding-over-max-model-len",
        "runtime-areal-disk-weight-update-paused",
        "runtime-autogen-client-missing-model-capabilities",
        "runtime-bad-words-tokenizer-already-borrowed",
        "runtime-bench-random-range-ratio-context",
        "runtime-chatglm3-stop-token-id-left-in-output",
        "runtime-claude-code-system-role-anthropic-validation",
        "runtime-dspy-hfclientvllm-extra-fields-rejected",
        "runtime-evalscope-swebench-oracle-over-context",
        "runtime-fastchat-vllm-worker-embeddings-404",
        "runtime-function-call-message-400",
        "runtime-glm41v-video-rotary-assert-vllm-bug",
        "runtime-gptoss-gb10-illegal-address-build",
        "runtime-ipex-llm-multi-arc-oom-fixed-image",
        "runtime-kserve-lora-adapter-not-in-model-registry",
        "runtime-llama4-fa3-scheduler-metadata",
        "runtime-llmd-nixl-keyerror-prefill",
        "runtime-minicpmo45-audio-pool-step-stage0-crash",
        "runtime-mm-extra-image-placeholder-token",
        "runtime-mm-image-fetch-timeout-500",
        "runtime-mooncake-ascend-pd-global-segment-size",
        "runtime-openrlhf-async-vllm016-collective-rpc",
        "runtime-qwen25vl-video-url-decord-missing",
        "runtime-qwen35-flashinfer-gdn-prefill-timeout",
        "runtime-qwen35-nvfp4-b200-flashinfer-moe-hang",
        "runtime-qwen3vl-async-sched-race",
        "runtime-rerank-qwen3-reranker-no-template-scores",
        "runtime-skyrl-sleep-inflight-illegal-address",
        "runtime-smolagents-openaiservermodel-content-parts-500",
        "runtime-toolstar-verl-vllm-rollout-tp-actor-died",
        "runtime-unsloth-grpo-trl-reload-weights",
        "runtime-v0-hang-requests-running-pending-cuda-graph",
        "runtime-v0-prefix-caching-illegal-memory-access",
        "runtime-v1-invalid-guided-regex-kills-enginecore",
        "runtime-v1-rpc-execute-model-timeout-enginedead",
        "runtime-v2-embed-input-type-two-message-template",
        "runtime-xinference-vllm-rerank-score-wrong",
        "startup-activation-ops-undefined-symbol-torch",
        "startup-art-0312-t4-vllm-load",
        "startup-ascend-benchmarks-module-missing",
        "startup-ascend-dsv4-flash-fp8-weights",
        "startup-dual-spark-multiproc-cross-node-semlock",
        "startup-gaudi-inc-transformers-conv1d",
        "startup-gaudi1-unsupported",
        "startup-gemma4-transformers-5-15-head-dim",
        "startup-gpustack-mp-multinode-zmq-port-collision",
        "startup-kserve-flashinfer-jit-ninja",
        "startup-kunlun-speculative-attention-warmup",
        "startup-kvcached-patches-not-applied",
        "startup-localai-vllm-backend-not-built",
        "startup-minicpmv-bnb-int4-unsupported",
        "startup-mxfp4-sharded-state-checkpoint-shape",
        "startup-nvfp4a4-sm120-unsupported",
        "startup-offload-shm-leak-restart",
        "startup-omni-stage-ready-timeout-incomplete-weights",
        "startup-pascal-vllm-package-not-found",
        "startup-phi3-small-blocksparse-v100",
        "startup-runpod-workspace-mount-hides-vllm",
        "startup-search-r1-engineargs-model-hf-config-vllm07",
        "startup-showui-qwen2vl-processor-profiling",
        "startup-spark-cluster-pp-ray-kv-cache-keyerror",
        "startup-strix-halo-bios-vram-carveout",
        "startup-unsloth-dynamic-bnb4bit-shape-assert",
        "startup-v1-gpu-memory-utilization-1-engine-core-failed",
        "startup-vllm-neuron-missing-nxdi",
        "startup-xinference-vllm-oom-embedding-same-gpu",
        "v0-hang-kv-full-pending-scaled-gpus",
        "v1-hybrid-page-tax-max-concurrency-misread",
        "v1-specdecode-dflash-acceptance-collapse",
    }
)


def test_the_corpus_is_at_least_sixty_real_cases_of_every_kind():
    kinds = {case.kind for case in CASES}
    assert len(CASES) >= 60 and kinds == {"startup", "runtime", "performance"}
    assert WRONG_TODAY <= {case.id for case in CASES}, "a case on the wrong-today list is not in the corpus"


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(case, marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason="wrong today"))
        if case.id in WRONG_TODAY
        else case
        for case in CASES
    ],
    ids=lambda case: case.id,
)
def test_the_top_finding_names_the_confirmed_cause_and_fix(case):
    result = triage_case(case)  # never refused: a refusal raises here and fails even the expected failures
    verdict = judge(case, result)
    assert verdict.right, verdict.model_dump()


def test_the_judge_compares_sizes_in_their_units():
    """`--shm-size 64 MiB -> 10g` is a raise: the judge reads a size with its unit, not its bare number."""
    from benchmarks.incident_corpus import Fix, fix_matches
    from rules.model import Category, ConfigChange, Finding, Severity

    def finding(current: str, proposed: str) -> Finding:
        change = ConfigChange(flag="--shm-size", current=current, proposed=proposed, reason="r", kind="setting")
        return Finding(
            rule="OP-7.1", severity=Severity.CRITICAL, category=Category.PARALLELISM, title="t", changes=[change]
        )

    raise_shm = Fix(setting="--shm-size", direction="raise")
    assert fix_matches(raise_shm, finding("64 MiB", "10g"))
    assert not fix_matches(raise_shm, finding("10gb", "64m"))
    assert fix_matches(Fix(flag="--shm-size", direction="lower"), finding("0.95", "0.9"))


def test_the_judge_reads_a_setting_written_in_words_by_its_words_and_direction():
    """A setting the expectation names in words must have each word outside parentheses in one action, with a
    word of its direction; one written as a name must appear as written; an upgrade must be said."""
    from benchmarks.incident_corpus import Fix, fix_matches
    from rules.model import Category, Finding, Severity

    def finding(*actions: str) -> Finding:
        return Finding(
            rule="X", severity=Severity.HIGH, category=Category.RELIABILITY, title="t", actions=list(actions)
        )

    client = Fix(setting="request max_tokens (client side)", direction="lower")
    assert fix_matches(client, finding("Lower the request's max_tokens in the client to fit the context."))
    assert not fix_matches(client, finding("Raise the request's max_tokens."))  # the wrong direction
    assert not fix_matches(client, finding("Lower --max-model-len."))  # not the setting's words
    gpus = Fix(setting="number of GPUs serving the model", direction="raise")
    assert not fix_matches(gpus, finding("Raise the GPU count (replicas, or larger GPUs)."))  # words, not meaning
    named = Fix(env="NCCL_BUFFSIZE", direction="unset")
    assert fix_matches(named, finding("Unset NCCL_BUFFSIZE.")) and not fix_matches(named, finding("Unset NCCL."))
    build = Fix(setting="vLLM build containing commit abc", direction="upgrade")
    assert fix_matches(build, finding("Upgrade vLLM.")) and not fix_matches(build, finding("Restart."))
