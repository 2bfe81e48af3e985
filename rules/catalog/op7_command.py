"""OP-7.20: vLLM's command line refused its arguments (argparse's "unrecognized arguments"), so nothing started.
OP-7.47: it refused a flag's value. OP-7.61: the program the command starts is not on the PATH at all, or this
user may not run it.

Why a rule of its own: the words are argparse's, not vLLM's, and they say which of two mistakes it is. Arguments
that start with a program (`/bin/bash -c …`, `llama-run …`) are a command given to an image whose entrypoint is
already vLLM's server (vLLM's images start `vllm serve` or the api_server module), so Docker or Kubernetes
appended the command to it as arguments. Arguments that are flags name one vLLM's command line does not take:
a misspelling of one it does (named from the 484 flags of vLLM 0.32, `advisor/catalog/vllm_interface.json`), or
a flag of another server or of an older release, which a generator of launch commands (an operator, a chart)
passes to every server. Sources: defilantech/LLMKube#1030 (`--enable-metrics`, metrics are on by default at
/metrics), opea-project/GenAIComps#336 (`/bin/bash -c` after an api_server entrypoint), containers/ramalama#758.
A command that names a program the environment lacks fails before any of that: Go's os/exec says `exec: "vllm":
executable file not found in $PATH` (runc prints it, and Docker and the kubelet pass it on), a shell says `vllm:
command not found`. For vllm that is an image or a Python environment without vLLM's entry point; for nvidia-smi, a
container started without GPUs (the NVIDIA Container Toolkit mounts the driver's nvidia-smi only into those).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from rules import vllm_defaults
from rules.catalog import common as c
from rules.catalog.op7_json_flag import is_json_flag_refusal
from rules.events import RAY_UNKNOWN_ENGINE_ARGUMENT, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# What a flag that vLLM lacks was usually meant to turn on, by a word of it: vLLM has it without a flag.
# The minors whose engine arguments the message catalog read (its header: advisor/catalog/vllm_messages.json).
OLDEST_RELEASE_READ, NEWEST_RELEASE_READ = "0.4", "0.34"
RELEASES_READ = f"{OLDEST_RELEASE_READ} to {NEWEST_RELEASE_READ}"
ALREADY_ON = {
    "metrics": "vLLM's OpenAI server serves Prometheus metrics at /metrics without a flag",
}
# What took over from an engine argument vLLM removed, where its own messages say so: from 0.10.1 the messages that
# had said `--task embed` (vllm/entrypoints/llm.py, vllm/config.py) say `--runner pooling` and `--convert embed`.
REPLACED_BY = {
    "--task": "--runner (pooling or generate) and --convert (embed, classify, …) took over from it in vLLM 0.10.1: "
    "a pooling model runs as pooling without either",
}
# A command a known launcher appends for another runtime, and that launcher's own way to start vLLM instead.
LAUNCHER_COMMANDS = {
    "llama-run": "`llama-run` is llama.cpp's chat program, which RamaLama's `run` starts in the container; RamaLama's "
    "vLLM runtime only serves (containers/ramalama#758, its maintainers): start it with `ramalama --runtime vllm "
    "serve MODEL` and chat with the served endpoint (any OpenAI-compatible client).",
}


def _check_unrecognized(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.ARGS_UNRECOGNIZED)
    if not events:
        return []
    event = events[0]
    first = event.component or ""
    if first and not first.startswith("-"):
        return [_command_finding(event, first)]
    return [_flag_finding(facts, event, first)] if first else []


@dataclass(frozen=True)
class _Refusal:
    """Who refused a name and how to speak of it: argparse a flag of the command, or Ray Serve LLM a key of
    engine_kwargs (the same engine argument, so the same releases took it; its key spelled as the field)."""

    ray: bool
    who: str
    where: str
    noun: str  # what the refused name is, in the titles: a command's flag, or an engine argument

    def spelled(self, flag: str) -> str:
        """A flag as the refused text spells its argument: engine_kwargs keys are the fields' names (`max_num_seqs`)."""
        return flag.lstrip("-").replace("-", "_") if self.ray else flag

    def title(self, flag: str, what: str) -> str:
        refuser = "Ray Serve LLM refused the engine argument" if self.ray else "vLLM refused the argument"
        return f"{refuser} {self.spelled(flag)}: {what}"

    def drop(self, flag: str) -> list[ConfigChange]:
        """The removal as a change of the command; an engine_kwargs key is no flag of a command to change."""
        return [] if self.ray else [_drop(flag)]


_ARGPARSE = _Refusal(
    ray=False, who="argparse", where="the command (or from the template that generates it)", noun="a flag"
)
_RAY = _Refusal(
    ray=True,
    who="Ray Serve LLM (which checks engine_kwargs against the installed vLLM's arguments)",
    where="engine_kwargs (the LLMConfig's, or the guide or config it was copied from)",
    noun="an engine argument",
)


def _refused_by(event: LogEvent) -> _Refusal:
    return _RAY if (event.message or "").startswith(RAY_UNKNOWN_ENGINE_ARGUMENT) else _ARGPARSE


def _command_finding(event: LogEvent, program: str) -> Finding:
    return RULE_UNRECOGNIZED.finding(
        Severity.CRITICAL,
        f"vLLM's server was given a command as its arguments ({program} …): the image's entrypoint is already the "
        "server",
        summary=f"argparse refused `{event.message}`: the arguments are a command line ({program} …), not the "
        "server's flags. vLLM's images "
        "start vLLM's server as their entrypoint, and `docker run IMAGE <words>` (or a pod's `args:`) appends the "
        "words to it, so the server was asked to parse a whole command line meant for a shell or another runtime.",
        evidence=[c.log_evidence(event, name="arguments refused", value=program)],
        actions=[
            *([LAUNCHER_COMMANDS[program]] if program in LAUNCHER_COMMANDS else []),
            "Give the image only the server's own arguments (the `vllm serve` flags: `docker run … IMAGE --model … "
            "--port …`), or replace the entrypoint to run your command: `docker run --entrypoint /bin/bash IMAGE -c "
            "'…'`; in Kubernetes, `args:` for the server's flags, `command:` to replace the entrypoint.",
            "A wrapper that builds the command for another runtime (a llama.cpp command line) needs its vLLM mode: "
            "vLLM's image runs the server only.",
        ],
        confidence=0.85,
    )


def _flag_finding(facts: Facts, event: LogEvent, flag: str) -> Finding:
    meant = event.nearest_flag
    if meant is None and (event.known_releases or event.known_in_release):
        return _release_finding(event, flag, c.vllm_release(facts))
    by = _refused_by(event)
    name = by.spelled(flag)
    hint = next((why for word, why in ALREADY_ON.items() if word in flag), None)
    if meant:
        return RULE_UNRECOGNIZED.finding(
            Severity.CRITICAL,
            by.title(flag, f"a misspelling of {by.spelled(meant)}"),
            summary=f"{by.who} refused `{event.message}` and the server never started. {name} is a letter or two "
            f"from {by.spelled(meant)}, an argument vLLM has.",
            evidence=[c.log_evidence(event, name="argument refused", value=name)],
            actions=[f"Spell it {by.spelled(meant)}, with the same value: vLLM's argument for what {name} meant."],
            confidence=0.85,
        )
    return RULE_UNRECOGNIZED.finding(
        Severity.CRITICAL,
        by.title(flag, "not an engine argument vLLM takes" if by.ray else "not a flag vLLM's command line takes"),
        summary=f"{by.who} refused `{event.message}` and the server never started. {name} is none of vLLM 0.32's "
        f"engine and front-end arguments, nor an engine argument of any release read ({RELEASES_READ}): an argument "
        "of another server, or one a launch generator (an operator, a chart) adds to every server."
        + (f" {hint}." if hint else ""),
        evidence=[c.log_evidence(event, name="argument refused", value=name)],
        changes=by.drop(flag),
        actions=[f"Remove {name} from {by.where}."],
        confidence=0.8,
    )


def _drop(flag: str) -> ConfigChange:
    return ConfigChange(
        flag=flag, current=None, proposed="", reason="vLLM does not take it; argparse refuses the whole command for it"
    )


def _took_it_once(
    known_releases: str, flag: str, running: vllm_defaults.Version | None, by: _Refusal
) -> tuple[str, str, list[str], list[ConfigChange]]:
    """What, why, actions and changes for a flag only some releases took: removed since, or (where the text dates the
    server before the flag's first release) not there yet; undated, removal leads and the older server follows."""
    name = by.spelled(flag)
    first, _, last = known_releases.partition("–")
    why = f"vLLM's engine arguments held it from {first} to {last} (its released packages, read one by one)."
    before_it = first != OLDEST_RELEASE_READ and (running is None or running < c.release_of(first))
    if before_it and running is not None:  # the text's own version is older than the flag
        what = f"{by.noun} of vLLM {known_releases}: this server runs an older release, from before {first}"
        return what, why, [f"Upgrade vLLM to a release that takes it ({first} to {last}), or remove {name}."], []
    what = f"{by.noun} of vLLM {known_releases}, removed after {last}: this server runs a later vLLM"
    replaced = REPLACED_BY.get(flag, "its release notes say what replaced it")
    actions = [f"Remove {name} from {by.where}: vLLM after {last} does without it; {replaced}."]
    if before_it:  # the text does not date the server: a release older than the flag refuses it too
        actions.append(
            f"Unless the server is older than the flag: a release before {first} refuses it as well "
            f"(`vllm --version` or the image's tag says which); there, upgrade to one that takes it ({first} "
            f"to {last}) if its feature is wanted."
        )
    return what, why, actions, by.drop(flag)


def _every_release(by: _Refusal) -> tuple[str, str, list[str]]:
    """What, why and actions for a name every release read takes: a parser other than vLLM's refused it, or (Ray's
    check) the vLLM beside Ray is none of the releases read."""
    if by.ray:
        return (
            "an engine argument every vLLM release takes: Ray checked it against a vLLM none of them is",
            f"Every release read ({RELEASES_READ}) takes it, so the vLLM Ray Serve LLM imports lacks a field every "
            "release has: a fork or a build of its own, or another package installed under vLLM's name.",
            [
                "See which vLLM Ray's environment imports (`python -c 'import vllm; print(vllm.__version__, "
                "vllm.__file__)'` in the replica's image) and install a released vLLM of the version Ray pins."
            ],
        )
    return (
        "a flag every vLLM release takes: the parser that refused it is not vLLM's",
        f"Every release read ({RELEASES_READ}) takes it, so what refused it parses other arguments than vLLM's: "
        "a wrapper's own parser, or another server given vLLM's flags.",
        [
            "Give the flag to vLLM's own command (`vllm serve …`) rather than to the wrapper that refused it, "
            "or to the wrapper in its own spelling (its `--help`)."
        ],
    )


def _release_finding(event: LogEvent, flag: str, running: vllm_defaults.Version | None) -> Finding:
    """A flag some release's command line takes: removed since (the server is newer), added later (it is older), or
    taken by every release read (the parser that refused it is not vLLM's). A flag some releases took, first after the
    oldest read, is refused both before it came and after it went: the running release, when the text says it, tells
    which; otherwise removal leads (a template outlives its flags) and the older server is the second reading
    (vllm#9840: `--task embedding` refused by an image older than the flag)."""
    by = _refused_by(event)
    changes: list[ConfigChange] = []
    if event.known_releases:
        what, why, actions, changes = _took_it_once(event.known_releases, flag, running, by)
    elif event.known_in_release == OLDEST_RELEASE_READ:
        what, why, actions = _every_release(by)
    else:
        what = f"{by.noun} vLLM {event.known_in_release} takes: this server runs a release without it"
        why = f"vLLM {event.known_in_release} takes it; the release that refused it is older, or its parser not vLLM's."
        actions = [
            f"Upgrade vLLM (release {event.known_in_release} takes it), or remove {by.spelled(flag)} from {by.where}.",
            "`vllm --version` (or the image's tag) says which release runs.",
        ]
    return RULE_UNRECOGNIZED.finding(
        Severity.CRITICAL,
        by.title(flag, what),
        summary=f"{by.who} refused `{event.message}` and the server never started. {why}",
        evidence=[c.log_evidence(event, name="argument refused", value=by.spelled(flag))],
        changes=changes,
        actions=actions,
        confidence=0.85,
    )


RULE_UNRECOGNIZED = Rule(
    code="OP-7.20",
    title="vLLM's command line refused its arguments",
    category=Category.STARTUP,
    check=_check_unrecognized,
    needs=("events",),
    page=RulePage(
        checks="argparse's `error: unrecognized arguments: …` from `vllm serve`, the api_server module or a "
        "wrapper's parser; Ray Serve LLM's `Unknown engine argument: <key>` for an engine_kwargs key.",
        why="One argument vLLM does not take refuses the whole command; whether the arguments start with a program "
        "or with a flag says whether the container's entrypoint or the flag is wrong.",
        example="`vllm: error: unrecognized arguments: --enable-metrics` from an operator's generated command; "
        "vLLM serves /metrics without it (defilantech/LLMKube#1030).",
        fix="Remove the flag or spell it as vLLM does; give the image only the server's arguments, or "
        "`--entrypoint` to run another command.",
        limits=f"Knows vLLM 0.32's flags and the engine arguments of every release read ({RELEASES_READ}); a front-end "
        "flag (not an engine argument) that an older release took and 0.32 dropped reads as unknown.",
        references=[
            "https://github.com/defilantech/LLMKube/issues/1030",
            "https://github.com/opea-project/GenAIComps/issues/336",
        ],
    ),
)

# --- OP-7.47 a flag's value refused ---------------------------------------------------------------------


def _check_value(facts: Facts) -> list[Finding]:
    # a JSON flag's value refused as not JSON, or for its config class: OP-7.188's
    events = [e for e in facts.events_of(LogEventKind.ARG_VALUE_REFUSED) if not is_json_flag_refusal(e)]
    if not events:
        return []
    event = events[0]
    flag = event.component or "a flag"
    if event.message == "missing_value":
        return [_missing_value(event, flag)]
    if event.message == "invalid_choice":
        return [_invalid_choice(event, flag)]
    if event.message == "config_choice":
        return [_config_choice(event, flag)]
    return [_invalid_value(event, flag)]


def _missing_value(event: LogEvent, flag: str) -> Finding:
    return RULE_VALUE.finding(
        Severity.CRITICAL,
        f"vLLM's command line refused {flag}: it was given no value",
        summary=f"argparse found no value after {flag}: the next word was another flag, or nothing. In a container "
        f"or a pod spec that is most often a variable that expanded to nothing (`{flag} $TP` with TP unset or "
        "empty), or a YAML args list that lost the value's item.",
        evidence=[c.log_evidence(event, name="flag without a value", value=flag)],
        actions=[
            "Look at the command the server really got: `docker inspect <container>` (Args), `kubectl get pod <pod> "
            "-o yaml` (args, env); set the variable where the container starts, or write the value itself.",
            f"Write `{flag}=<value>` as one word, so an empty value is refused with its name instead of shifting "
            "the next flag into its place.",
        ],
        confidence=0.85,
    )


def _invalid_choice(event: LogEvent, flag: str) -> Finding:
    value, choices = event.argument_value or "", event.accepted_instead or ""
    close = difflib.get_close_matches(value, [choice.strip() for choice in choices.split(",")], n=1, cutoff=0.5)
    return RULE_VALUE.finding(
        Severity.CRITICAL,
        f"vLLM's command line refused {flag} {value!r}: not one of its choices"
        + (f" (did you mean {close[0]!r}?)" if close else ""),
        summary=f"argparse takes only the values it lists for {flag}: {choices}. A value that other tools spell "
        "otherwise, or that a later (or earlier) vLLM release added, is refused by this one.",
        evidence=[c.log_evidence(event, name="value refused", value=value)],
        actions=[f"Give {flag} one of: {choices}" + (f"; {close[0]} is the nearest to {value!r}." if close else ".")],
        confidence=0.85,
    )


def _config_choice(event: LogEvent, flag: str) -> Finding:
    """A config field's value outside its Literal, refused by pydantic: the least listed value above a number (a
    limit the value must reach, such as an adapter's rank), else the nearest spelling."""
    value = event.argument_value or ""
    choices = [choice.strip() for choice in (event.accepted_instead or "").split(",")]
    instead, is_limit = _listed_instead(value, choices)
    changes = (
        [ConfigChange(flag=flag, current=value, proposed=instead, reason=_LISTED_REASON[is_limit])]
        if instead is not None and " or " not in flag
        else []
    )
    return RULE_VALUE.finding(
        Severity.CRITICAL,
        f"vLLM's configuration refused {flag} {value if value.isdigit() else repr(value)}: it takes only the values "
        "it lists" + _listed_title(instead, is_limit),
        summary=f"The field behind {flag} is typed with a fixed list of values ({', '.join(choices)}); pydantic "
        "refuses any other when vLLM builds its configuration, from the command line, the LLM class or code that "
        "builds vLLM's configs itself.",
        evidence=[c.log_evidence(event, name="value refused", value=value)],
        changes=changes,
        actions=[
            f"Give {flag} one of: {', '.join(choices)}" + _listed_action(value, instead, is_limit),
            "Where a framework sets it from something else (an adapter's rank, a model's config), round up to a "
            "listed value there (vllm-project/vllm-omni PR #1397: a rank-48 adapter needs --max-lora-rank 64).",
        ],
        confidence=0.85,
    )


_LISTED_REASON = {
    True: "the least value vLLM lists that is at least the one given",
    False: "the listed value nearest the one given",
}


def _listed_instead(value: str, choices: list[str]) -> tuple[str | None, bool]:
    """The listed value to propose, and whether it is a limit: for a number, the least listed number at or above it
    (a rank of 48 needs 64, not the nearer 32); otherwise the nearest spelling, if any is near."""
    numbers = sorted(int(choice) for choice in choices if choice.isdigit())
    above = next((n for n in numbers if value.isdigit() and n >= int(value)), None)
    if above is not None:
        return str(above), True
    close = difflib.get_close_matches(value, choices, n=1, cutoff=0.5)
    return (close[0] if close else None), False


def _listed_title(instead: str | None, is_limit: bool) -> str:
    if instead is None:
        return ""
    return f" ({instead} is the least above it)" if is_limit else f" (did you mean {instead!r}?)"


def _listed_action(value: str, instead: str | None, is_limit: bool) -> str:
    if instead is None:
        return "."
    if is_limit:
        return f"; for a limit such as an adapter's rank, the least listed value at or above it ({instead}) fits."
    return f"; {instead} is the nearest to {value!r}."


def _invalid_value(event: LogEvent, flag: str) -> Finding:
    value, kind = event.argument_value or "", event.accepted_instead or "value"
    if _PORT_MAPPING.fullmatch(value):
        return _port_mapping(event, flag, value)
    suffixed = bool(_SUFFIXED.fullmatch(value))
    return RULE_VALUE.finding(
        Severity.CRITICAL,
        f"vLLM's command line refused {flag} {value!r}: not an {kind} value it reads"
        if kind[0] in "aeiou"
        else f"vLLM's command line refused {flag} {value!r}: not a {kind} value it reads",
        summary=f"argparse could not read {value!r} as the {kind} {flag} takes."
        + (
            f" vLLM 0.32 reads a number with a suffix for {flag} where it accepts one (`human_readable_int`: 1k is "
            "1,000 and 1K is 1,024; --max-model-len also takes `auto`); this release reads digits only."
            if suffixed
            else ""
        ),
        evidence=[c.log_evidence(event, name="value refused", value=value)],
        actions=[
            _digits(flag, value)
            if suffixed
            else f"Write {flag} as the {kind} it takes (`vllm serve --help` lists each flag's type)."
        ],
        confidence=0.85,
    )


_SUFFIXED = re.compile(r"(?P<number>\d+(?:\.\d+)?)(?P<suffix>[kKmMgGtT])")
# Docker's `-p HOST:CONTAINER` port mapping: a value no flag of vLLM's takes
_PORT_MAPPING = re.compile(r"(?:[\d.]+:)?\d+:\d+(?:/(?:tcp|udp))?")


def _port_mapping(event: LogEvent, flag: str, value: str) -> Finding:
    """A port mapping given to a number flag: `docker run`'s `-p 8000:8000` written after the image's name went to
    vLLM's command line, where argparse takes `-p` for the pipeline-parallel `-pp` (vllm#2235)."""
    return RULE_VALUE.finding(
        Severity.CRITICAL,
        f"vLLM's command line got the port mapping {value!r} as {flag}: a `docker run -p` written after the image's "
        "name is passed to vLLM, not to Docker",
        summary="Everything after the image's name in `docker run` is the container's command, here vLLM's "
        "arguments; argparse accepts a prefix of a flag, so `-p` reached vLLM as its pipeline-parallel `-pp` and the "
        "mapping as its value.",
        evidence=[c.log_evidence(event, name="value refused", value=value)],
        actions=[
            f"Move `-p {value}` (and any other Docker option: --gpus, --env, -v, --ipc) before the image's name: "
            "`docker run --gpus all -p 8000:8000 vllm/vllm-openai:<tag> --model …`.",
        ],
        confidence=0.9,
    )


_POWER = {"k": 1, "m": 2, "g": 3, "t": 4}


def _digits(flag: str, value: str) -> str:
    """The value in plain digits, both ways vLLM 0.32 reads a suffix (lower case: thousands; upper: powers of 1024)."""
    found = _SUFFIXED.fullmatch(value)
    number, power = (float(found["number"]), _POWER[found["suffix"].lower()]) if found else (0.0, 0)
    return (
        f"Write {flag} as plain digits: {int(number * 1000**power)} ({value} read in thousands) or "
        f"{int(number * 1024**power)} (in powers of two)."
    )


RULE_VALUE = Rule(
    code="OP-7.47",
    title="vLLM's command line refused a flag's value",
    category=Category.STARTUP,
    check=_check_value,
    needs=("events",),
    page=RulePage(
        checks="argparse's `error: argument <flag>: invalid <type> value: '<v>'`, `… invalid choice: '<v>' (choose "
        "from …)` and `… expected one argument`; pydantic's `Input should be A, B or C [type=literal_error, "
        "input_value=…]` for a config field with listed values, the flag named by the values (EngineArgs' Literal "
        "annotations in vLLM 0.32, advisor/catalog/vllm_interface.json).",
        why="One flag's value refused stops the whole start; an empty value is most often a variable that expanded "
        "to nothing in a container's command.",
        example="`vllm: error: argument --tensor-parallel-size/-tp: expected one argument` from a pod whose args said "
        "`--tensor-parallel-size $(TP)` and whose env had no TP.",
        fix="The value itself, or the variable set; one of the listed choices; plain digits where a release reads no "
        "suffix (vLLM 0.32 reads 32k as 32,000 and 32K as 32,768 for --max-model-len).",
        limits="Names the first flag argparse refused; argparse stops there.",
        references=["https://docs.python.org/3/library/argparse.html"],
    ),
)

# --- OP-7.61 the program to start is not there ------------------------------------------------------------------------

# What a missing program most often means where vLLM should start, by its name: (title, why, what to do).
_MISSING_PROGRAMS: dict[str, tuple[str, str, str]] = {
    "vllm": (
        "the command that should start the server names vllm, which is not on the PATH",
        "vLLM's command-line entry point is not installed where the command runs: the image is not one with vLLM "
        "in it (a CUDA or PyTorch base image), or vLLM was installed into another Python environment than the "
        "one on the PATH (a virtual environment not activated, a user install whose ~/.local/bin is not on it)",
        "Check what the environment has: `docker run --rm --entrypoint sh IMAGE -c 'command -v vllm; python3 -c "
        '"import vllm; print(vllm.__version__, vllm.__file__)"\'` (or the same in the shell); start it with the '
        "environment's own path (`<venv>/bin/vllm serve …`) or its module (`python3 -m "
        "vllm.entrypoints.openai.api_server …`, the same arguments), or use an image with vLLM (vllm/vllm-openai).",
    ),
    "nvidia-smi": (
        "nvidia-smi is not here: a container started without GPUs, or a host without the NVIDIA driver",
        "nvidia-smi is the driver's, not the image's: the NVIDIA Container Toolkit mounts it (with the driver's "
        "libraries) only into a container started with GPUs, so a container without them has none",
        "Start the container with GPUs (`docker run --gpus all …`; a pod with an nvidia.com/gpu limit on a node with "
        "NVIDIA's device plugin); on a host, nvidia-smi comes with the NVIDIA driver.",
    ),
}


_IN_THE_SPEC = (
    "In Kubernetes the pod's `command:` replaces the image's entrypoint and `args:` its arguments: `kubectl get pod "
    "<pod> -o yaml` shows what was asked; in Docker, `docker inspect <container>` (Path, Args)."
)


# What each reporter's line says happened, for the title
_WHO_FOUND_NOTHING = {
    "the container runtime": "the container never started",
    "Python's subprocess": "the launcher found no such file",
}


def _check_not_found(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.COMMAND_NOT_FOUND)
    if not events:
        return []
    return [_not_found_finding(next((e for e in events if e.message in _MISSING_PROGRAMS), events[0]))]


def _not_executable_finding(event: LogEvent) -> Finding:
    """The program exists and the user may not run it (EACCES): under OpenShift's arbitrary uid, an image whose files
    are executable by their owner (root) alone; elsewhere, a volume mounted noexec or a file without its x bit."""
    program = event.message or "?"
    return RULE_NOT_FOUND.finding(
        Severity.CRITICAL,
        f"the command's program {program} exists but this user may not run it (permission denied)",
        summary=f"{(event.component or 'the shell').capitalize()} found {program} and the kernel refused to execute "
        "it for the container's user (EACCES). In a container that is most often OpenShift's restricted security "
        "context: it runs the image as an arbitrary uid in group 0, and files the image's build left executable by "
        "their owner alone (root), such as a virtual environment's bin/ and its Python, cannot be run; a volume "
        "mounted noexec or a file without its execute bit does the same. Nothing of vLLM ran.",
        evidence=[c.log_evidence(event, name="program refused", value=program)],
        actions=[
            f"See the file's mode and the user: `ls -l $(command -v {program})` and `id` inside the container. For "
            "OpenShift, build the image so group 0 has the owner's rights (`chgrp -R 0 /opt/venv && chmod -R g=u "
            "/opt/venv` for the environment the program is in), or run the pod under a security context that keeps "
            "the image's user (an SCC such as anyuid, if the cluster allows it).",
            "A program on a mounted volume: mount it without noexec, or install it in the image.",
        ],
        confidence=0.75,
    )


def _init_found_nothing(event: LogEvent) -> Finding:
    """catatonit, Podman's init, names no program: it runs the container's command as pid 1 and execvp failed."""
    return RULE_NOT_FOUND.finding(
        Severity.CRITICAL,
        "the container's command names a program the image lacks (Podman's init could not start it)",
        summary="catatonit, the init Podman runs as the container's first process (`podman run --init`, and "
        "launchers that start containers through Podman), starts the container's command and got No such file or "
        "directory for it: the program the entrypoint or command names is not in the image, or a script's first "
        "line (#!) names an interpreter the image lacks. Nothing of vLLM ran.",
        evidence=[c.log_evidence(event, name="program not found", value="pid 1")],
        actions=[
            "See what the container was asked to run and whether the image has it: `podman inspect --format "
            "'{{.Config.Entrypoint}} {{.Config.Cmd}}' CONTAINER`, then `podman run --rm --entrypoint sh IMAGE -c "
            "'command -v PROGRAM; head -1 PROGRAM'`. A launcher that built the command for another runtime or image "
            "(a llama.cpp command for a vLLM image) needs the image it was written for.",
        ],
        confidence=0.7,
    )


def _not_found_finding(event: LogEvent) -> Finding:
    if event.error_code == "EACCES":
        return _not_executable_finding(event)
    if event.message is None:
        return _init_found_nothing(event)
    program = event.message or "?"
    runtime = event.component == "the container runtime"
    title, why, action = _MISSING_PROGRAMS.get(
        program,
        (
            f"the command names {program}, which is not on the PATH",
            f"the image or environment has no program named {program} on its PATH: a command written for another "
            "image (many have python3 and no python), a typo, or a program installed in a directory not on the PATH",
            f"Check the image's PATH and programs: `docker run --rm --entrypoint sh IMAGE -c 'echo $PATH; command -v "
            f"{program}'`; write the command with a program the image has (vLLM's own images start the server "
            "themselves: give them only vLLM's arguments).",
        ),
    )
    return RULE_NOT_FOUND.finding(
        Severity.CRITICAL if runtime else Severity.HIGH,
        f"{title} ({_WHO_FOUND_NOTHING.get(event.component or '', 'the shell found no such program')})",
        summary=f"{(event.component or 'the shell').capitalize()} could not find {program}: {why}. Nothing of vLLM "
        "ran, so no vLLM log exists for it.",
        evidence=[c.log_evidence(event, name="program not found", value=program)],
        actions=[action, _IN_THE_SPEC] if runtime else [action],
        confidence=0.85,
    )


RULE_NOT_FOUND = Rule(
    code="OP-7.61",
    title="the program that starts the server is not on the PATH, or may not be run",
    category=Category.STARTUP,
    check=_check_not_found,
    needs=("events",),
    page=RulePage(
        checks='The container runtime\'s `exec: "<program>": executable file not found in $PATH` (runc, as Docker and '
        "the kubelet report it), bash's `<program>: command not found`, dash's `<program>: not found`, zsh's `command "
        "not found: <program>`, Python's `[Errno 2] No such file or directory: '…/bin/<program>'` from a launcher; "
        "what a missing vllm or nvidia-smi means; a program found and refused to this user (`/bin/sh: 1: vllm: "
        "Permission denied`, runc's `permission denied`: OpenShift's arbitrary uid, a noexec mount); Podman's init "
        "failing to start the container's command (`(catatonit:2): failed to exec pid1: No such file or directory`).",
        why="A container whose command names a program the image lacks never starts, and the text holds no vLLM line "
        "at all; the program's name says which mistake it is.",
        example='`OCI runtime create failed: … exec: "vllm": executable file not found in $PATH: unknown` from a pod '
        "whose command was `vllm serve …` on a CUDA base image without vLLM.",
        fix="A program the environment has: vLLM's own path or module, an image with vLLM, a container with GPUs for "
        "nvidia-smi.",
        limits="Reads the program's name only; the image and its PATH are not in the text.",
        references=[
            "https://pkg.go.dev/os/exec#pkg-variables",
            "https://github.com/vllm-project/vllm/issues/15461",
            "https://docs.redhat.com/en/documentation/openshift_container_platform/4.16/html/images/creating-images",
        ],
    ),
)

RULES: list[Rule] = [RULE_UNRECOGNIZED, RULE_VALUE, RULE_NOT_FOUND]
