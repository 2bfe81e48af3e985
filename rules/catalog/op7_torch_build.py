"""OP-7.48: the PyTorch installed has no CUDA, and something called CUDA through it.

Why a rule of its own: torch raises `AssertionError: Torch not compiled with CUDA enabled` from its CUDA module's
lazy initialisation when its compiled core has no CUDA functions (torch/cuda/__init__.py, `_lazy_init`, torch 2.13),
before any GPU is looked at: the driver, the GPUs and vLLM's flags are not the question. Two ways to meet it. On an
NVIDIA host the PyTorch under vLLM is a CPU build (`2.5.1+cpu`): installed from PyTorch's CPU index, or over vLLM's
own by a later install; PyPI's torch for Linux x86_64 is the CUDA build that vLLM's wheel pins. On another
accelerator's platform (Ascend NPUs through vllm-ascend and torch_npu, TPUs through torch_xla) PyTorch has no CUDA
by design, and the error means a code path that calls CUDA ran there: a model or feature the platform's plugin
does not cover, or a plugin release not made for the installed vLLM (vllm-ascend#780, vllm#12936 on TPU).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

CHECK_BUILD = (
    '`python -c "import torch; print(torch.__version__, torch.version.cuda)"` in the server\'s environment: a '
    "`+cpu` suffix and None are a build without CUDA."
)
_CPU_BUILD = [
    CHECK_BUILD,
    "Reinstall vLLM in a clean environment so pip brings the CUDA build of the PyTorch version it pins "
    "(`pip install vllm`; PyPI's torch for Linux x86_64 is a CUDA build), and install nothing after it from "
    "PyTorch's CPU index (`--index-url https://download.pytorch.org/whl/cpu`) or from a requirements file that "
    "pins torch again.",
    "In an image: the layer that installs torch after vLLM (or a base image built for CPUs) replaced it; `pip show "
    "torch` in the image says which build it holds.",
]
_PLATFORM = [
    "The traceback's frames say which code called CUDA: a model or feature the platform's plugin does not cover "
    "calls vLLM's CUDA path; serve a model and options the plugin lists as supported, or report it to the plugin's "
    "tracker with the traceback.",
    "Install the plugin release made for the installed vLLM (each vllm-ascend release names the vLLM release it "
    "pairs with): a plugin older or newer than vLLM leaves CUDA paths of vLLM's unpatched.",
]


def _check(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.TORCH_WITHOUT_CUDA)
    raised = next((e for e in events if e.message == "assert"), None)
    if raised is None:
        return []
    platform = next((e.component for e in events if e.message == "platform" and e.component), None)
    plugin = next((e.message for e in facts.events_of(LogEventKind.PLATFORM_PLUGIN) if e.message), None)
    build = next((e for e in events if e.message == "cpu_build"), None)
    return [_finding(raised, build, platform or plugin)]


def _finding(raised: LogEvent, build: LogEvent | None, platform: str | None) -> Finding:
    evidence = [c.log_evidence(raised, name="PyTorch without CUDA", value="Torch not compiled with CUDA enabled")]
    if build is not None:
        evidence.append(c.log_evidence(build, name="PyTorch build", value=build.version))
    if platform and build is None:
        return RULE.finding(
            Severity.CRITICAL,
            f"code that needs CUDA ran on a platform whose PyTorch has none ({platform})",
            summary=f"This platform's PyTorch ({platform}) is built without CUDA, as it should be; something called "
            "torch.cuda on it anyway: a model or feature path of vLLM's the platform's plugin does not replace, or a "
            "plugin release made for another vLLM.",
            evidence=evidence,
            actions=_PLATFORM,
            confidence=0.7,
        )
    built = f"a CPU build ({build.version})" if build is not None else "a build without CUDA, most often a CPU build"
    return RULE.finding(
        Severity.CRITICAL,
        f"the PyTorch installed is {built}: vLLM's CUDA path cannot run on it",
        summary="torch refused before looking at any GPU: its compiled core has no CUDA. vLLM's CUDA wheel pins a "
        "CUDA build of PyTorch; another install put a build without CUDA in its place. On another accelerator's "
        "platform (Ascend, TPU) this instead means a CUDA-only path ran there.",
        evidence=evidence,
        actions=_CPU_BUILD + ([] if build is not None else _PLATFORM[:1]),
        confidence=0.85 if build is not None else 0.75,
    )


RULE = Rule(
    code="OP-7.48",
    title="the PyTorch installed has no CUDA",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="torch's `AssertionError: Torch not compiled with CUDA enabled`; beside it, the installed build's "
        "`+cpu` version (collect_env's `PyTorch version:`, `pip list`'s torch) or another accelerator's PyTorch "
        "package (torch-npu, torch-xla) in `pip list`, or the platform plugin vLLM activated.",
        why="torch raises it from its CUDA module's initialisation when its compiled core has no CUDA functions "
        "(torch/cuda/__init__.py, `_lazy_init`): the installed build decides, not the GPU, the driver or a flag.",
        example="`pip install torch --index-url https://download.pytorch.org/whl/cpu` run after `pip install vllm` "
        "in an image: vLLM starts and fails at its first CUDA call.",
        fix="On NVIDIA: reinstall vLLM so pip brings the CUDA build of the torch it pins, and nothing after it "
        "from PyTorch's CPU index. On Ascend or TPU: a model and options the plugin supports, and the plugin release "
        "made for the installed vLLM.",
        limits="Without the build's version or a platform in the text, the CPU build is the likelier reading and the "
        "platform one is offered second; which code called CUDA is in the traceback, not in this line.",
        references=[
            "https://github.com/vllm-project/vllm-ascend/issues/780",
            "https://github.com/vllm-project/vllm/issues/12936",
        ],
    ),
)

RULES: list[Rule] = [RULE]
