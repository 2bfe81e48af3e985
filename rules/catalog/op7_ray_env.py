"""OP-7.28: Ray refused the runtime environment of vLLM's Ray workers: it holds a variable Ray reserves.

Why a rule of its own: with `--distributed-executor-backend ray` (or inside a Ray job, Ray Serve, Ray Data, an RL
framework's Ray actors) vLLM's engine creates its workers as Ray actors. When Ray is already initialised, vLLM takes
the runtime environment of the Ray context it runs in (`ray.get_runtime_context().runtime_env`, kept as
`ParallelConfig.ray_runtime_env`: engine/arg_utils.py, 0.32) and gives it to those actors. Ray turns a
`worker_process_setup_hook` into an environment variable of a runtime environment,
`__RAY_WORKER_PROCESS_SETUP_HOOK_ENV_VAR`, and before it sets the variable it asserts that the env_vars do not hold
it already (`export_setup_func_module` and `export_setup_func_callable`,
python/ray/_private/runtime_env/setup_hook.py). A runtime environment copied from a context that has the hook holds
both the hook and the variable, so the assertion fails in vLLM's engine core: `AssertionError: The env var,
__RAY_WORKER_PROCESS_SETUP_HOOK_ENV_VAR, is not permitted because it is reserved for the internal use.`, then
`Engine core initialization failed`. Ray's words, not vLLM's, so vLLM's catalog holds nothing for it;
ray-project/ray#61350 tracks it in Ray (Ray 2.54 with vLLM's Ray backend), and NovaSky-AI/SkyRL#1343 was fixed by
taking the hook out again (SkyRL#1344).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

SETUP_HOOK_ENV = "__RAY_WORKER_PROCESS_SETUP_HOOK_ENV_VAR"
RAY_ISSUE = "ray-project/ray#61350"


def _check_reserved_env(facts: Facts) -> list[Finding]:
    event = facts.last_event(LogEventKind.RAY_RESERVED_ENV)
    if event is None:
        return []
    variable = event.message or SETUP_HOOK_ENV
    evidence = c.log_evidence(event, name="reserved variable", value=variable)
    evidence.description = "the variable Ray's runtime_env check refused"
    if variable != SETUP_HOOK_ENV:
        return [_other_reserved(variable, evidence)]
    return [
        RULE_RAY_RESERVED_ENV.finding(
            Severity.CRITICAL,
            "Ray refused the runtime environment of vLLM's Ray workers: a worker_process_setup_hook is set where "
            f"vLLM starts them ({SETUP_HOOK_ENV})",
            summary="Ray passes a worker_process_setup_hook to its workers as the variable "
            f"{SETUP_HOOK_ENV} and refuses a runtime_env whose env_vars already hold it. vLLM was started under a "
            "Ray runtime_env that has the hook, so the Ray actors its engine creates for its workers inherit both "
            "the hook and the variable, and the engine core fails before it loads the model. Ray's check, not "
            f"vLLM's: {RAY_ISSUE}.",
            evidence=[evidence],
            alternatives=[
                ConfigChange(
                    flag="--distributed-executor-backend",
                    current="ray",
                    proposed="mp",
                    reason="on one node vLLM's workers can be processes instead of Ray actors, so no runtime_env "
                    "is built for them",
                    cost="one node only: a model split across nodes needs the Ray backend",
                )
            ],
            actions=[
                "Remove worker_process_setup_hook from the Ray runtime_env that vLLM runs under (ray.init's, the "
                "job's or the actor's `runtime_env`, or the framework setting that adds it), and do what the hook "
                "did another way (an environment variable, an import at the top of the worker's code).",
                f"Keep the hook only with a Ray release that fixes {RAY_ISSUE}: there the inherited variable is no "
                "longer refused.",
            ],
            confidence=0.8,
        )
    ]


def _other_reserved(variable: str, evidence) -> Finding:
    """Another variable Ray keeps for itself: it came into the runtime_env's env_vars from the caller's setup."""
    return RULE_RAY_RESERVED_ENV.finding(
        Severity.CRITICAL,
        f"Ray refused the runtime environment of vLLM's Ray workers: it sets {variable}, which Ray reserves",
        summary=f"Ray sets {variable} itself and refuses a runtime_env whose env_vars already hold it; the "
        "runtime_env vLLM's Ray workers are created under carries it from the caller's configuration.",
        evidence=[evidence],
        actions=[
            f"Take {variable} out of the runtime_env's env_vars (ray.init, the job's or the actor's `runtime_env`) "
            "and set what it stood for through the Ray option that owns it.",
        ],
        confidence=0.6,
    )


RULE_RAY_RESERVED_ENV = Rule(
    code="OP-7.28",
    title="Ray refused the runtime environment of vLLM's Ray workers: a variable Ray reserves",
    category=Category.STARTUP,
    check=_check_reserved_env,
    needs=("events",),
    page=RulePage(
        checks="Ray's `The env var, <NAME>, is not permitted because it is reserved for the internal use.` (an "
        "AssertionError in the engine core), above all for `__RAY_WORKER_PROCESS_SETUP_HOOK_ENV_VAR`.",
        why="Ray carries a worker_process_setup_hook to its workers as that variable and refuses a runtime_env that "
        "holds it already; vLLM started under a runtime_env with the hook creates Ray actors that inherit both, so "
        "its engine core fails at start.",
        example="`(EngineCore_DP0 pid=1279235) ERROR … AssertionError: The env var, "
        "__RAY_WORKER_PROCESS_SETUP_HOOK_ENV_VAR, is not permitted because it is reserved for the internal use.` "
        "after SkyRL added a setup hook (NovaSky-AI/SkyRL#1343; the hook's revert, SkyRL#1344, fixed it).",
        fix="Remove worker_process_setup_hook from the runtime_env vLLM runs under; on one node, "
        "`--distributed-executor-backend mp` creates no Ray actors; keep the hook only with a Ray release that "
        f"fixes {RAY_ISSUE}.",
        limits="The text does not say which runtime_env set the hook (ray.init, the job, an actor, a framework); "
        "the actions name the places to look.",
        references=[
            "https://github.com/NovaSky-AI/SkyRL/issues/1343",
            "https://github.com/ray-project/ray/issues/61350",
        ],
    ),
)

RULES: list[Rule] = [RULE_RAY_RESERVED_ENV]
