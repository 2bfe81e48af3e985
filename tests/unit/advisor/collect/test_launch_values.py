"""Launch values vLLM would refuse, and flags given twice: one line at the command line's edge, never a
default put in their place (advisor/collect/launch_values.py)."""

from __future__ import annotations

import pytest

from advisor.collect.launch_values import check_value, validated_command
from advisor.collect.server_args import ServerArgsError
from advisor.errors import UserError


@pytest.mark.parametrize(
    "text, named",
    [
        ("vllm serve m --tensor-parallel-size 0", "--tensor-parallel-size 0: vLLM refuses it; give 1 or more"),
        (
            "vllm serve m --gpu-memory-utilization 7",
            "--gpu-memory-utilization 7: vLLM refuses it; give above 0 and at most 1",
        ),
        ("vllm serve m --num-gpu-blocks-override -3", "--num-gpu-blocks-override -3: vLLM refuses it"),
        ("vllm serve m --gpu-memory-utilization nan", "not a finite number"),
        ("vllm serve m --num-gpu-blocks-override 99999999999", "more than any server holds; give 1 to 10,000,000,000"),
        ("vllm serve m --kv-cache-memory-bytes 20000T", "--kv-cache-memory-bytes 20000T: more than any server holds"),
        ("vllm serve m --max-num-seqs 2.5", "--max-num-seqs 2.5: not a whole number"),
        ("vllm serve m --max-num-seqs many", "not a finite number"),
        ("vllm serve m --max-num-seqs 8 --max-num-seqs 16", "given twice (--max-num-seqs 8, then --max-num-seqs 16)"),
        ("vllm serve m -tp 2 --tensor-parallel-size=4", "given twice (-tp 2, then --tensor-parallel-size 4)"),
        ("vllm serve m --enable-prefix-caching --no-enable-prefix-caching", "--enable-prefix-caching is given twice"),
    ],
)
def test_a_value_vllm_refuses_or_a_flag_given_twice_is_one_line(text, named):
    with pytest.raises(UserError) as raised:
        validated_command(text)
    message = str(raised.value)
    assert message.startswith("--server-args: ") and named in message and "\n" not in message


@pytest.mark.parametrize(
    "text",
    [
        "vllm serve m --max-model-len -1 --kv-cache-memory-bytes 4GiB --max-num-batched-tokens 32k",
        "vllm serve m --gpu-memory-utilization 1 --swap-space 0 --cpu-offload-gb 0",
        "VLLM_API_KEY=x python -m vllm.entrypoints.openai.api_server --model m -tp 8 --max-num-seqs 256",
        "--max-num-seqs 4",
    ],
)
def test_values_vllm_takes_pass(text):
    assert validated_command(text).flags


def test_a_change_is_checked_by_the_same_table():
    from advisor.perf.whatif import parse_change

    assert check_value("--max-num-seqs", "0")
    with pytest.raises(UserError, match=r"--change '--max-num-seqs 0': --max-num-seqs 0: vLLM refuses it"):
        parse_change("--max-num-seqs 0")
    assert parse_change("--max-num-seqs 16") == {"--max-num-seqs": "16"}


def test_the_commands_refuse_them_before_any_work(tmp_path, capsys):
    from advisor.cli.main import main

    ramp = tmp_path / "none.json"
    for argv, said in (
        (["triage", "--logs", "-", "--server-args", "vllm serve m -tp 0"], "-tp 0: vLLM refuses it"),
        (["predict", "--ramp", str(ramp), "--server-args", "vllm serve m --max-num-seqs 1 --max-num-seqs 2"], "twice"),
        (["tune", "--server-command", ""], "--server-command: give the whole command"),
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_a_launch_text_with_no_launch_in_it_is_one_line_naming_what_to_give():
    for text in ("docker run --gpus all -e", "[" * 5_000 + "]" * 5_000):
        with pytest.raises(ServerArgsError, match="no vLLM launch in it; give the command that starts the server"):
            validated_command(text)
    assert validated_command("Qwen/Qwen3-8B").model == "Qwen/Qwen3-8B"  # a model alone is a launch's model
