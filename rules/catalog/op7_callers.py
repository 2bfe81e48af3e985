"""OP-7.26: a package built on vLLM passes it an argument the installed vLLM does not take.

Why a rule of its own: frameworks that start vLLM from Python (TRL's `vllm-serve`, evaluation harnesses, RL
trainers) pass engine arguments straight through `LLM(...)` or `EngineArgs(...)`. Each release of such a package is
written against one vLLM; when the installed vLLM is older, its EngineArgs refuses the newer argument in Python's
words (`EngineArgs.__init__() got an unexpected keyword argument 'worker_extension_cls'`), raised in vLLM's file,
so the traceback looks like vLLM's fault. The traceback's outer frames name the package that called; whether vLLM
0.32's command line takes the argument (servops' table of vLLM's interface) tells which side is older. Such
packages often pin the vLLM they were written for in an extra named `vllm`: huggingface/trl#3304 was fixed by
`pip install trl[vllm]`.

The collector reads which releases take the argument from the catalog's table of EngineArgs' fields per release
(0.4 to 0.34, scripts/extract_vllm_messages.py), so the direction is known even without the caller's frames: a field
vLLM removed (`worker_use_ray`, 0.4–0.6: OpenRLHF/OpenRLHF#702 against vLLM 0.7) is taken out, or an older vLLM
installed; one added later (`worker_extension_cls`) needs a newer vLLM; one no release ever had (`model_hf_config`,
passed by code written for verl's patched vLLM: PeterGriffinJin/Search-R1#33) needs the caller's release made for a
released vLLM. The same table holds SamplingParams' keywords per release, which a caller builds a request's
sampling with: vLLM 0.6 made SamplingParams a msgspec Struct, whose refusal names no class (`TypeError: Unexpected
keyword argument 'use_beam_search'`, lm-sys/FastChat#3600: FastChat still passed a keyword older vLLM took, 0.4 and
0.5 of the releases read, and the thread's fix was to stop passing it), so that wording is read as SamplingParams'
only when a release took it.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import (
    ENGINE_ARG_CLASSES,
    SAMPLING_PARAMS_INIT,
    STRUCT_UNEXPECTED_KEYWORD,
    UNEXPECTED_KEYWORD,
    VLLM_CALLED_FUNCTIONS,
    VLLM_CONSTRUCTED_CLASSES,
    LogEvent,
    LogEventKind,
    named_as_vllms,
)
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage

# A constructor's refusal Python before 3.10 words without its class, whose keyword the collector found among
# EngineArgs' fields of some releases and not others.
UNNAMED_ENGINE_ARGS = "__init__ (EngineArgs', by its keyword: Python before 3.10 names no class)"


def _refusal(event: LogEvent) -> tuple[str, str, bool] | None:
    """(the refusing function, the keyword, vouched) of a TypeError refusing a keyword: Python's words name the
    function; msgspec's name none, and are vLLM's SamplingParams' when the collector found a release whose
    SamplingParams took the keyword (it then set the releases on the event: vouched, whatever the frames)."""
    refused = UNEXPECTED_KEYWORD.search(event.message or "")
    if refused is not None and refused["function"] == "__init__":  # no class named: EngineArgs' when a release took it
        vouched = bool(event.known_in_release or event.known_releases)
        return (UNNAMED_ENGINE_ARGS, refused["keyword"], True) if vouched else None
    if refused is not None:
        return refused["function"], refused["keyword"], False
    struct = STRUCT_UNEXPECTED_KEYWORD.search(event.message or "")
    if struct is not None and (event.known_in_release or event.known_releases):
        return SAMPLING_PARAMS_INIT, struct["keyword"], True
    return None


def _check_caller_argument(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR):
        refused = _refusal(event) if event.exception == "TypeError" else None
        if refused is None:
            continue
        function, keyword, vouched = refused
        # engine arguments are a caller's: vLLM's own server builds SamplingParams too, from each request
        engine_args = function in ENGINE_ARG_CLASSES and function != SAMPLING_PARAMS_INIT
        # a class of vLLM's that frameworks construct, or a function they call, named on a line pasted without its
        # frames: vLLM's refusal
        called_alone = named_as_vllms(function) and event.code_file is None
        in_vllm = engine_args or called_alone or c.installed_package(event.code_file) == "vllm"
        releases_known = event.known_in_release or event.known_releases or event.absent_from_releases
        if vouched or (in_vllm and (event.caller or (engine_args and releases_known) or called_alone)):
            if _is_method(function):
                return [_method_finding(event, function, keyword)]
            callee = _callee(function, engine_args, called_alone)
            return [_caller_finding(event, function, keyword, callee, flag=function != SAMPLING_PARAMS_INIT)]
    return []


# Keywords vLLM's own methods stopped taking, and what replaced them, as the threads that met them say (the engine
# arguments' table holds constructors' keywords only)
_METHOD_KEYWORDS_GONE: dict[tuple[str, str], str] = {
    ("LLM.generate", "prompt_token_ids"): "newer releases take token ids as the prompt itself: "
    "`llm.generate(TokensPrompt(prompt_token_ids=ids))` or `llm.generate({'prompt_token_ids': ids})` "
    "(openai/openai-cookbook PR #2353 changed its gpt-oss notebook so)",
}


def _is_method(function: str) -> bool:
    """A method of one of vLLM's classes other than its constructor (`LLM.generate`, `AsyncLLMEngine.generate`), or a
    function of vLLM's that frameworks call by name: both are read as a call written for another release."""
    owner, dot, method = function.rpartition(".")
    constructed = bool(dot) and method != "__init__" and owner.split(".")[-1] in VLLM_CONSTRUCTED_CLASSES
    return constructed or function in VLLM_CALLED_FUNCTIONS


def _caller_name(event: LogEvent) -> str | None:
    """The calling package as it is installed by name (`trl`, `vllm-omni`), when the frames named one."""
    return event.caller.replace("_", "-") if event.caller else None


def _method_finding(event: LogEvent, function: str, keyword: str) -> Finding:
    """A keyword a method of vLLM's refused: the calling code was written against another release's signature."""
    name = _caller_name(event)
    who = name or "the calling code"
    replaced = _METHOD_KEYWORDS_GONE.get((function, keyword))
    return RULE_CALLER_ARGUMENT.finding(
        c.phase_severity(event),
        f"{who} calls vLLM's {function} with {keyword}, which the installed release's {function} does not take: "
        "they are written for different vLLM releases",
        summary=f"{event.message}: vLLM's {function} changes its keywords between releases, and the code calling "
        f"it was written for another one. No flag of the server changes a method's signature."
        + (f" {keyword}: {replaced}." if replaced else ""),
        evidence=[c.log_evidence(event, name="root_exception", value=event.message)],
        actions=[
            f"Change the call to the installed release's {function} ({_where_defined(function)} lists the "
            "keywords)"
            + (f": {replaced}" if replaced else "")
            + f"; or install the vLLM release {who} was written for (its requirements name it).",
        ],
        confidence=0.8,
    )


def _where_defined(function: str) -> str:
    """Where a person reads the keywords: `help()` on a class vLLM exports, the source file of another function."""
    if function in VLLM_CALLED_FUNCTIONS:
        return f"its definition in the installed vLLM's source, {VLLM_CALLED_FUNCTIONS[function]},"
    return f"its docstring, or `help(vllm.{function})`,"


def _callee(function: str, engine_args: bool, called_alone: bool) -> str:
    """What the calling code does with vLLM, in the finding's words."""
    if function == SAMPLING_PARAMS_INIT:
        return "builds vLLM's SamplingParams"
    if engine_args or not called_alone:
        return "builds vLLM's engine"
    return f"constructs vLLM's {function.split('.')[0]}"


def _caller_finding(event: LogEvent, function: str, keyword: str, callee: str, flag: bool = True) -> Finding:
    name = _caller_name(event)
    who = name or f"the code that {callee}"
    if event.server_flag or "-" in keyword:
        return _flag_finding(event, keyword, who)
    if event.known_releases:
        which, changes, actions = _removed(event.known_releases, keyword, name, who, flag)
    elif event.absent_from_releases:
        which, changes, actions = _never_taken(event.absent_from_releases, name, who, flag)
    else:
        which, changes, actions = _not_taken_yet(event.known_in_release, keyword, name, who, flag)
    return RULE_CALLER_ARGUMENT.finding(
        c.phase_severity(event),
        f"{who} passes vLLM an argument the installed vLLM version does not take ({keyword})"
        + (f": {name} and vLLM are not versions made for each other" if name else ""),
        summary=f"{event.message}: raised in vLLM's {function}, with the argument {who} passed through. {which}.",
        evidence=[c.log_evidence(event, name="root_exception", value=event.message)],
        changes=changes,
        actions=actions,
        confidence=0.8,
    )


def _flag_finding(event: LogEvent, keyword: str, who: str) -> Finding:
    """A command line's flag passed as an engine keyword: one no release's EngineArgs took (the OpenAI server's own
    option, which the engine never reads), or an engine argument in the command line's spelling (`max-model-len`),
    which Python's keywords cannot hold, so it came through a mapping built from a command line's names."""
    field = keyword.replace("-", "_")
    if event.server_flag:
        title = (
            f"{who} passes vLLM's engine {event.server_flag}, a flag of vLLM's command line that no EngineArgs takes"
        )
        summary = (
            f"{event.message}: {event.server_flag} is read by vLLM's OpenAI server (or another subcommand) from its "
            f"command line; no released EngineArgs ({event.absent_from_releases}) has a field {field}, whatever "
            "its spelling."
        )
        actions = [
            f"Pass {event.server_flag} on the server's command line (`vllm serve <model> {event.server_flag} …`), "
            "not among the engine's keyword arguments; a framework that starts vLLM for you needs its own setting "
            "for server flags (its launcher's extra command-line arguments), which its documentation names.",
        ]
    else:
        title = f"{who} passes vLLM's engine {keyword!r}, a command line's spelling of the engine argument {field}"
        summary = f"{event.message}: EngineArgs' fields are Python names, with underscores ({field})."
        actions = [
            f"Write it {field} where the engine's keyword arguments are built (or pass --{keyword} on a command line)."
        ]
    return RULE_CALLER_ARGUMENT.finding(
        c.phase_severity(event),
        title,
        summary=summary,
        evidence=[c.log_evidence(event, name="root_exception", value=event.message)],
        actions=actions,
        confidence=0.8,
    )


# Each reading of the releases: (why, the changes, the actions).
_Reading = tuple[str, list[ConfigChange], list[str]]


def _removed(releases: str, keyword: str, name: str | None, who: str, flag: bool = True) -> _Reading:
    """Taken once, removed since: the caller was written for an older vLLM. `flag`: an engine argument, also a flag
    of the command line; else a keyword of SamplingParams, which no command line has."""
    spelled = "--" + keyword.replace("_", "-")
    which = (
        f"vLLM {releases} took it ({spelled if flag else 'a SamplingParams keyword'}); the installed vLLM is newer "
        f"and no longer does, so {who} was written for an older vLLM"
    )
    where = f"the keywords {name or 'the calling code'} passes to SamplingParams"
    if flag:
        where = f"the arguments {who} passes (and {spelled} off a command line)"
    changes = [
        ConfigChange(
            flag=spelled,
            current="passed",
            proposed="",
            reason=f"vLLM releases after {releases.split('–')[-1]} no longer take it",
        )
    ]
    actions = [
        f"Take {keyword} out of {where}, or install "
        f"{'the ' + name + ' release' if name else 'the version of that code'} made for the installed vLLM.",
        f"Or install a vLLM from {releases}, which took it.",
    ]
    return which, changes if flag else [], actions


def _never_taken(releases: str, name: str | None, who: str, flag: bool = True) -> _Reading:
    """Never vLLM's: a patched build or a framework's own subclass of EngineArgs took it (for SamplingParams, whose
    keywords no framework subclasses, also a misspelt keyword)."""
    patched = "a framework's own fork or subclass of EngineArgs" if flag else "a misspelt keyword, or a fork of vLLM"
    which = f"No released vLLM from {releases} takes it: {who} was written for a patched vLLM build ({patched})"
    actions = [
        f"Install the {name + ' release' if name else 'version of that code'} made for the released vLLM you have "
        "(its requirements or changelog name the vLLM it supports), or the patched vLLM build it ships.",
    ]
    return which, [], actions


def _not_taken_yet(newer: str | None, keyword: str, name: str | None, who: str, flag: bool = True) -> _Reading:
    """A later vLLM takes it (or which side is older is unknown)."""
    spelled = "--" + keyword.replace("_", "-") if flag else "a SamplingParams keyword"
    which = (
        f"vLLM {newer} takes it ({spelled}), so the installed vLLM is older than the one {who} was written for"
        if newer
        else f"{spelled} is not among the flags of the newest vLLM servops knows either, so it may have been renamed "
        f"or removed: the installed vLLM may be newer than {who} supports"
    )
    return which, [], _install_actions(name, newer)


def _install_actions(name: str | None, newer: str | None) -> list[str]:
    """The installed vLLM is older than the caller wants (or which side is older is unknown)."""
    if name is None and newer is None:  # which side is older is unknown: pair them, whichever moves
        return [
            "Install the vLLM version the calling code was written for (its requirements or changelog name it), or "
            "upgrade that code to its release made for the installed vLLM; `pip show vllm` says which is installed.",
        ]
    if name is None:
        return [f"Upgrade vLLM to {newer} or later, which takes the argument; `pip show vllm` says which is installed."]
    return [
        f"Install the vLLM version {name} requires: its vllm extra where it declares one (`pip install "
        f"'{name}[vllm]'` pins the vLLM it was written for), or the version its requirements name; `pip show "
        "vllm` says which is installed.",
        f"Or install the {name} release made for the installed vLLM (its changelog or requirements say which).",
    ]


RULE_CALLER_ARGUMENT = Rule(
    code="OP-7.26",
    title="a package built on vLLM passes an argument the installed vLLM does not take",
    category=Category.STARTUP,
    check=_check_caller_argument,
    needs=("events",),
    page=RulePage(
        checks="A TypeError `X() got an unexpected keyword argument 'k'` raised in vLLM's own file (or by EngineArgs), "
        "whose traceback's outer frames are in another package (the caller); which releases' EngineArgs take `k` "
        "(the catalog's table, 0.4 to 0.34), else whether vLLM 0.32's command line takes `--k`. Also msgspec's "
        "`Unexpected keyword argument 'k'` (vLLM's SamplingParams from 0.6) when a release's SamplingParams took `k`. "
        "A keyword no EngineArgs took that is a flag of vLLM's command line (`tool-call-parser`, the OpenAI server's) "
        "is named as that flag; one in the command line's spelling (`max-model-len`) as its Python name.",
        why="Packages that start vLLM from Python pass engine arguments through to vLLM; each release is written "
        "against one vLLM, and an older vLLM refuses the newer arguments.",
        example="`trl vllm-serve …` / `TypeError: EngineArgs.__init__() got an unexpected keyword argument "
        "'worker_extension_cls'` (huggingface/trl#3304: `pip install trl[vllm]` fixed it).",
        fix="The vLLM version the caller requires (its vllm extra, its requirements), or the caller's release made "
        "for the installed vLLM; an argument vLLM removed taken out of what the caller passes.",
        limits="Reads the argument's name only; outside EngineArgs the releases are known only when it is a flag of "
        "vLLM 0.32. A line pasted without its traceback is read only when it names a class of vLLM's that frameworks "
        "construct (OpenAIServingChat, SamplingParams, LLM …), and then the caller is unnamed.",
        references=[
            "https://github.com/huggingface/trl/issues/3304",
            "https://github.com/OpenRLHF/OpenRLHF/pull/702",
            "https://github.com/lm-sys/FastChat/issues/3600",
        ],
    ),
)

RULES: list[Rule] = [RULE_CALLER_ARGUMENT]
