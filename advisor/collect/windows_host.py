"""Whether a pasted text shows vLLM run by a Windows Python, which vLLM does not support.

Why its own module: nothing vLLM prints says "Windows"; the errors a native Windows install meets ("Failed to infer
device type", the model inspection subprocess failing, compiled ops missing) each read as another cause. Only the
paths do: a traceback's frame in a drive-letter path into vLLM's package (`C:\\…\\site-packages\\vllm\\config.py`),
or `python.exe` running a vLLM module (vLLM's inspection subprocess, `['D:\\…\\python.exe', '-m',
'vllm.model_executor.models.registry']`), or torch's extension builder on a Windows CUDA toolkit while pip builds vLLM
(`No CUDA runtime is found, using CUDA_HOME='C:\\…'`). The log reader notes it beside the line's own event, never in
its place, so the traceback is read as before. vLLM's installation guide, every release from 0.4 to 0.33
(docs/getting_started/installation, "OS: Linux"): "vLLM does not support Windows natively", use WSL.
"""

from __future__ import annotations

import re

# One or two backslashes between parts: a path printed as is, or inside a Python repr ('D:\\soft\\python.exe').
_PART = r"[^\\\s'\"<>|]+"
_WINDOWS_VLLM = re.compile(
    rf"(?P<path>\b[A-Za-z]:\\{{1,2}}(?:{_PART}\\{{1,2}})*site-packages\\{{1,2}}vllm\\{{1,2}}{_PART})"
    rf"|(?P<exe>\b[A-Za-z]:\\{{1,2}}(?:[^\\'\"]+\\{{1,2}})*python[\d.]*\.exe)['\"]?,? +['\"]?-m['\"]?,? +['\"]?vllm\b"
    # torch's extension builder on a Windows CUDA toolkit, as `pip install vllm` builds vLLM's source there (vllm#179)
    rf"|No CUDA runtime is found, using CUDA_HOME='(?P<home>[A-Za-z]:\\{{1,2}}[^']*)'"
)


def windows_vllm_path(text: str) -> str | None:
    """The Windows path that runs vLLM in `text` (its package's file, or the python.exe running its module), with a
    repr's doubled backslashes made single; None when the line shows none."""
    if "\\" not in text:
        return None
    found = _WINDOWS_VLLM.search(text)
    if found is None:
        return None
    return (found["path"] or found["exe"] or found["home"]).replace("\\\\", "\\")


# Modules of Python's standard library that every Unix build has and Windows' has not: a vLLM import that finds one
# missing is a Windows Python (BerriAI/litellm#7581: LiteLLM's in-process vllm provider, `VLLMException - No module
# named 'resource'`: vLLM's import of it failed on Windows).
_UNIX_ONLY_MODULE = re.compile(r"No module named '(?P<module>resource|fcntl|termios|pwd|grp)'")
UNIX_ONLY_NOTE = "Python's {module} module, which every Unix Python has and a Windows Python has not"


def windows_only_module(text: str) -> str | None:
    """What a missing Unix-only standard module in `text` says of the host (a Windows Python); None otherwise."""
    found = _UNIX_ONLY_MODULE.search(text)
    return UNIX_ONLY_NOTE.format(module=found["module"]) if found else None
