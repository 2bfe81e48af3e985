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
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

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
WorkloadKind = Literal["random", "shared-prefix", "file"]
Api = Literal["chat", "completions"]
# The lists the CLI offers are the Literals' own values, never a second spelling of them.
DISTRIBUTIONS: tuple[str, ...] = get_args(Distribution)
WORKLOAD_KINDS: tuple[str, ...] = get_args(WorkloadKind)
APIS: tuple[str, ...] = get_args(Api)
LENGTH_FORMS = "N, uniform:MEAN:SPREAD or normal:MEAN:STD"

# Fields that mean something for one workload kind only (the CLI refuses them with another kind).
KIND_ONLY_FIELDS: dict[str, str] = {
    "prefix_len": "shared-prefix",
    "groups": "shared-prefix",
    "share": "shared-prefix",
    "unique_prefix_per_step": "shared-prefix",
    "path": "file",
}


class LengthSpec(BaseModel):
    """A token-length distribution: fixed `mean`, uniform in [mean-spread, mean+spread], or normal(mean, spread)."""

    model_config = ConfigDict(allow_inf_nan=False)

    distribution: Distribution = "fixed"
    mean: int = Field(ge=1)
    spread: float = Field(default=0.0, ge=0)

    @model_validator(mode="after")
    def _uniform_stays_at_one_or_more(self) -> LengthSpec:
        # Why refused, not clamped: a uniform draw below 1 would be raised to 1, so the lengths
        # would pile up at 1 and their mean would no longer be `mean`.
        if self.distribution == "uniform" and self.mean - self.spread < 1:
            raise ValueError(
                f"a uniform spread of {self.spread:g} around {self.mean} would draw lengths below 1; "
                f"lower the spread to at most {self.mean - 1}"
            )
        return self

    @property
    def text(self) -> str:
        """The command-line form: N, uniform:MEAN:SPREAD or normal:MEAN:STD."""
        return str(self.mean) if self.distribution == "fixed" else f"{self.distribution}:{self.mean}:{self.spread:g}"

    @staticmethod
    def fields_from_text(text: str) -> dict[str, Any]:
        """The fields of a length given as N, uniform:MEAN:SPREAD or normal:MEAN:STD (bounds are the model's)."""
        parts = text.split(":")
        try:
            if len(parts) == 1:
                return {"distribution": "fixed", "mean": int(parts[0])}
            if len(parts) == 3 and parts[0] in ("uniform", "normal"):
                return {"distribution": parts[0], "mean": int(parts[1]), "spread": float(parts[2])}
        except ValueError:
            pass
        raise ValueError(f"expected {LENGTH_FORMS}, e.g. uniform:128:64")

    def draw(self, rng: random.Random) -> int:
        if self.distribution == "uniform":
            low, high = max(1, int(self.mean - self.spread)), int(self.mean + self.spread)
            return rng.randint(low, max(low, high))
        if self.distribution == "normal":
            return max(1, round(rng.gauss(self.mean, self.spread)))
        return self.mean


class WorkloadSpec(BaseModel):
    """Everything needed to build any request of the run; echoed in the result JSON.

    The field defaults are the ramp's workload defaults (`servops ramp --help` shows them):
    see loadtest/config.py, of which this model is the `workload` part.
    """

    model_config = ConfigDict(allow_inf_nan=False)

    kind: WorkloadKind = Field(
        default="random", description="random prompts, shared-prefix groups, or prompts from a file"
    )
    api: Api = Field(default="chat", description="/v1/chat/completions or /v1/completions")
    input_len: LengthSpec = Field(
        default=LengthSpec(mean=128), description=f"prompt length in words (~tokens): {LENGTH_FORMS}"
    )
    output_len: LengthSpec = Field(default=LengthSpec(mean=64), description=f"output tokens: {LENGTH_FORMS}")
    force_output_len: bool = Field(
        default=True,
        description="send min_tokens and ignore_eos (vLLM extensions) "
        "so every response is exactly the output length; off: the model may stop early",
    )
    prefix_len: int = Field(
        default=256,
        ge=0,
        description="shared-prefix: prefix length in words; the other kinds send no shared prefix and record 0",
    )
    groups: int = Field(default=4, ge=1, description="shared-prefix: distinct prefixes")
    share: float = Field(
        default=1.0, ge=0, le=1, description="shared-prefix: fraction of requests that start with a prefix"
    )
    unique_prefix_per_step: bool = Field(
        default=False,
        description="shared-prefix: new prefixes every step, so caching cannot carry over from one step to the next",
    )
    path: str | None = Field(
        default=None, description="file: JSONL ({'prompt'|'messages', 'output_len'}) or ShareGPT JSON"
    )
    seed: int = Field(default=0, description="seed for prompts and Poisson arrivals")
    temperature: float = 0.0

    @field_validator("prefix_len")
    @classmethod
    def _prefix_only_for_shared_prefix(cls, value: int, info: ValidationInfo) -> int:
        """Runs only for a prefix_len that was given: with another kind it would be ignored, so say so."""
        kind = info.data.get("kind")
        if value and kind is not None and kind != "shared-prefix":
            raise ValueError(
                f"a prefix of {value} words is sent only by the shared-prefix workload, not {kind!r}; "
                "pass kind='shared-prefix' or leave prefix_len out"
            )
        return value

    @model_validator(mode="after")
    def _no_prefix_outside_shared_prefix(self) -> WorkloadSpec:
        # The echo (and the performance model reading it) must not claim a prefix that no request carried.
        if self.kind != "shared-prefix":
            self.prefix_len = 0
        return self


class RequestSpec(BaseModel):
    """One concrete request: the URL path and the JSON body (without `model`, added later)."""

    path: str
    body: dict


class Workload:
    """Builds request n of step k; file prompts are loaded once, at construction."""

    def __init__(self, spec: WorkloadSpec) -> None:
        self.spec = spec
        self._file_items: list[tuple[list[dict] | str, int | None]] = []
        self._prefixes: dict[str, list[str]] = {}
        if spec.kind == "file":
            self._file_items = load_prompt_file(spec.path)

    def prompt(self, step: int, index: int) -> tuple[list[dict] | str, int]:
        """The prompt (text, or chat messages from a file) and the output length of request n of step k.

        The one place a request's draws are made: `request` sends them, and the performance model
        (advisor/perf/workload.py) replays these very prompts, so a new kind is replayed as sent.
        """
        rng = random.Random(f"{self.spec.seed}:{step}:{index}")
        output_len = self.spec.output_len.draw(rng)
        if self.spec.kind == "file":
            prompt, file_output_len = self._file_items[rng.randrange(len(self._file_items))]
            return prompt, file_output_len or output_len
        return self._synthetic_prompt(rng, step), output_len

    def request(self, step: int, index: int, model: str) -> RequestSpec:
        prompt, output_len = self.prompt(step, index)
        body: dict = {
            "model": model,
            "stream": True,
            "max_tokens": output_len,
            "temperature": self.spec.temperature,
            "stream_options": {"include_usage": True, "continuous_usage_stats": True},
        }
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
            if salt not in self._prefixes:  # drawn once per group (and step): hundreds of words per request otherwise
                prefix_rng = random.Random(salt)
                self._prefixes[salt] = [prefix_rng.choice(WORDS) for _ in range(self.spec.prefix_len)]
            words = list(self._prefixes[salt])
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
