"""VC-1, VC-2: what vLLM itself said is wrong, and errors nobody has placed yet.

VC-1 reads the messages the collector found in vLLM's own catalog (`LogEventKind.VLLM_MESSAGE`, from
advisor/catalog/vllm_messages.json: every message vLLM raises or logs at warning and above, 0.4 to
0.33). vLLM validates a launch against the model, the GPU and its own limits and says exactly what is
wrong, so the finding is its message, with the file and line that raise it as evidence, and the fix
read from it: the flag it names moved the way it says (`Try increasing gpu_memory_utilization`), a size
that divides what must be divided (the largest tensor-parallel size that divides the attention heads),
a limit raised to what was asked (`LoRA rank 64 is greater than max_lora_rank 16`), or, for the
messages whose remedy is not in their words, the remedy in `REMEDIES`.

VC-2 names an exception neither the wording table nor the catalog knows (`UNPLACED_ERROR`): the root
exception, the component its traceback ran in, the phase, and the catalog entries nearest to it, so the
engineer starts from vLLM's source instead of "no known cause".
"""

from __future__ import annotations

import math
import re

from rules.catalog import common as c
from rules.catalog import op7_swap_space
from rules.catalog.component_actions import COMPONENT_ACTIONS
from rules.catalog.op7_checkpoint import unloadable_tensor
from rules.catalog.vc_remedies import MM_LIMIT_DEFAULTS, MM_LIMIT_MESSAGES, REMEDIES, Remedy
from rules.components import CONFIGURATION
from rules.events import HTTP_ERROR_EXCEPTION, MISSING_MODULE, STARTUP_FAILURE_KINDS, CatalogRef, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity

# Confidence of a finding in vLLM's own words: above every rule that infers a cause from symptoms
# (HL-2's engine death is 0.95), because vLLM raised it knowing the cause.
OWN_WORDS_CONFIDENCE = 0.97
UNPLACED_CONFIDENCE = 0.6  # the exception is certain; that it is the root cause is the traceback's order
NEAREST_SHOWN = 3
MAX_SIZES_LISTED = 64  # the valid sizes a divisibility fix lists, up to this
# Messages that only point elsewhere ("see root cause above"): the cause is another message.
_WRAPPER = re.compile(r"root cause|stack trace above|see (?:the )?(?:above|logs?)\b|above for", re.IGNORECASE)
_DIRECTION_WORDS: tuple[tuple[str, str], ...] = (
    (r"increas\w*|rais\w*|larger|higher|more", "raise"),
    (r"decreas\w*|reduc\w*|lower\w*|smaller", "lower"),
    (r"disabl\w*|remov\w*|unset\w*", "disable"),
    (r"enabl\w*|set\w*|pass\w*|specify\w*|provid\w*|use|add|requir\w*|needs?", "set"),
)
# A warning's words for costing speed: "This may slow down the performance", "performance may be degraded".
_SLOWER = re.compile(r"slow(?:s|ing)? down|slower|performance|degrad|suboptimal|inefficient", re.IGNORECASE)
_BOOLEAN_PREFIXES = ("--enable-", "--disable-", "--trust-remote-code", "--enforce-eager")
# Options of `docker run` (and their pod-spec equivalents) that vLLM's messages name like flags.
CONTAINER_SETTINGS = ("--shm-size", "--ipc", "--ulimit")
# Sizes that must divide a model's counts (heads, KV heads, layers, experts).
PARALLEL_SIZE_FLAGS = ("--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size")
# Flags vLLM's messages often name in words ("tensor parallel size", "max_lora_rank") rather than as --flags.
WORDED_FLAGS = (
    *PARALLEL_SIZE_FLAGS,
    "--max-model-len",
    "--max-num-seqs",
    "--max-num-batched-tokens",
    "--gpu-memory-utilization",
    "--max-lora-rank",
    "--max-loras",
    "--block-size",
    "--kv-cache-dtype",
    "--swap-space",
    "--cpu-offload-gb",
    "--trust-remote-code",
    "--enforce-eager",
)


# Exceptions vLLM raises when serving a request went wrong, not to refuse what it was given: "failed", not "refused".
FAILED_NOT_REFUSED = frozenset({"GenerationError"})
# The catalog's levels of a logged message that reports a failure, not advice (vllm_messages.json's `level`).
LOGGED_ERROR_LEVELS = frozenset({"error", "exception", "critical"})


def _check_vllm_messages(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.VLLM_MESSAGE)
    findings = []
    for event in sorted(events, key=_importance):
        ref = event.catalog
        if ref is not None and reads_as_finding(ref):
            findings.append(_finding(event, ref, facts))
    return findings


def reads_as_finding(ref: CatalogRef) -> bool:
    """Whether VC-1 makes a finding of the message: a raised one always; a logged one when it names a setting, has
    a remedy or costs speed. A logged message that names nothing to change is context (a warning), or, at error
    level, VC-5's lead when nothing else explains the text."""
    if ref.exception is not None:
        return True
    if not (ref.flags or ref.env or _remedy(ref) or _costs_speed(ref)):
        return False
    # a warning about a setting that is unset ("None quantization is not fully optimized yet")
    return not (ref.captured and all(value == "None" for value in ref.captured.values()))


def _importance(event: LogEvent) -> tuple:
    """Raised before logged, a cause before a message that points to one, then the order of the text."""
    ref = event.catalog
    raised = ref is not None and ref.exception is not None
    wrapper = ref is not None and bool(_WRAPPER.search(ref.template))
    return (not raised, wrapper, event.line_no or 0)


def _finding(event: LogEvent, ref: CatalogRef, facts: Facts) -> Finding:
    raised = ref.exception is not None
    serving = (event.phase or ref.phase) == "serving"
    severity = (Severity.HIGH if serving else Severity.CRITICAL) if raised else Severity.LOW
    remedy = _remedy(ref, event.message or "")
    if not raised and remedy is not None and remedy.severity is not None:
        severity = remedy.severity
    changes, alternatives, actions = _fix(ref, facts, event.message or "")
    actions = _architecture_actions(event, ref, facts) or _dated_actions(event, ref, actions)
    # an assert that checks the user's settings (its remedy says so) is a refusal, not vLLM disagreeing with itself
    internal = ref.kind in INTERNAL_CHECKS and not (remedy is not None and remedy.settings_check)
    if internal and not actions:
        actions = [_internal_check_action("AssertionError", _check_files(ref))]
    elif raised and not (changes or alternatives or actions):
        actions = [_source_action(ref)]
    said = (event.message or ref.template).strip()
    verb = "would refuse" if ref.predicted else "refused" if raised else "warned"
    what = "check" if raised else "warning"
    if ref.exception in FAILED_NOT_REFUSED:
        verb, what = "failed the request", "error"
    elif not raised and ref.level in LOGGED_ERROR_LEVELS:  # logger.error: vLLM went on, but something failed
        verb, what = "logged an error", "error"
    title = f"vLLM {verb}: {_plain(ref)}"
    if internal:  # not a refusal: vLLM's own code found a state it assumed impossible
        title = f"vLLM's internal check failed in {_check_files(ref)}: {_plain(ref)}"
    whose = "servops' launch check, in the words of vLLM's" if ref.predicted else "vLLM's own"
    elsewhere = ""
    if ref.also_in:  # a wordless check written in more than one file: the statement does not say which failed
        elsewhere = f"; the same statement is also in {', '.join(name.removeprefix('vllm/') for name in ref.also_in)}"
    if ref.kind == "check":  # the statement alone is the evidence: someone else's code may assert the same words
        elsewhere += ". The statement is vLLM's wordless assert, known by its words alone: its traceback's frames say "
        elsewhere += "for certain where it ran."
    return RULE_VLLM_MESSAGE.finding(
        severity,
        _title_cut(title, VC1_TITLE_CHARS),
        summary=f"{whose} {what} ({ref.location()}): {said}{elsewhere}",
        evidence=[_catalog_evidence(event, ref)],
        changes=changes,
        alternatives=alternatives,
        actions=actions,
        confidence=_confidence(ref, raised),
    )


def _architecture_actions(event: LogEvent, ref: CatalogRef, facts: Facts) -> list[str]:
    """A refused architecture's one action, from the releases whose model registry lists it: none does (a wrapper's
    name ending with one that does, or no such name); a newer release does (upgrade); or only a span of releases did,
    and the installed version, where the text states it, says which side of the span it is on. [] for any other
    message, or an architecture the catalog cannot date."""
    names = c.refused_architectures(ref)
    if not names:
        return []
    name, first = names[0], event.known_in_release
    if event.absent_from_releases:
        if event.accepted_instead:
            return [_wrapper_name_action(name, event.accepted_instead)]
        return [_never_listed_action(name, event.absent_from_releases)]
    if first is None:
        return []
    if not event.known_releases:
        return [_listed_from_action(name, first)]
    last = event.known_releases.split("–")[-1]
    installed, since, until = c.vllm_release(facts), c.release_of(first), c.release_of(last)
    if installed is not None and since is not None and installed < since:
        return [_listed_from_action(name, first)]
    if installed is not None and until is not None and installed > until:
        return [_listed_until_action(name, event.known_releases)]
    return [_either_side_action(name, first, last)]


def _listed_from_action(name: str, release: str) -> str:
    """An architecture a newer release's registry lists: the installed vLLM predates the model."""
    return (
        f"Upgrade vLLM to {release} or later: of the releases servops read (every release's model registry), "
        f"{release} is the oldest that lists {name}, so the installed vLLM predates the model. "
        f"`pip install -U 'vllm>={release}'`, or an image of that release or later; `pip show vllm` says "
        "which is installed, and an image or serving platform that pins an older vLLM (its worker, its base "
        "image) holds it back until it moves. A model that new may also need the transformers release that "
        "vLLM pins."
    )


def _listed_until_action(name: str, releases: str) -> str:
    """An architecture only older releases' registries listed, the installed vLLM newer than them."""
    last = releases.split("–")[-1]
    return (
        f"vLLM {releases.replace('–', ' to ')} list {name} in their model registry; later releases "
        f"dropped it. Run a release in that range (`pip install 'vllm=={last}'`), or the plugin or Transformers "
        "backend (--model-impl transformers) that runs it now."
    )


def _either_side_action(name: str, first: str, last: str) -> str:
    """A refused architecture only a span of releases listed, the installed version not stated."""
    return (
        f"vLLM {first} to {last} list {name} in their model registry. `pip show vllm` says which side of that span "
        f"the installed one is on: older than {first}, upgrade vLLM to a release in the span (`pip install "
        f"'vllm>={first},<={last}'`); newer than {last}, it no longer lists the architecture (a release in the span, "
        "or the plugin or Transformers backend, --model-impl transformers, runs it)."
    )


def _wrapper_name_action(name: str, listed: str) -> str:
    """An architecture no release lists whose name ends with one that releases do: a wrapper's class name saved in the
    config (a trainer's FSDP wrapper: SkyRL#97, fixed by SkyRL PR #118 saving the model's own name)."""
    return (
        f"No vLLM release lists {name}, but its name ends with {listed}, which vLLM lists: the config's "
        "`architectures` most likely holds a wrapper's class name (a training framework's, saved with the "
        f"checkpoint). If the weights are {listed}'s, set the saved checkpoint's config.json \"architectures\" to "
        f'["{listed}"], or override it when serving '
        f'(`--hf-overrides \'{{"architectures": ["{listed}"]}}\'`); a trainer that saves its wrapper\'s name '
        "should save the model's own."
    )


def _never_listed_action(name: str, releases: str) -> str:
    """An architecture no release's model registry lists: no upgrade builds it natively."""
    return (
        f"No vLLM release from {releases.replace('–', ' to ')} lists {name} in its model "
        "registry, so no upgrade runs it natively. Try vLLM's Transformers backend (`--model-impl transformers`, "
        "for a model transformers itself implements), a plugin that registers the architecture (the model card "
        "names one when it has it), or check the config's `architectures`: a fine-tune saved with a wrapper's class "
        "name (a training framework's) needs the base model's name there."
    )


def _dated_actions(event: LogEvent, ref: CatalogRef, actions: list[str]) -> list[str]:
    """The actions the releases' history adds before the message's own: the release that first knows a refused
    name, the releases that had it, the content part type taken instead."""
    if event.known_in_release:
        actions = [_upgrade_action(ref, event.known_in_release), *actions]
    if event.known_releases:
        actions = [_releases_action(ref, event.known_releases), *actions]
    if event.accepted_instead:
        actions = [_part_type_action(ref, event.accepted_instead), *actions]
    return actions


def _source_action(ref: CatalogRef) -> str:
    """A refusal whose words name no setting and no remedy is known for: where its check is, so the next step is
    reading the condition that raised it rather than guessing."""
    return (
        f"vLLM's check is at {ref.location()}: the condition just before that raise names the setting or input it "
        "tested. Read it in the installed release (`python -c 'import vllm; print(vllm.__file__)'` gives the "
        "package's folder) or at that release's tag in vLLM's repository, and search vLLM's issues for the "
        "message's fixed words."
    )


def _upgrade_action(ref: CatalogRef, release: str) -> str:
    """A refused name a newer release knows: the installed vLLM version predates it. `release` is the oldest release
    read whose source has the method's module (mxfp4: 0.10.2), the smallest upgrade servops can vouch for."""
    name = ref.captured.get("quantization", "the name").strip("`'\" ")
    supported = ref.captured.get("supported_quantization")
    accepts = f" (it accepts only {supported})" if supported else ""
    return (
        f"Upgrade vLLM: vLLM {release} supports the {name} quantization method, so the installed vLLM version "
        f"predates it{accepts}. `pip show vllm` says which is installed; a package pinning an older vLLM may have "
        "downgraded it."
    )


# Exceptions that, raised in vLLM's own code, say its code disagrees with itself: a failed `assert` (a state it
# assumes impossible), an object without the attribute the code reads ('ColumnParallelLinear' object has no
# attribute 'input_scale': a layer built for another path than the one that uses it).
_INTERNAL_FAILURES = {
    "AssertionError": ("found a state it assumes impossible", "the assertion's file and line"),
    "AttributeError": ("reads an attribute its own object does not have", "the error's words"),
}
_OBJECT_ATTRIBUTE = re.compile(r"'\w+' object has no attribute '\w+'")


def _internal_failure(root: LogEvent) -> bool:
    """Raised in vLLM's code (its deepest frame read is vLLM's) by a check its own code makes on itself."""
    if root.exception not in _INTERNAL_FAILURES or c.installed_package(root.code_file) != "vllm":
        return False
    return root.exception != "AttributeError" or bool(_OBJECT_ATTRIBUTE.search(root.message or ""))


def _internal_check_action(exception: str, where: str) -> str:
    """vLLM's own code disagreed with itself: a bug or a combination of features the release does not support;
    the remedy is a release that fixed it, or the feature left out meanwhile."""
    failed, search = _INTERNAL_FAILURES[exception]
    return (
        f"vLLM's own code in {where} {failed}: a bug in this release, or a combination of features it does not "
        f"support. Upgrade vLLM (search its issues for {search}: such errors are often fixed in a later release), "
        "and meanwhile serve without the feature that code belongs to."
    )


_UNBOUND_NAME = re.compile(r"local variable '(?P<name>\w+)'")


def _unbound_action(root: LogEvent) -> str:
    """Python's UnboundLocalError is always the raising code's own bug: a branch this case took left the variable
    unset (vllm PR #24217: Auto-Round's MoE loading on an SM75 GPU, which has no Marlin kernels, reached an unset
    GPTQMarlinMoEMethod), so the lever is that code's release, never a launch flag; the variable names the path."""
    found = _UNBOUND_NAME.search(root.message or "")
    name = f"'{found['name']}'" if found else "the variable"
    return (
        f"An UnboundLocalError is a bug of the code that raised it: for this case none of its branches set {name} "
        "before it was read (often a GPU, model or option the code did not expect). No launch flag fixes the code; "
        f"upgrade the package it came from (vLLM, when its logger printed it) and search that package's issues for "
        f"{name}; meanwhile avoid the feature or hardware path the name belongs to."
    )


def _releases_action(ref: CatalogRef, releases: str) -> str:
    """A refused quantization method the newest release no longer has: the releases that had it, and the way
    around it that needs no release, the model's unquantized weights."""
    name = ref.captured.get("quantization", "the method").strip("`'\" ")
    return (
        f"vLLM {releases.replace('–', ' to ')} have the {name} quantization method (its module is in their "
        "source; the newest releases no longer have it): the installed vLLM is outside that range, older or newer "
        f"(`pip show vllm`). Run a release in that range, or serve the model without {name}: its unquantized "
        "16-bit weights (a fine-tune saved quantized can be saved again with its adapters merged into 16-bit "
        "weights)."
    )


def _part_type_action(ref: CatalogRef, instead: str) -> str:
    """A chat content part whose `type` vLLM does not parse, and the type it takes for that content."""
    refused = ref.captured.get("part_type", "").strip("`'\" ")
    media = instead.removesuffix("_url")
    example = (
        f'{{"type": "{instead}", "{instead}": {{"url": "https://… or data:{media}/…;base64,…"}}}} (a local file as '
        "a base64 data URL)"
        if instead.endswith("_url")
        else f'{{"type": "{instead}", …}}'
    )
    return (
        f"The request's messages carry a content part of type '{refused}', which vLLM's OpenAI-compatible server "
        f"does not parse: send it as {'an' if instead[0] in 'aeiou' else 'a'} '{instead}' content part, {example}. "
        "Hugging Face processors and some model cards write media parts in their own message format "
        f'(`{{"type": "{refused}", …}}`); vLLM\'s chat endpoint takes OpenAI\'s.'
    )


# A wordless check says where vLLM's code failed, not why: a rule that reads the cause from the same statement
# (OP-7.180's `assert num_cache_lines >= batch`) ranks above it.
WORDLESS_CHECK_CONFIDENCE = 0.6


def _confidence(ref: CatalogRef, raised: bool) -> float:
    if ref.kind == "check":
        return WORDLESS_CHECK_CONFIDENCE
    return OWN_WORDS_CONFIDENCE if raised and not _WRAPPER.search(ref.template) else 0.8


# The catalog's kinds of vLLM's internal checks: an assert with its words, and a wordless one (its statement).
INTERNAL_CHECKS = frozenset({"assert", "check"})


def _check_files(ref: CatalogRef) -> str:
    """The file of an internal check, and how many others hold the same wordless check (`a.py or 2 other files`): the
    statement alone cannot say which of them failed."""
    where = ref.file.removeprefix("vllm/")
    others = len(ref.also_in)
    return where if not others else f"{where} or {others} other file{'s' if others > 1 else ''}"


def _plain(ref: CatalogRef) -> str:
    """vLLM's message with the user's values in place of its fields (a wordless check's statement as it is: its
    braces are Python's)."""
    text = ref.template
    if ref.kind == "check":
        return text
    for name, value in ref.captured.items():  # a paste that ends at a field's sentence ends its value with its dot
        text = text.replace("{" + name + "}.", value.rstrip(".") + ".").replace("{" + name + "}", value)
    return re.sub(r"\{[^{}]*\}", "…", text)


def _catalog_evidence(event: LogEvent, ref: CatalogRef) -> Evidence:
    evidence = c.log_evidence(event, name="vllm_message", value=event.message)
    cut = " (the pasted text holds only part of it)" if ref.partial and not ref.predicted else ""
    evidence.description = (
        f"vLLM's message at {ref.location()}{cut}; names {', '.join([*_flags_named(ref), *ref.env]) or 'no flag'}"
    )
    return evidence


def _fix(ref: CatalogRef, facts: Facts, said: str = "") -> tuple[list[ConfigChange], list[ConfigChange], list[str]]:
    """The changes vLLM's message implies (most specific reading first), an alternative to them, and
    actions for what is not a setting."""
    remedy = _remedy(ref, said)
    if remedy is not None and remedy.match in MM_LIMIT_MESSAGES:  # the limit, in the field its wording names
        limit = ref.captured.get(MM_LIMIT_MESSAGES[remedy.match], "").strip()
        if _operator_set_limit(limit):
            return [], [remedy.change(ref, _current(facts, remedy.name))], [_fewer_items_action(ref, limit)]
    if remedy is not None:
        if remedy.kind == "setting" and remedy.action:
            return [], [], [remedy.action]
        instead = []
        if remedy.instead is not None:
            flag, proposed, reason = remedy.instead
            instead.append(ConfigChange(flag=flag, current=_current(facts, flag), proposed=proposed, reason=reason))
        return [remedy.change(ref, _current(facts, remedy.name))], instead, [remedy.action] if remedy.action else []
    for reading in (_swap_space_change, _divisor_change, _limit_change, _below_change, _above_change, _worded_change):
        found = reading(ref, facts)
        if found:
            return found, [], []
    actions = [f"Set {name} as vLLM's message asks ({ref.location()})." for name in ref.env]
    install = _install_action(ref)
    if install:
        actions.insert(0, install)
    if not actions and _costs_speed(ref):
        actions.append(
            f"vLLM says this costs speed: the warning names what it turned off or fell back to ({ref.location()}); "
            "change what made it do so, or accept the cost."
        )
    return [], [], actions


def _swap_space_change(ref: CatalogRef, facts: Facts) -> list[ConfigChange]:
    """`Too large swap space. X GiB out of the Y GiB …`: the --swap-space that fits the host it describes (OP-7.73's
    reading, which also reads the warning)."""
    if not ref.template.startswith(op7_swap_space.REFUSED):
        return []
    change = op7_swap_space.swap_space_change(ref, facts)
    return [change] if change is not None else []


def _install_action(ref: CatalogRef) -> str | None:
    """What a message that says to install a package names: its own `pip install …` command, else the package
    after "Please install" (`Please install vllm[audio] for audio support`), never a command it does not give."""
    said = _plain(ref)
    command = _PIP_INSTALL.search(said)
    if command:
        spec = command["spec"].strip("'\"").rstrip(".,")
        return (
            f"Install what vLLM's message names where the server runs (its image or environment): "
            f"`pip install '{spec}'`."
        )
    named = _PLEASE_INSTALL.search(said)
    spec = named["spec"].rstrip(".,") if named else ""
    if not spec or spec.lower() in _NOT_PACKAGES:
        return None
    return f"Install {spec} where the server runs (its image or environment), as vLLM's message says."


def _costs_speed(ref: CatalogRef) -> bool:
    """A warning in which vLLM says it will be slower than it could be (a fallback, a feature turned off)."""
    return ref.exception is None and bool(_SLOWER.search(ref.template))


def _operator_set_limit(allowed: str) -> bool:
    """Whether the per-request limit a multimodal refusal states is one an operator chose: vLLM's own default is 1
    item per modality in early releases and 999 in recent ones (vllm/config/multimodal.py, 0.32)."""
    return allowed.isdigit() and int(allowed) not in MM_LIMIT_DEFAULTS


def _fewer_items_action(ref: CatalogRef, allowed: str) -> str:
    """A chosen limit is the server's budget (each item reserves memory at startup): the requests must fit it.
    A chat client that re-sends the conversation's earlier images grows by one per turn, so a higher limit
    only postpones the refusal (bytedance/UI-TARS-desktop issue 104: the client kept the last 3 screenshots)."""
    modality = ref.captured.get("modality", "item").strip()
    return (
        f"Send fewer {modality}s per request from the client (at most {allowed}, the limit the server was started "
        f"with): a chat client that re-sends the conversation's earlier {modality}s adds one per turn, so a higher "
        "--limit-mm-per-prompt only postpones the error."
    )


def _remedy(ref: CatalogRef, message: str = "") -> Remedy | None:
    """The remedy of the message's template; one narrowed by `captured` needs that value in the message's fields, or
    in the words the line said after the template's first line (a reasons list vLLM prints on the lines below)."""
    said = " ".join([*ref.captured.values(), message])
    return next(
        (r for r in REMEDIES if r.match in ref.template and (not r.captured or r.captured in said)),
        None,
    )


def _flags_named(ref: CatalogRef) -> list[str]:
    """The flags the message names: as the catalog recorded them, and as words (`tensor parallel size`)."""
    words = re.sub(r"[`'\"_-]", " ", ref.template.lower())
    named = list(ref.flags)
    for flag in WORDED_FLAGS:
        if flag not in named and flag[2:].replace("-", " ") in words:
            named.append(flag)
    return named


def _numbers(ref: CatalogRef) -> list[tuple[str, int]]:
    """The captured fields that are whole numbers, in the template's order."""
    order = re.findall(r"\{(\w+)\}", ref.template)
    out = []
    for name in order:
        value = ref.captured.get(name, "").strip("()`'\" ")
        if value.isdigit():
            out.append((name, int(value)))
    return out


def _divisor_change(ref: CatalogRef, facts: Facts) -> list[ConfigChange]:
    """`N must be divisible by <size flag> (S)`: the largest size below S that divides N."""
    if "divisible by" not in ref.template:
        return []
    flags = [f for f in _flags_named(ref) if f in PARALLEL_SIZE_FLAGS]
    numbers = _numbers(ref)
    if len(numbers) < 2:
        return []
    (total_name, total), (size_name, size) = numbers[0], numbers[1]
    if "per_partition" in total_name and not any(word in size_name for word in ("parallel", "tp_size", "world")):
        # a rank's slice: tensor parallelism made it, whether or not the words name the flag (0.4.2-0.5.1's do not)
        return [slice_change(next(iter(flags), "--tensor-parallel-size"), total, size, facts)]
    if not flags:
        return []
    divisors = [d for d in range(size - 1, 0, -1) if total % d == 0]
    if not divisors:
        return []
    # A power of two first: GPUs come in 2, 4 and 8 per host, and the model's other sizes (hidden, KV
    # heads, vocabulary) that vLLM splits the same way divide by powers of two far more often.
    fits = next((d for d in divisors if d & (d - 1) == 0), divisors[0])
    valid = ", ".join(str(d) for d in sorted({*divisors, total}) if d <= MAX_SIZES_LISTED)
    return [
        ConfigChange(
            flag=flags[0],
            current=str(size),
            proposed=str(fits),
            reason=f"{total} is not divisible by {size}; {fits} is the largest power-of-two size below {size} "
            f"that divides it (sizes that divide {total}: {valid}); the GPUs it frees serve more replicas",
        )
    ]


def slice_change(flag: str, part: int, tile: int, facts: Facts) -> ConfigChange:
    """`<dim>_per_partition = P is not divisible by <kernel tile> = T` (Marlin's, BitBLAS's min_thread_k): each rank's
    slice of a weight must be a multiple of the kernel's tile, so the parallel size must shrink by the factor the
    slice lacks; with the server's size known, the size that gives it."""
    factor = tile // math.gcd(part, tile)
    current = c.tensor_parallel_size(facts) if facts.config and facts.config.tensor_parallel_size else None
    fits = current // factor if current and current % factor == 0 and current // factor >= 1 else None
    return ConfigChange(
        flag=flag,
        current=str(current) if current else None,
        proposed=str(fits) if fits else f"<the current size ÷ {factor}>",
        reason=f"each rank's slice of the weight ({part}) must be a multiple of the kernel's {tile}; a size {factor}× "
        f"smaller gives each rank {part * factor}, a multiple of it (pipeline parallelism can use the GPUs it frees)",
    )


def _limit_change(ref: CatalogRef, facts: Facts) -> list[ConfigChange]:
    """`X is greater than max_y Z`: the limit flag raised to what was asked."""
    match = re.search(r"\{(\w+)\}\)? is (?:greater|larger) than `?(max_\w+)`? \(?\{(\w+)\}", ref.template)
    if match is None:
        return []
    asked, limit = ref.captured.get(match.group(1), ""), ref.captured.get(match.group(3), "")
    asked, limit = asked.strip("()`'\". "), limit.strip("()`'\". ")
    if not asked.isdigit() or not limit.isdigit():
        return []
    flag = "--" + match.group(2).replace("_", "-")
    return [
        ConfigChange(
            flag=flag,
            current=limit,
            proposed=asked,
            reason=f"what was asked ({asked}) is above the server's {flag} ({limit})",
        )
    ]


def _below_change(ref: CatalogRef, facts: Facts) -> list[ConfigChange]:
    """`x ({a}) is smaller than y ({b})`: x raised to b (vLLM needs x to hold at least y)."""
    match = re.search(r"`?(\w+)`? \(\{(\w+)\}\) is (?:smaller|less|lower) than `?(\w+)`? \(\{(\w+)\}\)", ref.template)
    if match is None:
        return []
    flag = "--" + match.group(1).replace("_", "-")
    now, needed = ref.captured.get(match.group(2), ""), ref.captured.get(match.group(4), "")
    if flag not in _flags_named(ref) or not now.isdigit() or not needed.isdigit():
        return []
    reason = f"{flag} ({now}) must hold at least {match.group(3)} ({needed})"
    return [ConfigChange(flag=flag, current=now, proposed=needed, reason=reason)]


def _above_change(ref: CatalogRef, facts: Facts) -> list[ConfigChange]:
    """`x ({a}) is greater than <its bound> ({…}{b}…)` (or `exceeds`): x lowered to b, the first number after it; a
    paste cut before x's value still says the bound (`exceeds available Mamba cache blocks (95)`)."""
    match = re.search(r"`?(\w+)`? \(\{(\w+)\}\) (?:is (?:greater|larger) than|exceeds)", ref.template)
    if match is None:
        return []
    flag = "--" + match.group(1).replace("_", "-")
    now = ref.captured.get(match.group(2), "")
    after = re.findall(r"\{(\w+)\}", ref.template[match.end() :])
    bound = next((ref.captured[name] for name in after if ref.captured.get(name, "").isdigit()), "")
    if flag not in _flags_named(ref) or not bound or (now.isdigit() and int(bound) >= int(now)):
        return []
    if not now.isdigit() and not (ref.partial and not now):  # a cut paste may have lost the value, not the bound
        return []
    reason = f"{flag} ({now or 'its value, cut from the text'}) is above what vLLM allows here ({bound})"
    return [ConfigChange(flag=flag, current=now or None, proposed=bound, reason=reason)]


def _worded_change(ref: CatalogRef, facts: Facts) -> list[ConfigChange]:
    """The first flag the message names, moved the way its words say (`Try increasing X`, `set --flag`)."""
    return worded_changes(_plain(ref), _flags_named(ref), facts)  # the user's values: a bound vLLM computed is read


def worded_changes(text: str, flags: list[str], facts: Facts) -> list[ConfigChange]:
    """The first of `flags` that `text` says to move, moved that way; none when its words do not say. A message that
    says to set a flag to a number or a boolean (`Set --max_model_len to 32768`, `specify disable_custom_all_reduce=
    True`) gets that value, the flag written with dashes or underscores, as vLLM's argument parser takes both."""
    lowered = text.lower()
    for flag in flags:
        parts = [re.escape(part) for part in re.split(r"[-_]", flag[2:])]
        valued = _set_value(lowered, parts)
        if valued is not None:
            reason = f"the message says to set {flag} to {valued}"
            return [ConfigChange(flag=flag, current=_current(facts, flag), proposed=valued, reason=reason)]
        phrase = r"[`'\"\s-]*".join(parts)
        for words, direction in _DIRECTION_WORDS:
            if said := re.search(rf"\b(?:{words})\b[\s`'\"]*(?:the\s+|a\s+|--)?{phrase}(?P<rest>.*)", lowered):
                change = _directed(flag, direction, facts, _beyond(said["rest"]))
                if change is not None:
                    return [change]
    return []


def _set_value(lowered: str, parts: list[str]) -> str | None:
    """The number or boolean a message says to set the flag (its name's escaped `parts`) to, else None. Advice only:
    "setting X=1" alone is vLLM saying what it does itself ("… setting speculative_draft_tensor_parallel_size=1")."""
    name = r"[`'\"\s_-]*".join(parts)
    found = re.search(
        rf"\b(?:set|specify|(?:consider|by)\s+setting)\s+(?:the\s+)?[`'\"]*(?:--)?{name}[`'\"]*\s*(?:\s+to\s+|=)\s*[`'\"]*"
        r"(?P<value>\d[\d.]*\d|\d|true|false)\b",
        lowered,
    )
    return found["value"] if found else None


def _beyond(rest: str) -> float | None:
    """The bound the words right after the flag set for its new value: vLLM 0.33's CPU worker says "increase
    `--gpu-memory-utilization` to more than 0.62" (its footprint's share of the node, rounded up). None when none."""
    found = re.match(r"[`'\"]*\s+to\s+(?:more\s+than|above|at\s+least)\s+(?P<value>\d+(?:\.\d+)?)\b", rest)
    return float(found["value"]) if found else None


def _directed(flag: str, direction: str, facts: Facts, beyond: float | None = None) -> ConfigChange | None:
    current = _current(facts, flag)
    reason = f"vLLM's message says to {direction} {flag}"
    if flag in CONTAINER_SETTINGS:
        proposed = "<larger>" if direction == "raise" else "host" if flag == "--ipc" else "<set>"
        return ConfigChange(
            flag=flag, proposed=proposed, reason=f"{reason} (docker run / the pod spec)", kind="setting"
        )
    if flag.startswith(_BOOLEAN_PREFIXES):
        proposed = "false" if direction == "disable" else "true"
        return ConfigChange(flag=flag, current=current, proposed=proposed, reason=reason)
    if flag == "--gpu-memory-utilization" and direction in ("raise", "lower"):
        now = float(current) if current else c.gpu_memory_utilization(facts)  # the release's own when left out
        step = c.UTIL_STEP if direction == "raise" else -c.UTIL_STEP
        wanted = round(now + step, 2)
        if beyond is not None and direction == "raise":  # past the bound vLLM named, by a step for the KV cache
            enough = round(beyond + c.UTIL_STEP, 2)
            if enough > c.max_share(facts):  # the only share that would do leaves the host none: not this flag
                return None
            wanted = max(wanted, enough)
            reason = f"{reason} to more than {beyond:.2f}, and a step more for the KV cache"
        proposed = min(c.max_share(facts), wanted)
        if (proposed - now) * step <= 0:  # already at the ceiling, or past it: "raise" must not lower the share
            return None
        return ConfigChange(flag=flag, current=f"{now:.2f}", proposed=f"{proposed:.2f}", reason=reason)
    if direction in ("raise", "lower") and current and current.isdigit():
        value = int(current) * 2 if direction == "raise" else max(1, int(current) // 2)
        return ConfigChange(flag=flag, current=current, proposed=str(value), reason=f"{reason} (halved or doubled)")
    return None


def _current(facts: Facts, flag: str) -> str | None:
    config = facts.config
    return config.flags.get(flag) if config is not None else None


RULE_VLLM_MESSAGE = Rule(
    code="VC-1",
    title="vLLM's own check refused the launch or a request, or warned",
    category=Category.CONFIGURATION,
    check=_check_vllm_messages,
    needs=("events",),
    page=RulePage(
        checks="Every error or warning line is looked up in vLLM's message catalog (every message vLLM 0.4–0.34 "
        "raises or logs at warning and above, with its file and line); a raised message, or a warning that "
        "names a flag or an environment variable, becomes a finding. A launch given with --server-args is "
        "checked the way vLLM validates its config (attention heads against the tensor-parallel size, "
        "--max-model-len against the model's position limit, --max-num-batched-tokens against it with "
        "chunked prefill off), and what vLLM would refuse is read the same way.",
        why="vLLM validates a launch and each request against the model, the GPU and its limits, and says "
        "exactly what is wrong; its words name the cause better than any symptom.",
        example="ValueError: Total number of attention heads (12) must be divisible by tensor parallel size (8).",
        fix="The flag the message names, moved the way it says (past the bound it names, where it names one); "
        "for a size that must divide a count, the "
        "largest that divides it; for a limit, raised to what was asked; for the few messages whose remedy "
        "is not in their words, the remedy the maintainers give.",
        limits="Matches the wording of released vLLM 0.4–0.34; a message from a newer release or a patched "
        "build is an unplaced error (VC-2). A cut paste matches by its leading sentences.",
        references=["docs/vllm-messages.md"],
    ),
)


# A package vLLM's message says to install: its own command (`pip install ray`), or the name after "Please install".
_PIP_INSTALL = re.compile(r"(?:uv )?pip install (?P<spec>'[^']+'|\"[^\"]+\"|[\w.\-\[\],>=<]+)")
_PLEASE_INSTALL = re.compile(r"[Pp]lease install (?P<spec>[\w.\-\[\],>=<]+)")
_NOT_PACKAGES = frozenset({"the", "it", "a", "an", "and", "or"})
# What to do with an error body no catalog knows.
HTTP_BODY_ACTION = (
    "The server answered this error body: its log at the time of the request holds the exception or warning behind "
    'it. vLLM words its own bodies `{"object": "error", "message": …}` or `{"error": {"message": …}}`; a '
    'body in another shape (`{"error": "…"}`) came from what stands in front of vLLM (a gateway, a router, '
    "KServe's model server), whose log and version are the ones to check."
)
# Events that already name their traceback's root exception (HL-2's engine death, a worker's exception).
_NAMED_ROOTS = (
    LogEventKind.FATAL_ERROR,
    LogEventKind.WORKER_EXCEPTION,
    LogEventKind.ENGINE_DEAD,
    LogEventKind.ENGINE_CORE_FAILED,
)
# HL-2 names a worker's exception beside the engine's death; a worker's traceback pasted alone is VC-2's.
_DEATHS = (LogEventKind.FATAL_ERROR, LogEventKind.ENGINE_DEAD)


def _lone_worker_exceptions(facts: Facts) -> list[LogEvent]:
    """A worker's exception whose traceback named its root (`RuntimeError: …`), when no engine death follows for
    HL-2 to name it with: the root as VC-2 reads an error, in the worker process that raised it."""
    if facts.events_of(*_DEATHS):
        return []
    return [
        event.model_copy(update={"component": event.component or "worker"})
        for event in facts.events_of(LogEventKind.WORKER_EXCEPTION)
        if event.exception is not None
    ]


def _check_unplaced(facts: Facts) -> list[Finding]:
    named = {e.message for e in facts.events_of(*_NAMED_ROOTS) if e.message}
    events = [
        e for e in facts.events_of(LogEventKind.UNPLACED_ERROR) if e.message not in named and not unloadable_tensor(e)
    ]
    events = events or _lone_worker_exceptions(facts)
    if not events or any(_explains(e.catalog) for e in facts.events_of(LogEventKind.VLLM_MESSAGE)):
        return []
    if facts.events_of(*STARTUP_FAILURE_KINDS):
        return []  # a failed start's rules name the traceback's root themselves
    root = events[0]  # chained tracebacks print the original exception first
    where = f"in {root.component}" if root.component else "component unknown"
    phase = {"startup": "during startup", "serving": "while serving"}.get(root.phase or "", "phase unknown")
    # a flag as the message spells it, underscores too (`--max_model_len`, which vLLM's parser also takes)
    flags = list(dict.fromkeys(f.replace("_", "-") for f in re.findall(r"--[a-z][a-z0-9_-]+", root.message or "")))
    evidence = c.log_evidence(root, name="root_exception", value=root.message)
    evidence.description = f"root exception ({where}, {phase})"
    actions = _first_actions(root, where)
    if _internal_failure(root):
        place = root.component or (root.code_file or "").rsplit("/vllm/", 1)[-1]
        actions.insert(0, _internal_check_action(root.exception or "", place))
    elif root.exception == "UnboundLocalError":
        actions.insert(0, _unbound_action(root))
    elif (missing := MISSING_MODULE.search(root.message or "")) and missing["module"].split(".")[0] != "vllm":
        actions.insert(0, _missing_module_action(missing["module"]))
    changes = worded_changes(root.message or "", flags, facts)
    if root.naming_message is not None:  # vLLM's own words for the value it failed on: act on them first
        named_changes, _, named_actions = _fix(root.naming_message, facts)
        actions = [_naming_action(root.naming_message, facts), *named_actions, *actions]
        changes = changes or named_changes
    elif root.plugin:
        actions.append(_plugin_action(root.plugin))
    elif root.component in COMPONENT_ACTIONS:  # what that part of vLLM's failures most often come from
        actions.append(COMPONENT_ACTIONS[root.component])
    elif root.nearest and root.exception != "ValidationError":
        actions.append(nearest_action(root.nearest))
    return [
        RULE_UNPLACED.finding(
            Severity.CRITICAL if root.phase == "startup" else Severity.HIGH,
            f"{_title_cut(_named(root))} ({where}, {phase})",
            summary=f"An error neither servops' wording table nor vLLM's message catalog knows: {root.exception} "
            f"({where}, {phase}).",
            evidence=[evidence],
            changes=changes,
            actions=actions,
            confidence=UNPLACED_CONFIDENCE,
        )
    ]


# `terminate called after throwing an instance of 'c10::Error'`: a C++ exception nothing caught aborted the process
# (a worker's kernel library, NCCL's watchdog); C++ prints its message on the next line, and no Python traceback.
CPP_TERMINATE_ACTION = (
    "Copy the line under this one too: C++ prints the {exception}'s message there (`what():  …`), which names the "
    "cause (a CUDA error, an NCCL failure, a failed check); the process aborted there, so no Python traceback "
    "follows. Run once with CUDA_LAUNCH_BLOCKING=1 if the message is a CUDA error, to see which call raised it."
)
CPP_TERMINATE_TOLD = (
    "A C++ {exception} nothing caught aborted the process with this message, so no Python traceback follows: the "
    "message is the cause as C++ saw it. Run once with CUDA_LAUNCH_BLOCKING=1 if it is a CUDA error, to see which "
    "call raised it."
)


def _missing_module_action(module: str) -> str:
    """A module no rule knows, missing: the environment of the process that printed it lacks a package. Why an action
    and not a guess at the package: the import name is all the words give, and it names the package in most cases;
    a dotted name whose package imports is that package at another release than its caller's."""
    top = module.split(".")[0]
    if top == "transformers_modules":
        return (
            "transformers_modules is no package to install: it is transformers' folder of a model's remote code "
            "(HF_MODULES_CACHE, under HF_HOME), written by the process that loaded the model with trust_remote_code. "
            "A process that did not write it (a Ray worker on another node, a process with another HF_HOME) cannot "
            "import from it: give every process the same HF_HOME (a shared volume) and --trust-remote-code."
        )
    if top != module:
        return (
            f"Python found the package {top} but not its module {module}: the installed {top} is another release "
            "than the code importing it was written for (a module moved or not yet added). Install the release of "
            f"{top} that the importing package (the traceback's frame above the import) pairs with, then restart."
        )
    return (
        f"Python could not import {top} in the process that printed this: install it in that environment (the "
        f"server's image or virtualenv, each Ray node's too): `pip install {top}` (an import name can differ from its "
        "package's: cv2 is opencv-python, yaml is PyYAML), then restart. If the import is vLLM's (a frame under "
        "vllm/), vLLM needs it for the model or feature that frame belongs to: a vLLM installed without its "
        "requirements (`pip install --no-deps`, a source build) lacks it; reinstall vLLM with them."
    )


def _first_actions(root: LogEvent, where: str) -> list[str]:
    """Where to read an unplaced error first: its traceback, from its first frame in vLLM; a server's error body, the
    server's log; C++'s terminate, its what() line; pydantic's header, the lines under it."""
    if root.exception == HTTP_ERROR_EXCEPTION and root.code_file is None:  # a body a server answered, no traceback
        return [HTTP_BODY_ACTION]
    if "::" in (root.exception or ""):  # C++'s std::terminate: no Python traceback, the reason is its what() line
        told = CPP_TERMINATE_TOLD if root.message != root.exception else CPP_TERMINATE_ACTION  # what() read
        return [told.format(exception=root.exception)]
    if root.exception == "ValidationError" and root.component == CONFIGURATION:  # pydantic's header, its reasons under
        return [CONFIGURATION_HEADER_ACTION]
    first_frame = f"its first frame {where}" if root.component else f"its first frame inside {root.plugin or 'vllm'}/"
    return [f"Read the traceback of {root.exception} from {first_frame}."]


# pydantic's header alone (`1 validation error for ModelConfig`): the reasons are the lines under it, each a field
# name with its problem or `Value error, <words> [type=value_error, …]` carrying vLLM's own words.
CONFIGURATION_HEADER_ACTION = (
    "Copy the lines under this header too: pydantic prints each refusal there, as a field with its problem or as "
    "`Value error, <words> [type=value_error, …]`, whose words are vLLM's reason (its message catalog reads them); the "
    "header only says which of vLLM's config classes refused the arguments it was built from."
)


def _explains(ref: CatalogRef | None) -> bool:
    """Whether vLLM's own words in the text leave an unknown exception to them: a message VC-1 makes a finding of, or
    a logger.exception line, whose traceback under it VC-5 names; advice vLLM logged (a warning that names nothing to
    change) explains no exception."""
    return ref is None or reads_as_finding(ref) or ref.level == "exception"


def nearest_action(nearest: list[CatalogRef]) -> str:
    """The action that lists vLLM's messages nearest an error's words (VC-2's unplaced error, VC-4's line)."""
    return "vLLM's nearest messages: " + "; ".join(
        f"{ref.template[:120]} ({ref.location()})" for ref in nearest[:NEAREST_SHOWN]
    )


def _plugin_action(plugin: str) -> str:
    """An error a plugin's own code raised: its words are the plugin's, so vLLM's messages near them in wording
    would point at unrelated code; the plugin's tracker and its pairing with a vLLM release are where to look."""
    return (
        f"The error comes from {plugin}'s code, a package built on vLLM (a platform plugin or an extension), so "
        f"its words are that package's, not vLLM's: search its issues for them, and check that the installed "
        f"{plugin} and vLLM are the pair it was released for (`pip list | grep -i vllm` shows both versions)."
    )


def _naming_action(ref: CatalogRef, facts: Facts) -> str:
    """What vLLM itself says where it checks the value this error failed on, and whether the server's release
    has that check: a later release often turns an old release's bare KeyError into this explanation."""
    said = f'vLLM\'s own words for the value this error names ({ref.location()}): "{_plain(ref).rstrip(".")}"'
    version = c.vllm_version(facts)
    first = ref.first_release or ref.first  # the patch that brought the check, where the catalog read patches
    if version is not None and version < c.release_of(first)[: len(version)]:
        return f"{said}. This vLLM predates that check: upgrade to {first} or later to be told so, and do as it says."
    return f"{said}. Do as it says."


TITLE_CHARS = 180  # of an unknown error in VC-2's title
VC1_TITLE_CHARS = 240  # of vLLM's own message in VC-1's ("vLLM refused: …")
_SENTENCE_END = re.compile(r"[.!?](?=\s)")


def _title_cut(text: str, limit: int = TITLE_CHARS) -> str:
    """A long error as a title: its whole sentences that fit (Ray's and vLLM's long errors say what happened in
    the first), else its words up to the limit and an ellipsis, never a word cut in two."""
    if len(text) <= limit:
        return text
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, limit)]
    if ends and ends[-1] >= limit // 4:
        return text[: ends[-1]]
    return cut_at_word(text, limit)


def cut_at_word(text: str, limit: int) -> str:
    """`text` up to `limit` characters, never a word cut in two, with an ellipsis when it was cut."""
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def _named(root: LogEvent) -> str:
    """The exception as the title names it: its words, or for one raised without words (a bare `assert`) the
    source line that raised it, which is all that says what failed."""
    if root.message != root.exception or not root.code:
        return root.message or ""
    where = f" ({root.code_file.rsplit('/', 1)[-1]})" if root.code_file else ""
    code = root.code.strip().removesuffix("|").strip()  # a log viewer's table cell may close the pasted line
    return f"{root.exception} at `{code}`{where}"


RULE_UNPLACED = Rule(
    code="VC-2",
    title="an error vLLM's catalog does not hold, named by its root exception and component",
    category=Category.RELIABILITY,
    check=_check_unplaced,
    needs=("events",),
    fallback="line",
    page=RulePage(
        checks="A traceback's root exception (or a bare error line) that no known wording and no catalog "
        "message matches, when nothing else in the text explains the failure, no engine-death finding "
        "(HL-2) already names it and no other rule's finding cites its line; a worker's traceback (`WorkerProc hit "
        "an exception.`) pasted without the engine's death after it is read by its root exception, in the worker.",
        why="An on-call engineer needs a starting point: the exception, the part of vLLM it came from "
        "(sampler, torch.compile, detokenizer, LoRA, NCCL …), when it happened, and where vLLM says similar "
        "things.",
        example="RuntimeError: CUDA error: an illegal memory access was encountered",
        fix="When the error names a flag and says what to do with it (`requires --enable-auto-tool-choice`), that "
        "change. A failed `assert`, or an object without the attribute the code reads (`'ColumnParallelLinear' "
        "object has no attribute 'input_scale'`), raised in vLLM's own code is vLLM disagreeing with itself: "
        "upgrade vLLM. A value the error quotes that one of vLLM's messages quotes too (a later release's check "
        "for it): that message, first. Otherwise none: the traceback's first frame in the named component is "
        "where to read.",
        limits="The component comes from the traceback's deepest vLLM frame, or the message's words without one. "
        "Nearest messages share at least two of the error's words; an error a plugin raised (vllm_kunlun's "
        "code in its traceback, or vllm_omni's file in its line's header) gets none, since its words are the "
        "plugin's.",
        references=["docs/vllm-messages.md"],
    ),
)

RULES: list[Rule] = [RULE_VLLM_MESSAGE, RULE_UNPLACED]
