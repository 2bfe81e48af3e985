"""The replay sends what the load generator sent: lengths, output tokens and shared prefixes, for every kind.

Why per kind from `WORKLOAD_KINDS`: the replay asks `loadtest.workload.Workload.prompt` for each
request instead of copying its draws, so a kind added to the Literal is replayed as sent with no
change in advisor/perf. These tests hold that for every kind there is, today's and future ones.
"""

from __future__ import annotations

import itertools

import pytest

from advisor.perf.workload import ReplayWorkload
from loadtest.results import Percentiles
from loadtest.workload import WORKLOAD_KINDS, LengthSpec, Workload, WorkloadSpec

# `file` prompts are replayed from the ramp's measured prompt quantiles, not the file (tested below).
SYNTHETIC = [kind for kind in WORKLOAD_KINDS if kind != "file"]
STEPS, REQUESTS = 2, 12


def _spec(kind: str, **fields) -> WorkloadSpec:
    lengths = dict(
        input_len=LengthSpec(distribution="uniform", mean=40, spread=20),
        output_len=LengthSpec(distribution="normal", mean=16, spread=4),
        seed=11,
    )
    return WorkloadSpec(kind=kind, **{**lengths, **fields})


def _sent_words(spec: WorkloadSpec, step: int, index: int) -> tuple[list[str], int]:
    prompt, output = Workload(spec).prompt(step, index)
    assert isinstance(prompt, str)
    return prompt.split(), output


def _common_prefix(a, b) -> int:
    return sum(1 for _ in itertools.takewhile(lambda pair: pair[0] == pair[1], zip(a, b, strict=False)))


CASES = [(kind, {}) for kind in SYNTHETIC] + [
    ("shared-prefix", {"unique_prefix_per_step": True, "groups": 2, "share": 0.6}),
]


@pytest.mark.parametrize(("kind", "extra"), CASES, ids=[kind + ("-salted" if extra else "") for kind, extra in CASES])
def test_every_request_has_the_lengths_and_the_shared_prefix_the_generator_sent(kind, extra):
    spec = _spec(kind, **extra)
    replay = ReplayWorkload(spec=spec)
    keys = [(step, index) for step in range(STEPS) for index in range(REQUESTS)]
    sent = {key: _sent_words(spec, *key) for key in keys}
    shapes = {key: replay.request(*key) for key in keys}
    for key in keys:
        words, output = sent[key]
        assert (len(shapes[key].prompt_ids), shapes[key].output_tokens) == (len(words), output), key
    for a, b in itertools.combinations(keys, 2):  # what two prompts share is what the prefix cache can reuse
        assert _common_prefix(shapes[a].prompt_ids, shapes[b].prompt_ids) == _common_prefix(sent[a][0], sent[b][0])


def test_shared_prefix_requests_of_one_group_share_exactly_the_prefix():
    replay = ReplayWorkload(spec=_spec("shared-prefix", prefix_len=24, groups=1, share=1.0))
    first, second = replay.request(0, 0).prompt_ids, replay.request(0, 1).prompt_ids
    assert _common_prefix(first, second) == 24


def test_template_tokens_open_every_prompt_and_are_shared():
    replay = ReplayWorkload(spec=_spec("random"), template_tokens=5)
    words, _ = _sent_words(replay.spec, 0, 3)
    shape = replay.request(0, 3)
    assert len(shape.prompt_ids) == 5 + len(words)
    assert _common_prefix(shape.prompt_ids, replay.request(1, 7).prompt_ids) == 5


def test_file_prompts_come_from_the_measured_quantiles_without_the_file():
    spec = WorkloadSpec(kind="file", path="/nonexistent/prompts.jsonl")
    replay = ReplayWorkload(spec=spec, prompt_quantiles=Percentiles(p50=100, p90=150, p95=170, p99=200))
    lengths = [len(replay.request(0, i).prompt_ids) for i in range(50)]
    assert 50 <= min(lengths) and max(lengths) <= 200
