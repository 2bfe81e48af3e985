"""OP-7.21, OP-7.24 and OP-7.111: a checkpoint this vLLM release cannot load — a tensor its code for the model has
no parameter for, a GGUF file it does not recognise as one (read as a config.json), and a GGUF file without a
metadata field transformers' GGUF reader looks up.

OP-7.21: the checkpoint holds a tensor the vLLM release's code for the model has no parameter for.

Why a rule of its own: vLLM loads a checkpoint by looking each tensor's name up among the model's parameters
(`param = params_dict[name]` in every model's `load_weights`), so a tensor it has no parameter for ends the start
in a bare `KeyError: 'layers.35.mlp.gate.g_idx'`, with no word about why. The name says it: a layer path and
a suffix that belongs to a quantization format (GPTQ's `g_idx` act-order index, its `qweight`/`qzeros`/`scales`,
FP8's `weight_scale`, compressed-tensors' `weight_packed` …). The checkpoint was quantized in a layout this
release's implementation of the model does not load (a quantized MoE router gate in vllm#25029, fixed by a later
release's loader, vllm PR #28663): upgrade vLLM, or serve a checkpoint in a layout this release loads.
"""

from __future__ import annotations

import re

from rules import vllm_defaults
from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Evidence, Finding, Rule, RulePage, Severity

# A checkpoint tensor's name as a KeyError prints it: dotted, ending in a name; or as vLLM's collective_rpc relays a
# worker's KeyError by its text alone (`Exception: Call to collective_rpc method failed: 'visual.patch_embed.proj.
# weight'`, alibaba/ROLL#240: a rollout's weights from a newer transformers than its vLLM 0.8.4 knew)
_TENSOR = re.compile(
    r"^(?:KeyError: |Exception: Call to collective_rpc method failed: )"
    r"['\"](?P<name>(?:[\w-]+\.)+(?P<suffix>[A-Za-z_]\w*))(?:['\"]|$)"  # its closing quote lost where a paste was cut
)
# The suffixes each quantization format writes beside (or instead of) a weight; a suffix in none is a plain weight.
FORMAT_OF_SUFFIX: dict[str, str] = {
    "g_idx": "GPTQ (its act-order group index)",
    "qweight": "GPTQ or AWQ (the packed integer weight)",
    "qzeros": "GPTQ or AWQ (the packed zero points)",
    "scales": "GPTQ or AWQ (the group scales)",
    "weight_scale": "FP8 or compressed-tensors (the weight's scale)",
    "weight_scale_inv": "block-wise FP8 (the weight's inverse scale)",
    "input_scale": "FP8 (the activation scale)",
    # Mistral's FP8 checkpoints name the activation scale so; vLLM's FP8 layers call it input_scale, and only model code
    # that renames it (mistral3.py) loads it: Devstral-2's on LlamaForCausalLM did not (vllm PR #41982, May 2026)
    "activation_scale": "Mistral-format FP8 (the activation scale, which vLLM's FP8 layers call input_scale)",
    # an FP8 KV cache's scales, which quantizers (ModelOpt, llm-compressor) write on the attention's projection or
    # its attention module; a release whose model code does not map them to its attention layer has no parameter for
    # them (vllm#15784: ModelOpt's `qkv_proj.k_scale` on 0.7.3)
    "k_scale": "FP8 KV cache (the key cache's scale)",
    "v_scale": "FP8 KV cache (the value cache's scale)",
    "kv_scale": "FP8 KV cache (its scale)",
    "q_scale": "FP8 attention (the query's scale)",
    "weight_packed": "compressed-tensors (the packed integer weight)",
    "weight_zero_point": "compressed-tensors (the zero points)",
    "SCB": "bitsandbytes int8 (its scale)",
    "weight_format": "bitsandbytes int8 (its weight layout)",
    # bitsandbytes 4-bit writes each weight's quantization state beside it (Params4bit's QuantState.as_dict, packed):
    # its block scales, their own nested quantization, and the state's packed fields
    "absmax": "bitsandbytes 4-bit (its block scales)",
    "quant_map": "bitsandbytes 4-bit (its quantization map)",
    "bitsandbytes__nf4": "bitsandbytes 4-bit (its packed NF4 state)",
    "bitsandbytes__fp4": "bitsandbytes 4-bit (its packed FP4 state)",
    # Huawei's msModelSlim W8A8 for Ascend NPUs writes these beside each quantized weight (its
    # quant_model_description.json lists them per layer: vllm-ascend#633); only vllm-ascend's quantization loads them
    # SmoothQuant-style methods (OmniQuant, as LightCompress exports it: ModelTC/LightCompress#256) fold a smoothing
    # scale into the weights before a checkpoint is served; one saved beside them (`fc1_smooth_scale`) was not folded
    "smooth_scale": "SmoothQuant-style smoothing (a scale the export did not fold into the weights)",
    "deq_scale": "Ascend msModelSlim W8A8 (its dequantization scale)",
    "quant_bias": "Ascend msModelSlim W8A8 (its quantization bias)",
    "input_offset": "Ascend msModelSlim W8A8 (the activation offset)",
    "weight_offset": "Ascend msModelSlim W8A8 (the weight offset)",
}
# The suffixes no unquantized layer has, with the --quantization value that builds the layers they load into: GPTQ's
# and AWQ's packed integers (the method from the model's name, else the checkpoint's config says), and msModelSlim's
# W8A8 tensors, which vllm-ascend loads with `--quantization ascend` (its Quantization Guide, vLLM Ascend 0.9-0.11).
QUANTIZED_ONLY: dict[str, str | None] = {
    "qweight": None,
    "qzeros": None,
    "scales": None,
    "g_idx": None,
    "deq_scale": "ascend",
    "quant_bias": "ascend",
    "input_offset": "ascend",
    "weight_offset": "ascend",
}
# The suffixes only bitsandbytes writes: such a checkpoint loads through vLLM's bitsandbytes loader alone.
BITSANDBYTES_SUFFIXES = frozenset(
    {"SCB", "weight_format", "absmax", "quant_map", "bitsandbytes__nf4", "bitsandbytes__fp4"}
)
_MODEL_FILE = re.compile(r"model_executor/models/(?P<model>\w+)\.py$")
# The attention and MLP projections every layer of a model has, under their common names: a GPTQ or AWQ tensor on
# one of them means the whole model was built unquantized (its quantization not detected), not one layer left out.
_PLAIN_LINEAR = re.compile(
    r"\.(?:qkv_proj|wqkv|query_key_value|c_attn|[qkvo]_proj|wo|out_proj|dense|gate_up_proj|gate_proj|up_proj|"
    r"down_proj|w[123]|fc[12]|c_fc|c_proj|dense_h_to_4h|dense_4h_to_h)$"
)
_FORMAT_IN_NAME = re.compile(r"(?i)(?:^|[-_./])(awq|gptq)(?:$|[-_./])")


# A layer's index inside a dotted name (`model.layers.0.`, `transformer.h.11.`): a model's parameter, whatever frame
# raised it.
_LAYER_INDEX = re.compile(r"\.\d+\.")
# PEFT's own names in a checkpoint saved from a PeftModel without merging: its wrapper's prefix (`base_model.model.`),
# a LoRA layer's wrapped original (`base_layer`, PEFT 0.7 on) and its adapter matrices (`lora_A`, `lora_B`)
_PEFT_NAME = re.compile(r"^base_model\.model\.|\.base_layer\.|\.lora_[AB]\.")
# vLLM's own name for a fused-MoE layer's parameter (FusedMoE.make_expert_params_mapping: each expert's gate and up
# projections load into `experts.w13_…`, its down projection into `experts.w2_…`): the loader made the name, not
# the checkpoint
_FUSED_EXPERT = re.compile(r"\.experts\.w(?:13|2|1|3)_\w+$")


def unloadable_tensor(event: LogEvent) -> re.Match[str] | None:
    """The tensor name of an unplaced KeyError raised while loading weights (VC-2 leaves such an error to OP-7.21):
    raised in `load_weights`, or, for an error line pasted without its frames, a name only a model's parameter has
    (a layer index, and a weight's or a quantization format's suffix)."""
    if event.kind != LogEventKind.UNPLACED_ERROR:
        return None
    match = _TENSOR.match(event.message or "")
    if match is None:
        return None
    loading = event.function == "load_weights" or "params_dict[" in (event.code or "")
    bare = event.function is None and not event.code
    # a model's parameter: a weight or bias (a top-level one has no layer index: `transformer.lm_head.weight`,
    # vllm#508), or a quantization format's tensor in a layer
    in_layer = _LAYER_INDEX.search(match["name"]) is not None
    parameter = match["suffix"] in ("weight", "bias") or (
        in_layer and (format_of_suffix(match["suffix"]) is not None or _FUSED_EXPERT.search(match["name"]) is not None)
    )
    peft = _PEFT_NAME.search(match["name"]) is not None
    return match if loading or (bare and (parameter or peft)) else None


def _tensor_kind(quantized: str | None, plain: str) -> str:
    """How a title names the tensor: by its format's short name (`a block-wise FP8 tensor`), else `plain`."""
    if not quantized:
        return plain
    format_name = quantized.split(" (")[0]
    return f"{_article(format_name)} {format_name} tensor"


def _article(name: str) -> str:
    """`an` before a vowel's sound: a word's vowel, or an initialism read letter by letter (an FP8, an NVFP4)."""
    initialism = name.split()[0].split("-")[0].isupper()
    return "an" if name[0] in "AEIOU" or (initialism and name[0] in "FHLMNRSX") else "a"


def format_of_suffix(suffix: str) -> str | None:
    """The quantization format a tensor's suffix belongs to, a fused MoE expert's included (`w2_weight_scale_inv`,
    `w13_qweight`: the format's suffix after the expert projection's name); None for a plain weight."""
    for known, format_name in FORMAT_OF_SUFFIX.items():
        if suffix == known or suffix.endswith("_" + known):
            return format_name
    return None


# The warning some model loaders give instead of the KeyError (qwen3_next.py, qwen3_5.py and its MTP head, 0.13-0.24)
SKIPPED_TENSOR = "Parameter {name} not found in params_dict, skip loading"


def _skipped_tensor(facts: Facts) -> Finding | None:
    """The first tensor a loader skipped with a warning: the start goes on, the layer runs without the tensor."""
    for event in facts.events_of(LogEventKind.VLLM_MESSAGE):
        ref = event.catalog
        name = ref.captured.get("name") if ref is not None and ref.template == SKIPPED_TENSOR else None
        if not name:
            continue
        suffix = name.rsplit(".", 1)[-1]
        quantized = format_of_suffix(suffix)
        if quantized is None and name.startswith(_VISION_TOWER):
            return _vision_skipped(event, name)
        return RULE_UNLOADABLE_TENSOR.finding(
            Severity.HIGH if quantized else Severity.MEDIUM,
            f"vLLM skipped the checkpoint's {name}, {_tensor_kind(quantized, 'a tensor')} its code for the model "
            "has no parameter for: the layer runs without it",
            summary="This model's loader skips a checkpoint tensor it has no parameter for, with this warning, where "
            "other models' loaders stop at a KeyError; the start goes on. "
            + (
                f"The suffix {suffix} belongs to {quantized}: the checkpoint's quantization is not the layout this "
                "release builds for the model, so the layers load without their quantization data; expect the load "
                "to fail further on or the outputs to be wrong."
                if quantized
                else "The checkpoint's layer names are not the ones this release expects for the model."
            ),
            evidence=[_tensor_evidence(event, name, "the tensor the model's loader skipped", suffix, quantized)],
            actions=[
                f"Upgrade vLLM, or {_OTHER_LAYOUT}",
                "Count the warnings: a few skipped names of one kind point at one layer type the release does not "
                "map; nearly every tensor skipped means the checkpoint was saved under another model class's names.",
            ],
            confidence=0.7,
        )
    return None


# The prefixes of a multimodal checkpoint's vision tower: its loader skips them on purpose when the model is built
# for text only (a language-model-only launch), so a skip of one is expected there, and a cause only otherwise.
_VISION_TOWER = ("visual.", "vision_tower.", "vision_model.", "model.visual.", "model.vision_tower.")


def _vision_skipped(event: LogEvent, name: str) -> Finding:
    """A vision tower's weight skipped: intended for a text-only build, a layout the release does not expect else."""
    evidence = c.log_evidence(event, name="checkpoint_tensor", value=name)
    evidence.description = "a vision tower's weight the model's loader skipped"
    return RULE_UNLOADABLE_TENSOR.finding(
        Severity.LOW,
        f"vLLM skipped the checkpoint's vision-tower weight {name}: intended when the model is built for text only",
        summary="This model's loader skips a checkpoint tensor it has no parameter for, with this warning. A vision "
        "tower's weights are skipped on purpose when the model is built without its vision encoder; if the launch "
        "meant to serve images, the checkpoint's vision layer names are not the ones this release expects.",
        evidence=[evidence],
        actions=[
            "Nothing to do for a text-only launch. If images were meant to be served, compare the checkpoint's "
            "vision tensor names with those the release's model code loads (a checkpoint saved by a training "
            "framework under another model class renames them), or upgrade vLLM.",
        ],
        confidence=0.6,
    )


# The remedy every reading of an unloadable tensor ends with, whatever the release can or cannot do.
_OTHER_LAYOUT = (
    "serve a checkpoint of the model in a layout this release loads (the model's official quantization, or one made "
    "with the quantization tool vLLM documents for it)."
)


_NO_PARAMETER = "the tensor name the weight loader found no parameter for"


def _tensor_evidence(event: LogEvent, name: str, what: str, suffix: str, quantized: str | None) -> Evidence:
    """The tensor's name as evidence, described as `what` and, for a quantization format's suffix, by that format."""
    evidence = c.log_evidence(event, name="checkpoint_tensor", value=name)
    evidence.description = what + (f": its suffix {suffix} is {quantized}" if quantized else "")
    return evidence


def _check_unloadable_tensor(facts: Facts) -> list[Finding]:
    for event in facts.events_of(LogEventKind.UNPLACED_ERROR):
        match = unloadable_tensor(event)
        if match is None:
            continue
        name, suffix = match["name"], match["suffix"]
        if _PEFT_NAME.search(name):
            return [_unmerged_peft(event, name)]
        if _built_unquantized(facts, name, suffix):
            return [_undetected_quantization(facts, event, name, suffix)]
        if _bitsandbytes_suffix(suffix) and _load_format(facts) != "bitsandbytes":
            return [_bitsandbytes_default_loader(facts, event, name, suffix)]
        if _FUSED_EXPERT.search(name):
            return [_fused_expert_missing(facts, event, name, suffix)]
        quantized = format_of_suffix(suffix)
        model = _MODEL_FILE.search((event.code_file or "").replace("\\", "/"))
        code = f"vLLM's {model['model']} code" if model else "this vLLM's code for the model"
        kind = _tensor_kind(quantized, "a tensor")
        evidence = _tensor_evidence(event, name, _NO_PARAMETER, suffix, quantized)
        return [
            RULE_UNLOADABLE_TENSOR.finding(
                Severity.CRITICAL,
                f"the checkpoint holds {name}, {kind} {code} has no parameter for",
                summary=f"vLLM loads a checkpoint by finding each tensor's parameter in the model ({code}, "
                "load_weights); a tensor with none ends the start in a KeyError. "
                + (
                    f"The suffix {suffix} belongs to {quantized}: the checkpoint was quantized in a layout this "
                    "release's implementation of the model does not load (a quantized layer it expects unquantized, "
                    "such as an MoE router gate)."
                    if quantized
                    else "The checkpoint's layout (its layer names) is not the one this release's implementation "
                    "of the model expects."
                ),
                evidence=[evidence],
                actions=[
                    "Upgrade vLLM: model loaders gain checkpoint layouts release by release (vllm#25029's quantized "
                    "Qwen3-MoE router gate loads from the release with PR #28663).",
                    f"Or {_OTHER_LAYOUT}",
                ],
                confidence=0.8,
            )
        ]
    skipped = _skipped_tensor(facts)  # the warning some loaders give instead: read only when no KeyError was
    return [skipped] if skipped is not None else []


def _fused_expert_missing(facts: Facts, event: LogEvent, name: str, suffix: str) -> Finding:
    """A fused-MoE parameter name is vLLM's own mapping of the checkpoint's per-expert tensors: the layer vLLM built
    (its quantization method and MoE backend create the parameters) lacks one the loader maps to."""
    quantized = format_of_suffix(suffix)
    kind = _tensor_kind(quantized, "a weight")
    forced = facts.config.flags.get("--moe-backend") if facts.config else None
    evidence = c.log_evidence(event, name="fused_expert_parameter", value=name)
    evidence.description = "a fused-MoE parameter name vLLM's loader mapped the checkpoint's experts to"
    changes = (
        [
            ConfigChange(
                flag="--moe-backend",
                current=forced,
                proposed="",
                reason="the forced backend built the experts without this parameter; vLLM's own choice fits the "
                "checkpoint's quantization",
            )
        ]
        if forced
        else []
    )
    return RULE_UNLOADABLE_TENSOR.finding(
        Severity.CRITICAL,
        f"vLLM mapped the checkpoint's experts to {name}, {kind} the fused-MoE layer it built has no parameter for: "
        "the layer's quantization method or MoE backend and the model's loader disagree",
        summary="A checkpoint stores each expert's projections apart (experts.0.gate_proj.weight …); vLLM's loader "
        "maps them onto the fused-MoE layer's parameters (w13_ for gate and up, w2_ for down), which the layer's "
        "quantization method and MoE backend create. This name is vLLM's, so the checkpoint's layout is not the "
        "question: the backend or quantization path chosen made no such parameter (vllm#43454: the DeepGEMM "
        "mega-MoE backend has no NVFP4 expert scales), or the model's code moved its experts (vllm PR #44953: "
        "Qwen3.5 with expert parallelism keeps them under routed_experts).",
        evidence=[evidence],
        changes=changes,
        actions=[
            "If --moe-backend is forced, drop it so vLLM picks a backend that supports the checkpoint's "
            "quantization (vllm#43454).",
            "Otherwise narrow it by removing what changes the experts' layout (--enable-expert-parallel, an MTP "
            "or EAGLE draft sharing the layers), then upgrade vLLM or report it with the model and flags: a loader "
            "and an MoE layer that disagree is vLLM's bug, fixed in the model's code (vllm PR #44953).",
        ],
        confidence=0.75,
    )


def _unmerged_peft(event: LogEvent, name: str) -> Finding:
    """A tensor named by PEFT's wrapper: the checkpoint is a PeftModel's state saved without merging its adapter."""
    evidence = c.log_evidence(event, name="checkpoint_tensor", value=name)
    evidence.description = "a tensor named by PEFT's wrapper (base_model.model., base_layer, lora_A/lora_B)"
    return RULE_UNLOADABLE_TENSOR.finding(
        Severity.CRITICAL,
        f"the checkpoint holds {name}, a name PEFT gives: it was saved from a model with its LoRA adapter unmerged",
        summary="PEFT wraps the model it fine-tunes: the whole model sits under `base_model.model.`, each adapted "
        "layer keeps its original weight as `base_layer` beside the adapter's `lora_A` and `lora_B`. Saving that "
        "wrapper's state as a full model writes those names, which no model's loader in vLLM has a parameter for.",
        evidence=[evidence],
        actions=[
            "Merge the adapter into the base model and save that: `merged = peft_model.merge_and_unload(); "
            "merged.save_pretrained(dir)` (and the tokenizer), then serve `dir`.",
            "Or keep them apart: save the adapter alone (the PeftModel's `save_pretrained` writes adapter_config.json "
            "and its weights) and serve the base model with `--enable-lora --lora-modules <name>=<adapter dir>`.",
        ],
        confidence=0.85,
    )


def _built_unquantized(facts: Facts, name: str, suffix: str) -> bool:
    """A GPTQ/AWQ (or msModelSlim W8A8) tensor of a layer's ordinary projection, with no --quantization on the
    command line."""
    layer = name[: -len(suffix) - 1]
    told = facts.config is not None and facts.config.quantization
    plain = bool(_PLAIN_LINEAR.search(layer)) and ".experts." not in layer  # MoE experts load through their own
    return suffix in QUANTIZED_ONLY and plain and not told


def _undetected_quantization(facts: Facts, event: LogEvent, name: str, suffix: str) -> Finding:
    """vLLM creates a quantization's parameters (qweight, qzeros, scales; msModelSlim's deq_scale …) only for a
    quantization it knows of: none was detected."""
    evidence = _tensor_evidence(event, name, _NO_PARAMETER, suffix, FORMAT_OF_SUFFIX[suffix])
    if QUANTIZED_ONLY[suffix] == "ascend":
        return _undetected_ascend(name, evidence)
    model = (facts.config.model if facts.config else None) or ""
    named = _FORMAT_IN_NAME.search(model.rsplit("/", 1)[-1])
    method = named[1].lower() if named else None
    return RULE_UNLOADABLE_TENSOR.finding(
        Severity.CRITICAL,
        f"the checkpoint is GPTQ- or AWQ-quantized ({name}) but vLLM built the model unquantized: the checkpoint's "
        "quantization was not detected",
        summary="vLLM gives a layer qweight, qzeros and scales parameters only when it knows the checkpoint's "
        "quantization, from the quantization_config of its config.json (where this release reads it for the "
        "model: a multimodal model nests its language model's config) or from --quantization. Here a layer's "
        "ordinary projection has no qweight parameter, so the whole model was built in 16 bits and the "
        "checkpoint's packed integer weights have nowhere to go.",
        evidence=[evidence],
        changes=[
            ConfigChange(
                flag="--quantization",
                current=None,
                proposed=method or "<awq or gptq: the checkpoint's quantize_config.json or quantization_config says>",
                reason="tells vLLM the checkpoint's quantization, so it builds the quantized layers its tensors load "
                "into" + (f" (the model's name says {method.upper()})" if method else ""),
            )
        ],
        actions=[
            "Check the checkpoint's config.json for its quantization_config (quant_method awq or gptq) and its "
            "quantize_config.json: a config that does not declare it where vLLM reads it is why it was missed.",
            "If vLLM then refuses the method for this model, upgrade vLLM: loaders gain quantized layouts release "
            "by release.",
        ],
        confidence=0.85,
    )


def _bitsandbytes_suffix(suffix: str) -> bool:
    return any(suffix == known or suffix.endswith("_" + known) for known in BITSANDBYTES_SUFFIXES)


def _load_format(facts: Facts) -> str | None:
    return (facts.config.flags.get("--load-format") or "").lower() or None if facts.config is not None else None


def _bitsandbytes_default_loader(facts: Facts, event: LogEvent, name: str, suffix: str) -> Finding:
    """A bitsandbytes tensor (4-bit's absmax, quant_map and packed state; int8's SCB) met by the default loader:
    only vLLM's bitsandbytes loader knows them, and which launch selects it depends on the release
    (vllm_defaults.BNB_*)."""
    release = c.vllm_release(facts)
    evidence = _tensor_evidence(event, name, _NO_PARAMETER, suffix, format_of_suffix(suffix) or "bitsandbytes'")
    by_config = release is not None and release >= vllm_defaults.BNB_CHECKPOINT_SETS_LOADER_FROM
    changes = [
        ConfigChange(
            flag="--quantization",
            current=facts.config.quantization if facts.config else None,
            proposed="bitsandbytes",
            reason="builds the layers a bitsandbytes checkpoint's tensors load into; from vLLM 0.8.2 it also "
            "selects the bitsandbytes loader",
        ),
        ConfigChange(
            flag="--load-format",
            current=_load_format(facts),
            proposed="bitsandbytes",
            reason="the loader that reads bitsandbytes' quantization state (absmax, quant_map, SCB); vLLM 0.5 to "
            "0.8.1 refuse --quantization bitsandbytes without it",
        ),
    ]
    return RULE_UNLOADABLE_TENSOR.finding(
        Severity.CRITICAL,
        f"the checkpoint is bitsandbytes-quantized ({name}) but vLLM read it with its default loader: serve it "
        "with --quantization bitsandbytes --load-format bitsandbytes",
        summary="bitsandbytes writes its quantization state beside each weight (4-bit: absmax, quant_map and a "
        "packed state; int8: SCB). Only vLLM's bitsandbytes loader reads those tensors; the default loader looks "
        "each one up among the model's parameters and stops at the first. Before vLLM 0.8.4 a pre-quantized "
        "checkpoint's own quantization_config never chose that loader: the launch had to ask for it"
        + (
            "; this release chooses it from the checkpoint's config.json, so here the checkpoint's "
            "quantization_config is missing or not where vLLM reads it."
            if by_config
            else "."
        ),
        evidence=[evidence],
        changes=changes,
        actions=[
            "From vLLM 0.8.4 a checkpoint whose config.json declares quant_method bitsandbytes is loaded that way "
            "without flags (EngineArgs.create_load_config); before it, give both flags (0.8.2 and 0.8.3 need only "
            "--quantization bitsandbytes).",
            "Install bitsandbytes in the server's environment: the loader imports it (0.8 asks for 0.45.3 or later).",
            "If the launch already loaded with bitsandbytes, this release's loader does not map this model's layers: "
            "upgrade vLLM, or serve the model's 16-bit checkpoint.",
        ],
        confidence=0.85,
    )


def _undetected_ascend(name: str, evidence) -> Finding:
    """msModelSlim's W8A8 tensors load only into vllm-ascend's quantized layers, built with `--quantization ascend`."""
    return RULE_UNLOADABLE_TENSOR.finding(
        Severity.CRITICAL,
        f"the checkpoint is W8A8-quantized by Ascend's msModelSlim ({name}) but the model was built unquantized: "
        "serve it with vllm-ascend's quantization (--quantization ascend)",
        summary="msModelSlim writes a deq_scale, quant_bias, input_offset and weight_offset beside each quantized "
        "weight (its quant_model_description.json lists them); only vllm-ascend's quantization method, selected "
        "with --quantization ascend (its Quantization Guide), gives a layer parameters for them. Built without "
        "it, a layer's ordinary projection has none, and the first such tensor ends the load in a KeyError.",
        evidence=[evidence],
        changes=[
            ConfigChange(
                flag="--quantization",
                current=None,
                proposed="ascend",
                reason="vllm-ascend then builds the W8A8 layers the checkpoint's tensors load into",
            )
        ],
        actions=[
            "Serve on an Ascend NPU with vllm-ascend installed (the release made for the installed vLLM): no other "
            "platform loads msModelSlim's W8A8 format.",
            "Keep msModelSlim's quant_model_description.json beside the weights: vllm-ascend reads each tensor's "
            "quantization type from it.",
            "If the launch already had --quantization ascend, this layer was not matched to its entry in "
            "quant_model_description.json: compare the entry's name with the layer's, and upgrade vllm-ascend.",
        ],
        confidence=0.8,
    )


RULE_UNLOADABLE_TENSOR = Rule(
    code="OP-7.21",
    title="the checkpoint holds a tensor this vLLM's code for the model has no parameter for",
    category=Category.STARTUP,
    check=_check_unloadable_tensor,
    needs=("events",),
    page=RulePage(
        checks="A `KeyError` naming a dotted tensor name (`layers.35.mlp.gate.g_idx`) raised in a model's "
        "`load_weights` (or at its `params_dict[name]` line), or pasted without its frames when the name has a "
        "layer index and a weight's or a quantization format's suffix (`experts.w2_weight_scale_inv`); V0's "
        "engine line that prints the KeyError's key alone, quoted, is the same error; a name PEFT gives "
        "(`base_model.model.…`, `….base_layer.weight`, `lora_A`/`lora_B`) is a fine-tuned model saved with its "
        "adapter unmerged (merge it, or serve it as a LoRA adapter); a fused-MoE parameter (`experts.w13_weight`, "
        "`experts.w13_input_scale`) is vLLM's own name for the experts, so the MoE layer it built (its quantization "
        "method, a forced --moe-backend) lacks the parameter.",
        why="The weight loader looks each checkpoint tensor up among the model's parameters; a bare KeyError is "
        "all it says, while the name's suffix tells the quantization format the checkpoint was written in.",
        example="KeyError: 'layers.35.mlp.gate.g_idx' in qwen3_moe.py load_weights: a GPTQ int4 Qwen3-30B-A3B on "
        "vLLM 0.10.2 (vllm#25029, fixed by PR #28663).",
        fix="Upgrade vLLM, or a checkpoint in a layout this release loads; a GPTQ, AWQ or msModelSlim W8A8 tensor on "
        "an ordinary projection with no --quantization: the method that builds its layers (awq, gptq, ascend); a "
        "bitsandbytes tensor (absmax, quant_map, SCB) read by the default loader: --quantization bitsandbytes "
        "--load-format bitsandbytes (the checkpoint's own config chooses that loader only from vLLM 0.8.4).",
        limits="Where a model's loader skips the tensor with `Parameter X not found in params_dict, skip loading` "
        "(Qwen3-Next, Qwen3.5, 0.13-0.24) the finding is a warning: high for a quantization tensor, medium for a "
        "plain weight, low for a vision tower's (skipped on purpose by a text-only build). Reads the KeyError's own "
        "name only; a KeyError elsewhere (a request id, a config key, a layer's buffer such as "
        "`rotary_emb.inv_freq` pasted alone) is VC-2's.",
        references=[
            "https://github.com/vllm-project/vllm/issues/25029",
            "https://github.com/vllm-project/vllm-ascend/issues/633",
            "https://github.com/vllm-project/vllm/issues/11010",
            "https://docs.vllm.ai/projects/ascend/en/v0.11.0/user_guide/feature_guide/quantization.html",
        ],
    ),
)

# --- OP-7.24 a GGUF file read as a model's config ------------------------------------------------------------------

# The first release whose loader recognises a .gguf model file: 0.5.4's wheel holds no GGUF code, 0.5.5's
# transformers_utils/config.py and model_loader/loader.py read it (advisor/catalog/vllm_messages.json, 0.5 minor).
GGUF_FROM = "0.5.5"


def _check_gguf_as_config(facts: Facts) -> list[Finding]:
    event = facts.first_event(LogEventKind.GGUF_READ_AS_CONFIG)
    if event is None:
        return []
    name = (event.message or "").replace("\\", "/").rsplit("/", 1)[-1]
    return [
        RULE_GGUF_AS_CONFIG.finding(
            Severity.CRITICAL,
            f"the GGUF file {name} was read as a model's config.json: this vLLM does not recognise GGUF",
            summary=f"A vLLM that loads GGUF (from {GGUF_FROM}) sees the .gguf suffix and reads the file's own "
            "metadata; one that does not hands the path to transformers as a config file, which is not JSON.",
            evidence=[c.log_evidence(event, name="GGUF file read as config", value=event.message)],
            actions=[
                f"Upgrade vLLM to {GGUF_FROM} or later (its GGUF loader), and pass the .gguf file itself as the "
                "model, with --tokenizer set to the original model's repository (GGUF tokenizers convert slowly).",
                "Or serve the model's original (safetensors) checkpoint on this release.",
            ],
            confidence=0.85,
        )
    ]


RULE_GGUF_AS_CONFIG = Rule(
    code="OP-7.24",
    title="a GGUF file read as a model's config: a vLLM without GGUF support",
    category=Category.STARTUP,
    check=_check_gguf_as_config,
    needs=("events",),
    page=RulePage(
        checks="transformers' `It looks like the config file at '<path>.gguf' is not a valid JSON file.`",
        why="Only a vLLM with a GGUF loader recognises a .gguf model; an older one passes it to transformers as "
        "a config file.",
        example="`OSError: It looks like the config file at '…/tinyllama-1.1b-chat-v1.0.Q4_0.gguf' is not a valid "
        "JSON file.` on vLLM 0.5.4 (vllm#7291: GGUF support came after it).",
        fix=f"Upgrade vLLM ({GGUF_FROM} or later), or serve the original checkpoint.",
        limits="A .gguf path in the config error is the only signal; GGUF's own loading errors are VC-1's.",
        references=["https://github.com/vllm-project/vllm/issues/7291"],
    ),
)


def _check_gguf_metadata(facts: Facts) -> list[Finding]:
    """A metadata key transformers' GGUF reader looks up and the file lacks: vLLM reads a GGUF's config and
    tokenizer through transformers' load_gguf_checkpoint, which indexes the file's fields by name (vllm#14723)."""
    event = facts.first_event(LogEventKind.GGUF_METADATA_MISSING)
    if event is None:
        return []
    key = event.message or "a metadata key"
    return [
        RULE_GGUF_METADATA.finding(
            Severity.CRITICAL,
            f"the GGUF file lacks the metadata key {key} that transformers' GGUF reader looks up",
            summary="vLLM reads a GGUF model's config and tokenizer through transformers (load_gguf_checkpoint), "
            f"which looks each metadata field up by name; this file has no {key}, so loading stops at a bare "
            "KeyError. Some converters leave optional fields out; in vllm#14723 a vLLM maintainer reproduced it "
            "with a Gemma 3 GGUF without general.name and called it a transformers bug.",
            evidence=[c.log_evidence(event, name="missing GGUF key", value=key)],
            actions=[
                "Write the key into a copy of the file: gguf-py's `gguf_new_metadata.py` (llama.cpp's gguf-py) "
                "adds fields, `--general-name NAME` for general.name; or use a GGUF of the model from another "
                "converter, or the original checkpoint.",
                "Or upgrade transformers to a release whose GGUF reader tolerates the missing field, within the "
                "range the installed vLLM accepts.",
            ],
            confidence=0.75,
        )
    ]


RULE_GGUF_METADATA = Rule(
    code="OP-7.111",
    title="a GGUF file without a metadata key transformers' GGUF reader looks up",
    category=Category.STARTUP,
    check=_check_gguf_metadata,
    needs=("events",),
    page=RulePage(
        checks="A bare `KeyError` on a GGUF metadata key (`general.…`, `tokenizer.ggml.…`).",
        why="The words name no file and no cause; the key's namespace says it is a GGUF's metadata, read through "
        "transformers.",
        example="`KeyError: 'general.name'` loading a Gemma 3 GGUF in vLLM 0.8 (vllm#14723).",
        fix="Add the field to the file (gguf_new_metadata.py), another GGUF, or a transformers that tolerates it.",
        limits="Which file and which converter are not in the words.",
        references=["https://github.com/vllm-project/vllm/issues/14723"],
    ),
)

RULES: list[Rule] = [RULE_UNLOADABLE_TENSOR, RULE_GGUF_AS_CONFIG, RULE_GGUF_METADATA]
