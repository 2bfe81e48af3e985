"""Workloads are reproducible from (seed, step, index) and force the output length."""

import json

import pytest

from loadtest.errors import LoadTestError
from loadtest.workload import LengthSpec, Workload, WorkloadSpec


def test_same_seed_step_and_index_give_the_same_request():
    spec = WorkloadSpec(input_len=LengthSpec(distribution="uniform", mean=50, spread=20), seed=7)
    assert Workload(spec).request(2, 5, "m") == Workload(spec).request(2, 5, "m")
    assert Workload(spec).request(2, 5, "m") != Workload(spec).request(2, 6, "m")


def test_output_length_is_forced_with_min_tokens_and_ignore_eos():
    body = Workload(WorkloadSpec(output_len=LengthSpec(mean=33))).request(0, 0, "m").body
    assert body["max_tokens"] == body["min_tokens"] == 33 and body["ignore_eos"] is True
    assert body["stream"] is True and body["stream_options"]["include_usage"] is True


def test_input_length_follows_the_distribution_in_words():
    spec = WorkloadSpec(input_len=LengthSpec(distribution="normal", mean=100, spread=10))
    lengths = [len(Workload(spec).request(0, i, "m").body["messages"][0]["content"].split()) for i in range(200)]
    assert 95 < sum(lengths) / len(lengths) < 105
    assert len(set(lengths)) > 5


def test_completions_api_sends_a_prompt_string():
    req = Workload(WorkloadSpec(api="completions")).request(0, 0, "m")
    assert req.path == "/v1/completions" and isinstance(req.body["prompt"], str)


def _prefix(content: str, words: int) -> str:
    return " ".join(content.split()[:words])


def test_shared_prefix_groups_repeat_and_unique_per_step_changes_them():
    spec = WorkloadSpec(kind="shared-prefix", prefix_len=20, groups=2, share=1.0, input_len=LengthSpec(mean=5))
    prompts = [Workload(spec).request(0, i, "m").body["messages"][0]["content"] for i in range(40)]
    assert len({_prefix(p, 20) for p in prompts}) == 2
    salted = spec.model_copy(update={"unique_prefix_per_step": True})
    step0 = {_prefix(Workload(salted).request(0, i, "m").body["messages"][0]["content"], 20) for i in range(40)}
    step1 = {_prefix(Workload(salted).request(1, i, "m").body["messages"][0]["content"], 20) for i in range(40)}
    assert len(step0) == 2 and not step0 & step1


def test_share_zero_sends_no_prefix():
    spec = WorkloadSpec(kind="shared-prefix", prefix_len=20, groups=1, share=0.0, input_len=LengthSpec(mean=5))
    prompts = [Workload(spec).request(0, i, "m").body["messages"][0]["content"] for i in range(10)]
    assert all(len(p.split()) == 5 for p in prompts)


def test_jsonl_and_sharegpt_files_give_prompts_and_output_lengths(tmp_path):
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text(json.dumps({"prompt": "hello there", "output_len": 9}) + "\n")
    body = Workload(WorkloadSpec(kind="file", path=str(jsonl))).request(0, 0, "m").body
    assert body["messages"][0]["content"] == "hello there" and body["max_tokens"] == 9
    share = tmp_path / "sharegpt.json"
    share.write_text(
        json.dumps(
            [{"conversations": [{"from": "human", "value": "why?"}, {"from": "gpt", "value": "because of this"}]}]
        )
    )
    body = Workload(WorkloadSpec(kind="file", path=str(share))).request(0, 0, "m").body
    assert body["messages"][0]["content"] == "why?" and body["max_tokens"] == 3


def test_missing_or_unusable_prompt_file_is_a_user_error(tmp_path):
    with pytest.raises(LoadTestError, match="no such file"):
        Workload(WorkloadSpec(kind="file", path=str(tmp_path / "nope.jsonl")))
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    with pytest.raises(LoadTestError, match="bad.jsonl"):
        Workload(WorkloadSpec(kind="file", path=str(bad)))
