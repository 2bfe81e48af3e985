"""OP-3.5: NCCL's result, as torch prints it, says where to look when no rule names a cause of its own."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.catalog.op3_nccl_result import RULE_NCCL_RESULT
from rules.catalog.op7_environment import RULE_NCCL_SYSTEM
from rules.events import LogEventKind as K
from rules.facts import Facts
from tests.unit.rules.factories import top_finding

TORCH = "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:93, {}"


def _findings(*lines: str):
    return RULE_NCCL_RESULT.evaluate(Facts(events=parse_lines(list(lines)).events))


@pytest.mark.parametrize(
    ("words", "name"),
    [
        ("unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5", "ncclUnhandledCudaError"),
        ("internal error - please report this issue to the NCCL developers, NCCL version 2.21.5", "ncclInternalError"),
        ("invalid argument (run with NCCL_DEBUG=WARN for details), NCCL version 2.21.5", "ncclInvalidArgument"),
        ("invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.27.3", "ncclInvalidUsage"),
        ("remote process exited or there was a network error, NCCL version 2.21.5", "ncclRemoteError"),
    ],
)
def test_each_result_ncclgeterrorstring_words_is_named(words, name):
    [finding] = _findings(TORCH.format(words))
    assert finding.title.startswith(f"NCCL failed ({name}): ")


@pytest.mark.parametrize(
    ("line", "name"),
    [  # deepseek-ai/DeepSeek-V2#76 (vLLM 0.5.3.post1 over Ray) and vllm#427 (vLLM 0.1, Ray's C++ log), verbatim
        (
            "(RayWorkerWrapper pid=23558, ip=10.0.128.18) ERROR 07-28 13:53:40 worker_base.py:382] RuntimeError: NCCL "
            "Error 3: internal error - please report this issue to the NCCL developers",
            "ncclInternalError",
        ),
        (
            "[2023-07-11 15:20:41,680 E 42067 42067] logging.cc:97: Unhandled exception: St13runtime_error. what(): "
            "NCCL Error 5: invalid usage",
            "ncclInvalidUsage",
        ),
    ],
)
def test_torchs_older_nccl_error_with_the_results_number_is_named(line, name):
    [finding] = _findings(line)
    assert finding.title.startswith(f"NCCL failed ({name}): ")


def test_nccls_duplicate_gpu_check_under_invalid_usage_is_the_cause_itself():
    """NCCL's init check (init.cc) for two ranks on one GPU, printed under torch's `invalid usage` as vLLM's workers
    log it."""
    prefix = "(Worker_PP1_TP0 pid=3954408) ERROR 02-27 00:29:48 [multiproc_executor.py:863] "
    [finding] = _findings(
        prefix + TORCH.format("invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.27.3"),
        prefix + "Last error:",
        prefix + "Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000",
    )
    assert finding.title.endswith("two ranks of one NCCL group are on the same GPU (Duplicate GPU detected)")
    assert finding.evidence[0].location == "log:3"


def test_the_cuda_failure_under_an_unhandled_cuda_error_is_quoted():
    [finding] = _findings(
        TORCH.format("unhandled cuda error (run with NCCL_DEBUG=INFO for details)"),
        "Cuda failure 'peer access is not supported between these two devices'",
    )
    assert "peer access is not supported" in finding.summary
    assert "NCCL_P2P_DISABLE=1" in finding.actions[0]


@pytest.mark.parametrize(
    "lines",
    [
        # torch's words over two logical lines joined into one, as a bare paste is read
        [
            TORCH.format("unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5"),
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
            "Last error:",
            "Cuda failure 'peer access is not supported between these two devices'",
        ],
        # each line under a vLLM worker's prefix, NCCL 2.26's CUDA error number before its words
        [
            f"(VllmWorker rank=1 pid=2211) ERROR 07-14 03:02:11 [multiproc_executor.py:527] {line}"
            for line in (
                TORCH.format("unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.26.2"),
                "Last error:",
                "Cuda failure 217 'peer access is not supported between these two devices'",
            )
        ],
        # NCCL_DEBUG's own WARN line (transport/shm.cc), alone
        [
            "host-1:2211:2300 [1] transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is not supported "
            "between these two devices'"
        ],
    ],
)
def test_peer_access_refused_is_the_cause_even_under_a_system_error(lines):
    """CUDA's cudaErrorPeerAccessUnsupported as NCCL's last error: vLLM's troubleshooting guide's known issue on PCIe
    machines (NCCL_CUMEM_HOST_ENABLE=0, NVIDIA/nccl#1838), and OP-7.5's generic system error stays silent."""
    facts = Facts(events=parse_lines(lines).events)
    [finding] = RULE_NCCL_RESULT.evaluate(facts)
    assert finding.title.startswith("NCCL failed (cudaErrorPeerAccessUnsupported): ")
    assert "NCCL_CUMEM_HOST_ENABLE=0" in finding.actions[0] and "NCCL_P2P_DISABLE=1" in finding.actions[0]
    assert RULE_NCCL_SYSTEM.evaluate(facts) == []


@pytest.mark.parametrize(
    "lines",
    [
        # out of memory under an unhandled cuda error is OP-3.4's
        [TORCH.format("unhandled cuda error"), "Cuda failure 'out of memory'"],
        # a system error is OP-7.5's: torch's words for it are read as that kind, not as this rule's
        [TORCH.format("unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5")],
    ],
)
def test_causes_with_rules_of_their_own_stay_theirs(lines):
    assert _findings(*lines) == []


def test_torchs_words_for_a_system_error_are_the_system_errors_kind():
    [event] = parse_lines([TORCH.format("unhandled system error (run with NCCL_DEBUG=INFO for details)")]).events
    assert event.kind == K.NCCL_SYSTEM_ERROR


def test_vllms_own_nccl_wrapper_words_read_the_same_and_its_system_error_stays_op75s():
    """vLLM's PyNcclCommunicator raises `NCCL error: <ncclGetErrorString's words>` (pynccl_wrapper.py, 0.32); the
    form quoted from vllm#7896 and from a TP-2 start on AMD, where RCCL answers in NCCL's words."""
    [finding] = _findings("RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)")
    assert finding.title == "NCCL failed (ncclUnhandledCudaError): a call NCCL made to CUDA failed"
    [event] = parse_lines(
        ["RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"]
    ).events
    assert event.kind == K.NCCL_SYSTEM_ERROR


def test_no_network_interface_under_any_result_names_nccl_socket_ifname():
    """NCCL's bootstrap returns ncclInternalError (older) or ncclInvalidUsage (newer) with this WARN; its words are
    the cause, whichever result torch prints above them, and NCCL_DEBUG's line alone says as much."""
    for result in ("internal error - please report this issue to the NCCL developers", "invalid usage"):
        [finding] = _findings(
            TORCH.format(f"{result}, NCCL version 2.21.5"), "Last error:", "Bootstrap : no socket interface found"
        )
        assert finding.title == (
            "NCCL failed (no network interface): NCCL found no network interface to use (Bootstrap : no socket "
            "interface found)"
        )
        assert "NCCL_SOCKET_IFNAME" in finding.actions[0] and "GLOO_SOCKET_IFNAME" in finding.actions[1]
    [alone] = _findings("gpu-01:123:123 [0] bootstrap.cc:45 NCCL WARN Bootstrap : no socket interface found")
    assert alone.title.startswith("NCCL failed (no network interface)")
    [listen] = _findings("gpu-01:1:1 [0] NCCL WARN NET/Socket : No usable listening interface found")
    assert listen.title.startswith("NCCL failed (ncclSystemError): NCCL's socket transport found no interface")


def test_the_infiniband_transports_own_lines_name_the_fabric_over_the_result():
    # OpenRLHF#335: vLLM's LLMRayActor weight sync over InfiniBand, NCCL_DEBUG's WARN before torch's result
    verbs = (
        "(LLMRayActor pid=1112, ip=172.26.5.7) job-hvjmrsm8sqf4r2h5q2tl-worker-0:1112:13532 [0] ibvwrap.c:160 NCCL "
        "WARN Call to ibv_modify_qp failed with error Connection timed out"
    )
    [finding] = _findings(
        verbs, TORCH.format("remote process exited or there was a network error, NCCL version 2.21.5")
    )
    assert finding.title.startswith("NCCL failed (InfiniBand verbs call failed)")
    assert "ibstat" in finding.actions[0] and "NCCL_IB_DISABLE=1" in finding.actions[-1]
    completion = (
        "node1:1234:5678 [3] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<41816> with error 12, opcode 32753, "
        "len 0, vendor err 129 (Recv)"
    )
    [transfer] = _findings(completion)
    assert (
        transfer.title.startswith("NCCL failed (InfiniBand transfer failed)")
        and "status 12" in transfer.actions[0].lower()
    )
    # OpenRLHF#621: the mlx5 verbs provider's own line
    [mlx5] = _findings("(LLMRayActor pid=90738, ip=172.19.24.110) mlx5: host_unknown: got completion with error:")
    assert mlx5.title.startswith("NCCL failed (InfiniBand transfer failed)")


def test_a_memory_registration_refused_under_a_system_error_stays_op_7_5s():
    lines = [
        "host:1:2 [0] NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory",
        TORCH.format("unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5"),
    ]
    assert _findings(*lines) == []
    assert RULE_NCCL_SYSTEM.evaluate(Facts(events=parse_lines(lines).events))


@pytest.mark.parametrize(
    ("line", "result"),
    [
        # vllm#3722, verbatim with its indentation (vLLM 0.4.0, TP=4 over two nodes with Ray): torch's detail line
        (
            "    ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
            "prematurely.",
            "ncclRemoteError",
        ),
        ("ncclUnhandledCudaError: Call to CUDA function failed.", "ncclUnhandledCudaError"),
    ],
)
def test_torchs_detail_line_alone_names_its_result(line: str, result: str):
    [finding] = RULE_NCCL_RESULT.evaluate(Facts(events=parse_lines([line]).events))
    assert finding.title.startswith(f"NCCL failed ({result})")
    if result == "ncclRemoteError":
        assert "other ranks' logs" in finding.actions[0]


def test_nccls_nvls_transport_failing_its_setup_proposes_turning_nvls_off():
    # vllm#9369, verbatim (NCCL_DEBUG's line; every TP above 1 on one host failed)
    line = (
        "kmaker-54-033138205093:44712:44746 [2] transport/nvls.cc:246 NCCL WARN Cuda failure 3 'initialization error'"
    )
    [finding] = _findings(line)
    assert finding.title.startswith("NCCL failed (NVLS setup failed)") and "NVLS transport" in finding.summary
    assert "NCCL_NVLS_ENABLE=0" in finding.actions[0] and "nvidia-fabricmanager" in finding.actions[1]


def test_nvls_multicast_memory_that_could_not_be_bound_is_the_nvls_transport_with_or_without_its_file():
    # aarora79/agentic-coding-harness-benchmarks PR #173, verbatim: every TP=8 start on a p5en.48xlarge failed until
    # NCCL_NVLS_ENABLE=0
    for line in (
        "transport/nvls.cc:287 NCCL WARN Failed to bind NVLink SHARP (NVLS) Multicast memory",
        "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 401",
    ):
        top = top_finding(line)
        assert top is not None and top.rule == "OP-3.5" and "NVLS setup failed" in top.title, line
        assert top.actions[0].startswith("Set NCCL_NVLS_ENABLE=0")
