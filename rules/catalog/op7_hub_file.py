"""OP-7.197: the Hugging Face Hub has no such file in the model's repository at the revision vLLM asked for.

Why a rule of its own: vLLM fetches a Hub model's files by name at a revision (`main` unless `--revision` says
otherwise), and a 404 for one of them, `404 Client Error: Not Found for url: https://huggingface.co/<repo>/resolve/
<revision>/<file>`, says the repository answered and the file is not there: unlike OP-7.17's refusals (a gated,
private or unknown repository), no token changes it. In vllm PR #8501 HuggingFaceH4/gemma-2-2b-gkd kept its model on
another branch than main, and the OpenAI server then had no `--revision` to reach it (the PR added it). A repository
that is no full Transformers checkout gives the same answer for config.json: an adapter's (adapter_config.json only),
a GGUF-only or MLX one. The file, the repository and the revision are all in the line.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity


def _file_finding(_facts: Facts, event: LogEvent, _match: object) -> Finding:
    repo, revision, name = event.model or "the repository", event.label or "main", event.message or "the file"
    return RULE.finding(
        Severity.CRITICAL,
        f"the Hub has no {name} at revision {revision} of {repo}: the model's files are on another branch, or the "
        "repository is not a model checkout vLLM loads",
        summary=f"The Hub answered 404 for {name} at {revision}: the repository answered and the file is not on that "
        "branch, so no token or retry changes it. Either the model is on another branch or commit (vllm PR #8501: "
        "HuggingFaceH4/gemma-2-2b-gkd, not on main), or the repository holds something else than a Transformers "
        "checkout (a LoRA adapter, GGUF or MLX files) whose config.json vLLM cannot find.",
        evidence=[c.log_evidence(event, name="the missing file", value=f"{repo}@{revision}: {name}")],
        changes=[
            ConfigChange(
                flag="--revision",
                current=revision,
                proposed="<the branch, tag or commit that holds the model's files>",
                reason=f"the repository's files page on the Hub lists its branches; {name} must be on the one named",
                cost="none",
            )
        ],
        actions=[
            f"Open https://huggingface.co/{repo}/tree/{revision} and see what the branch holds. An adapter "
            "(adapter_config.json) is served on its base model with --enable-lora and --lora-modules; GGUF files are "
            "served by naming the .gguf file; MLX weights are not vLLM's.",
            "A vLLM whose OpenAI server takes no --revision (before vllm PR #8501, September 2024) reaches another "
            "branch only through a local copy: download that revision and serve its folder.",
        ],
        confidence=0.8,
    )


RULE = Rule(
    code="OP-7.197",
    title="a file the Hub's model repository does not have at the revision asked for",
    category=Category.STARTUP,
    check=c.on_kind(LogEventKind.HUB_FILE_MISSING, _file_finding),
    needs=("events",),
    page=RulePage(
        checks="The Hub's 404 for one file of a repository: requests' `404 Client Error: Not Found for url: "
        "https://huggingface.co/<repo>/resolve/<revision>/<file>` or huggingface_hub's `Entry Not Found for url: …`.",
        why="The repository answered; the file is not on that revision. No token helps (a refused repository is "
        "OP-7.17's).",
        example="`requests.exceptions.HTTPError: 404 Client Error: Not Found for url: https://huggingface.co/"
        "HuggingFaceH4/gemma-2-2b-gkd/resolve/main/config.json` (vllm PR #8501: the model's files are on another "
        "branch; the PR gave the OpenAI server --revision).",
        fix="`--revision` naming the branch or commit with the model; or the right kind of repository.",
        limits="The line does not say which branch holds the files, nor whether the file is optional to vLLM (it "
        "tolerates some missing files, such as generation_config.json, by itself).",
        references=["https://github.com/vllm-project/vllm/pull/8501"],
    ),
)

RULES: list[Rule] = [RULE]
