"""The rule catalog: every rule with a stable code, in a fixed order, and lookup by code.

Codes: OP-1 … OP-7 (the operations runbook, sub-rules `OP-5.3`), AP-n (anti-patterns in the
launch configuration), HL-n (engine health: hangs and death), VC-n (vLLM's own messages: what its
catalog says, and errors it does not hold), AL-n (servops's own alerts, read back from their
notifications). Codes never change meaning; a retired rule keeps its code out of use.

Every module declares its rules one way: each check function is followed by its
`RULE_X = Rule(code=..., title=..., category=..., check=..., needs=..., page=RulePage(...))`,
keyword arguments only, thresholds as module constants formatted into the title and page; the
module ends with `RULES`. What several families share (vLLM's defaults, latency targets,
shared thresholds and helpers) is in `common`, the physical floors in `floors`. The catalog
lists the rules in code order (OP, then AP, then HL, then VC, then AL; numerically within each).
"""

from __future__ import annotations

import re

from rules.catalog import (
    al_notices,
    ap_features_off,
    ap_sizing,
    health,
    health_admission,
    health_corrupted,
    health_crash,
    health_exit,
    health_kernels,
    op1_cudagraph,
    op1_engine_ready,
    op1_free_memory,
    op1_kv_fit,
    op1_kv_padding,
    op1_oom,
    op1_unexplained,
    op1_weight_load,
    op2_quantization,
    op3_nccl_result,
    op3_parallelism,
    op4_never_hits,
    op4_prefix,
    op5_aborted,
    op5_api_key,
    op5_attention,
    op5_audio,
    op5_benchmark,
    op5_between,
    op5_client_timeout,
    op5_disconnected,
    op5_floors,
    op5_harmony,
    op5_kv,
    op5_latency,
    op5_offline_split,
    op5_prefill_stall,
    op5_profile,
    op5_protocol,
    op5_queueing,
    op5_reliability,
    op5_requests,
    op5_routes,
    op5_shutdown,
    op5_slow_gpu,
    op5_tokenizer_length,
    op5_unreachable,
    op5_upgrade,
    op6_specdec,
    op7_abstract_class,
    op7_aiter,
    op7_ascend_runtime,
    op7_ascend_soc,
    op7_batch_queue,
    op7_bind_address,
    op7_callers,
    op7_checkpoint,
    op7_collective_setup,
    op7_command,
    op7_compile,
    op7_compiled_ops,
    op7_compiler_too_old,
    op7_container,
    op7_container_host,
    op7_cpu_dtype,
    op7_cpu_numa,
    op7_cuda_errors,
    op7_daemon_process,
    op7_disk,
    op7_driver_cuda,
    op7_dynamo,
    op7_engine_internals,
    op7_engine_ipc,
    op7_environment,
    op7_extras,
    op7_fd_limit,
    op7_framework_pins,
    op7_gpu_arch,
    op7_gpu_fault,
    op7_hami,
    op7_host_memory,
    op7_hub,
    op7_in_process,
    op7_install,
    op7_kernel_capability,
    op7_kernel_fit,
    op7_launchers,
    op7_model_path,
    op7_network,
    op7_neuron_runtime,
    op7_nixl_ucx,
    op7_nvidia_driver,
    op7_offload,
    op7_oneccl_workers,
    op7_own_calls,
    op7_packages,
    op7_parallel_zero,
    op7_pip_conflicts,
    op7_platform_detection,
    op7_platform_table,
    op7_plugins,
    op7_pod_status,
    op7_port_in_use,
    op7_ray_actor,
    op7_ray_env,
    op7_ray_placement,
    op7_scheduling,
    op7_service_env,
    op7_sleep_wake,
    op7_swap_space,
    op7_system_libs,
    op7_tokenizer_vocab,
    op7_toolchain,
    op7_toolkit_home,
    op7_torch_build,
    op7_tpu_hbm,
    op7_tpu_smem,
    op7_triton_cache,
    op7_triton_compile,
    op7_triton_pre_ampere,
    op7_trl_server,
    op7_unsloth_engine,
    op7_uv_version,
    op7_vllm_import_swallowed,
    op7_vllm_names,
    op7_weights_file,
    op7_windows,
    op7_xformers,
    op7_xpu_devices,
    op7_xpu_free_memory,
    vc_cut_traceback,
    vc_own_errors,
    vc_unplaced_lines,
    vc_vllm_messages,
)
from rules.model import Rule

MODULES = (
    op1_kv_fit,
    op1_kv_padding,
    op1_free_memory,
    op1_oom,
    op1_unexplained,
    op1_cudagraph,
    op1_engine_ready,
    op1_weight_load,
    op2_quantization,
    op3_parallelism,
    op3_nccl_result,
    op4_prefix,
    op4_never_hits,
    op5_latency,
    op5_queueing,
    op5_kv,
    op5_reliability,
    op5_floors,
    op5_upgrade,
    op5_slow_gpu,
    op5_requests,
    op5_prefill_stall,
    op5_profile,
    op5_between,
    op5_benchmark,
    op5_attention,
    op5_routes,
    op5_audio,
    op5_harmony,
    op5_unreachable,
    op5_client_timeout,
    op5_disconnected,
    op5_api_key,
    op5_protocol,
    op5_aborted,
    op5_shutdown,
    op5_offline_split,
    op6_specdec,
    op7_environment,
    op7_packages,
    op7_plugins,
    op7_toolchain,
    op7_install,
    op7_hub,
    op7_container,
    op7_command,
    op7_checkpoint,
    op7_offload,
    op7_network,
    op7_callers,
    op7_toolkit_home,
    op7_ray_env,
    op7_extras,
    op7_host_memory,
    op7_scheduling,
    op7_container_host,
    op7_gpu_fault,
    op7_hami,
    op7_disk,
    op7_pod_status,
    op7_gpu_arch,
    op7_fd_limit,
    op7_port_in_use,
    op7_nvidia_driver,
    op7_ray_actor,
    op7_weights_file,
    op7_driver_cuda,
    op7_pip_conflicts,
    op7_system_libs,
    op7_cuda_errors,
    op7_daemon_process,
    op7_kernel_capability,
    op7_uv_version,
    op7_triton_cache,
    op7_nixl_ucx,
    op7_oneccl_workers,
    op7_torch_build,
    op7_compile,
    op7_compiler_too_old,
    op7_kernel_fit,
    op7_model_path,
    op7_ray_placement,
    op7_windows,
    op7_cpu_dtype,
    op7_tpu_smem,
    op7_tpu_hbm,
    op7_xformers,
    op7_compiled_ops,
    op7_trl_server,
    op7_ascend_runtime,
    op7_ascend_soc,
    op7_neuron_runtime,
    op7_aiter,
    op7_collective_setup,
    op7_triton_compile,
    op7_triton_pre_ampere,
    op7_own_calls,
    op7_abstract_class,
    op7_framework_pins,
    op7_batch_queue,
    op7_engine_ipc,
    op7_xpu_devices,
    op7_xpu_free_memory,
    op7_in_process,
    op7_unsloth_engine,
    op7_launchers,
    op7_parallel_zero,
    op7_platform_table,
    op7_dynamo,
    op7_vllm_names,
    op7_service_env,
    op7_sleep_wake,
    op7_engine_internals,
    op7_tokenizer_vocab,
    op7_cpu_numa,
    op7_bind_address,
    op7_swap_space,
    op7_platform_detection,
    op7_vllm_import_swallowed,
    op5_tokenizer_length,
    ap_sizing,
    ap_features_off,
    health,
    health_kernels,
    health_admission,
    health_crash,
    health_exit,
    health_corrupted,
    vc_vllm_messages,
    vc_cut_traceback,
    vc_unplaced_lines,
    vc_own_errors,
)
# The code families in catalog order; a code is FAMILY-N (AP-1, HL-2) or, for OP, OP-N.M (OP-5.3).
FAMILIES = ("OP", "AP", "HL", "VC", "AL")
# Built from FAMILIES, so a new family prefix is added in one place.
CODE_PATTERN = re.compile(rf"^(?P<family>{'|'.join(map(re.escape, FAMILIES))})-(?P<numbers>[1-9]\d*(?:\.[1-9]\d*)?)$")


def code_order(code: str) -> tuple[int, tuple[int, ...]]:
    """The sort key of a rule code: its family's place in FAMILIES, then its numbers (OP-5.10 after OP-5.9)."""
    match = CODE_PATTERN.match(code)
    if match is None:  # pragma: no cover - a malformed code is a programming error
        raise ValueError(f"malformed rule code {code!r}")
    return FAMILIES.index(match["family"]), tuple(int(n) for n in match["numbers"].split("."))


_MODULE_RULES = tuple(rule for module in MODULES for rule in module.RULES)
# AL-1 reads back the alerts of the rules above, so it is built over them rather than declared in a module's RULES.
ALL_RULES: tuple[Rule, ...] = tuple(
    sorted((*_MODULE_RULES, al_notices.notice_rule(_MODULE_RULES)), key=lambda rule: code_order(rule.code))
)

_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}
if len(_BY_CODE) != len(ALL_RULES):  # pragma: no cover - a duplicate code is a programming error
    raise RuntimeError("duplicate rule code in the catalog")


class UnknownRuleError(LookupError):
    """A rule code that is not in the catalog (a user-facing input error)."""

    user_facing = True


def get_rule(code: str) -> Rule:
    """The rule with this code (case-insensitive, `op-5.3` works); UnknownRuleError otherwise."""
    wanted = code.strip().upper()
    if wanted in _BY_CODE:
        return _BY_CODE[wanted]
    family = [c for c in _BY_CODE if c.startswith(wanted + ".")]
    hint = f"; it has sub-rules {', '.join(family)}" if family else ""
    raise UnknownRuleError(f"rule code '{code}' is not in the catalog{hint}; run 'servops rules list' for the codes")


def codes() -> list[str]:
    return [rule.code for rule in ALL_RULES]
