"""OP-7.65: a call vLLM's own code (or its plugin's) makes with arguments the function does not take."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_own_calls
from rules.evaluate import evaluate
from rules.events import LogEventKind as K
from rules.facts import Facts


def _facts(text: str) -> Facts:
    return Facts(events=parse_lines(text.strip("\n").splitlines()).events)


# vLLM PR #22757's own paste of vllm#22774 (a source checkout of main, August 2025): the call is made in the MoE
# layer and passes through torch's module dispatch before Python refuses it.
W1_BIAS = """
(EngineCore_1 pid=2453091)   File "/data/vllm-community-homes/vllm-user-6/vllm/vllm/model_executor/layers/fused_moe/layer.py", line 478, in forward_cuda
(EngineCore_1 pid=2453091)     return self.fused_experts(
(EngineCore_1 pid=2453091)            ^^^^^^^^^^^^^^^^^^^
(EngineCore_1 pid=2453091)   File "/data/vllm-community-homes/vllm-user-6/.venv/lib/python3.12/site-packages/torch/nn/modules/module.py", line 1751, in _wrapped_call_impl
(EngineCore_1 pid=2453091)     return self._call_impl(*args, **kwargs)
(EngineCore_1 pid=2453091)            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
(EngineCore_1 pid=2453091)   File "/data/vllm-community-homes/vllm-user-6/.venv/lib/python3.12/site-packages/torch/nn/modules/module.py", line 1762, in _call_impl
(EngineCore_1 pid=2453091)     return forward_call(*args, **kwargs)
(EngineCore_1 pid=2453091)            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
(EngineCore_1 pid=2453091) TypeError: FusedMoEModularKernel.forward() got an unexpected keyword argument 'w1_bias'
"""  # noqa: E501


def test_a_call_between_two_of_vllms_files_is_a_build_between_a_change_and_its_fix():
    facts = _facts(W1_BIAS)
    [event] = facts.events_of(K.UNPLACED_ERROR)
    assert event.call_site is not None and event.call_site.endswith("fused_moe/layer.py:478 in forward_cuda")
    assert event.component == "fused MoE (expert) layer"
    top = evaluate(facts).findings[0]
    assert top.rule == "OP-7.65"
    assert top.title.startswith("vLLM's own code calls FusedMoEModularKernel.forward() with arguments it does not")
    assert "layer.py:478 in forward_cuda (its fused MoE (expert) layer)" in top.summary
    assert "No flag, request or model causes that" in top.summary
    assert top.actions[0].startswith("See which vLLM is imported")
    assert any("newer one, or the latest release" in action for action in top.actions)
    assert not top.changes  # nothing to change in the launch
    assert "VC-2" not in [f.rule for f in evaluate(facts).findings]  # the line is explained


def test_too_many_positional_arguments_on_main_is_read_the_same_way():
    # vllm#3282: main after PR #3005, fixed by PR #3286
    facts = _facts(
        """
File "/root/python/github.com/vllm/vllm/model_executor/layers/attention/backends/flash_attn.py", line 100, in forward
    output = PagedAttentionImpl.forward_prefix(
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
TypeError: PagedAttentionImpl.forward_prefix() takes 7 positional arguments but 9 were given
"""
    )
    [finding] = op7_own_calls.RULE_OWN_CALL.evaluate(facts)
    assert "PagedAttentionImpl.forward_prefix()" in finding.title
    assert "flash_attn.py:100 in forward (its attention backend)" in finding.summary


def test_a_plugins_frame_making_the_call_names_the_plugin_release():
    # vllm-project/vllm-gaudi PR #181 quotes the refusal (a plugin adapted to a vLLM newer than the one installed);
    # the frame above it is written here in the plugin's layout, as its traceback would show it
    facts = _facts(
        """
File "/usr/local/lib/python3.10/dist-packages/vllm_gaudi/v1/worker/hpu_model_runner.py", line 1066, in _update_states
    self.requests[req_id] = CachedRequestState(
TypeError: CachedRequestState.__init__() got an unexpected keyword argument 'mm_features'
"""
    )
    [finding] = op7_own_calls.RULE_OWN_CALL.evaluate(facts)
    assert finding.title.startswith("vllm_gaudi and vLLM call each other with arguments the other does not take")
    assert finding.actions[0].startswith("Install the vllm_gaudi release made for the installed vLLM")


def test_an_active_platform_plugin_adds_its_release_to_the_actions():
    facts = _facts("INFO 09-16 10:00:00 [__init__.py:220] Platform plugin ascend is activated\n" + W1_BIAS)
    [finding] = op7_own_calls.RULE_OWN_CALL.evaluate(facts)
    assert finding.title.startswith("vLLM's own code calls")  # the call itself is still vLLM's
    assert finding.actions[0].startswith("Install the ascend platform plugin release made for the installed vLLM")


def test_calls_into_other_packages_callers_outside_vllm_and_bare_lines_are_not_its_own():
    into_transformers = _facts(
        """
File "/venv/lib/python3.10/site-packages/vllm/model_executor/models/llama.py", line 20, in forward
    hidden = self.model(x)
File "/venv/lib/python3.10/site-packages/transformers/models/llama/modeling_llama.py", line 300, in forward
    cos, sin = self.rotary_emb(value_states, seq_len=kv_seq_len)
TypeError: LlamaRotaryEmbedding.forward() got an unexpected keyword argument 'seq_len'
"""
    )
    called_by_trl = _facts(
        """
File "/venv/lib/python3.10/site-packages/trl/scripts/vllm_serve.py", line 50, in main
    llm = LLM(model=args.model, worker_extension_cls=ext)
File "/venv/lib/python3.10/site-packages/vllm/entrypoints/llm.py", line 180, in __init__
    engine_args = EngineArgs(
TypeError: EngineArgs.__init__() got an unexpected keyword argument 'worker_extension_cls'
"""
    )
    bare = _facts("TypeError: FusedMoEModularKernel.forward() got an unexpected keyword argument 'w1_bias'")
    own_project_folder = _facts(
        """
File "/home/me/vllm/serve_batch.py", line 12, in main
    llm = LLM(model="m", tensor_parallel=2)
TypeError: LLM.__init__() got an unexpected keyword argument 'tensor_parallel'
"""
    )
    for facts in (into_transformers, called_by_trl, bare, own_project_folder):
        assert op7_own_calls.RULE_OWN_CALL.evaluate(facts) == []
