"""`--engine vllm` on demo and tune, and `--server-command` with vLLM: the command servops would
start, and the one-line refusals. Nothing here starts a server: a fake interpreter path stands
in for .venv-vllm, so these run the same on machines with and without vLLM."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.cli.commands.demo import demo_settings
from advisor.cli.commands.tune import _start_command
from advisor.cli.main import build_parser, main
from advisor.collect.server_args import ServeCommand
from advisor.errors import UserError
from advisor.servers import vllm as vllm_launch
from advisor.servers.process import launch_env, launch_words, startup_note
from advisor.tune.demo import DemoSettings, poor_command
from advisor.tune.engines import VLLM_BASE_FLAGS, start_command

BUNDLED_ONLY = ("--disable-log-requests", "--device-memory-gib", "--device")


@pytest.fixture()
def vllm_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in .venv-vllm interpreter (never run), on a machine treated as CPU-only."""
    python = tmp_path / ".venv-vllm" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("")
    monkeypatch.setenv("SERVOPS_VLLM_PYTHON", str(python))
    monkeypatch.setattr(vllm_launch, "_is_cpu", lambda: True)  # a CUDA test machine builds the CPU command too
    return python


@pytest.fixture()
def no_vllm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    missing = tmp_path / "missing" / "bin" / "python"
    monkeypatch.setenv("SERVOPS_VLLM_PYTHON", str(missing))
    return missing


@pytest.fixture()
def model_dir(tmp_path: Path) -> Path:
    """A local HF model directory as vLLM needs it (config.json), so the embedded model is not converted."""
    directory = tmp_path / "smol"
    directory.mkdir()
    (directory / "config.json").write_text("{}")
    return directory


def _demo_command(*argv: str) -> ServeCommand:
    return poor_command(demo_settings(build_parser().parse_args(["demo", *argv])))


def _tune_command(*argv: str) -> ServeCommand:
    return _start_command(build_parser().parse_args(["tune", *argv]))


def _flag_words(words: list[str]) -> set[str]:
    return {word.split("=", 1)[0] for word in words if word.startswith("--")}


def test_demo_engine_vllm_launches_with_the_vllm_environment_interpreter(vllm_python, model_dir):
    words = launch_words(_demo_command("--engine", "vllm", "--model", str(model_dir)))
    assert words[:3] == [str(vllm_python), "-m", vllm_launch.VLLM_SERVE_MODULE]
    assert str(model_dir.resolve()) in words


def test_demo_engine_vllm_sets_the_cpu_kv_space_in_the_command_env(vllm_python, model_dir):
    command = _demo_command("--engine", "vllm", "--model", str(model_dir))
    assert command.env == {"VLLM_CPU_KVCACHE_SPACE": "1"}
    assert launch_env(command)["VLLM_CPU_KVCACHE_SPACE"] == "1"


@pytest.mark.parametrize(("cpu_has_bf16", "dtype"), [(True, None), (False, "float32")])
def test_vllm_on_cpu_runs_float32_where_the_cpu_has_no_bf16_arithmetic(
    vllm_python, model_dir, monkeypatch, cpu_has_bf16, dtype
):
    monkeypatch.setattr(vllm_launch, "has_bf16_arithmetic", lambda: cpu_has_bf16)
    command = vllm_launch.reference_command(["--max-num-seqs", "4"], str(model_dir))
    assert command.flags.get("--dtype") == dtype


@pytest.mark.parametrize("chosen", [["--dtype", "bfloat16"], ["--dtype=bfloat16"]])
def test_vllm_dtype_named_in_the_flags_is_kept_on_a_cpu_without_bf16(vllm_python, model_dir, monkeypatch, chosen):
    monkeypatch.setattr(vllm_launch, "has_bf16_arithmetic", lambda: False)
    command = vllm_launch.reference_command(chosen, str(model_dir))
    assert command.flags["--dtype"] == "bfloat16"
    assert sum(word.split("=", 1)[0] == "--dtype" for word in launch_words(command)) == 1


def test_demo_engine_vllm_starts_from_the_poor_flags_without_bundled_only_ones(vllm_python, model_dir):
    command = _demo_command("--engine", "vllm", "--model", str(model_dir))
    assert command.flags["--max-num-seqs"] == "1" and command.flags["--max-model-len"] == "2048"
    assert not _flag_words(launch_words(command)) & set(BUNDLED_ONLY)


def test_demo_engine_vllm_defaults_its_base_flags_to_the_vllm_ones():
    assert DemoSettings(engine="vllm").base_flags == list(VLLM_BASE_FLAGS)
    assert "--disable-log-requests" in DemoSettings().base_flags


def test_demo_default_engine_is_the_bundled_engine(model_dir):
    words = launch_words(_demo_command("--model", str(model_dir)))
    assert words[1:4] == ["-m", "engine", "serve"] and "--disable-log-requests" in words


def test_vllm_start_with_a_bundled_only_flag_is_a_user_error_naming_vllms_equivalent(vllm_python, model_dir):
    with pytest.raises(UserError, match="--device-memory-gib.*VLLM_CPU_KVCACHE_SPACE"):
        start_command("vllm", ["--device-memory-gib", "2"], str(model_dir))


@pytest.mark.parametrize("command", ["demo", "tune"])
def test_engine_vllm_without_a_vllm_environment_is_one_line_and_exit_2(command, no_vllm, tmp_path, capsys):
    out = tmp_path / "out"
    assert main([command, "--engine", "vllm", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "scripts/install.sh" in err and "SERVOPS_VLLM_PYTHON" in err
    assert not out.exists()


def test_tune_engine_vllm_starts_from_the_demo_poor_configuration(vllm_python, model_dir):
    command = _tune_command("--engine", "vllm", "--model", str(model_dir))
    assert command.program == ["vllm", "serve"] and command.flags["--max-num-seqs"] == "1"
    assert not set(command.flags) & set(BUNDLED_ONLY)


def test_tune_engine_and_server_command_together_is_one_line_and_exit_2(tmp_path, capsys):
    argv = ["tune", "--engine", "vllm", "--server-command", "vllm serve m", "--out", str(tmp_path / "out")]
    assert main(argv) == 2
    assert "mutually exclusive" in capsys.readouterr().err


def test_tune_server_command_with_env_prefix_runs_vllm_from_its_environment(vllm_python, model_dir):
    command = _tune_command("--server-command", f"VLLM_CPU_KVCACHE_SPACE=1 vllm serve {model_dir} --max-num-seqs 2")
    assert command.env == {"VLLM_CPU_KVCACHE_SPACE": "1"} and command.program == ["vllm", "serve"]
    assert launch_words(command)[0] == str(vllm_python)


def test_tune_server_command_vllm_without_a_vllm_environment_is_a_user_error(no_vllm, model_dir):
    with pytest.raises(UserError, match="--server-command: SERVOPS_VLLM_PYTHON=.*scripts/install.sh"):
        _tune_command("--server-command", f"VLLM_CPU_KVCACHE_SPACE=1 vllm serve {model_dir}")


def test_tune_server_command_with_an_unknown_program_is_a_user_error():
    with pytest.raises(UserError, match="'no-such-server-xyz' is not on PATH"):
        _tune_command("--server-command", "no-such-server-xyz serve m")


def test_waiting_for_a_compiled_vllm_says_it_compiles_and_eager_or_bundled_do_not(vllm_python, model_dir):
    compiled = start_command("vllm", ["--max-num-seqs", "1"], str(model_dir))
    eager = start_command("vllm", ["--enforce-eager"], str(model_dir))
    assert "compiles" in (startup_note(compiled) or "")
    assert startup_note(eager) is None and startup_note(start_command("bundled", [])) is None


def test_tune_server_command_with_unbalanced_quotes_names_server_command_not_server_args(capsys):
    """argparse refuses it while parsing (type=command_line): one line naming --server-command, exit 2."""
    with pytest.raises(SystemExit) as exit_info:
        _tune_command("--server-command", "vllm serve 'unbalanced")
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --server-command" in err and "quote it" in err and "--server-args" not in err


def test_the_vllm_venv_is_looked_for_beside_the_checkout_whatever_the_folder(tmp_path, monkeypatch):
    """`.venv-vllm` is found from any working folder: the root servops looks in is the checkout (it holds
    pyproject.toml), not the package folder the launcher module sits in."""
    monkeypatch.delenv("SERVOPS_VLLM_PYTHON", raising=False)
    monkeypatch.chdir(tmp_path)
    assert (vllm_launch._PROJECT_ROOT / "pyproject.toml").is_file()
    beside = vllm_launch._PROJECT_ROOT / vllm_launch.VLLM_VENV_DIR / "bin" / "python"
    assert vllm_launch.find_vllm_python() == (beside if beside.is_file() else None)
