"""OP-7.85: a framework built on vLLM requires a vLLM version range the installed vLLM is outside.

Why a rule of its own: frameworks that drive vLLM (LLaMA-Factory, TRL, verl, OpenRLHF, lm-eval) are written against
a span of vLLM releases, because vLLM's Python interface moves from release to release, and they say so in one of
two ways. Their own check at import, in the words of transformers' `require_version`, which LLaMA-Factory uses:
`vllm>=0.4.3,<=0.7.3 is required for a normal functioning of this module, but found vllm==0.8.1.`
(hiyouga/LlamaFactory#7428; LLaMA-Factory skips the check with DISABLE_VERSION_CHECK=1, at the risk of the failures
it guards against). Or pip's list of what an install broke, with the framework as the requirer: `trl 0.14.0 requires
vllm>=0.7.0, but you have vllm 0.6.3 which is incompatible.` The installed vLLM above the range means the framework
predates it (its newer release, or an older vLLM); below it, vLLM is the one to upgrade. OP-7.44 reads the opposite
direction, vLLM's own requirements pip broke.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.catalog.op7_pip_conflicts import names_vllm
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

_CLAUSE = re.compile(r"(?P<op>[<>=!~]=?|===?)\s*(?P<version>[\w.*+-]+)")


def _release(version: str) -> tuple[int, ...]:
    """A version's leading numbers (`0.8.1`, `0.6.3.post1`: 0, 6, 3), enough to place it against a range's bounds."""
    numbers = re.match(r"\d+(?:\.\d+)*", version)
    return tuple(int(n) for n in numbers.group(0).split(".")) if numbers else ()


def side_of(spec: str, installed: str) -> str | None:
    """ "above" when the installed version is past an upper bound of `spec`, "below" when short of a lower one, None
    when it satisfies every clause read (or a clause cannot be read)."""
    have = _release(installed)
    for clause in _CLAUSE.finditer(spec):
        bound, op = _release(clause["version"]), clause["op"]
        if not bound or not have:
            return None
        if (op == "<" and have >= bound) or (op == "<=" and have > bound):
            return "above"
        if (op == ">" and have <= bound) or (op == ">=" and have < bound):
            return "below"
        if op in ("==", "===") and "*" not in clause["version"] and have != bound:
            return "above" if have > bound else "below"
    return None


def _check_framework_pin(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.PACKAGE_CONFLICT):
        if names_vllm(event.component or "") or not names_vllm(event.message or ""):
            continue  # vLLM's own requirements are OP-7.44's
        side = side_of(event.message or "", event.installed or "")
        if event.installed is None or side is not None:
            return [_finding(event, side)]
    return []


def _finding(event: LogEvent, side: str | None) -> Finding:
    spec, installed = event.message or "vllm", event.installed
    who = f"{event.component} {event.version}" if event.component else "the framework that imports vLLM"
    if installed is None:
        title = f"{who} requires {spec}, which is not installed"
        actions = [f'Install it: `pip install "{spec}"`, in the same environment as {event.component or "it"}.']
    else:
        title = f"{who} requires {spec}, but vLLM {installed} is installed: " + (
            f"{event.component or 'it'} predates this vLLM" if side == "above" else "this vLLM is too old for it"
        )
        inside = f'a vLLM inside the range: `pip install "{spec}"` (it pulls the PyTorch that release pins).'
        framework = (
            f"Upgrade {event.component or 'the framework'} to a release written for vLLM {installed} (its release "
            "notes or requirements name the vLLM it supports)."
        )
        actions = [framework, "Or install " + inside] if side == "above" else ["Install " + inside]
    if event.component is None or "llama" in (event.component or "").lower():
        actions.append(
            "LLaMA-Factory's own check can be skipped with DISABLE_VERSION_CHECK=1; the range is what its code was "
            "tested with, so outside it expect the errors the check guards against (a changed argument or module)."
        )
    return RULE_FRAMEWORK_PIN.finding(
        Severity.HIGH,
        title,
        summary="Frameworks that drive vLLM are written against a span of its releases, because vLLM's Python "
        "interface moves between them; this one says the installed vLLM is outside its span.",
        evidence=[c.log_evidence(event, name="the framework's requirement", value=f"{spec} (installed {installed})")],
        actions=actions,
        confidence=0.8,
    )


RULE_FRAMEWORK_PIN = Rule(
    code="OP-7.85",
    title="a framework built on vLLM requires a vLLM version range the installed vLLM is outside",
    category=Category.STARTUP,
    check=_check_framework_pin,
    needs=("events",),
    page=RulePage(
        checks="transformers' `require_version` words (`vllm>=0.4.3,<=0.7.3 is required for a normal functioning of "
        "this module, but found vllm==0.8.1.`), and pip's conflict lines whose requirement is vLLM and whose "
        "requirer is another package (`trl 0.14.0 requires vllm>=0.7.0, but you have vllm 0.6.3 which is "
        "incompatible.`).",
        why="A framework's code calls vLLM's interface as it was in the releases it names; outside them an argument "
        "or a module it uses may be gone or not yet there.",
        example="`ImportError: vllm>=0.4.3,<=0.7.3 is required for a normal functioning of this module, but found "
        "vllm==0.8.1.` (hiyouga/LlamaFactory#7428).",
        fix="A vLLM inside the range, or the framework's release written for the installed vLLM; LLaMA-Factory's "
        "check skipped with DISABLE_VERSION_CHECK=1 only knowingly.",
        limits="Bounds are compared by their leading release numbers (pre-releases and local labels are not told "
        "apart); the require_version words do not name the framework, a traceback's frames would.",
        references=["https://github.com/hiyouga/LlamaFactory/issues/7428"],
    ),
)

RULES: list[Rule] = [RULE_FRAMEWORK_PIN]
