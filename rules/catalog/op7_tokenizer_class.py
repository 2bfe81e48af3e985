"""OP-7.119: transformers has no tokenizer class by the name the checkpoint's tokenizer_config.json gives.

Why a rule of its own: vLLM loads the tokenizer with transformers' AutoTokenizer, which looks up the
`tokenizer_class` the checkpoint's tokenizer_config.json names and fails in its own words (`Tokenizer class X does
not exist or is not currently imported.`). vLLM (0.4 on) wraps that in `Failed to load the tokenizer … consider
setting trust_remote_code=True`, which is right only for a tokenizer whose code ships in the model's repository. The
name itself tells the usual three causes apart:

- `TokenizersBackend` (or `TokenizersBackendFast`): transformers 5's save_pretrained writes its tokenizer's class
  name, TokenizersBackend, into tokenizer_config.json, so a checkpoint saved by a fine-tuning or quantization tool
  running transformers 5 names a class transformers 4 has not got (ModelCloud/GPTQModel#2403, unslothai/unsloth#8444,
  hiyouga/LlamaFactory#10310); trust_remote_code cannot help, which vllm PR #38099 (0.21) added to vLLM's message.
  Naming the base model's class again (or loading the base model's tokenizer) fixes it on either transformers.
- a LLaMA name in the casing of the first converted checkpoints (`LLaMATokenizer`, `LLamaTokenizer`,
  `CodeLLaMATokenizer`): transformers released the class as LlamaTokenizer, so those tokenizer_config.json files
  name a class that never shipped; editing the name fixes it (meta-llama/codellama#132, zsc/llama_infer#5).
- any other name: a tokenizer written in the model's repository (then trust_remote_code), or one added to
  transformers after the installed release (then a newer transformers within vLLM's requirement).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

MISSING_CLASS = re.compile(r"Tokenizer class (?P<name>[\w.]+) does not exist or is not currently imported")
BACKEND_CLASS = re.compile(r"^TokenizersBackend(?:Fast)?$")
# LLaMA's name as the first converted checkpoints spelled it, never a class transformers shipped.
OLD_LLAMA_CASING = re.compile(r"LLaMA|LLama")
LLAMA_CLASS = "LlamaTokenizer"
# Above VC-1's own words (0.97): vLLM's wrapper proposes trust_remote_code, which cannot load these two.
NAMED_CAUSE_CONFIDENCE = 0.98
# Below VC-1's wrapper: for another name, trust_remote_code (what the wrapper says) is one of the two causes.
OTHER_NAME_CONFIDENCE = 0.8
TRANSFORMERS_5_VLLM = "0.32"  # a release whose requirements take transformers 5 (>=5.16.1, <5.20)
CONFIG_FILE = "tokenizer_config.json"


def _missing_class(facts: Facts) -> tuple[LogEvent, str] | None:
    missing = c.first_match(facts, MISSING_CLASS)
    return (missing[0], missing[1]["name"]) if missing else None


def _check_tokenizer_class(facts: Facts) -> list[Finding]:
    missing = _missing_class(facts)
    if missing is None:
        return []
    event, name = missing
    if BACKEND_CLASS.match(name):
        return [_backend_finding(event, name)]
    if OLD_LLAMA_CASING.search(name):
        return [_llama_casing_finding(event, name)]
    return [_other_finding(event, name)]


def _evidence(event: LogEvent, name: str) -> list:
    return [c.log_evidence(event, name="tokenizer class transformers lacks", value=name)]


def _backend_finding(event: LogEvent, name: str) -> Finding:
    return RULE.finding(
        Severity.CRITICAL,
        f"The checkpoint's {CONFIG_FILE} names {name}, a class only transformers 5 has: the tokenizer was saved with "
        "transformers 5 and is loaded with transformers 4",
        summary="transformers 5's save_pretrained writes the tokenizer's class as TokenizersBackend, so a model saved "
        "by a training, merging or quantization tool running transformers 5 names a class the installed "
        "transformers 4 cannot find. The tokenizer files are the base model's; only the class name is new. "
        "--trust-remote-code, which vLLM's own message suggests, cannot load it.",
        evidence=_evidence(event, name),
        changes=[
            ConfigChange(
                flag="tokenizer_class",
                current=name,
                proposed="<the base model's class, e.g. Qwen2Tokenizer or LlamaTokenizerFast>",
                reason=f"in the checkpoint's {CONFIG_FILE}: the class the base model's own {CONFIG_FILE} names, "
                "which every transformers since that model's release loads",
                kind="setting",
            )
        ],
        alternatives=[
            ConfigChange(
                flag="--tokenizer",
                proposed="<the base model's repository or folder>",
                reason="the fine-tune keeps the base model's tokenizer; load that one instead of the saved copy",
            )
        ],
        actions=[
            f"Or run a vLLM made for transformers 5 (vLLM {TRANSFORMERS_5_VLLM} requires it) with that transformers; "
            "installing transformers 5 under an older vLLM breaks vLLM instead.",
            "Make the tool that saved the model write the base model's class (GPTQModel did so in PR #2403), or fix "
            f"{CONFIG_FILE} after each export.",
        ],
        confidence=NAMED_CAUSE_CONFIDENCE,
    )


def _llama_casing_finding(event: LogEvent, name: str) -> Finding:
    proposed = OLD_LLAMA_CASING.sub("Llama", name)
    proposed = LLAMA_CLASS if proposed.startswith("CodeLlama") else proposed
    return RULE.finding(
        Severity.CRITICAL,
        f"The checkpoint's {CONFIG_FILE} names {name}, LLaMA's class in the spelling of the first converted "
        f"checkpoints: transformers calls it {LLAMA_CLASS}",
        summary="The first LLaMA checkpoints converted for transformers were written before the class was "
        f"released as {LLAMA_CLASS}, and their {CONFIG_FILE} still names it in the old casing, which no "
        "transformers release has. Nothing is wrong with the tokenizer's files.",
        evidence=_evidence(event, name),
        changes=[
            ConfigChange(
                flag="tokenizer_class",
                current=name,
                proposed=proposed,
                reason=f"in the checkpoint's {CONFIG_FILE}: the name transformers released the class under",
                kind="setting",
            )
        ],
        actions=[
            "Or serve a checkpoint converted since (the model's maintained repository) whose files name the class "
            "transformers ships.",
        ],
        confidence=NAMED_CAUSE_CONFIDENCE,
    )


def _other_finding(event: LogEvent, name: str) -> Finding:
    return RULE.finding(
        Severity.HIGH,
        f"transformers has no tokenizer class {name}: the model's own tokenizer code, or a transformers older than "
        "the model",
        summary=f"AutoTokenizer looks up the class the checkpoint's {CONFIG_FILE} names. A class transformers lacks is "
        "either written in the model's repository (a tokenization_*.py beside the weights, named in the "
        "file's auto_map), which runs only when trusted, or one transformers added after the installed release.",
        evidence=_evidence(event, name),
        actions=[
            "If the model's repository holds a tokenization_*.py (or tokenizer_config.json's auto_map names one): "
            "pass --trust-remote-code, having read that code.",
            "Otherwise upgrade transformers within the range the installed vLLM requires (`pip show vllm` lists it), "
            "or upgrade vLLM with the transformers it requires, to a release that has the class.",
            f"A fine-tune's {CONFIG_FILE} may name a class its base model's does not: use the base model's name, "
            "or --tokenizer with the base model.",
        ],
        confidence=OTHER_NAME_CONFIDENCE,
    )


RULE = Rule(
    code="OP-7.119",
    title="transformers has no tokenizer class by the name the checkpoint gives",
    category=Category.STARTUP,
    check=_check_tokenizer_class,
    needs=("events",),
    page=RulePage(
        checks="transformers' `Tokenizer class X does not exist or is not currently imported.`, alone or under "
        "vLLM's `Failed to load the tokenizer …` (which suggests trust_remote_code for every class).",
        why="The name tells the cause: TokenizersBackend is a transformers 5 save loaded by transformers 4; LLaMA "
        "in old casing is a name transformers never released; others are remote code or a newer transformers.",
        example="`ValueError: Tokenizer class TokenizersBackend does not exist or is not currently imported.` for a "
        "Qwen3.5 fine-tune exported with transformers 5 (hiyouga/LlamaFactory#10310; vllm PR #38099).",
        fix="The base model's class in tokenizer_config.json (or --tokenizer with the base model); LlamaTokenizer for "
        "old LLaMA casing; --trust-remote-code or a newer transformers otherwise.",
        limits="Which class the base model names is not in the words: its own tokenizer_config.json says.",
        references=[
            "https://github.com/vllm-project/vllm/pull/38099",
            "https://github.com/ModelCloud/GPTQModel/pull/2403",
            "https://github.com/unslothai/unsloth/issues/8444",
            "https://github.com/hiyouga/LlamaFactory/issues/10310",
            "https://github.com/meta-llama/codellama/issues/132",
        ],
    ),
)

RULES: list[Rule] = [RULE]
