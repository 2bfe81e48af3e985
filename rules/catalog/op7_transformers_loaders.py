"""OP-7.133, OP-7.134 and OP-7.150: transformers cannot read or build a part of the model vLLM asked it for.

Why rules of their own: vLLM reads a model's configuration and processors through transformers, so two of
transformers' refusals stop vLLM before any of its own checks run, and both name the model, not a setting:
- `ValueError: Architecture chatglm not supported` is transformers' GGUF reader (modeling_gguf_pytorch_utils.py)
  meeting an architecture it has no mapping for; vLLM loads a GGUF's configuration through it (a commenter in
  huggingface/transformers#32577 hit it serving a chatglm4 GGUF with vLLM). vLLM 0.8 and later take the original
  model's configuration instead (--hf-config-path, in EngineArgs from 0.8 in the catalog's table).
- `Unrecognized image processor in <model>. Should have a `image_processor_type` key in its preprocessor_config.json
  of config.json, …` is AutoImageProcessor finding neither a processor class in preprocessor_config.json nor a
  model_type it maps: a fine-tune saved without the base model's preprocessor_config.json, or a transformers older
  than the model (tulerfeng/Video-R1#55: a Qwen2.5-VL fine-tune on vLLM 0.9.0).
- `Glm4vProcessor.__init__() got multiple values for argument 'tokenizer'` is vLLM building a model's processor
  with arguments the installed transformers' processor class takes otherwise: processors' signatures change
  between transformers releases, and each vLLM release passes them as the transformers it was made with expects
  (zai-org/GLM-V#8: vLLM 0.9.2 with transformers 4.53.0, the pair made together, served it).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

GGUF_ARCHITECTURE = re.compile(r"Architecture (?P<arch>[\w.-]+) not supported")
IMAGE_PROCESSOR = re.compile(r"Unrecognized image processor in (?P<model>\S+?)\. Should have a `image_processor_type`")


def _gguf_architecture_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE_GGUF.finding(
        Severity.CRITICAL,
        f"transformers' GGUF reader does not support the file's architecture ({match['arch']}): vLLM reads a "
        "GGUF's configuration through it",
        summary="The GGUF holds the weights and its own metadata; transformers maps that metadata to a "
        "configuration only for the architectures it lists, and vLLM starts from that configuration.",
        evidence=[c.log_evidence(event, name="the GGUF's architecture", value=match["arch"])],
        actions=[
            "Give vLLM the original model's configuration and tokenizer beside the GGUF: `--hf-config-path "
            "<original repo> --tokenizer <original repo>` (vLLM 0.8 and later).",
            "Or upgrade transformers to a release whose GGUF support lists the architecture, or serve the "
            "original (non-GGUF) checkpoint, quantized another way if memory needs it.",
        ],
        confidence=0.75,
    )


def _image_processor_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE_IMAGE_PROCESSOR.finding(
        Severity.CRITICAL,
        f"transformers cannot tell which image processor {match['model']} uses: its preprocessor_config.json "
        "names none, or the installed transformers does not know its model_type",
        summary="vLLM builds a multimodal model's processor through transformers' AutoImageProcessor, which "
        "needs image_processor_type in preprocessor_config.json or a model_type it maps to one.",
        evidence=[c.log_evidence(event, name="the model whose processor is unknown", value=match["model"])],
        actions=[
            "Check the model directory holds the base model's preprocessor_config.json (a fine-tune is often "
            "saved without it): copy it from the base model (for a Qwen2.5-VL fine-tune, Qwen2.5-VL's).",
            "Then the transformers version the model card names: a model newer than the installed transformers "
            "has a model_type it does not map (`pip install -U transformers` within what vLLM's release allows).",
        ],
        confidence=0.7,
    )


RULE_GGUF = Rule(
    code="OP-7.133",
    title="a GGUF architecture transformers' GGUF reader does not support",
    category=Category.STARTUP,
    check=c.on_phrase(GGUF_ARCHITECTURE, _gguf_architecture_finding),
    needs=("events",),
    page=RulePage(
        checks="transformers' `ValueError: Architecture <arch> not supported` (its GGUF reader).",
        why="vLLM reads a GGUF's configuration through transformers, which maps only the architectures it lists.",
        example="A chatglm4 GGUF served with vLLM (a commenter in huggingface/transformers#32577).",
        fix="--hf-config-path and --tokenizer naming the original model (vLLM 0.8+); a newer transformers; the "
        "original checkpoint.",
        limits="The words are transformers'; another library raising the same words would read the same.",
        references=["https://github.com/huggingface/transformers/issues/32577"],
    ),
)

RULE_IMAGE_PROCESSOR = Rule(
    code="OP-7.134",
    title="an image processor transformers cannot identify",
    category=Category.STARTUP,
    check=c.on_phrase(IMAGE_PROCESSOR, _image_processor_finding),
    needs=("events",),
    page=RulePage(
        checks="transformers' `Unrecognized image processor in <model>. Should have a `image_processor_type` key in "
        "its preprocessor_config.json …`.",
        why="Neither the model's preprocessor_config.json nor its model_type tells transformers which processor to "
        "build, so vLLM cannot prepare images for it.",
        example="A Qwen2.5-VL fine-tune (Video-R1-7B) on vLLM 0.9.0 (tulerfeng/Video-R1#55).",
        fix="The base model's preprocessor_config.json in the model directory; the transformers the model card names.",
        limits="Which of the two is missing is not in the message; the model directory says.",
        references=["https://github.com/tulerfeng/Video-R1/issues/55"],
    ),
)

PROCESSOR_SIGNATURE = re.compile(
    r"(?P<cls>\w+(?:Processor|ProcessorFast|FeatureExtractor))\.__init__\(\) "
    r"(?P<what>got multiple values for argument|got an unexpected keyword argument|missing \d+ required positional "
    r"arguments?:) '(?P<arg>\w+)'"
)


def _processor_signature_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE_PROCESSOR_SIGNATURE.finding(
        Severity.CRITICAL,
        f"transformers' {match['cls']} takes '{match['arg']}' otherwise than this vLLM passes it: vLLM and "
        "transformers are not releases made together",
        summary="vLLM builds a multimodal model's Hugging Face processor itself, passing the arguments the "
        "transformers release it was made with expects; processors' signatures change between transformers releases.",
        evidence=[c.log_evidence(event, name="the processor's refusal", value=match.group(0))],
        actions=[
            "Install the transformers this vLLM release requires (`pip show vllm` lists the range; its release notes "
            "name the one it was tested with), or upgrade vLLM and transformers together: zai-org/GLM-V#8 served "
            "with vLLM 0.9.2 and transformers 4.53.0.",
            "A model's own processor (--trust-remote-code) must also match that transformers: the model card names "
            "the release.",
        ],
        confidence=0.7,
    )


RULE_PROCESSOR_SIGNATURE = Rule(
    code="OP-7.150",
    title="a Hugging Face processor built with arguments its transformers release takes otherwise",
    category=Category.STARTUP,
    check=c.on_phrase(PROCESSOR_SIGNATURE, _processor_signature_finding),
    needs=("events",),
    page=RulePage(
        checks="`<Name>Processor.__init__() got multiple values for argument 'x'` (or an unexpected keyword "
        "argument, or a missing positional one).",
        why="The processor's signature belongs to another transformers release than the one vLLM was made with.",
        example="`Glm4vProcessor.__init__() got multiple values for argument 'tokenizer'` serving GLM-4.1V "
        "(zai-org/GLM-V#8).",
        fix="The transformers release vLLM's requirements name, or both upgraded together.",
        limits="Reads processor classes by name (…Processor, …FeatureExtractor); other __init__ errors are VC-2's.",
        references=["https://github.com/zai-org/GLM-V/issues/8"],
    ),
)

RULES: list[Rule] = [RULE_GGUF, RULE_IMAGE_PROCESSOR, RULE_PROCESSOR_SIGNATURE]
