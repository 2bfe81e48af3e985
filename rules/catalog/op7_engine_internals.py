"""OP-7.69: code built on vLLM reads an attribute of vLLM's engine that the installed release's engine lacks.

Why a rule of its own: frameworks that drive vLLM in-process (RL trainers syncing weights, serving wrappers) reach
past its public API into the engine: `llm.llm_engine.model_executor.driver_worker.model_runner.model` (TRL,
OpenRLHF), `AsyncLLMEngine.engine` (FastChat's worker). Those were V0's. From vLLM 0.8 the V1 engine is the default:
its LLMEngine runs the model in a separate EngineCore process, so the executor is not in the caller's process, and
AsyncLLM replaced AsyncLLMEngine without its inner `.engine`. V0 stayed behind `VLLM_USE_V1=0` until it was removed
(the message catalog's V0 LLMEngine lines end with 0.10), which is the workaround FastChat#3704's reporter confirmed.
Python's `AttributeError: 'LLMEngine' object has no attribute 'model_executor'` names neither vLLM's release nor
the framework's, so without this the line reads as a bug of vLLM's.

The same holds for vLLM's configuration classes (`'LoRAConfig' object has no attribute 'lora_extra_vocab_size'` from
verl's LoRA loader, verl-project/verl#4380): their fields are mostly engine arguments of the same name, and the
message catalog's table of EngineArgs' fields per release dates the one read (lora_extra_vocab_size: 0.4 to 0.11,
deprecated in vllm/config/lora.py of 0.10.2 and 0.11 "and will be removed in v0.12.0"). A field no release's
EngineArgs had is the config's own, and is left to VC-2.

And for vLLM's tokenizers, which callers take for a Hugging Face tokenizer: the TokenizerGroup an engine's
`.tokenizer` held from vLLM 0.3 to 0.10 (dottxt-ai/outlines#576), and the MistralTokenizer of `--tokenizer-mode
mistral` (ai-dynamo/dynamo PR #12659); Python's AttributeError names the tokenizer's class, not the release or the
mode that made it.

And for V1's executors: only UniProcExecutor (one GPU) holds a driver worker in the engine's process, so V0-style code
reaching `model_executor.driver_worker` works on one GPU and fails with MultiprocExecutor on several (google/tunix#780;
vllm/v1/executor/multiproc_executor.py keeps handles to worker processes instead).
"""

from __future__ import annotations

import re

from rules import vllm_defaults
from rules.catalog import common as c
from rules.events import CONFIG_ATTRIBUTE, VLLM_CONSTRUCTED_CLASSES, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# vLLM's engine front ends as a caller holds them: V0's (LLMEngine, AsyncLLMEngine) and V1's (LLMEngine, AsyncLLM),
# and the LLM class that wraps them. Executors and workers are vLLM's own inside (their errors are vLLM's).
_ENGINES = ("LLMEngine", "AsyncLLMEngine", "_AsyncLLMEngine", "AsyncLLM", "LLM")
# The other classes of vLLM's that frameworks construct and call (its OpenAI and pooling front ends, its request
# parameters): vLLM renames and restructures them between releases too (kserve/kserve#5399: vLLM 0.20's
# ServingEmbedding without the create_embedding KServe called)
_CONSTRUCTED = tuple(sorted(VLLM_CONSTRUCTED_CLASSES - set(_ENGINES)))
_ENGINE_ATTRIBUTE = re.compile(
    rf"'(?P<owner>{'|'.join((*_ENGINES, *_CONSTRUCTED))})' object has no attribute '(?P<name>\w+)'"
)
# vLLM's wrapper around the Hugging Face tokenizer, which an engine's `.tokenizer` was from its LoRA support (vLLM 0.3,
# January 2024) until vllm/transformers_utils/tokenizer_group went after 0.10: code that takes it for the tokenizer
# itself asks it for the tokenizer's own attributes (eos_token_id, get_vocab; dottxt-ai/outlines#576)
_GROUP_ATTRIBUTE = re.compile(
    r"'(?P<owner>(?:Base|Ray)?TokenizerGroup(?:Pool)?)' object has no attribute '(?P<name>\w+)'"
)
GROUP_RELEASES = "0.3 to 0.10"  # LoRA's commit 9b945daa brought it; the catalog's last tokenizer_group file is 0.10's
# vLLM's tokenizer for `--tokenizer-mode mistral`, which wraps mistral_common and is no Hugging Face tokenizer: code
# that reads a Hugging Face tokenizer's attributes from it (ai-dynamo/dynamo PR #12659: `chat_template`) fails
_MISTRAL_ATTRIBUTE = re.compile(r"'MistralTokenizer' object has no attribute '(?P<name>\w+)'")
# V1's executors whose workers are processes of their own: only UniProcExecutor (one GPU) holds a driver_worker in
# the engine's process (vllm/v1/executor/uniproc_executor.py; multiproc_executor.py keeps handles in `workers`), so
# V0-style code reaching model_executor.driver_worker fails once the engine runs tensor parallel (google/tunix#780)
_EXECUTOR_WORKER = re.compile(
    r"'(?P<owner>MultiprocExecutor|RayDistributedExecutor)' object has no attribute 'driver_worker'"
)

# What V0's engine held in the caller's process, and where V1 keeps it instead.
_MOVED: dict[str, str] = {
    "model_executor": "V1's LLMEngine runs the model in its EngineCore process, so the executor (and the driver "
    "worker and model runner behind it) is not in the caller's",
    "engine": "V1's AsyncLLM replaced V0's AsyncLLMEngine and has no inner .engine; its engine core is another process",
    "scheduler": "V1's scheduler lives in the EngineCore process",
}


def _check_engine_internals(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR, LogEventKind.VLLM_MESSAGE):
        said = event.message or ""
        found = _ENGINE_ATTRIBUTE.search(said)
        if found is not None:
            return [_finding(facts, event, found["owner"], found["name"])]
        wrapped = _GROUP_ATTRIBUTE.search(said)
        if wrapped is not None and wrapped["name"] != "tokenizer":  # the wrapper's own `.tokenizer` is no sign of it
            return [_tokenizer_group_finding(event, wrapped["owner"], wrapped["name"])]
        mistral = _MISTRAL_ATTRIBUTE.search(said)
        if mistral is not None:
            return [_mistral_tokenizer_finding(event, mistral["name"])]
        executor = _EXECUTOR_WORKER.search(said)
        if executor is not None:
            return [_executor_worker_finding(event, executor["owner"])]
        field = CONFIG_ATTRIBUTE.search(said)
        if field is not None and _config_field_dated(facts, event, field["owner"]):
            return [_config_field_finding(facts, event, field["owner"], field["name"])]
    return []


# vLLM's words that a field is going away: what confirms a config class held a field of the same name as an engine
# argument the catalog dates (`lora_extra_vocab_size` is deprecated and will be removed in v0.12.0)
_GOING_AWAY = re.compile(r"deprecat|removed")


def _config_field_dated(facts: Facts, event: LogEvent, owner: str) -> bool:
    """Whether the engine-arguments table dates the field: for EngineArgs itself, either way; for a config class,
    only a removal vLLM announced in words naming the field (an engine argument of the same name can live on another
    class: ModelConfig never held kv_transfer_config); never when the server's release is one that had it."""
    if owner.endswith("EngineArgs"):
        dated = bool(event.known_releases or event.known_in_release)
    else:
        named = event.naming_message
        dated = bool(event.known_releases) and named is not None and bool(_GOING_AWAY.search(named.template))
    return dated and not _running_one_that_had_it(facts, event)


def _running_one_that_had_it(facts: Facts, event: LogEvent) -> bool:
    """The server's release is one of those whose engine arguments had the field (patch releases told apart: runner
    came in 0.10.1.1, so a 0.10.0 server lacks it)."""
    running = c.vllm_release(facts)
    first, _, last = (event.known_releases or f"{event.known_in_release}–").partition("–")
    since = c.release_of(first)
    if running is None or since is None:
        return False
    until = c.release_of(last) if last else None
    return running >= since and (until is None or running[:2] <= until[:2])


def _config_field_finding(facts: Facts, event: LogEvent, owner: str, name: str) -> Finding:
    """A field of vLLM's configuration that code read and the installed vLLM lacks, dated by the releases whose
    engine arguments had it (the collector's lookup): removed since, or added after the installed release."""
    removed = event.known_releases
    last = (removed or "").partition("–")[2]
    running = c.vllm_release(facts)
    when = (
        f"a field of vLLM {removed} that later releases removed: the code was written for vLLM {last} or older"
        if removed
        else f"a field vLLM has from {event.known_in_release} on: the code was written for a newer vLLM than this one"
    )
    pin = (
        (f"vllm=={last}" if last.count(".") >= 2 else f"vllm=={last}.*")
        if removed
        else f"vllm>={event.known_in_release}"
    )
    return RULE_ENGINE_INTERNALS.finding(
        c.phase_severity(event),
        f"code built on vLLM reads {owner}.{name}, {when}",
        summary=f"Python's AttributeError on one of vLLM's configuration classes. {name} is an engine argument of "
        f"vLLM {removed or f'{event.known_in_release} on'} (the catalog's table of EngineArgs' fields per release)"
        + (f", and this server runs {running[0]}.{running[1]}" if running else "")
        + ". The framework that reads it (an RL trainer, a serving wrapper, a plugin) and the installed vLLM are "
        "releases apart; the error is the caller's, not vLLM's, and no flag of the server changes it.",
        evidence=[c.log_evidence(event, name="config_attribute", value=f"{owner}.{name}")],
        actions=[
            _matching_releases(f"; `{pin}` has {name}") + " (`vllm --version`).",
            f"Code of your own: read {name} only where the installed release has it "
            f"(`getattr(config, {name!r}, None)`), or follow what replaced it in that release's vllm/config.",
        ],
        confidence=0.8,
    )


def _executor_worker_finding(event: LogEvent, owner: str) -> Finding:
    """V0-style code that reaches the executor's driver worker, on V1's executor for more than one GPU."""
    return RULE_ENGINE_INTERNALS.finding(
        c.phase_severity(event),
        f"code built on vLLM reads {owner}.driver_worker: V1's executor for more than one GPU keeps its workers in "
        "processes of their own",
        summary="Frameworks written for V0 reach the model through `llm_engine.model_executor.driver_worker."
        f"model_runner`. In V1 only the single-GPU UniProcExecutor holds a driver worker in the engine's process; "
        f"{owner}, which V1 builds for tensor or pipeline parallelism, holds handles to worker processes, so the "
        "same code that works on one GPU fails on several. The caller's code, not a flag of vLLM's.",
        evidence=[c.log_evidence(event, name="engine_attribute", value=f"{owner}.driver_worker")],
        actions=[
            "Reach the workers through `LLM.collective_rpc(method)`, which runs a method on every worker whatever "
            "the executor (the framework's release that does so, where it has one).",
            "Until then, one GPU per engine (tensor_parallel_size=1) gives UniProcExecutor, which has driver_worker.",
        ],
        confidence=0.75,
    )


# What every release's class sets first in its constructor: missing, the constructor itself failed, and code that
# touched the half-built object (its __del__, the caller's cleanup) raised this on the way out (vllm#11437: an LLM
# whose constructor ran out of memory, then LLM.__del__ read llm_engine)
_SET_IN_CONSTRUCTOR = {("LLM", "llm_engine")}


def _half_built(event: LogEvent, owner: str, name: str) -> Finding:
    return RULE_ENGINE_INTERNALS.finding(
        Severity.MEDIUM,
        f"{owner}'s constructor failed before it set {name}: this AttributeError is the consequence, the "
        "constructor's own exception before it is the cause",
        summary=f"Every vLLM release's {owner} sets {name} while it is constructed, so an {owner} without it is one "
        "whose construction raised (the engine failed to start: out of memory, a refused argument, a missing "
        "kernel). Code that touched the half-built object afterwards, its __del__ or the caller's cleanup, raised "
        "this on the way out.",
        evidence=[c.log_evidence(event, name="engine_attribute", value=f"{owner}.{name}")],
        actions=[
            f"Read the exception printed before this one (the engine core's error, `Engine core initialization "
            f"failed`, a CUDA out of memory): that is why {owner}() failed; paste the whole output into `servops "
            "triage --logs -` to name it.",
        ],
        confidence=0.6,
    )


def _finding(facts: Facts, event: LogEvent, owner: str, name: str) -> Finding:
    if (owner, name) in _SET_IN_CONSTRUCTOR:
        return _half_built(event, owner, name)
    if owner not in _ENGINES:
        return _front_end_finding(event, owner, name)
    removed = vllm_defaults.V0_REMOVED_FROM
    last_said = f"{removed[0]}.{removed[1] - 1}"
    release = c.vllm_release(facts)
    v0s = name in _MOVED  # an attribute V0's engine held that V1's keeps elsewhere; any other moved between releases
    v0_there = v0s and (release is None or vllm_defaults.V1_DEFAULT_FROM <= release < removed)
    why = _MOVED.get(name, f"the installed release's {owner} has no {name}")
    changes = []
    if v0_there:
        changes.append(
            ConfigChange(
                flag="VLLM_USE_V1",
                proposed="0",
                reason=f"vLLM 0.8 to {last_said} still carry V0's engine, whose {owner} had {name} (FastChat#3704: "
                "the reporter confirmed it works around this)",
                cost=f"V0's engine, slower than V1 and gone after {last_said}: a stopgap until the caller is updated",
                kind="env",
            )
        )
    actions = [
        _matching_releases()
        + f": the code reading {owner}.{name} was written for "
        + (f"V0's engine (vLLM before 0.8, or 0.8 to {last_said} with VLLM_USE_V1=0)." if v0s else "another vLLM."),
        "Code of your own: reach the workers through the public `LLM.collective_rpc(method)` (AsyncLLM's "
        "`collective_rpc` in a server), which runs a method on every worker in V0 and V1 alike, instead of "
        "model_executor.driver_worker.",
    ]
    if name == "model_executor":
        actions.append(
            "vLLM 0.32's V1 LLMEngine sets model_executor again when its engine core runs in the caller's process "
            "(VLLM_ENABLE_V1_MULTIPROCESSING=0, 'for v0 compatibility' in vllm/v1/engine/llm_engine.py)."
        )
    return RULE_ENGINE_INTERNALS.finding(
        Severity.CRITICAL,
        f"code built on vLLM reads {owner}.{name}, which this vLLM's engine does not have: it was written for "
        + ("V0's engine (before 0.8)" if v0s else "another vLLM release"),
        summary=f"Python's AttributeError on one of vLLM's engine objects: {why}. From vLLM 0.8 the V1 engine is the "
        f"default, and V0 was removed after {last_said}, so a framework that reaches into the engine's internals "
        "breaks with the release it did not pin. The error is the caller's, not vLLM's.",
        evidence=[c.log_evidence(event, name="engine_attribute", value=f"{owner}.{name}")],
        changes=changes,
        actions=actions,
        confidence=0.85,
    )


def _front_end_finding(event: LogEvent, owner: str, name: str) -> Finding:
    """One of vLLM's front-end or parameter classes a framework constructs, without what the framework calls."""
    return RULE_ENGINE_INTERNALS.finding(
        c.phase_severity(event),
        f"code built on vLLM calls {owner}.{name}, which this vLLM's {owner} does not have: it was written for "
        "another vLLM release",
        summary=f"Python's AttributeError on one of vLLM's own classes: frameworks (KServe, BentoML, FastChat, RL "
        f"trainers) construct {owner} and call it directly, and vLLM renames and restructures such classes between "
        "releases. The error is the caller's, not vLLM's, and no flag of the server changes it.",
        evidence=[c.log_evidence(event, name="engine_attribute", value=f"{owner}.{name}")],
        actions=[
            _matching_releases() + f" (`vllm --version`); {owner} in the installed vLLM's source shows what "
            f"replaced {name}.",
        ],
        confidence=0.8,
    )


def _tokenizer_group_finding(event: LogEvent, owner: str, name: str) -> Finding:
    """The caller asked vLLM's tokenizer wrapper for one of the tokenizer's own attributes: it holds the tokenizer,
    it is not one."""
    return RULE_ENGINE_INTERNALS.finding(
        c.phase_severity(event),
        f"code built on vLLM takes vLLM's {owner} for the tokenizer and asks it for {name}: it was written for a "
        "vLLM whose engine handed out the tokenizer itself",
        summary=f"vLLM {GROUP_RELEASES} wraps the Hugging Face tokenizer in a {owner} (one tokenizer per LoRA "
        f"adapter), and that is what its engine's `.tokenizer` holds; the wrapper has none of the tokenizer's own "
        f"attributes such as {name}. Code written before the wrapper came, or for releases after it went, reads it "
        "as the tokenizer. The error is the caller's, not vLLM's, and no flag of the server changes it "
        "(dottxt-ai/outlines#576: vLLM's LoRA commit brought the wrapper, outlines#579 unwrapped it).",
        evidence=[c.log_evidence(event, name="engine_attribute", value=f"{owner}.{name}")],
        actions=[
            _matching_releases() + " (`vllm --version`).",
            "Code of your own: take the tokenizer from `llm.get_tokenizer()` (LLM and LLMEngine return the tokenizer "
            f"itself), or from the wrapper's `.tokenizer` attribute on vLLM {GROUP_RELEASES}.",
        ],
        confidence=0.8,
    )


def _mistral_tokenizer_finding(event: LogEvent, name: str) -> Finding:
    """Code that takes vLLM's Mistral tokenizer for a Hugging Face one: a framework around vLLM, or a part of vLLM or
    of transformers that has no support for it; either way the Hugging Face tokenizer is the way around it."""
    return RULE_ENGINE_INTERNALS.finding(
        c.phase_severity(event),
        f"code takes a MistralTokenizer (vLLM's, for the Mistral tokenizer mode, or mistral_common's) for a Hugging "
        f"Face tokenizer and asks it for {name}",
        summary="With --tokenizer-mode mistral vLLM's tokenizer wraps mistral_common, which has none of a Hugging "
        f"Face tokenizer's attributes such as {name}. Code that reads them from it fails: a framework around vLLM "
        "(ai-dynamo/dynamo PR #12659: its engine factory read chat_template from it, which the merged fix stopped), "
        "or a part that did not support the Mistral tokenizer in that release (vllm#8358: a structured-output "
        "backend's get_vocab; later releases refuse such backends in words and name tokenizer_mode='hf').",
        evidence=[c.log_evidence(event, name="engine_attribute", value=f"MistralTokenizer.{name}")],
        alternatives=[
            ConfigChange(
                flag="--tokenizer-mode",
                current="mistral",
                proposed="hf",
                reason="the repository's Hugging Face tokenizer files, where it ships them, have what the code reads "
                "(vLLM 0.12 on; auto before it)",
                cost="Mistral's own tokenizer and chat format are not used: check the chat template against the "
                "model card",
            )
        ],
        actions=[
            "A framework around vLLM: " + _matching_releases()[0].lower() + _matching_releases()[1:] + " (`vllm "
            "--version`), one that handles vLLM's MistralTokenizer (as Dynamo's did after PR #12659).",
        ],
        confidence=0.75,
    )


def _matching_releases(pinned: str = "") -> str:
    """The one fix for any caller and vLLM written for different releases: make them match, one way or the other."""
    return (
        f"Install the vLLM release the calling framework pins (its requirements or extras list one{pinned}), or a "
        "release of the framework written for the installed vLLM"
    )


RULE_ENGINE_INTERNALS = Rule(
    code="OP-7.69",
    title="code built on vLLM reads engine internals or config fields the installed vLLM lacks",
    category=Category.CONFIGURATION,
    check=_check_engine_internals,
    needs=("events",),
    page=RulePage(
        checks="Python's `'LLMEngine' | 'AsyncLLMEngine' | 'AsyncLLM' | 'LLM' object has no attribute '<name>'` on an "
        "error line, and the same for vLLM's other classes that frameworks construct (its OpenAI and pooling front "
        "ends such as ServingEmbedding, SamplingParams, LoRARequest); and `'<Config>' object has no attribute "
        "'<field>'` for vLLM's configuration classes (ModelConfig, LoRAConfig, …) when the field is an engine "
        "argument some releases had and others not; `'TokenizerGroup' object has no attribute '<name>'`, vLLM's "
        "tokenizer wrapper taken for the tokenizer; `'MistralTokenizer' object has no attribute '<name>'`, vLLM's "
        "Mistral tokenizer taken for a Hugging Face one; `'MultiprocExecutor' object has no attribute "
        "'driver_worker'`, V0-style code on V1's executor for more than one GPU.",
        why="Frameworks that drive vLLM in-process read V0's engine internals (model_executor.driver_worker, "
        "AsyncLLMEngine.engine); V1, the default from 0.8, keeps the engine core in another process.",
        example="`AttributeError: 'AsyncLLM' object has no attribute 'engine'` from FastChat's vllm_worker on vLLM "
        "0.8.2 (lm-sys/FastChat#3704: VLLM_USE_V1=0 worked); `'LLMEngine' object has no attribute 'model_executor'` "
        "from TRL's online DPO on vLLM 0.10.0 (huggingface/trl#3859).",
        fix="VLLM_USE_V1=0 on vLLM 0.8 to 0.10 (V0's engine); otherwise the vLLM release the framework pins, or a "
        "framework release written for V1; `LLM.collective_rpc` for code of one's own.",
        limits="The attribute's owner must be one of vLLM's engine front ends or configuration classes by name; a "
        "class of the framework's own with the same name reads the same. A config field is dated by the engine "
        "argument of its name, which a config class can hold in fewer releases. VLLM_USE_V1=0 is proposed when the "
        "server's release is unknown or 0.8 to 0.10.",
        references=[
            "https://github.com/lm-sys/FastChat/issues/3704",
            "https://github.com/huggingface/trl/issues/3859",
            "https://github.com/verl-project/verl/issues/4380",
            "https://github.com/dottxt-ai/outlines/issues/576",
            "https://github.com/ai-dynamo/dynamo/pull/12659",
            "https://github.com/google/tunix/issues/780",
            "https://docs.vllm.ai/en/latest/usage/v1_guide.html",
        ],
    ),
)

RULES: list[Rule] = [RULE_ENGINE_INTERNALS]
