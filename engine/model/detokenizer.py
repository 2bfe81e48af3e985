"""Incremental detokenization with stop strings.

Each new token is decoded against a short window of the tokens before it (prompt tail
included), so that tokenizers which merge spaces or split UTF-8 characters across tokens
produce correct text deltas; a delta ending in U+FFFD waits for the next token. Stop strings
are searched only in the newly reachable region of the text, and the last
`max(len(stop)) - 1` characters are held back from streaming until the request finishes,
so a client never receives the beginning of a stop string that is later cut off.
"""

from __future__ import annotations

from engine.core.sampling_params import SamplingParams

PROMPT_CONTEXT_TOKENS = 5


class IncrementalDetokenizer:
    def __init__(self, tokenizer, prompt_token_ids: list[int], params: SamplingParams) -> None:
        self.tokenizer = tokenizer
        self.skip_special_tokens = params.skip_special_tokens
        self.stop = list(params.stop or [])
        self.include_stop = params.include_stop_str_in_output
        self.holdback = max((len(s) for s in self.stop), default=1) - 1
        self.tokens = list(prompt_token_ids[-PROMPT_CONTEXT_TOKENS:])
        self.prefix_offset = 0
        self.read_offset = len(self.tokens)
        self.text = ""
        self.sent_offset = 0

    def update(self, token_id: int, check_stop: bool) -> str | None:
        """Add one token's text; return the stop string that matched, if any (text is cut there)."""
        self.tokens.append(token_id)
        prefix_text = self._decode(self.tokens[self.prefix_offset : self.read_offset])
        full_text = self._decode(self.tokens[self.prefix_offset :])
        if len(full_text) <= len(prefix_text) or full_text.endswith("\ufffd"):
            return None
        old_len = len(self.text)
        self.text += full_text[len(prefix_text) :]
        self.prefix_offset = self.read_offset
        self.read_offset = len(self.tokens)
        if not (check_stop and self.stop):
            return None
        return self._find_stop(old_len)

    def take_delta(self, finished: bool) -> str:
        """Text not yet handed out, minus the hold-back while the request runs."""
        end = len(self.text) if finished else max(self.sent_offset, len(self.text) - self.holdback)
        delta = self.text[self.sent_offset : end]
        self.sent_offset = end
        return delta

    def _find_stop(self, old_len: int) -> str | None:
        best: tuple[int, str] | None = None
        for stop in self.stop:
            index = self.text.find(stop, max(0, old_len - len(stop) + 1))
            if index >= 0 and (best is None or index < best[0]):
                best = (index, stop)
        if best is None:
            return None
        index, stop = best
        self.text = self.text[: index + len(stop) if self.include_stop else index]
        self.sent_offset = min(self.sent_offset, len(self.text))
        return stop

    def _decode(self, token_ids: list[int]) -> str:
        return self.tokenizer.decode(token_ids, skip_special_tokens=self.skip_special_tokens)
