"""OP-7.28: Ray refused the runtime environment of vLLM's Ray workers (a variable Ray reserves)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_ray_env
from rules.facts import Facts

# NovaSky-AI/SkyRL#1343, as pasted
SETUP_HOOK = (
    "(EngineCore_DP0 pid=1279235) ERROR 03-18 23:23:32 [core.py:1006] AssertionError: The env var, "
    "__RAY_WORKER_PROCESS_SETUP_HOOK_ENV_VAR, is not permitted because it is reserved for the internal use."
)


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_the_setup_hook_variable_proposes_removing_the_hook_and_the_mp_backend_on_one_node():
    [finding] = op7_ray_env.RULE_RAY_RESERVED_ENV.evaluate(_facts([SETUP_HOOK]))
    assert "worker_process_setup_hook" in finding.title and op7_ray_env.SETUP_HOOK_ENV in finding.title
    assert finding.actions[0].startswith("Remove worker_process_setup_hook from the Ray runtime_env")
    [backend] = finding.alternatives
    assert (backend.flag, backend.current, backend.proposed) == ("--distributed-executor-backend", "ray", "mp")
    assert finding.evidence[0].value == op7_ray_env.SETUP_HOOK_ENV


def test_another_reserved_variable_is_named_and_taken_out_of_env_vars():
    line = (
        "AssertionError: The env var, RAY_JOB_CONFIG_JSON_ENV_VAR, is not permitted because it is reserved for the "
        "internal use."
    )
    [finding] = op7_ray_env.RULE_RAY_RESERVED_ENV.evaluate(_facts([line]))
    assert "RAY_JOB_CONFIG_JSON_ENV_VAR" in finding.title and not finding.alternatives
    assert finding.actions[0].startswith("Take RAY_JOB_CONFIG_JSON_ENV_VAR out of the runtime_env's env_vars")


def test_other_ray_assertions_are_not_this():
    assert not op7_ray_env.RULE_RAY_RESERVED_ENV.evaluate(
        _facts(["AssertionError: worker_process_setup_hook must be a function"])
    )
