"""OP-7.49: torch.compile's failures under vLLM, and vLLM's own words for a broken compile cache."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog.op7_compile import RULE
from rules.facts import Facts
from tests.unit.rules.factories import top_finding

PREFIX = "(EngineCore_DP0 pid=2453) ERROR 10-02 11:20:20 [core.py:708] "
INDUCTOR = [
    PREFIX + "EngineCore failed to start.",
    PREFIX + "Traceback (most recent call last):",
    PREFIX + '  File "/usr/local/lib/python3.12/dist-packages/vllm/compilation/backends.py", line 202, in compile',
    PREFIX + "    compiled_graph = self.compiler.compile(",
    PREFIX
    + "torch._inductor.exc.InductorError: AssertionError: type(self)=<class 'torch._inductor.scheduler.Scheduler'>",
]
CORRUPTED = (
    "RuntimeError: vLLM failed to compile the model. The most likely reason for this is that a previous compilation "
    "failed, leading to a corrupted compilation artifact. We recommend trying to remove "
    "~/.cache/vllm/torch_compile_cache and try again to see the real issue."
)


def _findings(*lines: str):
    return RULE.evaluate(Facts(events=parse_lines(list(lines)).events))


def test_an_inductor_error_proposes_serving_uncompiled_and_names_the_torch_vllm_pins():
    [finding] = _findings(*INDUCTOR)
    assert finding.title == (
        "torch.compile failed in Inductor while vLLM compiled the model: InductorError: AssertionError: "
        "type(self)=<class 'torch._inductor.scheduler.Scheduler'>"
    )
    assert [change.command_line() for change in finding.changes] == ["--enforce-eager"]
    assert "pip show vllm torch triton" in finding.actions[0]
    assert "-cc.mode=none" in finding.actions[2]


def test_dynamos_backend_failure_with_the_inner_error_on_the_next_line():
    [finding] = _findings(
        "torch._dynamo.exc.BackendCompilerFailed: backend='<vllm.compilation.backends.VllmBackend object at 0x7f>' "
        "raised:",
        "RuntimeError: Triton Error [CUDA]: invalid argument",
    )
    assert finding.title == "torch.compile failed in its compiler backend while vLLM compiled the model"


def test_vllms_own_words_for_a_broken_cache_propose_clearing_it_not_eager_mode():
    for line in (CORRUPTED, "AssertionError: failed to get the hash of the compiled graph"):
        [finding] = _findings(line)
        assert finding.title.startswith("vLLM's torch.compile cache holds an artifact a failed compilation left")
        assert [change.command_line() for change in finding.changes] == ["VLLM_DISABLE_COMPILE_CACHE=1"]
        assert "~/.cache/vllm/torch_compile_cache" in finding.actions[0]
        assert "TORCHINDUCTOR_FORCE_DISABLE_CACHES" in finding.actions[2]


def test_the_cache_reading_wins_over_the_compiler_error_it_hides():
    [finding] = _findings(*INDUCTOR, CORRUPTED)
    assert finding.title.startswith("vLLM's torch.compile cache")


def test_vllms_compile_lines_on_success_are_no_finding():
    assert (
        _findings(
            "INFO 10-02 11:20:05 [backends.py:559] Dynamo bytecode transform time: 6.12 s",
            "INFO 10-02 11:20:40 [monitor.py:34] torch.compile takes 30.1 s in total",
        )
        == []
    )


def test_inductor_finding_no_triton_names_the_version_torch_requires():
    [finding] = _findings(
        "RuntimeError: Cannot find a working triton installation. Either the package is not installed or it is too "
        "old. More information on installing Triton can be found at https://github.com/openai/triton"
    )
    assert finding.title == "torch.compile found no working Triton: it is not installed, or older than this torch needs"
    assert "m.requires('torch')" in finding.actions[0]


def test_a_gpu_older_than_triton_supports_is_named_with_its_capability():
    [finding] = _findings(
        "torch._inductor.exc.InductorError: RuntimeError: Found Tesla P40 which is too old to be supported by the "
        "triton GPU compiler, which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, "
        "but your device is of CUDA capability 6.1"
    )
    assert finding.title.startswith("the GPU (compute capability 6.1) is older than Triton supports (7.0)")
    assert [change.command_line() for change in finding.changes] == ["--enforce-eager"]


def test_ptxas_refusing_volta_ptx_reads_as_a_gpu_below_tritons_floor():
    # sasha0552/pascal-pkgs-ci#46, verbatim: a Pascal build of Triton 3.4 emitting PTX a P40 cannot run (the commenter
    # went back to the Pascal Triton 3.2 build)
    top = top_finding(
        "ptxas /tmp/tmpaj0u6ubt.ptx, line 57; error : Modifier '.evict_last' on 'ld' requires .target sm_70 or higher"
    )
    assert top.rule == "OP-7.49" and top.title.startswith("the GPU (compute capability below 7.0) is older than Triton")


def test_torchs_checksum_of_a_saved_artifact_is_the_compile_cache_written_twice_at_once():
    # ray-project/ray PR #59319, verbatim: Ray's doc tests starting vLLM engines on one shared compile cache
    top = top_finding(
        "RuntimeError: Bytes object is corrupted, checksum does not match. Expected: b'\\xf4\\xd5\\nx', Got: "
        "b'p\\xd2\\x80\\x8e' [repeated 2x across cluster]"
    )
    assert top.rule == "OP-7.49" and "written by two processes at once" in top.title
    assert [(c.flag, c.proposed) for c in top.changes] == [("VLLM_DISABLE_COMPILE_CACHE", "1")]
    assert any("own VLLM_CACHE_ROOT" in action for action in top.actions)
