"""OP-7.208: GNU OpenMP refuses the value of an OpenMP environment variable the server was started with.

Why a rule of its own: PyTorch's CPU wheels (and vLLM's CPU backend on them) run on GNU's libgomp, which reads the
OpenMP variables when it loads and says only `libgomp: Invalid value for environment variable OMP_NUM_THREADS`
(its env.c): no value, no process, nothing of vLLM's. OpenMP takes a positive count of threads; a deployment that
writes `OMP_NUM_THREADS=0` (meaning "let vLLM choose") or an empty value gets this, and libgomp then ignores the
variable. redhat-et/vllm-cpu-perf-eval#45 met it from an Ansible playbook that set OMP_NUM_THREADS=0 for every vLLM
CPU container; the fix there was to leave the OpenMP variables unset and let vLLM's CPU backend bind its threads
(VLLM_CPU_OMP_THREADS_BIND), setting them only for tensor parallelism above 1.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# What each variable takes, in OpenMP's terms (the OpenMP specification's environment variables)
TAKES: dict[str, str] = {
    "OMP_NUM_THREADS": "a positive number of threads (a list for nested levels)",
    "OMP_PROC_BIND": "true, false, close, spread or primary (master in older releases)",
    "OMP_PLACES": "threads, cores, sockets or an explicit list of places",
    "OMP_WAIT_POLICY": "active or passive",
    "OMP_DYNAMIC": "true or false",
}


# What redhat-et/vllm-cpu-perf-eval#45 met: a thread count of 0 written to mean "let vLLM choose"
_ZERO_THREADS = (
    " A deployment that writes 0 to mean 'let vLLM choose' gets this line (redhat-et/vllm-cpu-perf-eval#45)."
)


def _omp_env_finding(_facts: Facts, event: LogEvent, _words: re.Match[str]) -> Finding:
    variable = event.env_variable or "an OpenMP variable"
    documented = "libgomp's documentation" if variable.startswith("GOMP_") else "OpenMP's specification"
    takes = TAKES.get(variable, f"a value {documented} allows")
    return RULE.finding(
        Severity.MEDIUM,
        f"libgomp refused the value of {variable}: the server's environment sets it to something libgomp does not take",
        summary=f"GNU OpenMP, under PyTorch's CPU code and vLLM's CPU backend, reads {variable} when it loads and "
        f"takes {takes}; it ignores a value it refuses and runs with its default."
        + (_ZERO_THREADS if variable == "OMP_NUM_THREADS" else ""),
        evidence=[c.log_evidence(event, name="OpenMP variable", value=variable)],
        changes=[
            ConfigChange(
                flag=variable,
                proposed="",
                reason="unset, OpenMP's default applies and vLLM's CPU backend binds its own threads "
                "(VLLM_CPU_OMP_THREADS_BIND)",
                kind="env",
            )
        ],
        actions=[
            f"Leave {variable} out of the server's environment (the container spec, the playbook, the shell), or "
            f"give it {takes}; on vLLM's CPU backend set VLLM_CPU_OMP_THREADS_BIND instead, and the OpenMP "
            "variables only for tensor parallelism above 1.",
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-7.208",
    title="an OpenMP environment variable whose value libgomp refuses",
    category=Category.CONFIGURATION,
    check=c.on_kind(LogEventKind.OMP_ENV_INVALID, _omp_env_finding),
    needs=("events",),
    page=RulePage(
        checks="libgomp's `libgomp: Invalid value for environment variable <OMP_…>`.",
        why="GNU OpenMP ignores a value it refuses (OMP_NUM_THREADS=0, an empty value) and says so without the value; "
        "deployments write 0 meaning 'let vLLM choose'.",
        example="`libgomp: Invalid value for environment variable OMP_NUM_THREADS` from vLLM CPU containers a "
        "playbook started with OMP_NUM_THREADS=0 (redhat-et/vllm-cpu-perf-eval#45).",
        fix="Unset the variable (or give it a value OpenMP takes); VLLM_CPU_OMP_THREADS_BIND on vLLM's CPU backend.",
        limits="LLVM's and Intel's OpenMP word their refusals otherwise and are not read here.",
        references=["https://github.com/redhat-et/vllm-cpu-perf-eval/issues/45"],
    ),
)

RULES: list[Rule] = [RULE]
