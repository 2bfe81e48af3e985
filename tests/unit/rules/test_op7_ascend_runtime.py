"""OP-7.80: torch_npu and CANN refusing an ACL call on an Ascend NPU (vllm-ascend#692's and #1047's lines and
vllm-project/vllm-omni#890's, verbatim; the op-compiler lines under them as vllm-ascend#692 and #564 print them)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_ascend_runtime
from rules.evaluate import evaluate
from rules.facts import Facts

PRECISION = (
    "RuntimeError: SetPrecisionMode:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:155 NPU function error: "
    "at_npu::native::AclSetCompileopt(aclCompileOpt::ACL_PRECISION_MODE, precision_mode), error code is 500001"
)
PTA = (
    "ERROR 06-03 14:54:23 engine.py:400] [ERROR] 2025-06-03-14:54:23 (PID:8648, Device:0, RankID:-1) ERR00100 PTA "
    "call acl api failed."
)
OP_BUILD = (
    "[Stage-0] ERROR 01-21 17:28:55 [gpu_worker.py:226]         build op model failed, result = "
    "500002[FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:146]"
)


def _facts(*lines: str) -> Facts:
    return Facts(events=parse_lines(list(lines)).events)


def test_the_op_compilers_refusal_is_numpy_2_or_canns_environment():
    top = evaluate(_facts(PRECISION)).top
    assert top.rule == "OP-7.80" and "op compiler could not start" in top.title
    assert top.actions[0].startswith("Install numpy below 2") and "set_env.sh" in top.actions[1]


def test_ge_initialize_under_a_generic_refusal_is_the_op_compiler_too():
    lines = (PTA, "       GEInitialize failed.[FUNC:GEInitialize][FILE:ge_api.cc][LINE:337]")
    [finding] = op7_ascend_runtime.RULE_ASCEND.evaluate(_facts(*lines))
    assert "op compiler could not start" in finding.title


def test_any_other_refusal_sends_the_reader_to_canns_lines_and_the_version_set():
    [pta] = op7_ascend_runtime.RULE_ASCEND.evaluate(_facts(PTA))
    assert pta.title.startswith("Ascend's CANN runtime refused a device call: its reason is in CANN's lines")
    assert "ASCEND_LAUNCH_BLOCKING=1" in pta.actions[0] and "vllm-ascend's release" in pta.actions[1]
    [build] = op7_ascend_runtime.RULE_ASCEND.evaluate(_facts(OP_BUILD))
    assert "(error code 500002)" in build.title


def test_torch_npus_other_codes_and_a_streams_sync_are_the_same_refusal():
    # gpustack/gpustack#2723 (torch_npu's own misspelling kept), vllm-ascend#2349, and an OPS call's code, verbatim
    for line, code in (
        ("[ERROR] 2025-08-14-13:42:44 (PID:5309, Device:-1, RankID:-1) ERR99999 UNKNOWN applicaiton exception", None),
        ("ERROR 08-28 02:33:28 [core.py:634] RuntimeError: ACL stream synchronize failed, error code:507035", "507035"),
        (
            "[ERROR] 2025-09-15-05:12:52 (PID:2771862, Device:0, RankID:-1) ERR01100 OPS call acl api failed, elapsed "
            "time: 12 ms",
            None,
        ),
    ):
        [finding] = op7_ascend_runtime.RULE_ASCEND.evaluate(_facts(line))
        assert finding.title.startswith("Ascend's CANN runtime refused a device call"), line
        assert (f"(error code {code})" in finding.title) == (code is not None)
