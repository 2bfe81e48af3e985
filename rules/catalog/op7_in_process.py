"""OP-7.92: a framework's in-process vLLM wrapper, in an environment without vLLM.

Why a rule of its own: several frameworks offer two ways to use vLLM, and their names are close. One runs vLLM inside
the framework's own process (it imports `vllm` and builds an `LLM` on the local GPUs); the other is an OpenAI-style
client of a vLLM server somewhere else. A user who runs `vllm serve` on a GPU host and points the in-process one at it
gets an import error from a machine that was never meant to hold vLLM, and the error reads like a broken install:

- LiteLLM: the `vllm/<model>` route is the SDK route (LiteLLM's vLLM provider page calls it deprecated); a server is
  `hosted_vllm/<model>` with `api_base`. The SDK route wraps the ImportError as `VLLMError: No module named 'vllm'`
  (`VLLMException - No module named 'vllm'` through the proxy), even when `api_base` names the server, as in
  BerriAI/litellm#2831.
- LangChain's `VLLM` (langchain_community.llms.vllm) and LlamaIndex's `Vllm` raise `Could not import vllm python
  package. Please install it with `pip install vllm`.`; their server clients are LangChain's `VLLMOpenAI` (added in
  langchain-ai/langchain PR #9179) and LlamaIndex's `VllmServer` (or `Vllm` given `api_url`).

The message's own advice, installing vLLM, is right only where the framework is meant to run the model itself: on a
host with the GPUs, in that same environment.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_in_process(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.VLLM_IN_PROCESS_MISSING)
    if not events:
        return []
    event = events[0]
    litellm = event.component == "litellm"
    if litellm:
        title = (
            "LiteLLM's `vllm/` route runs vLLM inside LiteLLM's own process, and vLLM is not installed there: a "
            "vLLM server is reached with `hosted_vllm/`"
        )
        client = (
            "To call a running vLLM server, name the model `hosted_vllm/<the served model name>` and set `api_base` "
            "to the server's `http://<host>:<port>/v1` (in the proxy's config.yaml: `model: hosted_vllm/…` under "
            "litellm_params); `vllm/` is LiteLLM's SDK route, which imports vLLM and loads the model locally."
        )
    else:
        title = (
            "the framework's vLLM class runs vLLM inside its own process, and vLLM is not installed there: a vLLM "
            "server is reached with its OpenAI-style client class"
        )
        client = (
            "To call a running vLLM server, use the server client: LangChain's `VLLMOpenAI(openai_api_base="
            "'http://<host>:<port>/v1', openai_api_key='EMPTY', model_name=…)` instead of `VLLM(…)`, LlamaIndex's "
            "`VllmServer(api_url=…)`; these need no vLLM where they run."
        )
    return [
        RULE_IN_PROCESS.finding(
            Severity.HIGH,
            title,
            summary="The wrapper imports vLLM to load the model on this machine's GPUs, so it fails before any request "
            "when vLLM is not in this environment. If a vLLM server already serves the model, the wrapper is the "
            "wrong one; if the model is meant to run here, vLLM is missing from this environment.",
            evidence=[c.log_evidence(event, name="the framework's import of vLLM")],
            actions=[
                client,
                "To run the model inside this process instead, install vLLM in the same environment (`pip install "
                "vllm`, on a host with a GPU vLLM supports) and check with `python -c 'import vllm'` from the "
                "framework's interpreter.",
            ],
            confidence=0.75,
        )
    ]


RULE_IN_PROCESS = Rule(
    code="OP-7.92",
    title="a framework's in-process vLLM wrapper without vLLM installed",
    category=Category.CONFIGURATION,
    check=_check_in_process,
    needs=("events",),
    page=RulePage(
        checks="LiteLLM's `VLLMError: No module named 'vllm'` (or `VLLMException - …`), and LangChain's or "
        "LlamaIndex's `Could not import vllm python package. Please install it with `pip install vllm`.`.",
        why="These wrappers load the model with vLLM in the framework's own process; a vLLM server elsewhere is "
        "reached with another route or class (LiteLLM `hosted_vllm/`, LangChain `VLLMOpenAI`, LlamaIndex "
        "`VllmServer`).",
        example="A LiteLLM proxy with `model: vllm/mistralai/Mistral-7B-Instruct-v0.2` and an `api_base` of a vLLM "
        "server: `litellm.llms.vllm.VLLMError: No module named 'vllm'` (BerriAI/litellm#2831).",
        fix="For a server: `hosted_vllm/<model>` with `api_base`, or the framework's server client class. To run "
        "in-process: install vLLM in that environment.",
        limits="The line does not say which was intended; both fixes are given, the server client first.",
        references=[
            "https://github.com/BerriAI/litellm/issues/2831",
            "https://docs.litellm.ai/docs/providers/vllm",
            "https://github.com/langchain-ai/langchain/pull/9179",
        ],
    ),
)

RULES: list[Rule] = [RULE_IN_PROCESS]
