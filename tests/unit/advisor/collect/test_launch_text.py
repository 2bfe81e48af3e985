"""A launch pasted as people have it reads as the vLLM command inside it (advisor/collect/launch_text.py)."""

from __future__ import annotations

import pytest

from advisor.collect.launch_text import split_launch
from advisor.collect.server_args import ServerArgsError, parse_command


def test_a_chain_keeps_the_part_that_starts_vllm_and_what_it_exported():
    command = parse_command("cd /srv && export VLLM_USE_V1=0; vllm serve Qwen/Qwen3-8B --max-model-len 8192 | tee x")
    assert command.env == {"VLLM_USE_V1": "0"} and command.model == "Qwen/Qwen3-8B"
    assert command.flags == {"--max-model-len": "8192"}


def test_docker_runs_options_are_dockers_and_the_words_after_the_image_are_the_servers():
    # vLLM's documented `docker run` line: its --ipc, -p and -v are not server flags
    command = parse_command(
        'docker run --runtime nvidia --gpus all -v ~/.cache/huggingface:/root/.cache/huggingface --env "HF_TOKEN=x" '
        "-p 8000:8000 --ipc=host vllm/vllm-openai:latest --model mistralai/Mistral-7B-v0.1 --max-model-len 4096"
    )
    assert command.model == "mistralai/Mistral-7B-v0.1" and command.env == {"HF_TOKEN": "x"}
    assert command.flags == {"--model": "mistralai/Mistral-7B-v0.1", "--max-model-len": "4096"}


def test_a_shell_script_given_to_the_container_is_read_for_its_vllm_command():
    # opea-project/GenAIComps#336
    command = parse_command(
        "docker run -it --name vllm_service -p 8008:80 -e HF_TOKEN=t -v ./data:/data vllm:cpu /bin/bash -c "
        '"cd / && export VLLM_CPU_KVCACHE_SPACE=40 && python3 -m vllm.entrypoints.openai.api_server --model m '
        '--port 80"'
    )
    assert command.program == ["python3", "-m", "vllm.entrypoints.openai.api_server"]
    assert command.env == {"HF_TOKEN": "t", "VLLM_CPU_KVCACHE_SPACE": "40"}
    assert command.flags == {"--model": "m", "--port": "80"}


@pytest.mark.parametrize(
    "text",
    [
        'CMD ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "/app/m", "--port", "3000"]',
        'args: ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "/app/m", "--port", "3000"]',
        '["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "/app/m", "--port", "3000"]',
    ],
)
def test_the_exec_form_of_a_dockerfile_or_a_pod_is_its_json_array(text):
    command = parse_command(text)
    assert command.model == "/app/m" and command.flags == {"--model": "/app/m", "--port": "3000"}


def test_a_users_own_script_has_no_model_word():
    command = parse_command("export TPU_BACKEND_TYPE=jax; python3 examples/offline_inference.py --max_tokens=128")
    assert command.program == ["python3", "examples/offline_inference.py"] and command.model is None


def test_separators_inside_quotes_are_a_value_and_unclosed_quotes_still_refuse():
    assert split_launch('vllm serve m --chat-template "a;b && c"') == [
        "vllm",
        "serve",
        "m",
        "--chat-template",
        "a;b && c",
    ]
    with pytest.raises(ServerArgsError, match="cannot split it like a shell"):
        parse_command('vllm serve m --x "open')


def test_a_pods_command_and_args_or_a_bare_list_of_words_read_as_the_manifest_says():
    pod = 'command: ["vllm", "serve"]\nargs:\n  - meta-llama/Llama-3.1-8B-Instruct\n  - --max-model-len\n  - "8192"\n'
    command = parse_command(pod + "  - --enable-prefix-caching\n")
    assert command.program == ["vllm", "serve"] and command.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert command.flags == {"--max-model-len": "8192", "--enable-prefix-caching": None}
    listed = parse_command("- --model\n- /models/qwen\n- --gpu-memory-utilization\n- 0.95\n")
    assert listed.flags == {"--model": "/models/qwen", "--gpu-memory-utilization": "0.95"}
    compose = parse_command("command: >\n  --model Qwen/Qwen3-8B --max-num-seqs 64\n")
    assert compose.flags == {"--model": "Qwen/Qwen3-8B", "--max-num-seqs": "64"}


def test_yaml_or_json_nested_past_any_manifest_is_read_as_a_shell_line_not_a_recursion_error():
    assert split_launch("- a\n- " + "[" * 50_000)[0] == "-"
    assert split_launch("[" * 50_000 + "]" * 50_000) == ["[" * 50_000 + "]" * 50_000]
