"""The vLLM message catalog: what scripts/extract_vllm_messages.py makes of vLLM's own statements, and
what advisor/catalog/vllm_messages.json holds for the messages users paste most.

The statements below are quoted from vLLM's released wheels (Apache-2.0), each with the release and
file it comes from; only the enclosing `def` is added. The printed messages are what those statements
print, as a user would paste them.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import textwrap
import zipfile
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from advisor.catalog.vllm_messages import message_catalog

ROOT = Path(__file__).resolve().parents[4]
SCRIPT = ROOT / "scripts" / "extract_vllm_messages.py"
CATALOG = ROOT / "advisor" / "catalog" / "vllm_messages.json"
ALL_MINORS = [f"0.{minor}" for minor in range(4, 35)]
NEWEST_MINOR = ALL_MINORS[-1]  # the newest release the catalog reads: 0.34


@cache
def extractor() -> ModuleType:
    spec = importlib.util.spec_from_file_location("extract_vllm_messages", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def extract(source: str, path: str, fields: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    return extractor().extract_from_source(textwrap.dedent(source), path, fields)


def only(entries: list[dict[str, Any]]) -> dict[str, Any]:
    assert len(entries) == 1, entries
    return entries[0]


# ---------------------------------------------------------------- the extractor, on real vLLM statements

# vllm 0.4.3, vllm/config.py
TP_HEADS = """
def verify_with_parallel_config(self, parallel_config):
    if total_num_attention_heads % tensor_parallel_size != 0:
        raise ValueError(
            f"Total number of attention heads ({total_num_attention_heads})"
            " must be divisible by tensor parallel size "
            f"({tensor_parallel_size}).")
"""


def test_an_f_string_becomes_a_pattern_with_one_named_group_per_placeholder():
    entry = only(extract(TP_HEADS, "vllm/config.py"))
    assert entry["kind"] == "raise" and entry["exception"] == "ValueError"
    assert entry["file"] == "vllm/config.py" and entry["line"] == 4
    assert entry["phase"] == "config"
    assert entry["message"] == (
        "Total number of attention heads ({total_num_attention_heads}) must be divisible by tensor parallel size "
        "({tensor_parallel_size})."
    )
    printed = "ValueError: Total number of attention heads (32) must be divisible by tensor parallel size (3)."
    match = re.search(entry["pattern"], printed)
    assert match is not None
    assert match.groupdict() == {"total_num_attention_heads": "32", "tensor_parallel_size": "3"}


# vllm 0.4.3, vllm/config.py
CASTING = """
def _get_and_verify_dtype(config, dtype):
    if torch_dtype != config_dtype:
        if torch_dtype == torch.float32:
            pass
        else:
            logger.warning("Casting %s to %s.", config_dtype, torch_dtype)
"""


def test_a_logger_warning_with_percent_arguments_names_its_groups_after_the_arguments():
    entry = only(extract(CASTING, "vllm/config.py"))
    assert entry["kind"] == "log" and entry["level"] == "warning" and "once" not in entry
    log_line = "WARNING 05-29 10:00:00 config.py:1155] Casting torch.float32 to torch.float16."
    match = re.search(entry["pattern"], log_line)
    assert match is not None
    assert match.group("config_dtype") == "torch.float32"
    # the last group takes the rest of the pasted line
    assert match.group("torch_dtype") == "torch.float16"


# vllm 0.33.0, vllm/lora/layers/base_linear.py
DUPLICATE_LAYER = """
def __init__(self, base_layer):
    if self.layer_name in compilation_config.static_forward_context:
        raise ValueError("Duplicate layer name: {}".format(self.layer_name))
"""


def test_a_format_call_names_its_group_after_the_argument():
    entry = only(extract(DUPLICATE_LAYER, "vllm/lora/layers/base_linear.py"))
    assert entry["message"] == "Duplicate layer name: {layer_name}"
    assert entry["phase"] == "other"
    match = re.search(entry["pattern"], "ValueError: Duplicate layer name: model.layers.0.self_attn.qkv_proj")
    assert match is not None and match.group("layer_name") == "model.layers.0.self_attn.qkv_proj"


# vllm 0.33.0, vllm/config/model.py (_get_and_verify_max_len)
MAX_MODEL_LEN = """
def _get_and_verify_max_len(max_model_len, derived_max_model_len, max_len_key, hf_config):
    if max_model_len > derived_max_model_len:
        model_max_length = getattr(hf_config, "model_max_length", None)
        if model_max_length is None or max_model_len > model_max_length:
            msg = (
                f"User-specified max_model_len ({max_model_len}) is greater "
                f"than the derived max_model_len ({max_len_key}="
                f"{derived_max_model_len} or model_max_length="
                f"{model_max_length} in model's config.json)."
            )
            warning = (
                "VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme "
                "caution. If the model uses relative position encoding (RoPE), "
                "positions exceeding derived_max_model_len lead to nan. If the "
                "model uses absolute position encoding, positions exceeding "
                "derived_max_model_len will cause a CUDA array out-of-bounds "
                "error."
            )
            if envs.VLLM_ALLOW_LONG_MAX_MODEL_LEN:
                logger.warning_once("%s %s", msg, warning)
            else:
                raise ValueError(
                    f"{msg} To allow overriding this maximum, set "
                    f"the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. {warning}"
                )
"""
MAX_MODEL_LEN_PRINTED = (
    "User-specified max_model_len (32768) is greater than the derived max_model_len "
    "(max_position_embeddings=4096 or model_max_length=None in model's config.json). To allow overriding this "
    "maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with "
    "extreme caution. If the model uses relative position encoding (RoPE), positions exceeding "
    "derived_max_model_len lead to nan. If the model uses absolute position encoding, positions exceeding "
    "derived_max_model_len will cause a CUDA array out-of-bounds error."
)


def test_a_message_built_in_variables_is_followed_into_them_with_the_flags_and_env_vars_it_names():
    entries = extract(MAX_MODEL_LEN, "vllm/config/model.py", ("model", "max_model_len", "tokenizer"))
    by_kind = {entry["kind"]: entry for entry in entries}
    assert set(by_kind) == {"raise", "log"}
    raised, logged = by_kind["raise"], by_kind["log"]
    match = re.search(raised["pattern"], MAX_MODEL_LEN_PRINTED)
    assert match is not None
    assert match.groupdict() == {
        "max_model_len": "32768",
        "max_len_key": "max_position_embeddings",
        "derived_max_model_len": "4096",
        "model_max_length": "None",
    }
    # `max_model_len` is an EngineArgs field: the message names --max-model-len
    assert raised["flags"] == ["--max-model-len"]
    assert raised["env"] == ["VLLM_ALLOW_LONG_MAX_MODEL_LEN"]
    assert logged["level"] == "warning" and logged["once"] is True
    assert logged["message"].startswith("User-specified max_model_len ({max_model_len}) is greater")
    assert logged["message"].endswith("will cause a CUDA array out-of-bounds error.")


# vllm 0.33.0, vllm/platforms/cuda.py
BFLOAT16 = """
def check_if_supports_dtype(cls, dtype: torch.dtype):
    if dtype == torch.bfloat16:  # noqa: SIM102
        if not cls.has_device_capability(80):
            capability = cls.get_device_capability()
            gpu_name = cls.get_device_name()

            if capability is None:
                compute_str = "does not have a compute capability"
            else:
                version_str = capability.as_version_str()
                compute_str = f"has compute capability {version_str}"

            raise ValueError(
                "Bfloat16 is only supported on GPUs "
                "with compute capability of at least 8.0. "
                f"Your {gpu_name} GPU {compute_str}. "
                "You can use float16 instead by explicitly setting the "
                "`dtype` flag in CLI, for example: --dtype=half."
            )
"""


def test_a_variable_set_on_two_branches_stays_a_group_and_a_backticked_field_names_its_flag():
    entry = only(extract(BFLOAT16, "vllm/platforms/cuda.py", ("model", "dtype", "seed")))
    assert entry["phase"] == "startup"
    assert entry["flags"] == ["--dtype"]
    printed = (
        "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has "
        "compute capability 7.5. You can use float16 instead by explicitly setting the `dtype` flag in CLI, "
        "for example: --dtype=half."
    )
    match = re.search(entry["pattern"], printed)
    assert match is not None
    assert match.group("gpu_name") == "Tesla T4"
    assert match.group("compute_str") == "has compute capability 7.5"


# vllm 0.4.3, vllm/worker/worker.py
NO_CACHE_MEMORY = """
def raise_if_cache_size_invalid(num_gpu_blocks, block_size,
                                max_model_len) -> None:
    if num_gpu_blocks <= 0:
        raise ValueError("No available memory for the cache blocks. "
                         "Try increasing `gpu_memory_utilization` when "
                         "initializing the engine.")
"""


def test_a_plain_message_is_escaped_literal_text():
    entry = only(extract(NO_CACHE_MEMORY, "vllm/worker/worker.py", ("gpu_memory_utilization", "max_model_len")))
    assert entry["pattern"] == (
        r"No available memory for the cache blocks\. Try increasing `gpu_memory_utilization` when initializing "
        r"the engine\."
    )
    assert entry["flags"] == ["--gpu-memory-utilization"]
    assert entry["env"] == []
    assert entry["phase"] == "startup"


# vllm 0.32, vllm/multimodal/processing/context.py: a message extended with += on one path only
MM_LIMIT = """
def validate_num_items(self, modality: str, num_items: int) -> None:
    limit = min(supported_limit, allowed_limit)
    if num_items > limit:
        msg = f"At most {limit} {modality}(s) may be provided in one prompt."

        if num_items <= supported_limit:
            msg += " Set `--limit-mm-per-prompt` to increase this limit."

        raise VLLMValidationError(msg, parameter=modality)
"""


def test_a_message_extended_with_plus_equals_is_its_first_assignment_which_every_path_prints():
    entry = only(extract(MM_LIMIT, "vllm/multimodal/processing/context.py"))
    assert entry["message"] == "At most {limit} {modality}(s) may be provided in one prompt."
    pasted = (  # anomalyco/opencode#47930, verbatim
        "At most 8 image(s) may be provided in one prompt. Set `--limit-mm-per-prompt` to increase this limit. "
        "(parameter=image)"
    )
    match = re.search(entry["pattern"], pasted)
    assert match is not None and match.group("limit") == "8"
    reassigned = MM_LIMIT.replace('msg += " Set', 'msg = " Set')  # two values: which one is printed is unknown
    assert extract(reassigned, "vllm/multimodal/processing/context.py") == []


# vllm 0.32, vllm/renderers/online_renderer.py: a refusal answered as an HTTP error body, not raised
AUTO_TOOL_CHOICE = """
def _validate(self, request):
    if request.tool_choice == "auto" and not self.enable_auto_tools:
        return self.create_error_response(
            '"auto" tool choice requires '
            "--enable-auto-tool-choice and --tool-call-parser to be set"
        )
    return self.create_error_response(str(exc), err_type="InternalServerError")
"""


def test_an_http_error_response_is_a_message_with_its_error_type():
    entry = only(extract(AUTO_TOOL_CHOICE, "vllm/renderers/online_renderer.py", ("enable_auto_tool_choice",)))
    assert (entry["kind"], entry["exception"]) == ("response", "BadRequestError")
    assert entry["message"] == '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
    assert entry["flags"] == ["--enable-auto-tool-choice", "--tool-call-parser"]
    typed = (
        "def f(self):\n"
        '    return self.create_error_response("the model is sleeping right now", err_type="ServiceUnavailableError")\n'
    )
    assert only(extract(typed, "vllm/entrypoints/openai/serving_engine.py"))["exception"] == "ServiceUnavailableError"


# vllm 0.4.3, vllm/executor/cpu_executor.py
CPU_KVCACHE = """
def _verify_and_get_cache_config(config: CacheConfig) -> CacheConfig:
    kv_cache_space = envs.VLLM_CPU_KVCACHE_SPACE

    if kv_cache_space >= 0:
        if kv_cache_space == 0:
            config.cpu_kvcache_space_bytes = 4 * _GB  # type: ignore
            logger.warning("Environment variable VLLM_CPU_KVCACHE_SPACE (GB) "
                           "for CPU backend is not set, using 4 by default.")
        else:
            config.cpu_kvcache_space_bytes = kv_cache_space * _GB  # type: ignore
    else:
        raise RuntimeError(
            "Invalid environment variable VLLM_CPU_KVCACHE_SPACE"
            f" {kv_cache_space}, expect a positive integer value.")
"""

# vllm 0.33.0, vllm/transformers_utils/dynamic_module.py
REMOTE_CLASS = """
def try_get_class_from_dynamic_module(class_reference, pretrained_model_name_or_path, warn_on_fail=True):
    try:
        pass
    except Exception:
        location = "ModelScope" if envs.VLLM_USE_MODELSCOPE else "HF Hub"

        if warn_on_fail:
            logger.warning(
                "Unable to load %s from %s on %s.",
                class_reference,
                pretrained_model_name_or_path,
                location,
                exc_info=True,
            )
"""


def test_env_vars_come_from_the_text_and_from_envs_references_in_what_builds_the_message():
    warning, error = extract(CPU_KVCACHE, "vllm/executor/cpu_executor.py")
    assert warning["level"] == "warning" and error["exception"] == "RuntimeError"
    assert warning["env"] == error["env"] == ["VLLM_CPU_KVCACHE_SPACE"]
    printed = "RuntimeError: Invalid environment variable VLLM_CPU_KVCACHE_SPACE -1, expect a positive integer value."
    assert re.search(error["pattern"], printed).group("kv_cache_space") == "-1"

    entry = only(extract(REMOTE_CLASS, "vllm/transformers_utils/dynamic_module.py"))
    assert entry["env"] == ["VLLM_USE_MODELSCOPE"]  # from `envs.VLLM_USE_MODELSCOPE` where `location` is set
    assert entry["message"] == (
        "Unable to load {class_reference} from {pretrained_model_name_or_path} on [ModelScope|HF Hub]."
    )
    for where in ("ModelScope", "HF Hub"):
        printed = f"Unable to load deepseek.Model from org/model on {where}."
        assert re.search(entry["pattern"], printed).group("class_reference") == "deepseek.Model"


# vllm 0.33.0, vllm/multimodal/media/connector.py
RERAISE = """
def fetch(url):
    try:
        pass
    except Exception as e:
        raise ValueError(str(e)) from e
"""


# vllm 0.5.5, vllm/engine/output_processor/multi_step.py (and a message-less assert beside it)
MULTI_STEP = """
def process_outputs(self, sequence_group, outputs):
    seqs = sequence_group.get_seqs(status=SequenceStatus.RUNNING)
    assert seqs, "expected running sequences"
    assert len(seqs) == 1
"""


def test_an_assert_with_words_is_an_internal_check_that_fails_as_assertion_error():
    entry = only([e for e in extract(MULTI_STEP, "vllm/engine/output_processor/multi_step.py") if e["kind"] != "check"])
    assert entry["kind"] == "assert" and entry["exception"] == "AssertionError"
    assert entry["message"] == "expected running sequences" and entry["line"] == 4


def test_a_wordless_assert_is_kept_as_its_statement_which_is_all_a_traceback_shows():
    check = only([e for e in extract(MULTI_STEP, "vllm/engine/output_processor/multi_step.py") if e["kind"] == "check"])
    assert check["message"] == "assert len(seqs) == 1" and check["exception"] == "AssertionError"
    assert check["pattern"] == re.escape("assert len(seqs) == 1").replace("\\ ", " ") and check["line"] == 5


# vllm 0.32.0, vllm/lora/ops/triton_ops/lora_shrink_op.py (shortened), and a check written over two lines
WORDLESS_CHECKS = """
def _lora_shrink(inputs, lora_a_weights, token_lora_mapping, max_model_len):
    M = inputs.size(0)
    assert token_lora_mapping.size(0) == M
    assert inputs.size(1) == lora_a_weights[0].size(-1) and (
        max_model_len > 0)
"""


def test_a_wordless_check_names_no_flag_and_one_written_over_lines_is_left_out():
    entries = extract(WORDLESS_CHECKS, "vllm/lora/ops/triton_ops/lora_shrink_op.py", ("max_model_len",))
    check = only(entries)
    assert check["kind"] == "check" and check["message"] == "assert token_lora_mapping.size(0) == M"
    assert check["flags"] == [] and check["env"] == []


def test_a_wordless_check_in_more_than_four_files_of_one_release_is_kept_in_no_release():
    def check(file: str, statement: str) -> dict[str, Any]:
        return {"kind": "check", "pattern": re.escape(statement), "file": file}

    def release(minor: str, name: str, entries: list[dict[str, Any]]) -> Any:
        return extractor().VersionResult(minor, name, 1, entries, {}, 0)

    # 0.5: three model files held it; 0.32: 111 (five here); every release loses it, 0.5's too
    early = [check(f"vllm/model_executor/models/m{n}.py", "assert intermediate_tensors is not None") for n in range(3)]
    late = [check(f"vllm/model_executor/models/m{n}.py", "assert intermediate_tensors is not None") for n in range(5)]
    # two files in each of two patches of one minor, which renamed them (0.8's LoRA kernels): kept
    patch_a = [check(f"vllm/a{n}.py", "assert len(seqs) == num_seqs") for n in range(2)]
    patch_b = [check(f"vllm/b{n}.py", "assert len(seqs) == num_seqs") for n in range(2)]
    rare = [check(f"vllm/x{n}.py", "assert len(offload_keys) == len(offload_block_ids)") for n in range(3)]
    worded = [{"kind": "assert", "pattern": "expected running sequences", "file": f"vllm/y{n}.py"} for n in range(5)]
    results = [
        release("0.5", "0.5.1", [*early, *rare, *worded]),
        release("0.6", "0.6.0", patch_a),
        release("0.6", "0.6.1", patch_b),
        release("0.32", "0.32.0", [*late, *rare]),
    ]
    extractor().placeable_checks(results)
    assert [r.entries for r in results] == [[*rare, *worded], patch_a, patch_b, rare]


def test_a_check_of_one_plain_name_and_vendored_flash_attention_are_not_kept():
    source = "def f(x, self):\n    assert x is not None\n    assert not success\n    assert self.kv_cache is not None\n"
    assert [e["message"] for e in extract(source, "vllm/v1/worker/gpu_model_runner.py")] == [
        "assert self.kv_cache is not None"
    ]
    assert extract("def f(t):\n    assert t.shape[0] == 32\n", "vllm/vllm_flash_attn/cute/interface.py") == []


def test_a_re_raise_with_no_text_of_its_own_is_not_kept():
    assert extract(RERAISE, "vllm/multimodal/media/connector.py") == []


# vllm 0.32.0, vllm/v1/executor/multiproc_executor.py (wait_for_ready, shortened): the exception is built first and
# raised after the other workers are cleaned up
BUILT_THEN_RAISED = """
def wait_for_ready(unready_proc_handles):
    e = Exception(
        "WorkerProc initialization failed due to an exception in a "
        "background process. See stack trace for root cause."
    )
    for handle in unready_proc_handles:
        if handle.failed:
            raise e
    raise ValueError("No worker became ready: " + str(len(unready_proc_handles)))
"""


def test_an_exception_built_before_its_raise_is_a_raise_and_a_raised_one_is_read_once():
    entries = extract(BUILT_THEN_RAISED, "vllm/v1/executor/multiproc_executor.py")
    by_line = {entry["line"]: entry for entry in entries}
    assert sorted(by_line) == [3, 10]
    assert by_line[3]["kind"] == "raise" and by_line[3]["exception"] == "Exception"
    assert by_line[3]["message"] == (
        "WorkerProc initialization failed due to an exception in a background process. See stack trace for root cause."
    )
    assert by_line[10]["exception"] == "ValueError"


# vllm 0.33.0, vllm/engine/arg_utils.py (the first fields)
ENGINE_ARGS = """
@dataclass
class EngineArgs:
    \"\"\"Arguments for vLLM engine.\"\"\"

    model: str = ModelConfig.model
    served_model_name: str | list[str] | None = ModelConfig.served_model_name
    tokenizer: str | None = ModelConfig.tokenizer
    max_model_len: int = ModelConfig.max_model_len
"""


def test_the_flag_names_come_from_the_engine_args_dataclass():
    fields = extractor().engine_args_fields(textwrap.dedent(ENGINE_ARGS))
    assert fields == ["model", "served_model_name", "tokenizer", "max_model_len"]
    flags = extractor().flags_named("set max_model_len or pass --max-num-seqs; the model is fine", frozenset(fields))
    # a plain word that is also a field (model) is not a flag unless quoted: `model`
    assert flags == ["--max-model-len", "--max-num-seqs"]


def test_the_engine_argument_classes_fields_are_read_per_class():
    source = textwrap.dedent(ENGINE_ARGS) + textwrap.dedent(
        """
        @dataclass
        class AsyncEngineArgs(EngineArgs):
            disable_log_requests: bool = False
        """
    )
    classes = extractor().engine_arg_classes(source)
    assert classes == {
        "EngineArgs": ["model", "served_model_name", "tokenizer", "max_model_len"],
        "AsyncEngineArgs": ["disable_log_requests"],
    }


def test_an_extras_packages_are_read_from_the_wheels_metadata_and_merged_across_versions(tmp_path):
    wheel = tmp_path / "vllm-0.7.3-cp38-abi3-manylinux1_x86_64.whl"
    metadata = (
        'Name: vllm\nProvides-Extra: audio\nRequires-Dist: librosa; extra == "audio"\n'
        "Requires-Dist: mistral_common[audio]>=1.5; extra == 'audio'\nRequires-Dist: decord; extra == \"video\"\n"
        "Requires-Dist: torch==2.5.1\n"
    )
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("vllm-0.7.3.dist-info/METADATA", metadata)
    script = extractor()
    extras = script.wheel_extras(wheel)
    assert extras == {"audio": ["librosa", "mistral-common"], "video": ["decord"]}
    older = script.VersionResult("0.6", "0.6.6", 1, [], {}, 1, {}, {"video": ["decord"]})
    newer = script.VersionResult("0.7", "0.7.3", 1, [], {}, 1, {}, extras)
    rows = script.merge_extras([newer, older])
    assert [(r["extra"], r["package"], r["first"], r["last"]) for r in rows] == [
        ("audio", "librosa", "0.7", "0.7"),
        ("audio", "mistral-common", "0.7", "0.7"),
        ("video", "decord", "0.6", "0.7"),
    ]


@pytest.mark.parametrize(
    "path, phase",
    [
        ("vllm/config.py", "config"),
        ("vllm/config/parallel.py", "config"),
        ("vllm/engine/arg_utils.py", "config"),
        ("vllm/worker/worker.py", "startup"),
        ("vllm/v1/engine/core.py", "startup"),
        ("vllm/distributed/parallel_state.py", "startup"),
        ("vllm/entrypoints/openai/serving_chat.py", "serving"),
        ("vllm/v1/engine/output_processor.py", "serving"),
        ("vllm/sampling_params.py", "serving"),
        ("vllm/lora/request.py", "other"),
    ],
)
def test_the_phase_is_guessed_from_the_path(path, phase):
    assert extractor().phase_for(path) == phase


def test_the_latest_patch_of_each_minor_is_chosen_and_a_missing_minor_is_none():
    releases = ["0.8.5.post1", "0.8.5", "0.8.4", "0.9.0rc1", "0.9.0", "0.9.0.1", "0.10.1.1", "0.10.2", "0.1.7"]
    latest = extractor().latest_of_minor
    assert latest("0.8", releases) == "0.8.5.post1"
    assert latest("0.9", releases) == "0.9.0.1"
    assert latest("0.10", releases) == "0.10.2"
    assert latest("0.1", releases) == "0.1.7"
    assert latest("0.11", releases) is None


def test_every_patch_of_a_minor_is_read_each_by_its_newest_build():
    releases = ["0.5.5", "0.5.3.post1", "0.5.3", "0.5.1", "0.5.0.post1", "0.5.0", "0.5.6rc1", "0.10.1.1", "0.10.1"]
    patches = extractor().patches_of_minor
    assert patches("0.5", releases) == ["0.5.0.post1", "0.5.1", "0.5.3.post1", "0.5.5"]
    assert patches("0.10", releases) == ["0.10.1.1"]
    assert patches("0.11", releases) == []


def test_a_versions_item_plans_every_patch_the_newest_only_an_exact_release_or_a_skip():
    releases = ["0.5.5", "0.5.1", "0.5.0.post1", "0.5.0", "0.6.0"]
    plan = extractor().planned_releases
    skipped: dict[str, str] = {}
    assert plan("0.5", releases, False, skipped) == [("0.5", "0.5.0.post1"), ("0.5", "0.5.1"), ("0.5", "0.5.5")]
    assert plan("0.5", releases, True, skipped) == [("0.5", "0.5.5")]
    assert plan("0.5.1", releases, False, skipped) == [("0.5", "0.5.1")]
    assert plan("0.5", None, False, skipped) == [("0.5", None)]  # pip could not list them: it picks the newest
    assert plan("0.7", releases, False, skipped) == [] and skipped == {"0.7": "no release on PyPI"}


def test_a_wording_only_some_patches_have_names_its_first_and_last_patch():
    script = extractor()
    plain = {
        "pattern": "a",
        "file": "vllm/a.py",
        "exception": "ValueError",
        "kind": "raise",
        "phase": "config",
        "line": 1,
        "flags": [],
        "env": [],
    }
    early = {**plain, "pattern": "Pipeline parallelism is not supported yet with multiprocessing\\.", "line": 2}
    late = {**plain, "pattern": "b", "line": 3}

    def read(minor: str, release: str, entries: list[dict[str, Any]]) -> Any:
        return script.VersionResult(minor, release, 1, entries, {}, 1)

    results = [
        read("0.6", "0.6.0", [plain, late]),
        read("0.5", "0.5.5", [plain]),
        read("0.5", "0.5.1", [plain, early]),
        read("0.5", "0.5.2", [plain, early]),
        read("0.5", "0.5.0", [plain]),
    ]
    merged = {entry["line"]: entry for entry in script.merge(results)}
    assert merged[1]["versions"] == ["0.5", "0.6"] and "first_release" not in merged[1]
    assert (merged[2]["versions"], merged[2]["first_release"], merged[2]["last_release"]) == (["0.5"], "0.5.1", "0.5.2")
    assert merged[3]["versions"] == ["0.6"] and "first_release" not in merged[3] and "last_release" not in merged[3]
    header = script.build_header(results, list(merged.values()), {}, {})
    assert [(v["minor"], v["release"], v["releases"], v["entries"]) for v in header["versions"]] == [
        ("0.5", "0.5.5", ["0.5.0", "0.5.1", "0.5.2", "0.5.5"], 2),
        ("0.6", "0.6.0", ["0.6.0"], 2),
    ]


# ---------------------------------------------------------------- the committed catalog


@cache
def catalog() -> dict[str, Any]:
    return json.loads(CATALOG.read_text(encoding="utf-8"))


def matching(printed: str, **where: Any) -> list[dict[str, Any]]:
    return [
        entry
        for entry in catalog()["messages"]
        if all(entry.get(key) == value for key, value in where.items()) and re.search(entry["pattern"], printed)
    ]


def versions_of(entries: list[dict[str, Any]]) -> list[str]:
    found = {version for entry in entries for version in entry["versions"]}
    return [minor for minor in ALL_MINORS if minor in found]


def test_the_header_says_which_release_of_each_minor_was_read_and_what_came_of_it():
    header = catalog()["header"]
    assert header["command"] == ".venv/bin/python scripts/extract_vllm_messages.py"
    assert [v["minor"] for v in header["versions"]] == ALL_MINORS
    releases = {v["minor"]: v["release"] for v in header["versions"]}
    assert releases["0.4"] == "0.4.3" and releases["0.8"] == "0.8.5.post1" and releases["0.33"] == "0.33.0"
    assert releases["0.34"] == "0.34.0"
    patches = {v["minor"]: v["releases"] for v in header["versions"]}
    assert patches["0.5"] == ["0.5.0.post1", "0.5.1", "0.5.2", "0.5.3.post1", "0.5.4", "0.5.5"]
    assert all(v["releases"][-1] == v["release"] for v in header["versions"])
    assert header["failed"] == {} and header["skipped"] == {}
    for version in header["versions"]:
        assert version["entries"] > 0 and version["engine_args_fields"] > 0
        assert version["with_flag"] <= version["entries"] and version["with_env"] <= version["entries"]
    messages = catalog()["messages"]
    assert header["totals"]["entries"] == len(messages)
    assert header["totals"]["with_flag"] == sum(1 for e in messages if e["flags"])
    assert header["totals"]["with_env"] == sum(1 for e in messages if e["env"])


def test_the_engine_arguments_say_which_releases_took_each_keyword():
    rows = {(row["class"], row["field"]): row for row in catalog()["engine_args"]}
    assert catalog()["header"]["totals"]["engine_args"] == len(rows)
    # OpenRLHF/OpenRLHF#702: worker_use_ray was gone in 0.7; TRL's worker_extension_cls arrived in 0.8
    assert rows[("EngineArgs", "worker_use_ray")]["versions"] == ["0.4", "0.5", "0.6"]
    assert rows[("EngineArgs", "worker_extension_cls")]["first"] == "0.8"
    assert rows[("EngineArgs", "model")]["versions"] == ALL_MINORS
    assert ("EngineArgs", "model_hf_config") not in rows  # verl's patched vLLM, never a release's


def test_the_extras_say_which_packages_each_extra_of_vllm_installed():
    rows = {(row["extra"], row["package"]): row for row in catalog()["extras"]}
    assert catalog()["header"]["totals"]["extras"] == len(rows)
    assert "0.7" in rows[("video", "decord")]["versions"]  # QwenLM/Qwen3-VL#806
    assert rows[("audio", "soundfile")]["last"] == NEWEST_MINOR


def test_every_entry_has_a_pattern_that_compiles_and_versions_in_order():
    order = {minor: i for i, minor in enumerate(ALL_MINORS)}
    for entry in catalog()["messages"]:
        re.compile(entry["pattern"])
        assert entry["file"].startswith("vllm/") and entry["line"] > 0
        assert entry["versions"] == sorted(entry["versions"], key=order.__getitem__)
        assert (entry["first"], entry["last"]) == (entry["versions"][0], entry["versions"][-1])
        assert entry["phase"] in {"config", "startup", "serving", "other"}
        assert all(flag.startswith("--") for flag in entry["flags"])


def test_the_tensor_parallel_attention_heads_error_is_there_in_every_version():
    printed = "Total number of attention heads (32) must be divisible by tensor parallel size (3)."
    entries = matching(printed, kind="raise", exception="ValueError")
    assert versions_of(entries) == ALL_MINORS
    assert {entry["file"] for entry in entries} >= {"vllm/config.py", "vllm/config/model.py"}
    assert all(entry["phase"] == "config" for entry in entries)
    newest = re.search(next(e for e in entries if e["last"] == NEWEST_MINOR)["pattern"], printed)
    assert newest.groupdict() == {"total_num_attention_heads": "32", "tensor_parallel_size": "3"}


def test_max_model_len_above_the_derived_one_names_the_flag_and_from_0_5_the_env_var_that_allows_it():
    old = (
        "User-specified max_model_len (8192) is greater than the derived max_model_len "
        "(max_position_embeddings=4096 or model_max_length=None in model's config.json). This may lead to "
        "incorrect model outputs or CUDA errors. Make sure the value is correct and within the model context size."
    )
    entries = matching(old, kind="raise", exception="ValueError")
    assert versions_of(entries)[0] == "0.4"
    assert all("--max-model-len" in entry["flags"] for entry in entries)

    new = matching(MAX_MODEL_LEN_PRINTED, kind="raise", exception="ValueError")
    assert new and versions_of(new)[-1] == NEWEST_MINOR
    assert all(entry["env"] == ["VLLM_ALLOW_LONG_MAX_MODEL_LEN"] for entry in new)
    assert all("--max-model-len" in entry["flags"] for entry in new)
    every = [
        entry
        for entry in catalog()["messages"]
        if entry["kind"] == "raise" and entry["message"].startswith("User-specified max_model_len ({max_model_len})")
    ]
    assert versions_of(every) == ALL_MINORS


def test_no_memory_for_the_cache_blocks_names_gpu_memory_utilization_in_every_version():
    printed = (
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
        "initializing the engine."
    )
    entries = matching(printed, kind="raise", exception="ValueError")
    assert {entry["file"] for entry in entries} >= {"vllm/worker/worker.py", "vllm/v1/core/kv_cache_utils.py"}
    assert versions_of(entries)[0] == "0.4"
    # later releases add a sentence (a docs link, the CPU backend): the same opening, other patterns
    gpu = [
        entry
        for entry in catalog()["messages"]
        if entry["message"].startswith("No available memory for the cache blocks. Try increasing `gpu_memory")
    ]
    assert versions_of(gpu) == ALL_MINORS[:-1]
    # 0.34 words the advice after the sizing it used (v1/core/kv_cache_planning.py `_more_kv_cache_memory_hint`: the
    # extensible KV cache "already takes all device memory"), so its entry holds the advice as a field
    [hinted] = [
        entry
        for entry in catalog()["messages"]
        if entry["message"].startswith("No available memory for the cache blocks. {hint}")
    ]
    assert hinted["versions"] == [NEWEST_MINOR]
    assert all(entry["flags"] == ["--gpu-memory-utilization"] and entry["phase"] == "startup" for entry in gpu)
    # the CPU worker of 0.4 ... 0.9 names its environment variable instead
    cpu_printed = printed.replace("gpu_memory_utilization", "VLLM_CPU_KVCACHE_SPACE")
    cpu = matching(cpu_printed, file="vllm/worker/cpu_worker.py")
    assert [(e["first"], e["last"], e["env"]) for e in cpu] == [("0.4", "0.9", ["VLLM_CPU_KVCACHE_SPACE"])]


def test_the_bfloat16_compute_capability_error_names_dtype():
    old = (
        "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla V100-SXM2-16GB "
        "GPU has compute capability 7.0. You can use float16 instead by explicitly setting the`dtype` flag in "
        "CLI, for example: --dtype=half."
    )
    new = old.replace("the`dtype`", "the `dtype`")
    entries = matching(old, kind="raise", exception="ValueError") + matching(new, kind="raise", exception="ValueError")
    assert versions_of(entries) == ALL_MINORS
    assert all(entry["flags"] == ["--dtype"] for entry in entries)
    assert any(entry["file"] == "vllm/platforms/cuda.py" and entry["last"] == NEWEST_MINOR for entry in entries)


def test_samplingparams_keywords_are_read_from_its_init_or_its_struct_fields():
    # vLLM 0.4-0.5: a plain class whose __init__ takes the keywords; 0.6 on: a msgspec Struct of annotated fields
    plain = textwrap.dedent(
        """
        class SamplingParams:
            def __init__(self, n: int = 1, use_beam_search: bool = False, *, seed=None) -> None:
                self.n = n
        """
    )
    struct = textwrap.dedent(
        """
        class SamplingParams(msgspec.Struct, omit_defaults=True):
            n: int = 1
            _real_n: int | None = None
            guided_decoding: object = None
        """
    )
    assert extractor().sampling_params_fields(plain) == {"SamplingParams": ["n", "use_beam_search", "seed"]}
    assert extractor().sampling_params_fields(struct) == {"SamplingParams": ["n", "guided_decoding"]}
    assert extractor().sampling_params_fields("class Other: pass") == {}


def test_the_catalog_holds_which_releases_samplingparams_took_each_keyword():
    rows = {(row["class"], row["field"]): row["versions"] for row in catalog()["engine_args"]}
    # 0.6.0 made SamplingParams a msgspec Struct that still had the field; 0.6.3 took it out (beam search moved to
    # LLM.beam_search): read from the newest patch of 0.6 alone, the catalog said 0.4–0.5
    assert rows[("SamplingParams", "use_beam_search")] == ["0.4", "0.5", "0.6"]
    row = next(r for r in catalog()["engine_args"] if (r["class"], r["field"]) == ("SamplingParams", "use_beam_search"))
    assert row["last_release"] == "0.6.2" and "first_release" not in row
    assert rows[("SamplingParams", "max_tokens")] == ALL_MINORS


# vllm 0.16.0, vllm/model_executor/models/registry.py (cut to two entries of each table shown)
REGISTRY = """
_TEXT_GENERATION_MODELS = {
    "LlamaForCausalLM": ("llama", "LlamaForCausalLM"),
    "Qwen3NextForCausalLM": ("qwen3_next", "Qwen3NextForCausalLM"),
}

_TRANSFORMERS_SUPPORTED_MODELS = {
    # Text generation models
    "SmolLM3ForCausalLM": ("transformers", "TransformersForCausalLM"),
}

_VLLM_MODELS = {
    **_TEXT_GENERATION_MODELS,
    **_TRANSFORMERS_SUPPORTED_MODELS,
}

_PREVIOUSLY_SUPPORTED_MODELS = {
    "MotifForCausalLM": "0.10.2",
    "Phi3SmallForCausalLM": "0.9.2",
}
"""


def test_the_registrys_literal_tables_are_the_architectures_a_release_builds():
    tables = extractor().registry_architectures({"vllm/model_executor/models/registry.py": textwrap.dedent(REGISTRY)})
    assert tables == {
        "text_generation_models": ["LlamaForCausalLM", "Qwen3NextForCausalLM"],
        "transformers_supported_models": ["SmolLM3ForCausalLM"],
    }  # not the splat of them all, and not the architectures it no longer builds


def test_the_catalog_dates_each_architecture_by_the_releases_whose_registry_lists_it():
    catalog = message_catalog()
    assert catalog.architecture_releases("Qwen3_5MoeForConditionalGeneration") == ("0.17.0", "0.34")
    assert catalog.architecture_releases("LlamaForCausalLM") == ("0.4.0.post1", "0.34")  # the first 0.4 build read
    first, last = catalog.architecture_releases("MllamaForConditionalGeneration")
    assert last == "0.10"  # dropped after 0.10.2 (its registry's previously-supported table says so)
    assert catalog.architecture_releases("NoSuchModelForCausalLM") is None
    # 0.10 on builds a sequence classifier from the registry's causal LM: its own row ending was no removal
    assert catalog.architecture_releases("Qwen2ForSequenceClassification")[1] == "0.9"
    assert catalog.runs_in_newest("Qwen2ForSequenceClassification") and not catalog.runs_in_newest("QWenLMHeadModel")
