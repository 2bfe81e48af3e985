"""OP-7.62: vLLM run by a Windows Python is named as the platform vLLM does not support, before what failed on it."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from advisor.collect.windows_host import windows_only_module, windows_vllm_path
from rules.evaluate import evaluate
from rules.facts import Facts

# A traceback of vLLM's own check under a Windows conda environment, and the model inspection subprocess's failure
# as vLLM logged it on Windows (vllm#9713: the LLM class loading a fine-tuned Llama on Windows)
FRAMES = [
    "Traceback (most recent call last):",
    '  File "C:\\Users\\me\\miniconda3\\envs\\llm\\Lib\\site-packages\\vllm\\config.py", line 1200, in __init__',
    '    raise RuntimeError("Failed to infer device type")',
    "RuntimeError: Failed to infer device type",
]
INSPECTION = (
    "ERROR 10-26 11:35:32 registry.py:267] subprocess.CalledProcessError: Command "
    "'['D:\\\\soft_install\\\\anaconda3\\\\envs\\\\fuseAI\\\\python.exe', '-m', "
    "'vllm.model_executor.models.registry']' returned non-zero exit status 1."
)


def _findings(lines: list[str]):
    return evaluate(Facts(events=parse_lines(lines).events)).findings


def test_a_windows_traceback_is_the_platform_first_and_its_error_still_read():
    findings = _findings(FRAMES)
    assert findings[0].rule == "OP-7.62" and "WSL 2" in findings[0].title
    assert "Failed to infer device type" in " ".join(f.title for f in findings[1:])  # read as before, ranked after
    assert findings[0].evidence[0].value == "C:\\Users\\me\\miniconda3\\envs\\llm\\Lib\\site-packages\\vllm\\config.py"


def test_python_exe_running_a_vllm_module_is_windows_with_the_repr_backslashes_made_single():
    top = _findings([INSPECTION])[0]
    assert top.rule == "OP-7.62" and top.evidence[0].value == "D:\\soft_install\\anaconda3\\envs\\fuseAI\\python.exe"


def test_paths_that_do_not_run_vllm_on_windows_are_not_flagged():
    for text in (
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/config.py", line 1, in f',  # Linux
        "C:\\code\\vllm\\client.py",  # a folder named vllm, not the installed package
        "launch.bat --model E:\\models\\Qwen2.5-1.5B",  # a Windows model path, no vLLM code
        "'C:\\\\Python312\\\\python.exe', '-m', 'pip'",  # python.exe running another module
    ):
        assert windows_vllm_path(text) is None, text


def test_torchs_extension_builder_on_a_windows_cuda_toolkit_is_a_windows_host():
    # vllm#179, verbatim: `pip install vllm` on native Windows building vLLM's source
    line = (
        "`No CUDA runtime is found, using CUDA_HOME='C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8"
        "\\bin'`"
    )
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.62" and "native Windows" in top.title


def test_a_unix_only_standard_module_missing_is_a_windows_python():
    # BerriAI/litellm#7581, verbatim: LiteLLM's in-process vllm provider on Windows
    line = "APIConnectionError: litellm.APIConnectionError: VLLMException - No module named 'resource'"
    top = evaluate(Facts(events=parse_lines([line]).events)).findings[0]
    assert top.rule == "OP-7.62" and top.evidence[0].description == "a Unix-only standard module missing"
    assert "resource" in str(top.evidence[0].value)
    assert windows_only_module("ModuleNotFoundError: No module named 'resources'") is None
    assert windows_only_module("ModuleNotFoundError: No module named 'uvloop'") is None
