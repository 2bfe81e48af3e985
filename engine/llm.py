"""Offline API, as vLLM's: `LLM(model=..., **engine_args).generate(prompts, SamplingParams(...))`.

Prompts can be strings (tokenized with the model's tokenizer) or lists of token ids. All
requests are queued at once and the engine steps until every one has finished; results
come back in prompt order as RequestOutputs (text, token ids, per-request timing), with a
tqdm progress bar. The offline default for max_num_batched_tokens is 8192, as vLLM's `LLM`.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Sequence

from tqdm import tqdm

from engine.config import EngineConfig
from engine.llm_engine import LLMEngine
from engine.outputs import RequestOutput
from engine.sampling_params import SamplingParams

OFFLINE_MAX_NUM_BATCHED_TOKENS = 8192
MAX_STEPS_PER_TOKEN = 64  # loop bound: generous, but a scheduling bug cannot spin forever


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
        prompts: str | Sequence[str] | Sequence[list[int]],
        sampling_params: SamplingParams | Sequence[SamplingParams] | None = None,
        use_tqdm: bool = True,
    ) -> list[RequestOutput]:
        if isinstance(prompts, str) or (prompts and isinstance(prompts[0], int)):
            prompts = [prompts]  # type: ignore[list-item]
        params = sampling_params if isinstance(sampling_params, (list, tuple)) else [sampling_params] * len(prompts)
        if len(params) != len(prompts):
            raise ValueError(f"got {len(params)} SamplingParams for {len(prompts)} prompts; pass one or one each")
        engine = self.llm_engine
        ids, texts = [], {}
        for prompt, param in zip(prompts, params):
            request_id = str(self._next_id)
            self._next_id += 1
            if isinstance(prompt, str):
                token_ids = engine.tokenizer(prompt)["input_ids"]
                texts[request_id] = prompt
            else:
                token_ids = list(prompt)
            engine.add_request(request_id, token_ids, param or SamplingParams())
            ids.append(request_id)
        return self._run(ids, texts, use_tqdm)

    def chat(self, messages: list[dict], sampling_params: SamplingParams | None = None,
             use_tqdm: bool = False) -> RequestOutput:
        tokenizer = self.llm_engine.tokenizer
        token_ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        if isinstance(token_ids, dict) or hasattr(token_ids, "keys"):
            token_ids = token_ids["input_ids"]
        return self.generate([list(token_ids)], sampling_params, use_tqdm)[0]

    def _run(self, ids: list[str], texts: dict[str, str], use_tqdm: bool) -> list[RequestOutput]:
        engine = self.llm_engine
        finished: dict[str, RequestOutput] = {}
        budget = sum(r.max_tokens + r.num_prompt_tokens for r in engine.requests.values()) * MAX_STEPS_PER_TOKEN
        bar = tqdm(total=len(ids), desc="Processed prompts", disable=not use_tqdm, dynamic_ncols=True)
        start, output_tokens = time.monotonic(), 0
        try:
            for _ in range(max(budget, 1)):
                if not engine.has_unfinished_requests():
                    break
                for output in engine.step():
                    if output.finished:
                        output.prompt = texts.get(output.request_id)
                        finished[output.request_id] = output
                        output_tokens += len(output.output_token_ids)
                        bar.update(1)
                        bar.set_postfix_str(f"output: {output_tokens / max(time.monotonic() - start, 1e-9):.1f} toks/s")
            else:
                raise RuntimeError("the engine did not finish its requests within the step budget (a bug)")
        finally:
            bar.close()
        return [finished[i] for i in ids if i in finished]
