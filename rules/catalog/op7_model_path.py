"""OP-7.53: the model vLLM was given is not a model it can find or read where the server runs.

Why a rule of its own: `vllm serve X` takes X as a local directory when one of that name exists where the server
runs, and as a Hugging Face Hub id otherwise; a path that does not exist there (a volume not mounted into the
container, a typo, a relative path from another working directory) is then validated as a Hub id and refused in the
Hub's words (`Repo id must be in the form 'repo_name' or 'namespace/repo_name': '/models/foo'`, huggingface_hub's
_validators.py), or vLLM says it found neither (`Invalid repository ID or local directory specified: '/models/foo'`,
vllm/transformers_utils/config.py, 0.32: no config.json and no params.json). A directory that exists but is not a
model's root has transformers say what is missing (`… does not appear to have a file named config.json`,
transformers/utils/hub.py) or that its config.json is not a transformers config (`Unrecognized model in … Should have
a `model_type` key`): the folder above the model, a Hugging Face cache folder instead of its snapshot, a LoRA
adapter, Mistral's own format. With VLLM_USE_MODELSCOPE set, a name that is no local directory is looked up on
ModelScope, whose hub answers a 404 with `The request model: X does not exist!` (modelscope/hub/errors.py;
CraftJarvis/JarvisVLA#5, where the maintainer said to download the model and serve its local path). None of these is
fixed by a flag of the model's size or memory: the path is.
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# A path rather than a Hub id: absolute, relative, home, a Windows drive, or more than one slash (an id has one).
_LOCAL = re.compile(r"^(?:/|\.{1,2}/|~|[A-Za-z]:[\\/])|/.*/")

_WHERE = (
    "Check the path inside the server's process, not on the host: `ls -la {model}` in the container "
    "(`docker exec`, `kubectl exec … --`); a container sees a host directory only where a volume mounts it "
    "(`-v /host/models:/models`, the pod's volumeMounts), and a relative path is read from the server's working "
    "directory: give an absolute one. Across nodes (a Ray cluster, pipeline parallel on another host) each node's "
    "workers read the model from their own disk, so the path must hold it on every node, not just the head's "
    "(vllm#3786)."
)
_ROOT = (
    "Give the directory that holds config.json (and the weights): in a Hugging Face cache that is "
    "`models--<org>--<name>/snapshots/<hash>/`, not the `models--<org>--<name>` folder or the folder above it; "
    "`hf download <org>/<name> --local-dir <dir>` writes a model's root to a directory of your choosing."
)
_NOT_HF = (
    "A directory with adapter_config.json is a LoRA adapter: serve its base model with `--enable-lora "
    "--lora-modules <name>=<dir>`. Mistral's own format (params.json, consolidated.safetensors) loads with "
    "`--tokenizer-mode mistral --config-format mistral --load-format mistral`; a GGUF model is served by naming its "
    ".gguf file with `--tokenizer` at the original model."
)
_HUB_ID = (
    "As a Hub id, `{model}` must be spelled as on the Hub (`<org>/<name>`); if it is private or gated the server "
    "needs HF_TOKEN, and if the server cannot reach the Hub (offline, HF_HUB_OFFLINE=1) the model must be in its "
    "cache: the exception chained above vLLM's says which."
)

_NO_CODE = (
    "Copy {missing} (and the other .py files: configuration_*, modeling_*, tokenization_*) from the original model's "
    "repository into the model's directory: transformers loads the classes config.json's auto_map names from files "
    "beside it. A tool that wrote the directory (a quantizer such as ModelSlim, a merge or conversion script) may "
    "leave them out; a release of the tool that copies them avoids it (vllm-ascend's FAQ names the ModelSlim release "
    "that fixed the missing configuration_deepseek.py)."
)
_NO_CODE_HUB = (
    "Check the repository's files at the revision the server asks for (`hf download {model} --local-dir <dir>`, or "
    "its Files tab): config.json's auto_map names {missing}, which must be there; a copy uploaded without its .py "
    "files needs them added from the original model's repository, or serve the original."
)
_MODELSCOPE = (
    "Give vLLM the model's local directory (download it first: `modelscope download --model <org>/<name> "
    "--local_dir <dir>`, then `vllm serve <dir>`), or its ModelScope id as `<org>/<name>`; a model that is on the "
    "Hugging Face Hub instead is looked up there once VLLM_USE_MODELSCOPE is unset."
)


def _check(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.MODEL_NOT_FOUND)
    return [_finding(events[0])] if events else []


_EMPTY = (
    "Set the model where the launch takes it from and check what reached the server: an environment variable the "
    "command expands (`vllm serve $MODEL_NAME`, a template's MODEL_NAME), a Helm value, a platform's model field; "
    "`env | grep -i model` in the container, and the server's first lines (`non-default args`), show it."
)


def _reading(reason: str, model: str, local: bool, missing: str) -> tuple[str, list[str]]:
    """The title and the actions for what the words said was wrong with the model argument."""
    if reason == "empty":
        return "the model vLLM was given is empty: the setting that should carry its name or path was not set", [_EMPTY]
    if reason == "no_file":
        title = (
            f"{model} has no {missing}: the directory is not the model's root, or the model is incomplete"
            if local
            else f"the Hub repository {model} has no {missing}: it is not a transformers model, or not the one meant"
        )
        config = missing == "config.json"
        return title, ([_ROOT, _NOT_HF] if config else [_not_complete(missing), _ROOT]) if local else [_NOT_HF]
    if reason == "no_code":
        return _no_code_reading(model, local, missing)
    if reason == "no_tokenizer":
        title = (
            f"transformers could not load a tokenizer from {model}: it holds no tokenizer files it can read, or a "
            "local directory of that name hides the Hub's"
        )
        return title, [
            _no_tokenizer(model, local),
            _WHERE.format(model=model) if local else _HUB_ID.format(model=model),
        ]
    if reason == "modelscope":
        title = (
            f"ModelScope has no model {model}: with no local directory of that name, vLLM looked it up on ModelScope "
            "(VLLM_USE_MODELSCOPE is set)"
        )
        bare = "" if "/" in model else f" `{model}` has no `<org>/` part, so no hub can resolve it."
        return title, [_MODELSCOPE + bare, _WHERE.format(model=model)]
    if reason == "no_model_type":
        return f"{model}'s config.json has no model_type: it is not a transformers model's configuration", [
            _NOT_HF,
            _ROOT,
        ]
    if local:
        title = (
            f"the model path {model} is not a model directory where the server runs: it is not there, or holds no "
            "config.json"
        )
        return title, [_WHERE.format(model=model), _ROOT, _NOT_HF]
    title = f"vLLM found no model {model}: no local directory of that name, and no Hub repository it could read"
    return title, [_HUB_ID.format(model=model), _WHERE.format(model=model)]


def _no_code_reading(model: str, local: bool, missing: str) -> tuple[str, list[str]]:
    """transformers found no remote-code file config.json's auto_map names: a copy without the original's .py files,
    or a Hub repository (at this revision) without it."""
    hub = model != "the model" and not local
    return (
        f"{model} lacks {missing}, the model's own code its config.json names (auto_map): "
        + (
            "the Hub repository does not hold it, or not at this revision"
            if hub
            else "most often a converted or quantized copy of the model without the original repository's .py files"
        ),
        [_NO_CODE_HUB.format(missing=missing, model=model)] if hub else [_NO_CODE.format(missing=missing)],
    )


_TOKENIZER_SUMMARY = (
    "vLLM loads the tokenizer from the model's own path unless --tokenizer names another, and transformers found no "
    "tokenizer it could load there (its words cover both a path without tokenizer files and a local directory "
    "shadowing a Hub id). No memory or size flag changes this."
)
_MODEL_SUMMARY = (
    "vLLM reads a model's config.json (or Mistral's params.json) first, from a local directory when one of that name "
    "exists where the server runs and from the Hugging Face Hub otherwise; what it was given is neither a model "
    "directory there nor a repository it could read. No memory or size flag changes this."
)


# The Hub's form refused a name the pasted line cut off: a name of that form is no Hub id, so it was a path
_CUT_PATH = "<path>"


def _finding(event: LogEvent) -> Finding:
    reason = event.message or "vllm"
    model = event.model or (_CUT_PATH if reason == "repo_id" else "the model")
    local = bool(_LOCAL.search(model)) or model == _CUT_PATH  # an empty name stays "the model", its reason says so
    title, actions = _reading(reason, model, local, event.component or "a file")
    return RULE.finding(
        Severity.CRITICAL,
        title,
        summary=_TOKENIZER_SUMMARY if reason == "no_tokenizer" else _MODEL_SUMMARY,
        evidence=[c.log_evidence(event, name="model", value="'' (empty)" if reason == "empty" else model)],
        actions=actions,
        confidence=0.85 if local or reason != "vllm" else 0.7,  # a Hub id's cause is chained above vLLM's words
    )


def _no_tokenizer(model: str, local: bool) -> str:
    shadow = (
        ""
        if local
        else f" A directory named {model} in the server's working directory is read instead of the Hub repository: "
        "start the server elsewhere or remove it."
    )
    return (
        f"See what {model} holds: a tokenizer needs tokenizer.json or tokenizer_config.json (and tokenizer.model for a "
        "SentencePiece one). A LoRA adapter, a weights-only copy or a converted checkpoint has none: give vLLM the "
        f"original model's tokenizer with `--tokenizer <org>/<name>` (or its directory).{shadow}"
    )


def _not_complete(missing: str) -> str:
    return (
        f"The model's directory lacks {missing}: a download cut short or a copy of only the weights; fetch the whole "
        "repository again (`hf download <org>/<name> --local-dir <dir>`), or for a tokenizer file point --tokenizer "
        "at the original model."
    )


RULE = Rule(
    code="OP-7.53",
    title="the model argument is not a model vLLM can find or read",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="vLLM's `Invalid repository ID or local directory specified: 'X'`, huggingface_hub's `Repo id must be "
        "in the form 'repo_name' or 'namespace/repo_name': 'X'`, transformers' `X does not appear to have a file named "
        "F`, `Unrecognized model in X. Should have a `model_type` key in its config.json` and `Can't load tokenizer "
        "for 'X'`.",
        why="A path that does not exist where the server runs is read as a Hub id and refused; a directory that is "
        "not a model's root, or not a transformers model, is refused for what it lacks.",
        example="`vllm serve /models/Qwen2.5-7B-Instruct` in a container started without the volume that holds "
        "/models: `Repo id must be in the form 'repo_name' or 'namespace/repo_name': '/models/Qwen2.5-7B-Instruct'`.",
        fix="The path as the server's process sees it (the volume mounted, an absolute path), the directory that "
        "holds config.json (a cache's snapshot folder), an adapter served with --lora-modules, Mistral's format "
        "with its three flags, a GGUF file named directly.",
        limits="A path is told from a Hub id by its shape (a leading slash, dot or tilde, or more than one slash); "
        "why the Hub refused a Hub id is in the exception chained above, which other rules read.",
        references=["https://docs.vllm.ai/en/latest/cli/serve.html"],
    ),
)

RULES: list[Rule] = [RULE]
