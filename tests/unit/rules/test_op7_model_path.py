"""OP-7.53: a model argument that names no model the server can find or read, in vLLM's, the Hub's and
transformers' words."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog.op7_model_path import RULE
from rules.evaluate import evaluate
from rules.facts import Facts
from tests.unit.rules.factories import top_finding

GATED = [
    "huggingface_hub.errors.GatedRepoError: 401 Client Error. (Request ID: Root=1-abc)",
    "Cannot access gated repo for url https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/resolve/main/config.json.",
    "",
    "The above exception was the direct cause of the following exception:",
    "",
    "ValueError: Invalid repository ID or local directory specified: 'meta-llama/Llama-3.1-8B-Instruct'.",
]


def _findings(*lines: str):
    return RULE.evaluate(Facts(events=parse_lines(list(lines)).events))


def test_a_path_the_container_lacks_is_read_by_the_hub_as_an_id_and_named_as_a_path():
    for line in (
        "huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': "
        "'/models/Qwen2.5-7B-Instruct'. Use `repo_type` argument if needed.",
        "ValueError: Invalid repository ID or local directory specified: '/models/Qwen2.5-7B-Instruct'.",
    ):
        [finding] = _findings(line)
        assert finding.title == (
            "the model path /models/Qwen2.5-7B-Instruct is not a model directory where the server runs: it is not "
            "there, or holds no config.json"
        )
        assert "ls -la /models/Qwen2.5-7B-Instruct" in finding.actions[0] and "volume" in finding.actions[0]
        assert "snapshots/<hash>/" in finding.actions[1]
        assert not finding.changes


def test_a_directory_without_config_json_is_not_the_models_root():
    [finding] = _findings(
        "OSError: /data/hub/models--Qwen--Qwen2.5-7B does not appear to have a file named config.json. Checkout "
        "'https://huggingface.co//data/hub/models--Qwen--Qwen2.5-7B/tree/None' for available files."
    )
    assert finding.title == (
        "/data/hub/models--Qwen--Qwen2.5-7B has no config.json: the directory is not the model's root, or the model "
        "is incomplete"
    )
    assert "--lora-modules" in finding.actions[1]


def test_a_config_without_model_type_points_at_adapters_and_mistrals_format():
    [finding] = _findings(
        "ValueError: Unrecognized model in ./mistral-7b. Should have a `model_type` key in its config.json"
    )
    assert (
        finding.title == "./mistral-7b's config.json has no model_type: it is not a transformers model's configuration"
    )
    assert "--config-format mistral" in finding.actions[0]


def test_a_hub_id_defers_to_the_hubs_own_refusal_chained_above():
    findings = evaluate(Facts(events=parse_lines(GATED).events)).findings
    assert [f.rule for f in findings[:2]] == ["OP-7.17", "OP-7.53"]
    assert findings[1].title == (
        "vLLM found no model meta-llama/Llama-3.1-8B-Instruct: no local directory of that name, and no Hub repository "
        "it could read"
    )
    assert "HF_TOKEN" in findings[1].actions[0]


def test_a_tokenizer_transformers_cannot_load_points_at_tokenizer_and_a_shadowing_directory():
    said = (
        "OSError: Can't load tokenizer for '{}'. If you were trying to load it from 'https://huggingface.co/models', "
        "make sure you don't have a local directory with the same name. Otherwise, make sure '{}' is the correct path "
        "to a directory containing all relevant files for a LlamaTokenizerFast tokenizer."
    )
    [hub] = _findings(said.format("my-org/my-model", "my-org/my-model"))
    assert hub.title == (
        "transformers could not load a tokenizer from my-org/my-model: it holds no tokenizer files it can read, or a "
        "local directory of that name hides the Hub's"
    )
    assert "--tokenizer <org>/<name>" in hub.actions[0] and "working directory" in hub.actions[0]
    [local] = _findings(said.format("/models/adapter", "/models/adapter"))
    assert "working directory" not in local.actions[0] and "ls -la /models/adapter" in local.actions[1]


def test_transformers_refusal_of_an_empty_name_is_an_unset_setting_and_of_a_path_the_path():
    # runpod-workers/worker-vllm#75: every endpoint of the template suddenly got an empty model id
    tail = ". Please provide either the path to a local folder or the repo_id of a model on the Hub."
    [empty] = _findings(f"OSError: Incorrect path_or_model_id: ''{tail}")
    assert empty.title.startswith("the model vLLM was given is empty") and "MODEL_NAME" in empty.actions[0]
    [path] = _findings(f"OSError: Incorrect path_or_model_id: '/models/llama'{tail}")
    assert path.title.startswith("the model path /models/llama is not a model directory")


def test_autoconfigs_words_for_a_config_it_could_not_get_are_the_model_not_found():
    # vllm#2814, verbatim with the platform's stamp (the vllm-openai image on a RunPod template)
    line = (
        "2024-02-08T06:28:20.354023087-08:00 OSError: Can't load the configuration of 'Qwen/Qwen1.5-72B-Chat-AWQ'. If "
        "you were trying to load it from 'https://huggingface.co/models', make sure you don't have a local directory "
        "with the same name. Otherwise, make sure 'Qwen/Qwen1.5-72B-Chat-AWQ' is the correct path to a directory "
        "containing a config.json file"
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).top
    assert top.rule == "OP-7.53" and top.title.startswith("vLLM found no model Qwen/Qwen1.5-72B-Chat-AWQ")
    assert "HF_TOKEN" in top.actions[0]


def test_modelscopes_404_names_the_hub_it_asked_and_the_local_path():
    # CraftJarvis/JarvisVLA#5, verbatim: `vllm serve jarvis_vla_qwen2_vl_7b_sft`; the maintainer said vllm serve wants
    # a Hub id or a local path, and to download the model and serve its path
    top = top_finding("`requests.exceptions.HTTPError: The request model: jarvis_vla_qwen2_vl_7b_sft does not exist! `")
    assert top.rule == "OP-7.53" and top.title.startswith("ModelScope has no model jarvis_vla_qwen2_vl_7b_sft")
    assert "VLLM_USE_MODELSCOPE" in top.title and "`vllm serve <dir>`" in top.actions[0]
    assert "has no `<org>/` part" in top.actions[0]


def test_transformers_missing_remote_code_file_is_a_copy_without_the_models_py_files():
    # vllm-ascend#619, verbatim: a maintainer's list of W8A8 problems; ModelSlim had not copied
    # configuration_deepseek.py into the quantized checkpoint, and the workaround was to copy it from the original
    # repository
    top = top_finding("#### 2. ERROR: `Could not locate the configuration_deepseek.py`")
    assert top.rule == "OP-7.53" and "lacks configuration_deepseek.py" in top.title and "auto_map" in top.title
    assert top.actions[0].startswith("Copy configuration_deepseek.py") and "ModelSlim" in top.actions[0]
    # transformers' whole sentence (dynamic_module_utils.py) names the directory
    whole = top_finding("Could not locate the configuration_deepseek.py inside /models/DeepSeek-R1-W8A8.")
    assert whole.title.startswith("/models/DeepSeek-R1-W8A8 lacks configuration_deepseek.py")


def test_modelscopes_api_404_in_requests_words_is_the_model_missing_on_modelscope():
    # vllm#2629, verbatim: the quickstart's LLM(model="gpt2") looked the model up on ModelScope
    top = top_finding(
        "requests.exceptions.HTTPError: 404 Client Error: Not Found for url: "
        "https://www.modelscope.cn/api/v1/models/gpt2/revisions?EndTime=1706391065"
    )
    assert top.rule == "OP-7.53" and top.title.startswith("ModelScope has no model gpt2")
    assert "VLLM_USE_MODELSCOPE" in top.title


def test_the_hub_file_systems_words_and_a_cut_refusal_are_a_path_missing_on_this_node():
    # vllm#3786, verbatim: a Ray cluster across machines; the reporter: the model must be at the same path on the
    # worker nodes too. kaito-project/kaito#2320, verbatim and cut before the id: a peer node's empty model path.
    hf_fs = top_finding("FileNotFoundError: /mnt/Qwen1.5-72B-Chat-GPTQ-Int8 (invalid repository id)")
    assert hf_fs.rule == "OP-7.53"
    assert hf_fs.title.startswith("the model path /mnt/Qwen1.5-72B-Chat-GPTQ-Int8 is not a model directory")
    assert "the path must hold it on every node, not just the head's" in hf_fs.actions[0]
    cut = top_finding("OSError: Repo id must be in the form 'repo_name' or 'namespace/repo_name':")
    assert cut.rule == "OP-7.53" and cut.title.startswith("the model path <path> is not a model directory")
    # a name refused for its characters and cut before it may as well be a Hub id (`qwen2.5:7b`): not read as a path
    chars = top_finding(
        "huggingface_hub.errors.HFValidationError: Repo id must use alphanumeric chars or '-', '_', '.', '--' and "
        "'..' are forbidden, '-' and '.' cannot start or end the name, max length is 96:"
    )
    assert chars is None or "<path>" not in chars.title
