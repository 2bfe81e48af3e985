"""ModelRunner.weight_pass_s: the one-row pass over the weights the CPU thread policy is chosen from."""

import torch

from engine.model.runner import ModelRunner, load_hf_config
from tests.helpers.tiny_model import build_tiny_model


def test_the_weight_pass_times_every_linear_layer_with_the_counts_taking_turns(tmp_path, monkeypatch):
    model_dir = str(build_tiny_model(tmp_path / "tiny"))
    runner = ModelRunner(model_dir, load_hf_config(model_dir), torch.device("cpu"), torch.float32, 16, 128)
    called: list[tuple[tuple[int, ...], int]] = []
    import engine.model.llama as llama

    real_linear = llama.linear

    def counting_linear(x, weight, bias=None, packed=None):
        called.append((tuple(weight.shape), torch.get_num_threads()))
        return real_linear(x, weight, bias, packed)

    monkeypatch.setattr(llama, "linear", counting_linear)
    before = torch.get_num_threads()
    seconds = runner.weight_pass_s((1, 2), repeats=2)
    assert sorted(seconds) == [1, 2] and all(0 < s < 5 for s in seconds.values())
    assert torch.get_num_threads() == before
    # per layer qkv (4 query + 2 x 2 kv heads of 16), o, gate_up and down; two layers; one warm-up
    # round and two timed ones, each a pass on one thread and then a pass on two
    per_layer = [(128, 64), (64, 64), (256, 64), (64, 128)]
    one_round = [(shape, 1) for shape in per_layer * 2] + [(shape, 2) for shape in per_layer * 2]
    assert called == one_round * 3
