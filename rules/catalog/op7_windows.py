"""OP-7.62: vLLM run by a Windows Python, a platform vLLM does not support.

Why a rule of its own: on native Windows, vLLM's failures read as other causes ("Failed to infer device type", its
model inspection subprocess exiting with status 1, a compiled op missing), and each rule that reads them proposes
a fix that cannot work there: a driver, a container flag, a package. vLLM's installation guide says it plainly in
every release from 0.4 to 0.33 ("OS: Linux"; "vLLM does not support Windows natively. To run vLLM on Windows, you
can use the Windows Subsystem for Linux (WSL) …", docs/getting_started/installation/gpu.md): the answer is the
platform, before any of them. The log reader notes a drive-letter path into vLLM's installed package, or python.exe
running a vLLM module (advisor/collect/windows_host.py).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

# Above VC-1's own words (0.97): vLLM's refusal on Windows is a consequence of the platform, not its cause.
WINDOWS_CONFIDENCE = 0.98


def _check_windows(facts: Facts) -> list[Finding]:
    seen = facts.events_of(LogEventKind.WINDOWS_HOST)
    if not seen:
        return []
    where = seen[0]
    evidence = c.log_evidence(where, name="windows_python", value=where.message)
    evidence.description = (
        "a Unix-only standard module missing"
        if (where.message or "").startswith("Python's")
        else "vLLM run from a Windows path (a drive letter and backslashes)"
    )
    return [
        RULE_WINDOWS.finding(
            Severity.CRITICAL,
            "vLLM runs here on native Windows, which it does not support: run it under WSL 2 or in a Linux container",
            summary="vLLM is built and tested for Linux only (its installation guide: 'vLLM does not support Windows "
            "natively'). On Windows its platform detection, its compiled kernels and the subprocess it inspects "
            "models in fail in ways that look like other causes, so the error in this text is a consequence of the "
            "platform, not something a setting fixes.",
            evidence=[evidence],
            actions=[
                "Run vLLM under WSL 2: install a Linux distribution (`wsl --install -d Ubuntu`), the NVIDIA driver "
                "for WSL on the Windows side (no Linux driver inside WSL), then `pip install vllm` inside the "
                "distribution; clients on Windows reach it at http://localhost:8000.",
                "Or run vLLM's image with Docker Desktop on its WSL 2 backend: `docker run --gpus all --ipc=host -p "
                "8000:8000 vllm/vllm-openai --model <model>`.",
                "A community build for native Windows (vllm-windows) is not vLLM's: its errors belong to its own "
                "tracker, and its release pairs with one Python, PyTorch and CUDA.",
            ],
            confidence=WINDOWS_CONFIDENCE,
        )
    ]


RULE_WINDOWS = Rule(
    code="OP-7.62",
    title="vLLM on native Windows",
    category=Category.CONFIGURATION,
    check=_check_windows,
    needs=("events",),
    page=RulePage(
        checks="A line that shows vLLM run by a Windows Python: a drive-letter path into its installed package (a "
        "traceback's frame, `C:\\…\\site-packages\\vllm\\config.py`) or python.exe running a vLLM module "
        "(`['D:\\…\\python.exe', '-m', 'vllm.model_executor.models.registry']`, the model inspection subprocess).",
        why="vLLM supports Linux only; on Windows its errors name other causes (no device type inferred, the "
        "inspection subprocess failing), whose fixes cannot work there.",
        example="RuntimeError: Failed to infer device type, under frames in C:\\…\\site-packages\\vllm\\; "
        "subprocess.CalledProcessError: Command '['D:\\…\\python.exe', '-m', 'vllm.model_executor.models.registry']' "
        "returned non-zero exit status 1.",
        fix="WSL 2 with the NVIDIA driver for WSL, or vLLM's image under Docker Desktop's WSL 2 backend.",
        limits="Reads paths only: a Windows client that calls a vLLM server on Linux prints no path into vLLM's "
        "package and is not flagged; a source checkout on Windows (no site-packages in its path) is not seen.",
        references=["https://docs.vllm.ai/en/latest/getting_started/installation/gpu/"],
    ),
)

RULES: list[Rule] = [RULE_WINDOWS]
