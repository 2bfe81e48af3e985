"""Workloads: what each request asks for, reproducible from (seed, step, arrival index).

Why keyed that way: request n of step k must be the same prompt whether one process or
eight generate the load, and whether the run is repeated tomorrow. Every request draws from
its own `random.Random(f"{seed}:{step}:{index}")` (string seeds hash deterministically).

Three kinds:
- `random`: prompts of random common words with input/output lengths drawn from a fixed,
  uniform or normal distribution. One word is about one token for Llama/GPT-style BPE
  vocabularies; pass a tokenizer to the stats, not here: input length is approximate,
  output length is forced with `max_tokens` + `min_tokens` + `ignore_eos` (vLLM extensions).
- `shared-prefix`: `groups` distinct prefixes of `prefix_len` words; a fraction `share` of
  requests starts with one of them (a prefix-cache workload). `unique_prefix_per_step`
  salts the prefixes with the step number so cached prefixes from one step cannot make the
  next step look faster than it is.
- `file`: prompts from a local JSONL file (`{"prompt": ...}` or `{"messages": [...]}`, an
  optional `"output_len"`) or a ShareGPT JSON file (`[{"conversations": [{"from": "human",
  "value": ...}, {"from": "gpt", ...}]}]`), picked by seeded index.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from loadtest.errors import LoadTestError

# Common English words that are single tokens in Llama, GPT-2 and Qwen vocabularies.
WORDS = (
    "the of and to in is was for on that with as by at from his her are were be this have "
    "not but had they which one you all their there been has when who will more no if out so "
    "said what up its about into than them can only other new some could time these two may "
    "then do first any my now such like our over man me even most made after also did many "
    "before must through back years where much your way well down should because each just "
    "those people how too little state good very make world still own see men work long get "
    "here between both life being under never day same another know while last might us great "
    "old year off come since against go came right used take three"
).split()

Distribution = Literal["fixed", "uniform", "normal"]


class LengthSpec(BaseModel):
    """A token-length distribution: fixed `mean`, uniform in [mean-spread, mean+spread], or normal(mean, spread)."""

    distribution: Distribution = "fixed"
    mean: int = Field(ge=1)
    spread: float = Field(default=0.0, ge=0)

    def draw(self, rng: random.Random) -> int:
        if self.distribution == "uniform":
            low, high = max(1, int(self.mean - self.spread)), int(self.mean + self.spread)
            return rng.randint(low, max(low, high))
        if self.distribution == "normal":
            return max(1, round(rng.gauss(self.mean, self.spread)))
        return self.mean


class WorkloadSpec(BaseModel):
    """Everything needed to build any request of the run; echoed in the result JSON."""

    kind: Literal["random", "shared-prefix", "file"] = "random"
    api: Literal["chat", "completions"] = "chat"
    input_len: LengthSpec = LengthSpec(mean=128)
    output_len: LengthSpec = LengthSpec(mean=64)
    force_output_len: bool = True
    prefix_len: int = Field(default=0, ge=0)
    groups: int = Field(default=1, ge=1)
    share: float = Field(default=1.0, ge=0, le=1)
    unique_prefix_per_step: bool = False
    path: str | None = None
    seed: int = 0
    temperature: float = 0.0


class RequestSpec(BaseModel):
    """One concrete request: the URL path and the JSON body (without `model`, added later)."""

    path: str
    body: dict


class Workload:
    """Builds request n of step k; file prompts are loaded once, at construction."""

    def __init__(self, spec: WorkloadSpec) -> None:
        self.spec = spec
        self._file_items: list[tuple[list[dict] | str, int | None]] = []
        if spec.kind == "file":
            self._file_items = load_prompt_file(spec.path)

    def request(self, step: int, index: int, model: str) -> RequestSpec:
        rng = random.Random(f"{self.spec.seed}:{step}:{index}")
        output_len = self.spec.output_len.draw(rng)
        if self.spec.kind == "file":
            prompt, file_output_len = self._file_items[rng.randrange(len(self._file_items))]
            output_len = file_output_len or output_len
        else:
            prompt = self._synthetic_prompt(rng, step)
        body: dict = {"model": model, "stream": True, "max_tokens": output_len,
                      "temperature": self.spec.temperature,
                      "stream_options": {"include_usage": True, "continuous_usage_stats": True}}
        if self.spec.force_output_len:
            body.update(min_tokens=output_len, ignore_eos=True)
        if self.spec.api == "chat":
            body["messages"] = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
            return RequestSpec(path="/v1/chat/completions", body=body)
        body["prompt"] = prompt if isinstance(prompt, str) else "\n".join(m.get("content", "") for m in prompt)
        return RequestSpec(path="/v1/completions", body=body)

    def _synthetic_prompt(self, rng: random.Random, step: int) -> str:
        input_len = self.spec.input_len.draw(rng)
        words: list[str] = []
        if self.spec.kind == "shared-prefix" and self.spec.prefix_len and rng.random() < self.spec.share:
            group = rng.randrange(self.spec.groups)
            salt = f"{self.spec.seed}:prefix:{group}" + (f":{step}" if self.spec.unique_prefix_per_step else "")
            prefix_rng = random.Random(salt)
            words = [prefix_rng.choice(WORDS) for _ in range(self.spec.prefix_len)]
        # A unique head on the suffix keeps two requests from sharing more than the prefix.
        words += [f"#{rng.randrange(10**6)}"] + [rng.choice(WORDS) for _ in range(max(0, input_len - 1))]
        return " ".join(words)


def load_prompt_file(path: str | None) -> list[tuple[list[dict] | str, int | None]]:
    """Prompts (text or chat messages) with an optional output length, from JSONL or ShareGPT JSON."""
    if not path:
        raise LoadTestError("--workload file needs --prompts PATH (a JSONL or ShareGPT JSON file)")
    file = Path(path)
    if not file.is_file():
        raise LoadTestError(f"--prompts {path!r}: no such file; pass a JSONL or ShareGPT JSON file")
    text = file.read_text(encoding="utf-8", errors="replace")
    items: list[tuple[list[dict] | str, int | None]] = []
    try:
        if text.lstrip().startswith("["):
            for entry in json.loads(text):
                item = _sharegpt_item(entry)
                if item:
                    items.append(item)
        else:
            for line in text.splitlines():
                if line.strip():
                    item = _jsonl_item(json.loads(line))
                    if item:
                        items.append(item)
    except (json.JSONDecodeError, TypeError, AttributeError) as exc:
        raise LoadTestError(f"--prompts {path!r}: not JSONL or ShareGPT JSON ({exc}); fix the file") from exc
    if not items:
        raise LoadTestError(f"--prompts {path!r}: no usable prompts (need 'prompt', 'messages' or 'conversations')")
    return items


def _jsonl_item(entry: dict) -> tuple[list[dict] | str, int | None] | None:
    output_len = entry.get("output_len") or entry.get("max_tokens")
    if isinstance(entry.get("messages"), list):
        return entry["messages"], output_len
    if isinstance(entry.get("prompt"), str):
        return entry["prompt"], output_len
    if isinstance(entry.get("conversations"), list):
        return _sharegpt_item(entry)
    return None


def _sharegpt_item(entry: dict) -> tuple[list[dict] | str, int | None] | None:
    turns = entry.get("conversations") or []
    human = next((t.get("value") for t in turns if t.get("from") in ("human", "user")), None)
    if not isinstance(human, str) or not human:
        return None
    reply = next((t.get("value") for t in turns if t.get("from") in ("gpt", "assistant")), None)
    output_len = max(1, len(reply.split())) if isinstance(reply, str) and reply else None
    return human, output_len
