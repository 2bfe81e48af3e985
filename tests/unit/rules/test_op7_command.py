"""OP-7.20: vLLM's command line refused its arguments; a program first is the entrypoint, a flag is the flag."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from advisor.collect.server_args import parse_command
from advisor.triage.text import _finding
from reports.triage_view import change_view
from rules.catalog import op7_command
from rules.evaluate import evaluate
from rules.facts import Facts
from tests.unit.rules.factories import top_finding


def _facts(*lines: str) -> Facts:
    return Facts(events=parse_lines(list(lines)).events)


def test_a_flag_vllm_does_not_take_is_removed_and_metrics_need_none():
    # defilantech/LLMKube#1030: an operator added --enable-metrics to every vLLM command
    facts = _facts(
        "usage: vllm [-h] [-v]",
        "            {chat,complete,serve,launch,bench,collect-env,run-batch} ...",
        "vllm: error: unrecognized arguments: --enable-metrics",
    )
    top = evaluate(facts).findings[0]
    assert top.rule == "OP-7.20" and top.title == (
        "vLLM refused the argument --enable-metrics: not a flag vLLM's command line takes"
    )
    [change] = top.changes
    assert (change.flag, change.proposed, change.command_line()) == ("--enable-metrics", "", "remove --enable-metrics")
    assert "serves Prometheus metrics at /metrics without a flag" in top.summary


def test_a_misspelt_flag_is_named_by_the_flag_vllm_has():
    [finding] = op7_command.RULE_UNRECOGNIZED.evaluate(
        _facts("vllm: error: unrecognized arguments: --max-model-length 8192")
    )
    assert finding.title == "vLLM refused the argument --max-model-length: a misspelling of --max-model-len"
    assert not finding.changes and finding.actions[0].startswith("Spell it --max-model-len, with the same value")


def test_a_long_flag_typed_with_one_dash_is_the_flag_with_two():
    # vast-data/VUA#7, verbatim: a wrapper's parser for `vllm bench serve`; the rerun with `--port 8000` parsed
    [finding] = op7_command.RULE_UNRECOGNIZED.evaluate(_facts("vua-vllm: error: unrecognized arguments: -port 8000"))
    assert finding.title == "vLLM refused the argument -port: a misspelling of --port"
    [with_value] = op7_command.RULE_UNRECOGNIZED.evaluate(
        _facts("vllm: error: unrecognized arguments: -max-model-len=4096")
    )
    assert with_value.title.endswith("a misspelling of --max-model-len")


def test_a_command_appended_to_the_servers_entrypoint_points_at_the_entrypoint():
    # opea-project/GenAIComps#336: docker run IMAGE /bin/bash -c "…" on an image whose entrypoint is the api_server
    facts = _facts(
        "api_server.py: error: unrecognized arguments: /bin/bash -c cd / && export VLLM_CPU_KVCACHE_SPACE=40 && "
        "python3 -m vllm.entrypoints.openai.api_server --model  --port 80"
    )
    [finding] = op7_command.RULE_UNRECOGNIZED.evaluate(facts)
    assert finding.title.startswith("vLLM's server was given a command as its arguments (/bin/bash …)")
    assert "--entrypoint /bin/bash" in finding.actions[0]


def test_llama_cpps_chat_program_after_the_entrypoint_is_ramalamas_run_whose_vllm_runtime_only_serves():
    # containers/ramalama#758 (its maintainers: "vllm can only do serve at this point"); the line verbatim
    facts = _facts("error: unrecognized arguments: llama-run -c 2048 --temp 0.8 -v --ngl 999 /mnt/models/model.file")
    [finding] = op7_command.RULE_UNRECOGNIZED.evaluate(facts)
    assert "ramalama --runtime vllm serve MODEL" in finding.actions[0]
    assert "--entrypoint /bin/bash" in finding.actions[1]


def test_a_python_command_line_after_the_entrypoint_is_named_by_its_script_and_a_plugins_file_is_not():
    # wsmlby/homl#3: the CPU container's server given `-u main.py`, the interpreter's option and a script
    [finding] = op7_command.RULE_UNRECOGNIZED.evaluate(
        _facts("api_server.py: error: unrecognized arguments: -u main.py")
    )
    assert finding.title.startswith("vLLM's server was given a command as its arguments (main.py …)")
    # a flag's own .py value is a flag refused, not a command
    [flag] = op7_command.RULE_UNRECOGNIZED.evaluate(
        _facts("vllm serve: error: unrecognized arguments: --tool-parser-plugin parser.py")
    )
    assert "--tool-parser-plugin" in flag.title


def test_a_flag_proposed_empty_is_taken_off_the_command():
    command = parse_command("vllm serve m --enable-metrics --port 8000")
    assert command.with_changes({"--enable-metrics": ""}).render() == "vllm serve m --port 8000"


def test_a_removal_reads_as_one_in_the_text_and_the_report():
    [finding] = op7_command.RULE_UNRECOGNIZED.evaluate(_facts("vllm: error: unrecognized arguments: --enable-metrics"))
    lines = _finding(1, finding)
    assert any(line.startswith("   change --enable-metrics: remove it") for line in lines)
    assert change_view(finding.changes[0].model_dump())["proposed"] == "(remove)"


def test_a_flag_of_older_releases_names_the_releases_that_took_it():
    """The message catalog's engine arguments per release (read from vLLM's packages): --enable-reasoning was
    EngineArgs' in 0.8-0.9, --swap-space in 0.4-0.17; a server that refuses them runs a later vLLM."""
    [finding] = op7_command.RULE_UNRECOGNIZED.evaluate(
        _facts("vllm serve: error: unrecognized arguments: --enable-reasoning")
    )
    assert finding.title == (
        "vLLM refused the argument --enable-reasoning: a flag of vLLM 0.8–0.9, removed after 0.9: this server runs a "
        "later vLLM"
    )
    assert [c.command_line() for c in finding.changes] == ["remove --enable-reasoning"]
    [swap] = op7_command.RULE_UNRECOGNIZED.evaluate(_facts("error: unrecognized arguments: --swap-space 16"))
    assert "a flag of vLLM 0.4–0.17" in swap.title


def test_ray_serve_llms_unknown_engine_argument_is_the_engine_argument_removed_from_vllm():
    """ray-project/ray#64466, the line verbatim: Ray's embedding guide put task="embed" in engine_kwargs, which Ray
    Serve LLM checks against the installed vLLM's arguments (vLLM 0.22 there); the guide was outdated, since vLLM no
    longer takes `task` (Ray's doc PR #64504 closed it). The same engine argument as the flag, so the same releases."""
    line = (
        "Hi team, I was following the [Deploy an embedding model](https://docs.ray.io/en/latest/serve/llm/user-guides/"
        "vllm-compatibility.html#deploy-an-embedding-model) documentation and came across an error. When specifying "
        '`task="embed"`, it fails with `ValueError: Unknown engine argument: task`.'
    )
    top = top_finding(line)
    assert top.rule == "OP-7.20" and top.title.startswith(
        "Ray Serve LLM refused the engine argument task: an engine argument of vLLM 0.6.4.post1"
    )
    assert not top.changes  # an engine_kwargs key is no flag of a command to change
    assert top.summary.startswith("Ray Serve LLM (which checks engine_kwargs against the installed vLLM's arguments)")
    assert top.actions[0].startswith("Remove task from engine_kwargs")
    assert "--runner (pooling or generate) and --convert" in top.actions[0]
    [misspelt] = op7_command.RULE_UNRECOGNIZED.evaluate(_facts("ValueError: Unknown engine argument: max_num_seq"))
    assert misspelt.title == "Ray Serve LLM refused the engine argument max_num_seq: a misspelling of max_num_seqs"


def test_a_flag_vllm_takes_refused_says_an_older_server_or_a_parser_not_vllms():
    newer = op7_command.RULE_UNRECOGNIZED.evaluate(
        _facts("api_server.py: error: unrecognized arguments: --enable-auto-tool-choice --tool-call-parser hermes")
    )
    assert newer[0].title == (
        "vLLM refused the argument --enable-auto-tool-choice: a flag vLLM 0.32.0 takes: this server runs a release "
        "without it"
    )
    [always] = op7_command.RULE_UNRECOGNIZED.evaluate(_facts("error: unrecognized arguments: --max-model-len 4096"))
    assert always.title.endswith("a flag every vLLM release takes: the parser that refused it is not vLLM's")


def test_a_flags_value_refused_says_missing_wrong_type_or_not_a_choice():
    missing = op7_command.RULE_VALUE.evaluate(
        _facts("vllm: error: argument --tensor-parallel-size/-tp: expected one argument")
    )
    assert missing[0].title == "vLLM's command line refused --tensor-parallel-size: it was given no value"
    assert "$TP" in missing[0].summary and "--tensor-parallel-size=<value>" in missing[0].actions[1]
    suffixed = op7_command.RULE_VALUE.evaluate(
        _facts("api_server.py: error: argument --max-model-len: invalid int value: '32k'")
    )
    assert suffixed[0].title == "vLLM's command line refused --max-model-len '32k': not an int value it reads"
    assert suffixed[0].actions == [
        "Write --max-model-len as plain digits: 32000 (32k read in thousands) or 32768 (in powers of two)."
    ]
    choice = op7_command.RULE_VALUE.evaluate(
        _facts(
            "vllm serve: error: argument --dtype: invalid choice: 'bf16' (choose from 'auto', 'half', 'float16', "
            "'bfloat16', 'float', 'float32')"
        )
    )
    assert choice[0].title.endswith("not one of its choices (did you mean 'bfloat16'?)")


def test_a_config_value_outside_its_listed_values_is_named_by_the_values_with_the_one_to_give():
    # vllm-project/vllm-omni PR #1397, verbatim (pytest's prefix kept): a rank-48 adapter made max_lora_rank 48
    rank = (
        "E         Input should be 1, 8, 16, 32, 64, 128, 256, 320 or 512 [type=literal_error, input_value=48, "
        "input_type=int]"
    )
    [finding] = op7_command.RULE_VALUE.evaluate(_facts(rank))
    assert finding.title.startswith("vLLM's configuration refused --max-lora-rank 48: it takes only the values")
    assert [(c.flag, c.current, c.proposed) for c in finding.changes] == [("--max-lora-rank", "48", "64")]
    # an older release's list (no fp8_ds_mla …) still names the flag, and a misspelling gets the nearest value
    dtype = (
        "  Input should be 'auto', 'float16', 'bfloat16', 'fp8', 'fp8_e4m3', 'fp8_e5m2' or 'fp8_inc' "
        "[type=literal_error, input_value='fp8_e4m3fn', input_type=str]"
    )
    [finding] = op7_command.RULE_VALUE.evaluate(_facts(dtype))
    assert [(c.flag, c.proposed) for c in finding.changes] == [("--kv-cache-dtype", "fp8_e4m3")]
    # two flags with one list: both named, no change chosen between them; a request's roles are no flag's
    mamba = (
        "Input should be 'auto', 'float32', 'float16' or 'bfloat16' [type=literal_error, input_value='fp8', "
        "input_type=str]"
    )
    [finding] = op7_command.RULE_VALUE.evaluate(_facts(mamba))
    assert "--mamba-cache-dtype or --mamba-ssm-cache-dtype" in finding.title and not finding.changes
    roles = "Input should be 'user' or 'assistant' [type=literal_error, input_value='system', input_type=str]"
    assert op7_command.RULE_VALUE.evaluate(_facts(roles)) == []


def test_a_program_not_on_the_path_is_named_with_what_its_absence_means():
    runc = (
        'Error: failed to start container "vllm": Error response from daemon: OCI runtime create failed: '
        'container_linux.go:380: starting container process caused: exec: "vllm": executable file not found in '
        "$PATH: unknown"
    )
    [finding] = op7_command.RULE_NOT_FOUND.evaluate(_facts(runc))
    assert finding.title == (
        "the command that should start the server names vllm, which is not on the PATH (the container never started)"
    )
    assert "python3 -m vllm.entrypoints.openai.api_server" in finding.actions[0]
    assert "kubectl get pod <pod> -o yaml" in finding.actions[1]
    for line, program in (
        ("bash: vllm: command not found", "vllm"),
        ("/bin/sh: 1: vllm: not found", "vllm"),
        ("zsh: command not found: vllm", "vllm"),
        ("/entrypoint.sh: line 3: python: command not found", "python"),
        ("sh: 1: nvidia-smi: not found", "nvidia-smi"),
    ):
        [shell] = op7_command.RULE_NOT_FOUND.evaluate(_facts(line))
        assert shell.evidence[0].value == program and shell.title.endswith("(the shell found no such program)"), line
    [smi] = op7_command.RULE_NOT_FOUND.evaluate(_facts("sh: 1: nvidia-smi: not found"))
    assert smi.title.startswith("nvidia-smi is not here: a container started without GPUs")
    # prose that says "not found" is no shell's report
    for line in ("the file was not found", "ERROR: model not found", "config.json: not found in the repository"):
        assert op7_command.RULE_NOT_FOUND.evaluate(_facts(line)) == [], line


def test_a_program_the_shell_found_but_may_not_run_is_the_users_rights_not_a_missing_program():
    # vllm#15461, verbatim: the CPU deployment on OpenShift, the pod's command refused to its arbitrary uid
    [finding] = op7_command.RULE_NOT_FOUND.evaluate(_facts("/bin/sh: 1: vllm: Permission denied"))
    assert finding.title == "the command's program vllm exists but this user may not run it (permission denied)"
    assert "chmod -R g=u" in finding.actions[0]
    # a Python error about a file is not the shell refusing a program
    assert (
        op7_command.RULE_NOT_FOUND.evaluate(_facts("PermissionError: [Errno 13] Permission denied: '/.triton'")) == []
    )


def test_podmans_init_failing_to_start_pid_one_is_a_command_the_image_lacks():
    # containers/ramalama#2214, verbatim (RamaLama's vLLM runtime under Podman; no cause confirmed in the thread)
    [finding] = op7_command.RULE_NOT_FOUND.evaluate(
        _facts("ERROR (catatonit:2): failed to exec pid1: No such file or directory")
    )
    assert finding.title == "the container's command names a program the image lacks (Podman's init could not start it)"
    assert "podman inspect" in finding.actions[0]


def test_a_script_whose_interpreter_this_user_may_not_run_is_the_permission_reading():
    # vllm PR #15302, verbatim: vLLM 0.8's image under OpenShift, its venv's python a link into root's home
    line = "`/opt/venv/bin/vllm: /opt/venv/bin/python3: Permission denied`"
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.61" and "/opt/venv/bin/python3 exists but this user may not run it" in top.title


def test_cri_os_words_for_a_program_not_on_the_path_are_the_container_runtimes():
    # vllm-project/production-stack#869, verbatim
    line = (
        "```container create failed: executable file `lmcache_experimental_server` not found in $PATH: No such file "
        "or directory```"
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.61" and "lmcache_experimental_server" in top.title


def test_a_flag_refused_by_a_server_older_than_it_says_so_when_the_text_dates_the_server():
    """vllm#9840, verbatim: `--task embedding` refused by the `latest` image of October 2024, a release older than the
    flag (a maintainer: it was only on main then). Alone, removal leads and the older server is the second reading;
    with a version line (0.6.3.post1's wording, added here to date the server) the older release is the reading."""
    refused = "`api_server.py: error: unrecognized arguments: --task embedding `"
    [alone] = op7_command.RULE_UNRECOGNIZED.evaluate(_facts(refused))
    assert "removed after 0.12" in alone.title
    assert alone.actions[1].startswith("Unless the server is older than the flag: a release before 0.6.4.post1")
    dated = _facts(refused, "INFO 10-29 10:00:00 api_server.py:528] vLLM API server version 0.6.3.post1")
    [older] = op7_command.RULE_UNRECOGNIZED.evaluate(dated)
    assert older.title.endswith("this server runs an older release, from before 0.6.4.post1")
    assert older.changes == [] and older.actions[0].startswith("Upgrade vLLM to a release that takes it")


def test_a_port_mapping_given_to_a_number_flag_is_dockers_p_after_the_image():
    # vllm#2235, verbatim (its closing quote lost to the paste's backtick): `docker run … vllm/vllm-openai -p 8000:8000`
    # on RunPod; a commenter: put -p before the image, where Docker reads it
    top = top_finding("`api_server.py: error: argument --pipeline-parallel-size/-pp: invalid int value: '8000:8000`")
    assert top.rule == "OP-7.47" and "port mapping '8000:8000' as --pipeline-parallel-size" in top.title
    assert top.actions[0].startswith("Move `-p 8000:8000`")
    # a number flag's own mistake keeps its reading
    typed = top_finding("api_server.py: error: argument --max-model-len: invalid int value: '32k'")
    assert "port mapping" not in typed.title
