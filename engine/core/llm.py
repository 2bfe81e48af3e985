"""Offline API, as vLLM's: `LLM(model=..., **engine_args).generate(prompts, SamplingParams(...))`.

`generate` takes the prompt forms vLLM's `LLM.generate` takes for a text-only model, so code
written for vLLM runs unchanged:

- a str, or `{"prompt": str}` (vLLM's TextPrompt): tokenized with the model's tokenizer;
- a list of token ids, or `{"prompt_token_ids": [...]}` (vLLM's TokensPrompt, which may also
  carry the matching text under "prompt"; the ids are used as given);
- a list of any of these, mixed (a non-empty list of ints is one prompt, as in vLLM).

`sampling_params` is None (defaults), one SamplingParams for all, or a sequence with one per
prompt; `use_tqdm` (keyword-only) is a bool or a tqdm-like factory. Every prompt is checked
before any reaches the engine: a malformed one raises TypeError/ValueError naming its index
and the form to pass instead, and keys a text-only engine cannot honour (multi_modal_data,
cache_salt, ...) are refused rather than silently dropped. All requests are queued at once
and the engine steps until every one has finished; results come back in prompt order as
RequestOutputs (text, token ids, per-request timing), whose `prompt` holds the text when one
was given and None for bare token ids, as vLLM. The offline default for
max_num_batched_tokens is 8192, as vLLM's `LLM`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

from tqdm import tqdm

from engine.core.config import EngineConfig
from engine.core.llm_engine import LLMEngine
from engine.core.outputs import RequestOutput
from engine.core.sampling_params import SamplingParams

OFFLINE_MAX_NUM_BATCHED_TOKENS = 8192
MAX_STEPS_PER_TOKEN = 64  # loop bound: generous, but a scheduling bug cannot spin forever
PROMPT_FORMS = "a str, a list of int token ids, {'prompt': str} or {'prompt_token_ids': list[int]}"


class TextPrompt(TypedDict):
    """vLLM's TextPrompt, text-only: the text to tokenize."""

    prompt: str


class _TokenIds(TypedDict):
    prompt_token_ids: list[int]


class TokensPrompt(_TokenIds, total=False):
    """vLLM's TokensPrompt, text-only: token ids used as given, plus their text if the caller has it."""

    prompt: str


PromptType = str | list[int] | TextPrompt | TokensPrompt


@dataclasses.dataclass(frozen=True)
class _Prompt:
    """One prompt resolved to what the engine needs: token ids, and the text RequestOutput.prompt echoes."""

    token_ids: list[int]
    text: str | None


def _as_batch(prompts: PromptType | Sequence[PromptType]) -> list[Any]:
    """vLLM's batching rule: a str, a dict or a non-empty list of ints is one prompt; other sequences are a batch.

    Deciding on the first element only (as vLLM does) keeps `[1, "x"]` one prompt, so its bad
    token is reported as such instead of as "prompt 0 is an int".
    """
    if isinstance(prompts, (str, Mapping)) or (isinstance(prompts, list) and prompts and isinstance(prompts[0], int)):
        return [prompts]
    if isinstance(prompts, (bytes, bytearray)) or not isinstance(prompts, Sequence):
        raise TypeError(f"prompts is a {type(prompts).__name__}; pass {PROMPT_FORMS}, or a list of them")
    return list(prompts)


def _check_token_ids(token_ids: object, index: int) -> list[int]:
    """A non-empty list of ints (bools refused: True is an int to Python, never a meant token id)."""
    if not isinstance(token_ids, (list, tuple)):
        raise TypeError(f"prompt {index}: token ids are a {type(token_ids).__name__}; pass a list of int token ids")
    if not token_ids:
        raise ValueError(f"prompt {index}: the list of token ids is empty; pass at least one token id, or a str")
    for position, token in enumerate(token_ids):
        if not isinstance(token, int) or isinstance(token, bool):
            raise TypeError(
                f"prompt {index}: token {position} is {token!r} ({type(token).__name__}); "
                f"pass int token ids, or the text as a str"
            )
    return list(token_ids)


def _check_dict(prompt: Mapping, index: int) -> str | None:
    """Refuse keys this engine cannot honour and a non-str text; returns the text, if any."""
    unknown = sorted(repr(key) for key in prompt if key not in ("prompt", "prompt_token_ids"))
    if unknown:
        raise ValueError(
            f"prompt {index}: key(s) {', '.join(unknown)} cannot be honoured by this text-only engine; "
            f"pass only 'prompt' (text) or 'prompt_token_ids' (token ids)"
        )
    if "prompt" not in prompt and "prompt_token_ids" not in prompt:
        raise ValueError(
            f"prompt {index}: the dict has neither 'prompt' nor 'prompt_token_ids'; "
            f"pass {{'prompt': str}} or {{'prompt_token_ids': list[int]}}"
        )
    text = prompt.get("prompt")
    if "prompt" in prompt and not isinstance(text, str):
        raise TypeError(
            f"prompt {index}: 'prompt' is a {type(text).__name__}; pass the text as a str, "
            f"or token ids under 'prompt_token_ids'"
        )
    return text


def _progress_bar(use_tqdm: bool | Callable[..., tqdm], total: int) -> tqdm:
    """vLLM's `use_tqdm`: True → a tqdm bar, False → a disabled one, a callable → the bar it builds."""
    kwargs: dict[str, Any] = {"total": total, "desc": "Processed prompts", "dynamic_ncols": True}
    return use_tqdm(**kwargs) if callable(use_tqdm) else tqdm(disable=not use_tqdm, **kwargs)


class LLM:
    def __init__(self, model: str = "", **engine_args) -> None:
        fields = {f.name for f in dataclasses.fields(EngineConfig)}
        unknown = sorted(set(engine_args) - fields)
        if unknown:
            raise TypeError(f"unknown engine argument(s): {', '.join(unknown)}; known: {', '.join(sorted(fields))}")
        engine_args.setdefault("max_num_batched_tokens", OFFLINE_MAX_NUM_BATCHED_TOKENS)
        self.llm_engine = LLMEngine(EngineConfig(model=model, **engine_args))
        self._next_id = 0

    def get_tokenizer(self):
        return self.llm_engine.tokenizer

    def generate(
        self,
        prompts: PromptType | Sequence[PromptType],
        sampling_params: SamplingParams | Sequence[SamplingParams | None] | None = None,
        *,
        use_tqdm: bool | Callable[..., tqdm] = True,
    ) -> list[RequestOutput]:
        """Generate for one prompt or a batch (forms in the module docstring); outputs in prompt order."""
        resolved = [self._resolve(prompt, index) for index, prompt in enumerate(_as_batch(prompts))]
        if isinstance(sampling_params, Sequence):
            params = list(sampling_params)
        else:
            params = [sampling_params] * len(resolved)
        if len(params) != len(resolved):
            raise ValueError(f"got {len(params)} SamplingParams for {len(resolved)} prompts; pass one or one each")
        ids = self._add_requests(resolved, params)
        return self._run(ids, {i: p.text for i, p in zip(ids, resolved, strict=True)}, use_tqdm)

    def chat(
        self, messages: list[dict], sampling_params: SamplingParams | None = None, use_tqdm: bool = False
    ) -> RequestOutput:
        tokenizer = self.llm_engine.tokenizer
        token_ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        if isinstance(token_ids, dict) or hasattr(token_ids, "keys"):
            token_ids = token_ids["input_ids"]
        return self.generate([list(token_ids)], sampling_params, use_tqdm=use_tqdm)[0]

    def _resolve(self, prompt: object, index: int) -> _Prompt:
        """One prompt in any accepted form → token ids and text, or a TypeError/ValueError naming `index`."""
        if isinstance(prompt, str):
            return _Prompt(self._tokenize(prompt), prompt)
        if isinstance(prompt, list):
            return _Prompt(_check_token_ids(prompt, index), None)
        if isinstance(prompt, Mapping):
            text = _check_dict(prompt, index)
            if "prompt_token_ids" in prompt:  # vLLM: the ids win; the text (if non-empty) is only echoed
                return _Prompt(_check_token_ids(prompt["prompt_token_ids"], index), text or None)
            return _Prompt(self._tokenize(text), text)
        raise TypeError(f"prompt {index} is a {type(prompt).__name__}; pass {PROMPT_FORMS}")

    def _tokenize(self, text: str) -> list[int]:
        return list(self.llm_engine.tokenizer(text)["input_ids"])

    def _add_requests(self, prompts: list[_Prompt], params: list[SamplingParams | None]) -> list[str]:
        """Queue every prompt; if the engine refuses one (too long, bad id), abort those already queued, as vLLM."""
        ids: list[str] = []
        try:
            for prompt, param in zip(prompts, params, strict=True):
                request_id = str(self._next_id)
                self._next_id += 1
                self.llm_engine.add_request(request_id, prompt.token_ids, param or SamplingParams())
                ids.append(request_id)
        except Exception:
            for request_id in ids:
                self.llm_engine.abort_request(request_id)
            raise
        return ids

    def _run(
        self, ids: list[str], texts: dict[str, str | None], use_tqdm: bool | Callable[..., tqdm]
    ) -> list[RequestOutput]:
        engine = self.llm_engine
        finished: dict[str, RequestOutput] = {}
        budget = sum(r.max_tokens + r.num_prompt_tokens for r in engine.requests.values()) * MAX_STEPS_PER_TOKEN
        bar = _progress_bar(use_tqdm, len(ids))
        start, output_tokens = time.monotonic(), 0
        try:
            for _ in range(max(budget, 1)):
                if not engine.has_unfinished_requests():
                    break
                for output in engine.step():
                    if output.finished and output.request_id in texts:  # not a leftover abort of an earlier call
                        output.prompt = texts[output.request_id]
                        finished[output.request_id] = output
                        output_tokens += len(output.output_token_ids)
                        bar.update(1)
                        bar.set_postfix_str(f"output: {output_tokens / max(time.monotonic() - start, 1e-9):.1f} toks/s")
            else:
                raise RuntimeError("the engine did not finish its requests within the step budget (a bug)")
        finally:
            bar.close()
        return [finished[i] for i in ids if i in finished]
