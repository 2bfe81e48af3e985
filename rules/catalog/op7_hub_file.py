"""OP-7.197: the Hugging Face Hub answered 404 for a model's file, or for the revision asked for.

Why a rule of its own: vLLM fetches a Hub model's files by name at a revision (`main` unless `--revision` says
otherwise). huggingface_hub says which part is missing: `Entry Not Found for url: …/resolve/<revision>/<file>` (the
repository and the revision answered, the file is not there) or `Revision Not Found` (no such branch, tag or commit).
requests' own `404 Client Error: Not Found for url: …` cannot tell: the Hub answers 404 for a repository that does not
exist too (AIAnytime/Chat-with-PDF-Chatbot#4: `LaMini-T5-738M`, its namespace left out). In vllm PR #8501
HuggingFaceH4/gemma-2-2b-gkd kept its model on another branch than main, and the OpenAI server then had no `--revision`
to reach it (the PR added it). A repository that is no full Transformers checkout (an adapter's, a GGUF-only or MLX
one) has no config.json either. Only the files a model cannot load without are read here (its config, its weights):
an index of shards, a generation or processor config and an adapter's config may be missing by design. A refusal of
the repository itself is OP-7.17's, which this one leaves to.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity


def _check_hub_file(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.HUB_FILE_MISSING)
    if not events or facts.events_of(LogEventKind.HUB_ACCESS_REFUSED):
        return []
    return [_finding(events[0])]


def _revision_change(revision: str, reason: str) -> ConfigChange:
    return ConfigChange(
        flag="--revision",
        current=revision,
        proposed="<the branch, tag or commit that holds the model's files>",
        reason=reason,
        cost="none",
    )


def _finding(event: LogEvent) -> Finding:
    repo, revision, name = event.model or "the repository", event.label or "main", event.message or "the file"
    browse = f"Open https://huggingface.co/{repo}/tree/{revision} (or the repository's page) and see what it holds."
    kinds = (
        "An adapter (adapter_config.json) is served on its base model with --enable-lora and --lora-modules; GGUF "
        "files are served by naming the .gguf file; MLX weights are not vLLM's."
    )
    if event.component == "revision":
        title = f"the Hub has no revision {revision} of {repo}: --revision names a branch, tag or commit it lacks"
        summary = f"huggingface_hub says {repo} has no revision {revision}; the repository's branches and tags are on "
        summary += "its files page."
        changes, alternatives, actions = [_revision_change(revision, "one the repository has")], [], [browse]
    elif event.component == "entry":
        title = f"the Hub has no {name} at revision {revision} of {repo}: the model's files are on another branch, or "
        title += "the repository is not a model checkout vLLM loads"
        summary = f"huggingface_hub says the repository and revision answered and {name} is not there, so no token or "
        summary += "retry changes it: the model is on another branch or commit (vllm PR #8501: HuggingFaceH4/"
        summary += "gemma-2-2b-gkd, not on main), or the repository holds another kind of files."
        reason = f"the repository's files page lists its branches; {name} must be on the one named"
        changes, alternatives, actions = [_revision_change(revision, reason)], [], [f"{browse} {kinds}"]
    else:
        title = f"the Hub answered 404 for {name} of {repo} at {revision}: no repository of that name (or a private "
        title += "one), or the file is not on that revision"
        summary = "requests' 404 does not say which part is missing: the Hub answers 404 for a repository that does "
        summary += "not exist, and for a file not on the revision asked for. A name without its namespace "
        summary += "(`LaMini-T5-738M` for `MBZUAI/LaMini-T5-738M`) is the commonest."
        reason = f"if the repository exists and {name} is on another branch"
        changes, alternatives = [], [_revision_change(revision, reason)]
        actions = [
            f"Check the name first: https://huggingface.co/{repo} must open (with its namespace, `org/name`); a "
            "private or gated one needs a token (HF_TOKEN).",
            f"{browse} {kinds}",
        ]
    return RULE.finding(
        Severity.CRITICAL,
        title,
        summary=summary,
        evidence=[c.log_evidence(event, name="the missing file", value=f"{repo}@{revision}: {name}")],
        changes=changes,
        alternatives=alternatives,
        actions=actions,
        confidence=0.8 if event.component != "status" else 0.65,
    )


RULE = Rule(
    code="OP-7.197",
    title="a model's file or revision the Hub does not have",
    category=Category.STARTUP,
    check=_check_hub_file,
    needs=("events",),
    page=RulePage(
        checks="The Hub's 404 for a model's config or weights at a revision: huggingface_hub's `Entry Not Found for "
        "url: https://huggingface.co/<repo>/resolve/<revision>/<file>` or `Revision Not Found for url: …`, and "
        "requests' `404 Client Error: Not Found for url: …` (hf-mirror.com too).",
        why="huggingface_hub's words say the file (or the revision) is missing, and no token helps; requests' bare 404 "
        "may also be a repository that does not exist.",
        example="`requests.exceptions.HTTPError: 404 Client Error: Not Found for url: https://huggingface.co/"
        "HuggingFaceH4/gemma-2-2b-gkd/resolve/main/config.json` (vllm PR #8501: the model's files are on another "
        "branch; the PR gave the OpenAI server --revision).",
        fix="The repository's full name; `--revision` naming the branch or commit with the model; or the right kind of "
        "repository.",
        limits="Files a model can do without (an index of shards, generation_config.json, preprocessor_config.json, "
        "adapter_config.json) are not read; a refused repository (OP-7.17) takes precedence.",
        references=[
            "https://github.com/vllm-project/vllm/pull/8501",
            "https://github.com/AIAnytime/Chat-with-PDF-Chatbot/issues/4",
        ],
    ),
)

RULES: list[Rule] = [RULE]
