"""OP-7.68: a Kubernetes Service named `vllm` filled VLLM_PORT with its address, and vLLM cannot read it as a port.

Why a rule of its own: Kubernetes gives every container variables for each Service in its namespace, named after
the Service in capitals, in Docker's link format: a Service `vllm` on port 8000 gives `VLLM_PORT=tcp://<cluster
IP>:8000` (and VLLM_SERVICE_HOST, VLLM_PORT_8000_TCP …). VLLM_PORT is vLLM's own variable, the port its processes
meet on, read with `int()`: vLLM 0.9 and later refuse it in words that name Kubernetes (`VLLM_PORT 'tcp://…'
appears to be a URI …`, vllm/envs.py `get_vllm_port`), earlier releases fail on Python's `invalid literal for int()
with base 10: 'tcp://…'`, a line nothing of vLLM's explains. vLLM's page of environment variables warns against
naming the Service `vllm` for this reason. vllm#15613: an image that ran under `docker run` failed once a k3s Helm
chart deployed it, with the older line.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# vLLM's own refusal (0.9 and later) and Python's, when int() met a Docker-link address.
_URI_PORT = re.compile(r"VLLM_PORT '(?P<value>[a-z]+://[^']+)' appears to be a URI")
_INT_OF_ADDRESS = re.compile(r"invalid literal for int\(\) with base 10: '(?P<value>(?:tcp|udp)://[\w.\-\[\]:]+:\d+)'")
# Above VC-1's own words (0.97): the refusal names the variable, this names who set it and how to stop it.
SERVICE_CONFIDENCE = 0.98


def _check_service_env(facts: Facts) -> list[Finding]:
    for event in facts.events_of(*c.RELAYED_TOO):
        found = _URI_PORT.search(event.message or "") or _INT_OF_ADDRESS.search(event.message or "")
        if found is not None:
            return [_finding(event, found["value"], vllm_worded=found.re is _URI_PORT)]
    return []


def _finding(event: LogEvent, value: str, vllm_worded: bool) -> Finding:
    evidence = c.log_evidence(event, name="VLLM_PORT", value=value)
    evidence.description = f"VLLM_PORT holds {value}, a Service address in Kubernetes' link format, not a port"
    said = "vLLM refused it (its check names Kubernetes)" if vllm_worded else "Python's int() refused it"
    return RULE_SERVICE_ENV.finding(
        Severity.CRITICAL,
        "a Kubernetes Service named vllm set VLLM_PORT to its address: rename the Service, or stop Kubernetes "
        "putting Services in the pod's environment",
        summary="Kubernetes puts each Service of the namespace into a pod's environment, in variables named after it "
        f"in Docker's link format: a Service named vllm gives VLLM_PORT={value}. VLLM_PORT is vLLM's own variable, "
        f"the port its processes meet on (not the API port), and {said}. Nothing in vLLM's flags is wrong; the "
        "pod's environment is.",
        evidence=[evidence],
        changes=[
            ConfigChange(
                flag="Service name",
                current="vllm",
                proposed="vllm-server (any name but vllm)",
                reason="Kubernetes then sets VLLM_SERVER_PORT and the like, which vLLM does not read",
                cost="clients and Ingresses that address the Service by name change with it",
                kind="setting",
            )
        ],
        alternatives=[
            ConfigChange(
                flag="pod spec enableServiceLinks",
                proposed="false",
                reason="Kubernetes stops injecting Services' link variables into the pod; the Service keeps its name",
                cost="code in the pod that found other Services through those variables must use DNS names instead",
                kind="setting",
            )
        ],
        actions=[
            "Check what the pod sees: `kubectl exec <pod> -- env | grep ^VLLM_`; every VLLM_ variable there that you "
            "did not set is one Kubernetes made from a Service.",
            "Setting VLLM_PORT to a number in the container's env also overrides it, but other Service variables "
            "(VLLM_SERVICE_HOST …) stay in vLLM's VLLM_ namespace.",
        ],
        confidence=SERVICE_CONFIDENCE,
    )


RULE_SERVICE_ENV = Rule(
    code="OP-7.68",
    title="VLLM_PORT set by a Kubernetes Service named vllm",
    category=Category.CONFIGURATION,
    check=_check_service_env,
    needs=("events",),
    page=RulePage(
        checks="vLLM's `VLLM_PORT 'tcp://…' appears to be a URI` (0.9 and later) or, from older releases, "
        "`invalid literal for int() with base 10: 'tcp://<address>:<port>'` on an error line.",
        why="Kubernetes sets <SERVICE>_PORT=tcp://<cluster IP>:<port> in every pod for each Service of the "
        "namespace; a Service named vllm sets VLLM_PORT, which vLLM reads as an integer port.",
        example="`ERROR 03-27 03:12:01 engine.py:400] invalid literal for int() with base 10: "
        "'tcp://10.43.1.39:8000'`: an image that ran under docker run, deployed by a k3s Helm chart (vllm#15613).",
        fix="Name the Service anything but vllm, or `enableServiceLinks: false` in the pod spec.",
        limits="The older line does not name the variable: VLLM_PORT is the one of vLLM's integer variables a "
        "Service named vllm sets; an address in another variable a program reads with int() reads the same.",
        references=[
            "https://docs.vllm.ai/en/latest/configuration/env_vars.html",
            "https://kubernetes.io/docs/concepts/services-networking/service/#environment-variables",
            "https://github.com/vllm-project/vllm/issues/15613",
        ],
    ),
)

RULES: list[Rule] = [RULE_SERVICE_ENV]
