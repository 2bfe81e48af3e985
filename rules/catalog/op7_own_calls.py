"""OP-7.65: vLLM's own code (or its platform plugin's) calls a function with arguments it does not take.

Why a rule of its own: Python refuses a call whose arguments do not fit the function's signature (`got an unexpected
keyword argument`, `missing 1 required positional argument`, `takes 7 positional arguments but 9 were given`) before
the function runs, so the traceback's innermost frame that made a call (past torch's module dispatch) is the caller.
OP-7.8 answers such a call into another package (the version of that package is the question) and OP-7.26 a caller
outside vLLM; when the call is made by vLLM's own code to vLLM's own function, no flag, request or model causes it:
the two sides of one call come from different versions. Either the build has the bug, a main-branch or nightly
build between a change and its fix (vllm#3282: `PagedAttentionImpl.forward_prefix() takes 7 positional arguments but
9 were given` on main, fixed by PR #3286; vllm#22774: `FusedMoEModularKernel.forward() got an unexpected keyword
argument 'w1_bias'`, fixed by PR #22757 the day after), or the installation mixes files of two versions (a source
checkout updated without reinstalling it, a module copied or patched in by a framework). With a hardware plugin in
the traceback, the plugin and vLLM are the two sides: each plugin release is made for one vLLM release, and calls
vLLM's classes with that release's arguments (vllm-project/vllm-gaudi PR #181: `CachedRequestState.__init__() got an
unexpected keyword argument 'mm_features'` from a plugin already adapted to a newer vLLM).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.catalog.op7_packages import SIGNATURE, mismatched_package
from rules.events import ENGINE_ARG_CLASSES, LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# The function Python names in its refusal (`FusedMoEModularKernel.forward()`, `forward()` before Python 3.10).
_REFUSED = re.compile(r"(?P<function>[\w.]+)\(\) (?:got |missing |takes )")
# A file of vLLM's package, installed or in a checkout: a folder named vllm holding one of vLLM's subpackages (a
# user's own project folder named vllm holds none of them).
_VLLM_FILE = re.compile(
    r"(?:^|/)vllm/(?:v1|model_executor|entrypoints|engine|worker|executor|distributed|attention|compilation|lora|"
    r"multimodal|transformers_utils|config|platforms|utils|spec_decode|core|inputs|reasoning|tool_parsers|"
    r"device_allocator|kernels)/"
)


def _check_own_call(facts: Facts) -> list[Finding]:
    platforms = [e.message for e in facts.events_of(LogEventKind.PLATFORM_PLUGIN) if e.message]
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR):
        own = _own_site(event)
        if own is not None:
            return [_finding(event, *own, next(iter(platforms), None))]
    return []


def _own_site(event: LogEvent) -> tuple[str, str] | None:
    """The call site (`path:line in function`) of a refused call made by vLLM's or a vLLM plugin's code, and the
    function Python names, when no other package is part of it; None otherwise."""
    message = event.message or ""
    if event.exception != "TypeError" or not SIGNATURE.search(message) or event.call_site is None:
        return None
    refused = _REFUSED.search(message)
    if refused is None or refused["function"] in ENGINE_ARG_CLASSES or event.caller is not None:
        return None  # no function named, an engine argument (OP-7.26), or a caller outside vLLM (OP-7.26)
    site = event.call_site.replace("\\", "/")
    if not _VLLM_FILE.search(site) and event.plugin is None:  # the collector names a plugin whose frame made the call
        return None
    if mismatched_package(event) is not None:
        return None  # a call into another package: OP-7.8
    return site, refused["function"]


def _finding(event: LogEvent, site: str, function: str, platform: str | None) -> Finding:
    """`platform`: the out-of-tree platform the log says is active; a plugin's own frame making the call
    (`event.plugin`) puts the plugin in the title, an active platform only adds its action."""
    part = f" (its {event.component})" if event.component else ""
    title = (
        f"vLLM's own code calls {function}() with arguments it does not take: its parts come from different "
        "versions (a build between a change and its fix, or a mixed install)"
    )
    if event.plugin is not None:
        title = (
            f"{event.plugin} and vLLM call each other with arguments the other does not take ({function}()): the "
            "plugin release is not the one made for the installed vLLM"
        )
    plugin = event.plugin or (f"{platform} platform plugin" if platform else None)
    return RULE_OWN_CALL.finding(
        Severity.CRITICAL if event.phase == "startup" else Severity.HIGH,
        title,
        summary=f"{event.message}. The call is made at {site.rsplit('/', 1)[-1]}{part}, in code of the vLLM "
        "installation, and Python refused it before the function ran: the caller and the function it calls were "
        "written for different signatures. No flag, request or model causes that. Either the build has the bug (a "
        "main-branch or nightly build caught between a change and its fix: vllm#3282 and vllm#22774 were such "
        "breaks, fixed within days), or its files come from two versions. If the function is another package's (a "
        "library vLLM calls through an object), that package's version is the mismatch: install the one vLLM "
        "requires.",
        evidence=[c.log_evidence(event, name="root_exception", value=event.message)],
        actions=[*([_plugin_action(plugin)] if plugin else []), *_ACTIONS],
        confidence=0.75,
    )


def _plugin_action(plugin: str) -> str:
    return (
        f"Install the {plugin} release made for the installed vLLM, or the vLLM release it names (each release of a "
        "hardware plugin says which vLLM it pairs with): the plugin calls vLLM's classes with the arguments of the "
        "vLLM it was written for, and vLLM calls the plugin's the same way."
    )


_ACTIONS = [
    'See which vLLM is imported and how it was installed: `python -c "import vllm; print(vllm.__version__, '
    'vllm.__file__)"`: a version with `dev` or `+g<commit>` is a main-branch build, a path outside site-packages a '
    "source checkout.",
    "A main-branch or nightly build: install a newer one, or the latest release (`pip install -U vllm`); such a break "
    "between two of vLLM's own files is usually fixed on main within days.",
    "A source checkout: make it one version again (`git pull` or a release tag, then `pip install -e .` again), and "
    "remove any vLLM file a framework copied or patched in.",
    "If a clean install of the latest release still raises it, report it to vLLM with the whole traceback and the "
    "command: the traceback's frames name the feature whose code path it is, which may be one to turn off until the "
    "fix.",
]


RULE_OWN_CALL = Rule(
    code="OP-7.65",
    title="vLLM's own code calls a function with arguments it does not take: parts from different versions",
    category=Category.STARTUP,
    check=_check_own_call,
    needs=("events",),
    page=RulePage(
        checks="A TypeError about a call's arguments (unexpected keyword, missing required, too many positional) "
        "whose call was made in vLLM's own code or a vLLM plugin's (the traceback's innermost frame past torch's "
        "module dispatch), with no call into another package and no caller outside vLLM in the traceback.",
        why="Python refuses the arguments before the function runs, so the two sides of the call disagree: a "
        "main-branch or nightly build between a change and its fix, a checkout or install mixing two versions, or "
        "a hardware plugin made for another vLLM release.",
        example="`TypeError: FusedMoEModularKernel.forward() got an unexpected keyword argument 'w1_bias'` under "
        "vllm/model_executor/layers/fused_moe/layer.py (vllm#22774, fixed by vLLM PR #22757); "
        "`PagedAttentionImpl.forward_prefix() takes 7 positional arguments but 9 were given` on main (vllm#3282, "
        "fixed by PR #3286).",
        fix="A newer build or the latest release; a source checkout reinstalled at one version; the plugin release "
        "made for the installed vLLM.",
        limits="A refusal pasted without its traceback does not say who made the call, and is left to VC-2 (or "
        "OP-7.26 for the classes frameworks construct). A function of another package reached through an object "
        "(`self.tokenizer.encode(…)`) cannot be told from vLLM's own by the frames; the summary says what that "
        "would mean.",
        references=[
            "https://github.com/vllm-project/vllm/issues/22774",
            "https://github.com/vllm-project/vllm/pull/22757",
            "https://github.com/vllm-project/vllm/issues/3282",
            "https://github.com/vllm-project/vllm-gaudi/pull/181",
        ],
    ),
)

RULES: list[Rule] = [RULE_OWN_CALL]
