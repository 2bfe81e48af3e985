"""vLLM's defaults for flags left out: one table (rules/vllm_defaults.py), three readers that agree.

The memory model (advisor/catalog/vllm_versions.py), the rules (rules/catalog/common.py) and the replay's
scheduler limits (advisor/perf/limits.py) each ask what a server runs with when --max-num-seqs,
--max-num-batched-tokens or --block-size is left out; issue #46 found their copies disagreeing (an H100
replayed with 256 sequences while the rules assumed 1024). They must give the same answer for the same
server, on every version and device the project reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from advisor.catalog import vllm_versions as V
from advisor.catalog.gpus import GpuSpec, gpu_from_memory, resolve_gpu
from advisor.collect.server_args import parse_command
from advisor.perf import limits as L
from rules import vllm_defaults as D
from rules.catalog import common as c
from rules.facts import Facts, Hardware, ServerConfig

VERSIONS = ("0.8.0", "0.9.0", "0.20", "0.28", "0.33")
GPUS = ("A100-SXM-80GB", "H100-SXM-80GB", "L4", "H200", "B200")
BUNDLED_VERSION = "0.33.0+servops.0.1.0"  # what the bundled engine reports, whatever vLLM it mimics


@dataclass(frozen=True)
class Server:
    """One server of the grid: vLLM on a catalog GPU, on its CPU backend (world size), or the bundled engine."""

    version: str
    device: str  # "cuda" | "cpu" | "bundled"
    gpu: str | None = None
    world_size: int = 1

    def __str__(self) -> str:
        return f"{self.device}-{self.gpu or self.world_size}-{self.version}"


SERVERS = [
    *(Server(version, "cuda", gpu=gpu) for version in VERSIONS for gpu in GPUS),
    *(Server(version, "cpu", world_size=world) for version in VERSIONS for world in (1, 2)),
    *(Server(version, "bundled") for version in VERSIONS),
]


def _advisor(server: Server) -> tuple[int, int, int]:
    """advisor/catalog/vllm_versions.py: a GPU spec for CUDA and the bundled engine (its CPU "device"
    budget, arch "cpu"), cpu_batch_defaults for vLLM's CPU backend."""
    version = V.parse_version(server.version)
    if server.device == "cpu":
        cpu = V.cpu_batch_defaults(server.world_size)
        read = V.vllm_cpu_defaults(version, server.world_size)
        assert read is None if version < V.CPU_DEFAULTS_FROM else read == cpu  # the collector's view of it
        return cpu["max_num_seqs"], cpu["max_num_batched_tokens"], cpu["block_size"]
    gpu: GpuSpec = resolve_gpu(server.gpu) if server.device == "cuda" else gpu_from_memory(100.0, device="cpu")
    return (
        V.default_max_num_seqs(version, gpu),
        V.default_max_num_batched_tokens(version, gpu),
        V.default_block_size(False, gpu),
    )


def _facts(server: Server) -> Facts:
    """The facts triage builds for that server: its version, the CPU backend's device and ranks, the GPU."""
    if server.device == "bundled":
        return Facts(config=ServerConfig(vllm_version=BUNDLED_VERSION), hardware=Hardware(usable_gib=100.0))
    if server.device == "cpu":
        return Facts(
            config=ServerConfig(vllm_version=server.version, device="cpu", tensor_parallel_size=server.world_size)
        )
    gpu = resolve_gpu(server.gpu)
    return Facts(
        config=ServerConfig(vllm_version=server.version),
        hardware=Hardware(gpu_name=gpu.name, usable_gib=gpu.usable_gib),
    )


def _rules(server: Server) -> tuple[int, int, int]:
    facts = _facts(server)
    return c.default_max_num_seqs(facts), c.batched_tokens(facts), c.block_size(facts)


def _limits(server: Server) -> tuple[int, int, int]:
    """advisor/perf/limits.py: the replay's limits for the same launch with the flags left out."""
    if server.device == "bundled":
        limits = L.limits_for(parse_command("python -m engine serve --model m"), "bundled")
    elif server.device == "cpu":
        command = parse_command(f"VLLM_CPU_KVCACHE_SPACE=1 vllm serve m -tp {server.world_size}")
        limits = L.limits_for(command, "vllm-cpu", version=V.parse_version(server.version))
    else:
        gpu = resolve_gpu(server.gpu)
        limits = L.limits_for(
            parse_command("vllm serve m"),
            "vllm-cuda",
            version=V.parse_version(server.version),
            usable_gib=gpu.usable_gib,
            gpu_name=gpu.name,
        )
    return limits.max_num_seqs, limits.max_num_batched_tokens, limits.block_size


@pytest.mark.parametrize("server", SERVERS, ids=str)
def test_the_three_readers_agree_on_every_version_and_device(server):
    advisor, rules, limits = _advisor(server), _rules(server), _limits(server)
    assert advisor == rules == limits, f"advisor {advisor}, rules {rules}, limits {limits}"


@pytest.mark.parametrize("version", VERSIONS)
def test_the_memory_share_agrees_between_the_advisor_and_the_rules(version):
    for server in (Server(version, "cuda", gpu="H100-SXM-80GB"), Server(version, "cpu")):
        assert c.gpu_memory_utilization(_facts(server)) == V.default_gpu_memory_utilization(V.parse_version(version))
    assert c.gpu_memory_utilization(_facts(Server(version, "bundled"))) == D.BUNDLED_GPU_MEMORY_UTILIZATION


@pytest.mark.parametrize(
    ("version", "gpu", "seqs", "tokens"),
    [
        # vllm/engine/arg_utils.py, the OpenAI API server's batch defaults (docs/reference.md §4.3)
        ((0, 8, 0), "L4", 1024, 2048),  # 0.8.0-0.8.4: 1024 sequences on every GPU
        ((0, 8, 5), "L4", 256, 2048),  # 0.8.5: by device memory
        ((0, 8, 5), "A100-SXM-80GB", 1024, 8192),  # A100 still in the >= 70 GiB tier
        ((0, 9, 0), "A100-SXM-80GB", 256, 2048),  # 0.9: A100 left out of it (PR #17885)
        ((0, 33, 0), "H100-SXM-80GB", 1024, 8192),  # 79.18 GiB >= 70
        ((0, 33, 0), "H200", 1024, 8192),  # 139.8 GiB: below the 160 GiB tier
        ((0, 27, 0), "B200", 1024, 8192),  # no 160 GiB tier before 0.28
        ((0, 28, 0), "B200", 1024, 16384),  # 180 GiB >= 160 from 0.28
        (None, "H100-SXM-80GB", 1024, 8192),  # version unknown: the newest release's tiers
        (None, "B200", 1024, 16384),
    ],
)
def test_the_cuda_batch_tiers_follow_vllms_arg_utils(version, gpu, seqs, tokens):
    spec = resolve_gpu(gpu)
    assert D.max_num_seqs(version, "cuda", spec.usable_gib, spec.name) == seqs
    assert D.max_num_batched_tokens(version, "cuda", spec.usable_gib, spec.name) == tokens


@pytest.mark.parametrize("version", [(0, 2, 7), (0, 5, 5), (0, 7, 3)])
def test_v0_releases_run_256_sequences_on_every_gpu(version):
    """0.2-0.7 served with V0, whose EngineArgs.max_num_seqs was 256 whatever the GPU (read in the 0.2.7, 0.4.0
    and 0.5.5 wheels; 0.6-0.7 set 256 unless VLLM_USE_V1=1); the 1024 of large GPUs came with V1 in 0.8."""
    for gpu in ("L4", "H100-SXM-80GB", "B200"):
        spec = resolve_gpu(gpu)
        assert D.max_num_seqs(version, "cuda", spec.usable_gib, spec.name) == 256


def test_an_unknown_gpu_reads_as_below_every_tier():
    assert (D.max_num_seqs((0, 33, 0)), D.max_num_batched_tokens((0, 33, 0))) == (256, 2048)
    assert D.is_a100("NVIDIA A100-SXM4-80GB") and not D.is_a100("H100-SXM-80GB")  # vLLM: "a100" in the name


def test_the_cpu_backend_scales_its_batch_caps_with_the_ranks_not_its_block():
    """vLLM 0.32 engine/arg_utils.py get_batch_defaults ("cpu specific default values", x world_size =
    TP x PP) and platforms/cpu.py check_and_update_config (block size 128)."""
    assert D.cpu_batch_defaults(1) == {"max_num_seqs": 128, "max_num_batched_tokens": 2048, "block_size": 128}
    assert D.cpu_batch_defaults(4) == {"max_num_seqs": 512, "max_num_batched_tokens": 8192, "block_size": 128}


def test_the_bundled_engine_keeps_its_own_defaults_whatever_its_budget():
    """engine/core/config.py EngineConfig: 256 sequences, block 16, 2048 tokens with chunked prefill,
    else max(max_model_len, 2048); tests/unit/advisor/perf/test_limits.py holds them equal to EngineConfig."""
    assert D.max_num_seqs(None, "bundled", usable_gib=200.0) == 256
    assert D.max_num_batched_tokens(None, "bundled", usable_gib=200.0) == 2048
    assert D.max_num_batched_tokens(None, "bundled", chunked_prefill=False, max_model_len=8192) == 8192
    assert D.block_size("bundled", "hopper", is_mla=True) == 16


def test_block_size_and_memory_share_follow_vllms_cache_config():
    """vllm/config/cache.py: block 16 (FlashMLA 64 for MLA on Hopper/Blackwell); share 0.9 up to 0.19,
    0.92 from 0.20; an unknown version reads as 0.90."""
    assert (D.block_size(), D.block_size("cuda", "hopper", is_mla=True), D.block_size("cuda", "ampere", True)) == (
        16,
        64,
        16,
    )
    assert D.gpu_memory_utilization((0, 19, 0)) == 0.9 and D.gpu_memory_utilization((0, 20, 0)) == 0.92
    assert D.gpu_memory_utilization(None) == 0.9
