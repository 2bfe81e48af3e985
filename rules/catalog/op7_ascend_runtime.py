"""OP-7.80: Huawei Ascend's CANN runtime refused a call of torch_npu's, vLLM-Ascend's device layer.

Why a rule of its own: on Ascend NPUs vLLM runs through the vllm-ascend plugin on torch_npu, which calls CANN's ACL
API; a failed call is worded by torch_npu, not vLLM (`NPU function error: <call>, error code is <n>`, then `[ERROR] …
ERR00100 PTA call acl api failed`), and CANN's own reason follows as `EZ…`/`EE…`/`EH…` lines or sits in its plog
files. One failure recurs at the first device call: `SetPrecisionMode … AclSetCompileopt(aclCompileOpt::
ACL_PRECISION_MODE, precision_mode), error code is 500001`, with CANN's `GEInitialize failed` / `Init compiler
failed` under it: CANN's graph engine and op compiler, which run Python, could not start. vllm-ascend#2210's
maintainers met it with numpy 2 beside CANN 8.2.1 and pinned `numpy < 2.0`; vllm-ascend#692 and #564 show the same
refusal on 910B2 (`init runtime platform info failed, SocVersion = Ascend910B2`), where CANN's environment or its
match with the chip is the other suspect. Any other code is the generic case: its reason is in CANN's lines.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

_PLOG = (
    "CANN's reason is in the `EZ…`/`EE…`/`EH…` lines after the error, and in its plog files "
    "(~/ascend/log/debug/plog/, or ASCEND_PROCESS_LOG_PATH); ASCEND_LAUNCH_BLOCKING=1 makes the failing call report "
    "itself where it happened."
)
_VERSIONS = (
    "CANN, torch-npu and vllm-ascend must be the set vllm-ascend's release names (its installation page, or its "
    "container image); `pip show torch-npu vllm-ascend` and CANN's version file "
    "(/usr/local/Ascend/ascend-toolkit/latest/version.cfg) say what is installed."
)


# CANN's parameter check refusing bfloat16 for an operator (`… x(DT_BFLOAT16, ND) … but supported list is:`, `… not
# implemented for DT_BFLOAT16`): Atlas 300I (310P) NPUs have no bfloat16, and vllm-ascend serves them in float16
_BF16_REFUSED = re.compile(
    r"DT_BFLOAT16.*(?:not supported|supported list)|not (?:implemented|supported) for DT_BFLOAT16"
)


def _no_bf16_finding(facts: Facts, event: LogEvent, operator: str | None) -> Finding:
    config = facts.config
    return RULE_ASCEND.finding(
        Severity.CRITICAL,
        f"an Ascend operator{f' ({operator})' if operator else ''} refused bfloat16 on this NPU: serve in float16",
        summary="CANN's parameter check listed the dtypes the operator supports, and bfloat16 is not among them: "
        "Atlas 300I (310P) NPUs have no bfloat16 at all, and some operators lack it on others; a model whose "
        "checkpoint is bfloat16 runs them in bfloat16 unless told otherwise.",
        evidence=[c.log_evidence(event, name="CANN's parameter check", value=event.message)],
        changes=[
            c.float16_instead_of_bfloat16(
                config.dtype if config else None,
                "Ascend's operators run in float16 where they lack bfloat16 (a 310P has float16 only)",
            )
        ],
        actions=[_VERSIONS],
        confidence=0.7,
    )


def _check_ascend(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.ASCEND_ACL_FAILED)
    if not events:
        return []
    compiler = next((e for e in events if e.component == "compiler"), None)
    event = compiler or next((e for e in events if e.error_code), events[0])
    evidence = [c.log_evidence(event, name="CANN's refusal", value=event.message)]
    if compiler is not None:
        return [
            RULE_ASCEND.finding(
                Severity.CRITICAL,
                "Ascend's graph engine and op compiler could not start (CANN's SetPrecisionMode / GEInitialize "
                "failed): numpy 2 beside CANN 8, or CANN's environment",
                summary="At the first device call torch_npu sets CANN's op-compiler options; CANN's graph engine, "
                "whose op compiler runs Python, failed to initialise, so no NPU call can run. vllm-ascend's "
                "maintainers met it with numpy 2 installed beside CANN 8.2.1 (vllm-ascend#2210).",
                evidence=evidence,
                actions=[
                    'Install numpy below 2 in the server\'s Python: `pip install "numpy<2.0"` (vllm-ascend#2210).',
                    "Source CANN's environment in the shell or image that starts vLLM (`source /usr/local/Ascend/"
                    "ascend-toolkit/set_env.sh`), and check that the CANN installed supports the chip named in its "
                    "`SocVersion` line.",
                    _PLOG,
                ],
                confidence=0.7,
            )
        ]
    operator = next((e.component for e in events if e.component), None)  # the aclnn operator, when named
    no_bf16 = next((e for e in events if _BF16_REFUSED.search(e.message or "")), None)
    if no_bf16 is not None:
        return [_no_bf16_finding(facts, no_bf16, operator)]
    code = f" (error code {event.error_code})" if event.error_code else ""
    return [
        RULE_ASCEND.finding(
            Severity.HIGH,
            f"Ascend's CANN runtime refused a device call{f' in {operator}' if operator else ''}{code}: its reason "
            "is in CANN's lines, not this one",
            summary="torch_npu reports a failed ACL call in its own words (`NPU function error: …, error code is …`, "
            "`ERR00100 PTA call acl api failed`); what CANN said follows it. Mismatched CANN, torch-npu and "
            "vllm-ascend releases are the commonest cause at start-up.",
            evidence=evidence,
            actions=[_PLOG, _VERSIONS],
            confidence=0.55,
        )
    ]


RULE_ASCEND = Rule(
    code="OP-7.80",
    title="Huawei Ascend's CANN runtime refused a device call",
    category=Category.STARTUP,
    check=_check_ascend,
    needs=("events",),
    page=RulePage(
        checks="torch_npu's `NPU function error: <call>, error code is <n>`, `ERR00100 PTA call acl api failed` (and "
        "ERR01100's OPS, ERR99999's `UNKNOWN applicaiton exception`), `ACL stream synchronize failed, error code:<n>`, "
        "CANN's `build op model failed, result = <n>`, and its op compiler failing to start (`SetPrecisionMode`, "
        "`GEInitialize failed`, `Init compiler failed`); an aclnn operator failing (`call aclnnRmsNorm failed, "
        "detail:…`, `the current working operator name is aclnn…`) and CANN's `AclNN_Parameter_Error(EZ1001)` on it, "
        "bfloat16 refused there proposing --dtype float16.",
        why="vllm-ascend runs on torch_npu and CANN; a refused ACL call stops the device layer, and CANN's own "
        "reason is in its following lines and plog files.",
        example="`RuntimeError: SetPrecisionMode:… AclSetCompileopt(aclCompileOpt::ACL_PRECISION_MODE, "
        "precision_mode), error code is 500001` on a 910B2 (vllm-ascend#692); numpy < 2.0 with CANN 8.2.1 "
        "(vllm-ascend#2210).",
        fix="For the op compiler: numpy below 2, CANN's set_env.sh sourced, a CANN for the chip; otherwise CANN's "
        "lines and plog, and the CANN, torch-npu and vllm-ascend versions the release names.",
        limits="Which ACL call failed for which reason is CANN's to say; only the op compiler's start is told apart.",
        references=[
            "https://github.com/vllm-project/vllm-ascend/issues/2210",
            "https://github.com/vllm-project/vllm-ascend/issues/692",
            "https://github.com/vllm-project/vllm-ascend/issues/564",
        ],
    ),
)

RULES: list[Rule] = [RULE_ASCEND]
