"""OP-7.6 to OP-7.8 (and OP-7.56, OP-7.59): the packages installed around vLLM are not the versions it was built or
written for.

Why a family of their own: a vLLM release pins its PyTorch exactly and ranges for transformers and the
libraries it calls (structured output, tokenizers, kernels), and most "vLLM is broken" reports that are
not configuration are an environment mixing versions. Each says so in its own words, never vLLM's: the
dynamic loader (`…_C.abi3.so: undefined symbol: _ZN3c10…`), transformers (`… has model type qwen3_5_moe but
Transformers does not recognize this architecture`), the tokenizers library reading a tokenizer.json saved by a
later release (`data did not match any variant of untagged enum ModelWrapper`), or Python itself when vLLM calls a
function whose signature changed (`TypeError: LLMatcher.validate_grammar() got some positional-only arguments passed
as keyword arguments`). The fix is the same in kind: install the versions that belong together. Sources:
vllm#2680 (an old vLLM against a newer torch, fixed by upgrading vLLM), vllm-ascend#8409 (Qwen3.5 on a
release that predates it), vllm#16339 (llguidance older than vLLM's requirement, fixed at 0.7.11).
"""

from __future__ import annotations

import builtins
import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

CONFIDENCE = 0.9  # the loader's or transformers' own words name the mismatch
API_CONFIDENCE = 0.8  # a changed signature is a version mismatch unless vLLM itself has the bug
# PyTorch's C++ namespaces as the loader prints them mangled: at:: (ATen), c10::, torch::
_TORCH_SYMBOL = re.compile(r"^_ZN?K?\d*(?:2at|3c10|5torch)")
_VLLM_LIBRARY = re.compile(
    r"^(?:_C|_moe_C|_rocm_C|cache_ops|attention_ops|activation_ops|layernorm_ops|pos_encoding_ops|"
    r"quantization_ops|cuda_utils|custom_ops|_custom_ops|_flashmla_C|vllm_flash_attn)"
)
# Python's words for a call whose signature or module changed under it.
SIGNATURE = re.compile(
    r"unexpected keyword argument|positional-only arguments passed as keyword|takes \d+ positional arguments? "
    r"but \d+ (?:were|was) given|missing \d+ required (?:positional|keyword-only) arguments?"
)
_MODULE_ATTRIBUTE = re.compile(r"module '(?P<package>[\w.]+)' has no attribute '(?P<name>\w+)'")
_IMPORT_NAME = re.compile(r"cannot import name '(?P<name>\w+)' from '(?P<package>[\w.]+)'")
# The package a source line calls into (`err = llguidance.LLMatcher.validate_grammar(`), not an object's own.
_CALLED = re.compile(r"(?<![\w.])(?P<package>[a-z_][a-z0-9_]*)\.[A-Za-z_][\w.]*\(")
# The classes of the structured-output libraries vLLM calls, by the package that defines them: a TypeError about a
# call's arguments that names one (`LLMatcher.validate_grammar() got some positional-only arguments …`, vllm#16339) is
# that package at another release than vLLM's, pasted without the calling line too
CLASS_PACKAGES = {
    "LLMatcher": "llguidance",
    "LLTokenizer": "llguidance",
    "GrammarCompiler": "xgrammar",
    "GrammarMatcher": "xgrammar",
    "TokenizerInfo": "xgrammar",
}
_CALLED_CLASS = re.compile(r"(?<![\w.])(?P<cls>[A-Z]\w*)\.\w+\(\)")
# The processor method vLLM's Transformers backend counts a multimodal item's tokens with
# (model_executor/models/transformers/multimodal.py, 0.11 on): only processors of models the backend supports have it
TRANSFORMERS_BACKEND_METHOD = "_get_num_multimodal_tokens"
# A tokenizer's or processor's missing method of vLLM's Transformers backend, by its class name: Python's words
# (`'MllamaProcessor' object has no attribute '_get_num_multimodal_tokens'`) or a tokenizer's own __getattr__ (no
# quotes). Other missing attributes are mostly a model family's own (the original Qwen tokenizer's im_start_id,
# qwen-vllm#8; a remote tokenizer without `vocab`, zai-org/GLM-4#579), not a transformers version, and stay unread.
_BACKEND_METHOD_MISSING = re.compile(
    r"'?(?P<cls>[A-Z]\w*?(?:TokenizerFast|Tokenizer|Processor|FeatureExtractor))'? (?:object )?has no attribute "
    rf"'?{TRANSFORMERS_BACKEND_METHOD}(?!\w)"
)
# A tokenizer attribute transformers 5 removed and vLLM's cached tokenizer read (QwenLM/Qwen3-VL#2058: transformers
# 5.3.0 beside a vLLM made for 4.x; 4.57.6 fixed it)
REMOVED_IN_TRANSFORMERS_5 = "all_special_tokens_extended"
_TRANSFORMERS_5_ACTION = (
    "transformers 5 removed all_special_tokens_extended, which this vLLM's cached tokenizer reads: install a "
    "transformers 4 release (`pip install 'transformers<5'`; 4.57.6 fixed it in QwenLM/Qwen3-VL#2058), or a vLLM "
    "release whose requirements allow transformers 5."
)
_NOT_PACKAGES = frozenset({"self", "cls", "super", "vllm", "os", "sys", "re", "json", "time", "math", "logger"})


# --- OP-7.6 a compiled extension built against other libraries -------------------------------------


def _check_undefined_symbol(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.EXTENSION_UNDEFINED_SYMBOL)
    if not events:
        return []
    event = events[0]
    library, symbol = event.component or "a compiled library", event.symbol or ""
    if symbol.startswith("__nvJitLink"):
        return [_older_nvjitlink(event, library, symbol)]
    torch = bool(_TORCH_SYMBOL.match(symbol))
    installed = c.installed_package(event.message)  # the folder under site-packages its path names, if any
    package = installed if installed != "vllm" else None
    vllm = installed == "vllm" or (installed is None and bool(_VLLM_LIBRARY.match(library)))
    owner = "vLLM's compiled extension" if vllm else f"{package}'s compiled extension" if package else None
    named = f"{owner} ({library})" if owner else f"the compiled library {library}"
    against = "another PyTorch than the one installed" if torch else "other versions of the libraries it links"
    title = (
        f"{named} was built against {against}: undefined symbol"
        if symbol
        else f"{named} could not be loaded (the text ends at its path, before the loader's reason): most often it "
        "was built against another PyTorch than the one installed"
    )
    return [
        RULE_UNDEFINED_SYMBOL.finding(
            Severity.CRITICAL,
            title,
            summary=(
                f"The loader found no {'PyTorch ' if torch else ''}symbol the library was compiled to call. "
                if symbol
                else "The loader's reason is not in the text; for vLLM's own extension it is most often `undefined "
                "symbol`, a PyTorch it was not built for (the full ImportError line says). "
            )
            + "A wheel is built against one PyTorch (vLLM pins it exactly): installed beside another version, or "
            "left behind after PyTorch changed, it cannot load. The versions must be the ones built together.",
            evidence=[c.log_evidence(event, name="undefined symbol", value=symbol[:120])],
            actions=list(_VLLM_REBUILD_ACTIONS) if vllm else _package_rebuild_actions(package, library),
            confidence=CONFIDENCE if symbol else CUT_CONFIDENCE,
        )
    ]


_VLLM_REBUILD_ACTIONS = (
    "Upgrade vLLM (or reinstall it) in a clean environment so pip brings the PyTorch version its "
    "wheel was built with: `pip install --upgrade vllm` (or `pip install vllm==<release>`), never a "
    "torch installed separately afterwards.",
    "Or put back the PyTorch this vLLM release pins (`pip show vllm` lists its torch requirement): "
    "reinstall that torch version instead of the one installed over it.",
    "A vLLM built from source must be rebuilt after any PyTorch change "
    "(`pip install -e . --no-build-isolation` against the installed torch).",
)


def _package_rebuild_actions(package: str | None, library: str) -> list[str]:
    """What to do when another package's library (a KV connector's, a kernel's) lost a PyTorch symbol: that
    package is the one to reinstall, named when the path under site-packages says which it is."""
    ships = (
        f"{package} (`pip install --upgrade {package}`, a wheel built for the installed PyTorch)"
        if package
        else f"the package that ships {library} for the installed PyTorch version (a prebuilt wheel matching it)"
    )
    return [
        f"Upgrade or reinstall {ships}, or install the PyTorch version it was built with.",
        "A package built from source (an image that compiles it) must be rebuilt against the PyTorch "
        "installed beside it, or replaced by its released wheel for that PyTorch.",
    ]


def _older_nvjitlink(event: LogEvent, library: str, symbol: str) -> Finding:
    """A CUDA library from pip (cuSPARSE, beside torch) asking nvJitLink for a symbol of a newer CUDA minor
    (`__nvJitLinkComplete_12_4`): the loader found an older libnvJitLink.so.12 first, a system CUDA toolkit's on
    LD_LIBRARY_PATH, not the nvidia-nvjitlink wheel torch installed (pytorch/pytorch#111469; zai-org/GLM-4#686, whose
    reporter fixed it by putting the wheel's lib directory first)."""
    wanted = symbol.rstrip(",.;").rsplit("_", 2)
    minor = f"CUDA {wanted[-2]}.{wanted[-1]}" if len(wanted) == 3 and wanted[-1].isdigit() else "a newer CUDA"
    return RULE_UNDEFINED_SYMBOL.finding(
        Severity.CRITICAL,
        f"{library} (a CUDA library from pip) needs the nvJitLink of {minor}, and the loader found an older "
        "libnvJitLink.so.12 first: a system CUDA toolkit's, ahead of the one torch installed",
        summary="torch's CUDA libraries come as pip wheels (nvidia-cusparse-cu12, nvidia-nvjitlink-cu12 …) built "
        "together; a CUDA toolkit's lib directory on LD_LIBRARY_PATH (or ldconfig) puts its own, older "
        "libnvJitLink.so.12 first, and the wheel's cuSPARSE cannot load beside it.",
        evidence=[c.log_evidence(event, name="undefined symbol", value=symbol[:120])],
        actions=[
            "Put the wheel's library first: `export LD_LIBRARY_PATH=$(python -c 'import os, nvidia.nvjitlink; "
            "print(os.path.dirname(nvidia.nvjitlink.__file__))')/lib:$LD_LIBRARY_PATH` (pytorch/pytorch#111469; "
            "zai-org/GLM-4#686's reporter did this), or remove the CUDA toolkit's lib64 from LD_LIBRARY_PATH.",
            "`ldd` on the library named above shows which libnvJitLink.so.12 it resolves to.",
        ],
        confidence=0.85,
    )


# The reason cut off: an undefined symbol is the usual one for vLLM's own extension, not the only one (a wheel for
# another CPU architecture or CUDA says `wrong ELF class` or names a missing library instead)
CUT_CONFIDENCE = 0.55

RULE_UNDEFINED_SYMBOL = Rule(
    code="OP-7.6",
    title="compiled extension built against another PyTorch",
    category=Category.STARTUP,
    check=_check_undefined_symbol,
    needs=("events",),
    page=RulePage(
        checks="The dynamic loader's `<library>.so: undefined symbol: <symbol>`; a mangled symbol of ATen, c10 or "
        "torch (`_ZN2at…`, `_ZN3c10…`) means the library was built against another PyTorch.",
        why="vLLM's kernels are C++/CUDA compiled against one PyTorch release; its ABI changes between releases, "
        "so a vLLM wheel beside another torch (or a source build left after torch moved) cannot load.",
        example="cache_ops.cpython-38-x86_64-linux-gnu.so: undefined symbol: _ZN2at4_ops15to_dtype_layout4call… "
        "(vllm#2680: a very old vLLM against a newer torch; upgrading vLLM fixed it).",
        fix="Upgrade or reinstall vLLM so its wheel and PyTorch are the versions built together; rebuild a source "
        "build after any torch change. Another package's library (a KV connector's, an attention kernel's) is "
        "that package's to upgrade or reinstall as the wheel built for the installed PyTorch.",
        limits="The package is the folder under site-packages the library's path names (llm-d#325: "
        "`site-packages/lmcache/c_ops…so`, LMCache built from source, its PyPI wheel loaded); a library named "
        "without its path is vLLM's when its name is one of vLLM's extensions, else named alone.",
        references=["https://github.com/vllm-project/vllm/issues/2680", "https://github.com/llm-d/llm-d/issues/325"],
    ),
)


# --- OP-7.7 a model type the installed transformers does not know ----------------------------------


# transformers' AutoConfig looking a model type up in its mapping: older releases raised a bare KeyError there
# (`KeyError: 'qwen2'` from models/auto/configuration_auto.py's `__getitem__`) instead of naming the model type.
_CONFIG_MAPPING = "models/auto/configuration_auto.py"
_KEY = re.compile(r"^KeyError: ['\"](?P<key>[\w-]+)['\"]$")


def _mapping_key_errors(facts: Facts) -> list[LogEvent]:
    return [
        e
        for e in facts.events_of(LogEventKind.UNPLACED_ERROR)
        if e.exception == "KeyError"
        and (e.code_file or "").replace("\\", "/").endswith(_CONFIG_MAPPING)
        and _KEY.match(e.message or "")
    ]


def _check_model_type(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.MODEL_TYPE_UNKNOWN) or _mapping_key_errors(facts)
    if not events:
        return []
    event = events[0]
    key = _KEY.match(event.message or "") if event.kind == LogEventKind.UNPLACED_ERROR else None
    model_type = (key["key"] if key else event.model) or "this model type"
    return [
        RULE_MODEL_TYPE.finding(
            Severity.CRITICAL,
            f"the installed transformers does not know model type {model_type}: the model is newer than the "
            "installed versions",
            summary="vLLM reads a model's configuration through transformers; a model type added after the "
            "installed transformers (and usually after the installed vLLM, which implements the model) cannot "
            "be loaded by either.",
            evidence=[c.log_evidence(event, name="model type", value=model_type)],
            actions=[
                f"Upgrade vLLM (or your platform's vLLM build, such as vllm-ascend) to a release that supports "
                f"{model_type}, with the transformers version it requires: the model's card or vLLM's supported "
                "models list says from which release.",
                "Upgrading transformers alone gets past this message, but serving needs vLLM's implementation of "
                "the architecture too.",
            ],
            confidence=CONFIDENCE,
        )
    ]


RULE_MODEL_TYPE = Rule(
    code="OP-7.7",
    title="model type newer than the installed transformers",
    category=Category.STARTUP,
    check=_check_model_type,
    needs=("events",),
    page=RulePage(
        checks="transformers' `The checkpoint you are trying to load has model type `X` but Transformers does not "
        "recognize this architecture`, in any case and with a reporter's typos; older transformers' bare "
        "`KeyError: 'X'` raised in models/auto/configuration_auto.py (its model-type mapping) before it said so "
        "(transformers PR #27976), or pasted without its traceback when X is a model type of the interface table "
        "(transformers 5.19's mapping beside vLLM 0.32, and vLLM's own registry; gpustack/gpustack#1510's `gemma3`).",
        why="A new model needs a transformers that knows its configuration and a vLLM that implements it; the "
        "message means the installed versions predate the model.",
        example="model type `qwen3_5_moe` but Transformers does not recognize this architecture (vllm-ascend#8409: "
        "0.13.0 predates Qwen3.5; 0.18 served it).",
        fix="Upgrade vLLM (and the transformers it requires) to a release that supports the model.",
        limits="The finding cannot tell which release added the model; the model's card or vLLM's supported-models "
        "page does.",
        references=[
            "https://github.com/vllm-project/vllm-ascend/issues/8409",
            "https://github.com/vllm-project/vllm/issues/4315",
            "https://github.com/huggingface/transformers/pull/27976",
        ],
    ),
)


# --- OP-7.56 a transformers newer than the vLLM release ---------------------------------------------------------


def _check_name_taken(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.TRANSFORMERS_NAME_TAKEN)
    if not events:
        return []
    event = events[0]
    name = event.model or "a config name"
    return [
        RULE_NAME_TAKEN.finding(
            Severity.CRITICAL,
            f"the installed transformers now defines {name} itself, which this vLLM release registers as its own: "
            "transformers is newer than the release was made for",
            summary="vLLM registers configurations of its own with transformers' AutoConfig when it is imported; a "
            "later transformers that added a model of the same name refuses the registration, so vLLM fails before "
            "anything starts. The versions are the question, not the model served.",
            evidence=[c.log_evidence(event, name="config name taken", value=name)],
            actions=[
                "Upgrade vLLM to a release made for this transformers (the 'aimv2' clash of vLLM 0.9 with "
                "transformers 4.54 was gone in 0.10.0), or install the transformers version the installed vLLM "
                "requires (`pip show vllm` lists its transformers range; `pip install 'transformers<the version that "
                "added the name>'`).",
                "Install nothing that upgrades transformers after vLLM (another package's requirement, an "
                "`--upgrade`), or pin transformers beside vLLM in the image's requirements.",
            ],
            confidence=0.9,
        )
    ]


RULE_NAME_TAKEN = Rule(
    code="OP-7.56",
    title="transformers newer than the vLLM release: a config name vLLM registers is taken",
    category=Category.STARTUP,
    check=_check_name_taken,
    needs=("events",),
    page=RulePage(
        checks="transformers' `'<name>' is already used by a Transformers config, pick another name.`",
        why="AutoConfig.register refuses a name transformers defines itself (models/auto/configuration_auto.py); vLLM "
        "registers its own configurations at import, so a transformers that later added the same model breaks "
        "every vLLM command before it starts.",
        example="`ValueError: 'aimv2' is already used by a Transformers config, pick another name.` importing vLLM "
        "0.9.2 beside transformers 4.54.1 (EuroEval#1117, vllm#22178); nvidia-cosmos/cosmos-rl PR #180 moved to vLLM "
        "0.10.0 to fix it.",
        fix="A vLLM release made for the installed transformers, or the transformers the installed vLLM requires.",
        limits="Does not know which transformers added the name; `pip show vllm` gives the range its release accepts.",
        references=[
            "https://github.com/vllm-project/vllm/issues/22178",
            "https://github.com/EuroEval/EuroEval/issues/1117",
            "https://github.com/nvidia-cosmos/cosmos-rl/pull/180",
        ],
    ),
)


# --- OP-7.8 a package vLLM calls changed its API ---------------------------------------------------


# `No module named 'outlines.fsm'`: Python names the whole dotted path only when its first part imported, so the
# package is there and lacks the submodule (vllm#3139: vLLM 0.3.3's guided decoding against another outlines;
# LMCache's `lmcache.experimental` moved between its releases). vLLM's own modules are OP-7.16's.
_SUBMODULE = re.compile(r"No module named '(?P<package>[A-Za-z_]\w*)\.(?P<rest>[\w.]+)'")


def missing_submodule(event: LogEvent) -> re.Match[str] | None:
    """The package and the submodule it lacks, for an import error that names a dotted path outside vLLM."""
    if event.exception not in ("ModuleNotFoundError", "ImportError"):
        return None
    found = _SUBMODULE.search(event.message or "")
    return found if found and found["package"] != "vllm" and found["package"] not in _NOT_PACKAGES else None


def _check_api_mismatch(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR):
        submodule = missing_submodule(event)
        if submodule is not None:
            return [_submodule_finding(event, submodule["package"], submodule.group(0)[17:-1])]
        package = mismatched_package(event)
        if package is not None:
            return [_api_finding(event, package)]
    return []


def mismatched_package(event: LogEvent) -> str | None:
    """The third-party package whose API did not match what vLLM called, when the error says so."""
    message = event.message or ""
    named = _MODULE_ATTRIBUTE.search(message) or _IMPORT_NAME.search(message)
    if named and event.exception in ("AttributeError", "ImportError"):
        package = named["package"].split(".")[0]
        return package if package not in _NOT_PACKAGES else None
    if event.exception == "AttributeError" and REMOVED_IN_TRANSFORMERS_5 in message:
        return "transformers"  # a tokenizer attribute vLLM reads and transformers 5 removed
    if event.component == "transformers" and event.exception and not hasattr(builtins, event.exception):
        return "transformers"  # an exception class of transformers' own, raised at a call vLLM made into it
    if event.exception != "TypeError" or not SIGNATURE.search(message):
        return None
    called = [m["package"] for m in _CALLED.finditer(event.code or "") if m["package"] not in _NOT_PACKAGES]
    if called:
        return called[0]
    # no package on the calling line (`self.compiler.compile_json_schema(…)`), or no line: the class Python names,
    # when it is a structured-output library's own
    named = _CALLED_CLASS.search(message)
    return CLASS_PACKAGES.get(named["cls"]) if named else None


def _submodule_finding(event: LogEvent, package: str, module: str) -> Finding:
    """The package imported but has no such submodule: another release of it than the importing code was written
    for (modules move between releases), or a build of it without that part."""
    caller = _calling_package(event.code_file)
    importer = caller if caller not in (None, package) else "the code importing it (vLLM, or what runs vLLM)"
    return RULE_API_MISMATCH.finding(
        Severity.CRITICAL if event.phase == "startup" else Severity.HIGH,
        f"the installed {package} has no module {module}: {importer} was written for another version of {package}",
        summary=f"Python names the whole path only when {package} itself imported: it is installed, and this "
        f"release of it has no {module} (modules move and are removed between releases, or a build leaves a part "
        "out). The import was written for another release.",
        evidence=[c.log_evidence(event, name="missing submodule", value=module)],
        actions=[
            f"Compare `pip show {package}` with the version the importing package requires (`pip show vllm` for "
            f"vLLM's own imports, or the plugin's or framework's requirements) and install that one; `pip check` "
            "lists the conflicts.",
            f"If {package} is a project checked out beside it (not installed with pip), update the checkout to the "
            "revision the importing code names.",
        ],
        confidence=API_CONFIDENCE,
    )


# Frameworks that import vLLM, not the other way round (their own names in an import error are theirs): RL and
# fine-tuning toolkits, serving wrappers and evaluation harnesses that drive vLLM in-process
BUILT_ON_VLLM = frozenset(
    {"swift", "trl", "verl", "openrlhf", "llamafactory", "fastchat", "lighteval", "lm_eval", "xinference", "unsloth"}
)
# The distribution pip installs each as, where it is not the module's name
_PIP_NAME = {"swift": "ms-swift", "fastchat": "fschat", "lm_eval": "lm-eval"}


def _framework_finding(event: LogEvent, package: str) -> Finding:
    """A name a framework built on vLLM lacks: vLLM does not import it, so the framework's own release (or its vLLM
    integration, which some frameworks expose only when vLLM imports) is what differs (modelscope/ms-swift's
    `get_vllm_engine`, there only with vLLM installed)."""
    found = _MODULE_ATTRIBUTE.search(event.message or "") or _IMPORT_NAME.search(event.message or "")
    name = found["name"] if found else "the name"
    pip_name = _PIP_NAME.get(package, package)
    return RULE_API_MISMATCH.finding(
        Severity.CRITICAL if event.phase == "startup" else Severity.HIGH,
        f"the installed {package} has no {name} ({event.exception}): another {package} release than the code "
        f"expects, or {package}'s vLLM integration did not import",
        summary=f"{package} is a framework that runs vLLM, so vLLM does not import it: the code that asked for "
        f"{name} (a script, an example, the framework's own module) expects another release of {package}, or "
        f"{package} defines {name} only when its vLLM integration imports, which fails when vLLM is missing or "
        "broken in that environment.",
        evidence=[c.log_evidence(event, name="root_exception", value=event.message)],
        actions=[
            f"Install the {pip_name} release the code was written for (`pip show {pip_name}`; its examples follow "
            "its main branch), or update the code to the installed release.",
            "If the name is part of its vLLM integration, check that vLLM imports in the same environment (`python "
            f"-c 'import vllm; print(vllm.__version__)'`) at the release {pip_name} names.",
        ],
        confidence=API_CONFIDENCE,
    )


def _api_finding(event: LogEvent, package: str) -> Finding:
    if package in BUILT_ON_VLLM:
        return _framework_finding(event, package)
    caller = _calling_package(event.code_file)
    if caller is not None and caller != package:  # another package between vLLM and the one it calls
        summary, actions = _caller_summary(event, package, caller), _caller_actions(package, caller)
    else:
        caller, summary, actions = "vLLM", _vllm_summary(event, package), _vllm_actions(package)
        if REMOVED_IN_TRANSFORMERS_5 in (event.message or ""):
            actions = [_TRANSFORMERS_5_ACTION, *actions]
    return RULE_API_MISMATCH.finding(
        Severity.CRITICAL if event.phase == "startup" else Severity.HIGH,
        f"{caller} calls {package} with an API the installed {package} version does not have ({event.exception})",
        summary=summary,
        evidence=[c.log_evidence(event, name="root_exception", value=event.message)],
        actions=actions,
        confidence=API_CONFIDENCE,
    )


def _vllm_summary(event: LogEvent, package: str) -> str:
    called = f" (`{event.code.strip()}`)." if event.code else "."
    return (
        f"{_sentence(event.message or '')} vLLM was written against another version of {package}: the call's "
        f"signature, a name it imports or an attribute it reads differs in the one installed{called}"
    )


def _sentence(text: str) -> str:
    """The error's words closed as a sentence once (`… Did you mean: 'x'?` keeps its question mark)."""
    return text if text.endswith((".", "?", "!")) else text + "."


def _vllm_actions(package: str) -> list[str]:
    return [
        f"Install the {package} version this vLLM release requires (`pip show vllm` lists its requirements; "
        f"`pip install --upgrade vllm` brings them together), or upgrade {package} to it.",
        f"If {package} is already at vLLM's requirement, upgrade vLLM: the call may be fixed in a later release.",
    ]


def _caller_summary(event: LogEvent, package: str, caller: str) -> str:
    return (
        f"{event.message}, raised in {caller} (`{event.code_file}`), which vLLM loaded. {caller} was written against "
        f"another version of {package}: usually {package} was upgraded (with vLLM, or by another install) past what "
        f"{caller} supports."
    )


def _caller_actions(package: str, caller: str) -> list[str]:
    return [
        f"Install a {package} version {caller} supports (its requirements, or the last {package} release before the "
        f"change: pin it with `pip install '{package}<…'`), or upgrade {caller} to a release that supports the "
        f"installed {package}.",
        f"Check that the pinned {package} still satisfies vLLM (`pip check`).",
    ]


def _calling_package(path: str | None) -> str | None:
    """The installed package whose file raised the error (`…/site-packages/neural_compressor/…`), when the traceback's
    last frame is in one; None for vLLM's own files and for paths outside an installed package."""
    package = c.installed_package(path)
    return package if package != "vllm" else None


RULE_API_MISMATCH = Rule(
    code="OP-7.8",
    title="a package vLLM calls has another API than vLLM expects",
    category=Category.STARTUP,
    check=_check_api_mismatch,
    needs=("events",),
    page=RulePage(
        checks="An error no wording or catalog message knows, whose words are Python's for a changed API: a "
        "TypeError about a call's arguments (unexpected keyword, positional-only passed as keyword, too many or "
        "missing positional arguments) raised where vLLM's code calls into another package (the source line "
        "under the traceback's last frame names it), `module 'X' has no attribute`, `cannot import name … "
        "from 'X'`, `No module named 'X.Y'` (X imported, so it lacks the submodule: another release of X, vllm#3139's "
        "`outlines.fsm`), or the tokenizer attribute transformers 5 removed and vLLM read (`Qwen2Tokenizer has no "
        "attribute all_special_tokens_extended`).",
        why="vLLM calls transformers, tokenizers, structured-output and kernel libraries at the versions it "
        "requires; installed at another version their signatures differ, and the error names the call, not the "
        "version.",
        example="TypeError: LLMatcher.validate_grammar() got some positional-only arguments passed as keyword "
        "arguments: 'tokenizer', under `err = llguidance.LLMatcher.validate_grammar(…` (vllm#16339: llguidance "
        "0.7.11 fixed it).",
        fix="Install the version of the package vLLM requires, or upgrade both together.",
        limits="A TypeError inside vLLM's own code with no call into another package is OP-7.65's (parts of vLLM "
        "from different versions); one whose traceback does not show the calling line is left to VC-2. A framework "
        "that runs vLLM (BUILT_ON_VLLM: ms-swift, trl, verl, …) named in the error is read as its own release or "
        "its vLLM integration, not as vLLM's callee; the list is by name.",
        references=[
            "https://github.com/vllm-project/vllm/issues/16339",
            "https://github.com/modelscope/ms-swift/issues/4248",
        ],
    ),
)

# --- OP-7.9 the model served through vLLM's generic Transformers backend -----------------------------


def _processor_lacking_backend_method(event: LogEvent) -> str | None:
    """The processor class of an AttributeError for the Transformers backend's token-counting method."""
    named = _BACKEND_METHOD_MISSING.search(event.message or "") if event.exception == "AttributeError" else None
    return named["cls"] if named else None


def _check_transformers_backend(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR):
        processor = _processor_lacking_backend_method(event)
        if processor is not None:
            return [_transformers_backend_finding(event, processor)]
    events = facts.events_of(LogEventKind.TRANSFORMERS_BACKEND)
    asked = facts.config is not None and (facts.config.flags.get("--model-impl") or "").lower() == "transformers"
    if not events or asked:
        return []
    return [
        RULE_TRANSFORMERS_BACKEND.finding(
            Severity.MEDIUM,
            "the model runs on vLLM's generic Transformers backend: this vLLM version has no implementation of "
            "its architecture",
            summary="With --model-impl auto, vLLM builds a model through its Transformers backend only when none of "
            "the model's architectures is in its registry (vllm/model_executor/models/registry.py). The backend "
            "serves it through transformers' own modelling code: slower than a native implementation, with more "
            "memory at startup, and without the model's own kernels.",
            evidence=[c.log_evidence(events[0], name="Transformers backend")],
            actions=[
                "Upgrade vLLM to a version that implements the architecture natively (vLLM's supported-models list "
                "or the model card says which); a failure while the backend builds the model (out of memory, an "
                "unknown layer) usually goes with it.",
                "If this vLLM does implement it, check the model's config.json `architectures` names the class "
                "vLLM knows.",
            ],
            confidence=0.7,
        )
    ]


def _transformers_backend_finding(event: LogEvent, processor: str) -> Finding:
    """vLLM has no implementation of its own for the model and ran it through its Transformers backend, which counts
    each image's tokens with a processor method that only processors of supported models define."""
    return RULE_TRANSFORMERS_BACKEND.finding(
        Severity.CRITICAL,
        f"vLLM ran the model through its Transformers backend, which needs {processor}.{TRANSFORMERS_BACKEND_METHOD}: "
        "this vLLM has no implementation of the model's architecture, and the fallback cannot serve it",
        summary="A model whose architecture vLLM does not implement falls back to the Transformers backend; for a "
        "multimodal model it asks the Hugging Face processor how many tokens each image or video takes, through a "
        "method only the processors of models that backend supports define. This processor has none, so the "
        "model is served neither way by the installed versions.",
        evidence=[c.log_evidence(event, name="root_exception", value=event.message)],
        actions=[
            "Serve the model with a vLLM release that implements its architecture (vLLM's supported-models page per "
            "release): vLLM dropped some, e.g. MllamaForConditionalGeneration (Llama 3.2 Vision) after 0.10.2 "
            "(vllm#27198; its registry's table of previously supported models says so), and newer models arrive "
            "release by release.",
            "Or upgrade transformers, if its release notes add this processor to the Transformers backend's "
            "supported models.",
        ],
        confidence=0.8,
    )


RULE_TRANSFORMERS_BACKEND = Rule(
    code="OP-7.9",
    title="model served through vLLM's generic Transformers backend",
    category=Category.STARTUP,
    check=_check_transformers_backend,
    needs=("events",),
    page=RulePage(
        checks="A traceback frame in vllm/model_executor/models/transformers (the file, or the package of later "
        "releases), or vLLM's `Using Transformers (modeling) backend.`, without --model-impl transformers; a "
        "processor lacking the backend's `_get_num_multimodal_tokens` (vllm#27198: MllamaProcessor on 0.11.0) is "
        "the backend failing a multimodal model, whatever the flag.",
        why="vLLM falls back to the Transformers backend only for an architecture it does not implement: the "
        "installed vLLM predates the model, and the backend's memory and speed are not the native ones.",
        example="Qwen3-VL-235B on vLLM 0.10.2: the traceback built the model in models/transformers.py and ran out "
        "of memory; 0.11.0, which implements Qwen3-VL, served it (QwenLM/Qwen3-VL#1493).",
        fix="Upgrade vLLM to a release that implements the architecture.",
        limits="A frame says the backend was building the model, not that it caused the failure; the failure's "
        "own finding ranks above this one.",
        references=["https://github.com/QwenLM/Qwen3-VL/issues/1493", "vllm/model_executor/models/registry.py"],
    ),
)

# --- OP-7.10 a chat template that opens the reasoning block in the prompt ----------------------------

REASONING_FIX_RELEASE = (0, 7, 3)  # the first release whose deepseek_r1 parser takes output without <think>


def _check_reasoning_open_in_prompt(facts: Facts) -> list[Finding]:
    tags = [e for e in facts.events_of(LogEventKind.REASONING_TAG) if e.level is None and e.process is None]
    if not tags or any(e.message in ("open", "both") for e in tags):
        return []
    release = c.vllm_release(facts)
    fixed = ".".join(map(str, REASONING_FIX_RELEASE))
    first = (
        f"Upgrade vLLM to {fixed} or later: its deepseek_r1 reasoning parser reads output that only closes the "
        "block (vllm#13025; the release before needed both tags), with --reasoning-parser deepseek_r1 (and "
        "--enable-reasoning on the releases that still ask for it)."
        if release is None or release < REASONING_FIX_RELEASE
        else "This vLLM's deepseek_r1 parser reads output that only closes the block: check the server runs with "
        "--reasoning-parser set to the model's family, and that the client reads reasoning_content."
    )
    actions = [
        first,
        "Or serve with a chat template that does not end the prompt with <think> (--chat-template), so the model "
        "opens the block itself.",
    ]
    return [
        RULE_REASONING_OPEN.finding(
            Severity.MEDIUM,
            "the output closes a reasoning block it never opened (</think> without <think>): the chat template "
            "opens it in the prompt",
            summary="DeepSeek-R1's chat template (changed 2025-02) and later reasoning models' end the prompt with "
            "'<think>\\n', so the model's output starts inside its reasoning and only closes it. A reasoning parser "
            "that needs both tags then returns reasoning_content null and leaves the thinking in content.",
            evidence=[c.log_evidence(tags[0], name="reasoning tags in the output", value="</think> only")],
            actions=actions,
            confidence=0.7,
        )
    ]


RULE_REASONING_OPEN = Rule(
    code="OP-7.10",
    title="the chat template opens the reasoning block in the prompt",
    category=Category.CONFIGURATION,
    check=_check_reasoning_open_in_prompt,
    needs=("events",),
    page=RulePage(
        checks="Pasted model output (lines that are not vLLM's log) holding </think> and nowhere <think>.",
        why="A template that opens the reasoning block in the prompt makes the output hold only its end; vLLM "
        "0.7.2's deepseek_r1 parser required both tags (read in its wheel) and returned reasoning_content null, "
        "0.7.3's assumes the block starts the output.",
        example="'…That way, I'm open to whatever they need help with.' / '</think>' / 'Hello! How can I assist "
        "you today?' with reasoning_content None on 0.7.2 (vllm#12999, fixed by vllm#13025).",
        fix="Upgrade vLLM to 0.7.3 or later; or a chat template that leaves <think> to the model.",
        limits="Only the tags are read: a paste that cuts the output's start may have lost a <think> that was there.",
        references=[
            "https://github.com/vllm-project/vllm/issues/12999",
            "https://github.com/vllm-project/vllm/pull/13025",
        ],
    ),
)

# --- OP-7.11 the CUDA libraries loaded do not match the host's driver ------------------------------


def _check_driver_mismatch(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.CUDA_DRIVER_MISMATCH)
    if not events:
        return []
    return [
        RULE_DRIVER_MISMATCH.finding(
            Severity.CRITICAL,
            "CUDA error 803: the CUDA driver library loaded does not match the host's GPU driver (a version mismatch)",
            summary="cudaErrorSystemDriverMismatch: the process loaded a libcuda that does not belong to the kernel "
            "driver. In a container it is the image's CUDA forward-compatibility libraries (cuda-compat, put on the "
            "loader's path) beside a host driver newer than they are, or a libcuda copied into the image; vLLM "
            "never sees a GPU.",
            evidence=[c.log_evidence(events[0], name="CUDA error 803")],
            changes=[
                ConfigChange(
                    flag="LD_LIBRARY_PATH",
                    kind="env",
                    current=None,
                    proposed="<the directory of the host driver's libcuda, first: /usr/lib/x86_64-linux-gnu on Debian "
                    "and Ubuntu hosts>",
                    reason="the loader then takes the driver's own libcuda before the image's compat copy",
                    cost="none when the host driver is at least the image's CUDA version",
                )
            ],
            actions=[
                "Check with `ldconfig -p | grep libcuda` inside the container which libcuda is found first; remove "
                "the image's compat directory (/usr/local/cuda/compat) from /etc/ld.so.conf.d if the host driver is "
                "newer, or use an image built for this driver.",
            ],
            confidence=0.85,
        )
    ]


RULE_DRIVER_MISMATCH = Rule(
    code="OP-7.11",
    title="CUDA driver library and host driver mismatch (error 803)",
    category=Category.STARTUP,
    check=_check_driver_mismatch,
    needs=("events",),
    page=RulePage(
        checks="CUDA's `Error 803: system has unsupported display driver / cuda driver combination`, as torch's "
        "cudaGetDeviceCount() check or any CUDA call prints it.",
        why="Error 803 (cudaErrorSystemDriverMismatch) means the user-space driver library and the kernel driver "
        "differ; images that register CUDA's forward-compatibility libraries produce it on hosts with a newer "
        "driver.",
        example="RuntimeError: Unexpected error from cudaGetDeviceCount() … Error 803 with the vLLM 0.15 image under "
        "the NVIDIA container runtime and a 580 driver (gpustack/gpustack#4678: LD_LIBRARY_PATH set to the host's "
        "libraries fixed it).",
        fix="Put the host driver's libcuda first (LD_LIBRARY_PATH, or drop the compat path from ld.so.conf); or "
        "an image built for this driver.",
        limits="The directory of the host's libraries differs by distribution; the proposed value is Debian's.",
        references=["https://github.com/gpustack/gpustack/issues/4678"],
    ),
)

# --- OP-7.59 a tokenizer.json newer than the tokenizers installed -------------------------------------------------

# The section of tokenizer.json whose type the tokenizers library names in its refusal, in words.
_TOKENIZER_SECTIONS = {
    "ModelWrapper": "its vocabulary and merges (the model section)",
    "PreTokenizerWrapper": "its pre-tokenizer",
    "PyPreTokenizerTypeWrapper": "its pre-tokenizer",
    "NormalizerWrapper": "its normalizer",
    "DecoderWrapper": "its decoder",
    "PostProcessorWrapper": "its post-processor",
}


def _check_tokenizer_file(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.TOKENIZER_FILE_UNREADABLE)
    if not events:
        return []
    event = events[0]
    section = _TOKENIZER_SECTIONS.get(event.component or "", f"its {event.component}")
    merges = event.component == "ModelWrapper"
    return [
        RULE_TOKENIZER_FILE.finding(
            Severity.CRITICAL,
            f"the model's tokenizer.json was saved by a newer tokenizers than the one installed: {section} does not "
            "parse" + (" (tokenizers 0.20 changed how a BPE model's merges are written)" if merges else ""),
            summary="transformers builds a fast tokenizer from the model's tokenizer.json with the tokenizers "
            "library, which refuses a section whose shape it does not know, so the server fails before any model "
            "is loaded. "
            + (
                "Since tokenizers 0.20 (the release transformers 4.45 moved to) a BPE tokenizer's merges are saved as "
                "pairs of strings, not one string each, and earlier releases cannot read them: a model saved since "
                "then fails where an older tokenizers is installed, often because vLLM or another package pins an "
                "older transformers. "
                if merges
                else "A file saved by a later tokenizers release than the one installed is the usual reason. "
            )
            + "A tokenizer.json cut short or edited by hand fails the same way.",
            evidence=[c.log_evidence(event, name="tokenizer.json section", value=event.component)],
            actions=[
                "Upgrade tokenizers in the server's environment (`pip show tokenizers transformers` first): `pip "
                "install -U 'tokenizers>=0.20'`. If pip refuses because transformers pins an older one, upgrade "
                "transformers (4.45 or later takes 0.20), and if vLLM pins that transformers, upgrade vLLM.",
                "If the versions are already recent, check the file itself: a download cut short or a hand edit "
                "(`python -c \"import json; json.load(open('tokenizer.json'))\"` in the model's folder), and fetch it "
                "again.",
            ],
            confidence=0.85 if merges else 0.7,
        )
    ]


RULE_TOKENIZER_FILE = Rule(
    code="OP-7.59",
    title="the model's tokenizer.json is newer than the installed tokenizers",
    category=Category.STARTUP,
    check=_check_tokenizer_file,
    needs=("events",),
    page=RulePage(
        checks="The tokenizers library's `data did not match any variant of untagged enum <Section> at line N column "
        "M` (ModelWrapper, PreTokenizerWrapper, NormalizerWrapper …), raised as transformers builds the fast "
        "tokenizer.",
        why="The tokenizer, not vLLM, cannot start: the file's format is newer than the library reading it, and no "
        "vLLM flag changes that. tokenizers 0.20 began writing BPE merges as pairs of strings, which earlier "
        "releases refuse with the ModelWrapper error.",
        example="`Exception: data did not match any variant of untagged enum ModelWrapper at line 1251012 column 3` "
        "loading allenai/Llama-3.1-Tulu-3.1-8B with tokenizers 0.19.1 and transformers 4.43.4 (allenai/open-instruct"
        "#738); `pip install -U tokenizers` to 0.21.2 fixed the same error in hasanar1f/HiRED#3.",
        fix="tokenizers 0.20 or later (with a transformers, and a vLLM, that accept it); otherwise a tokenizer.json "
        "fetched again.",
        limits="Cannot tell a file newer than the library from a damaged one by the words alone; the versions "
        "installed (`pip show tokenizers`) tell them apart.",
        references=[
            "https://github.com/huggingface/swift-transformers/pull/131",
            "https://github.com/openvinotoolkit/openvino_tokenizers/issues/301",
            "https://github.com/allenai/open-instruct/issues/738",
            "https://github.com/hasanar1f/HiRED/issues/3",
        ],
    ),
)

RULES: list[Rule] = [
    RULE_UNDEFINED_SYMBOL,
    RULE_MODEL_TYPE,
    RULE_API_MISMATCH,
    RULE_TRANSFORMERS_BACKEND,
    RULE_REASONING_OPEN,
    RULE_DRIVER_MISMATCH,
    RULE_NAME_TAKEN,
    RULE_TOKENIZER_FILE,
]
