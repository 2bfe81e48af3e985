"""OP-7.48 and OP-7.51: the PyTorch build installed, and what must be built for it.

OP-7.48: the PyTorch installed has no CUDA, and something called CUDA through it.

Why a rule of its own: torch raises `AssertionError: Torch not compiled with CUDA enabled` from its CUDA module's
lazy initialisation when its compiled core has no CUDA functions (torch/cuda/__init__.py, `_lazy_init`, torch 2.13),
before any GPU is looked at: the driver, the GPUs and vLLM's flags are not the question. Two ways to meet it. On an
NVIDIA host the PyTorch under vLLM is a CPU build (`2.5.1+cpu`): installed from PyTorch's CPU index, or over vLLM's
own by a later install; PyPI's torch for Linux x86_64 is the CUDA build that vLLM's wheel pins. On another
accelerator's platform (Ascend NPUs through vllm-ascend and torch_npu, TPUs through torch_xla) PyTorch has no CUDA
by design, and the error means a code path that calls CUDA ran there: a model or feature the platform's plugin
does not cover, or a plugin release not made for the installed vLLM (vllm-ascend#780, vllm#12936 on TPU).

OP-7.51: torchvision's compiled ops did not load into the installed torch. torchvision loads its C++ library in a
try/except (torchvision/extension.py), so a library built for another torch fails silently, and the first sign is
torch's dispatcher refusing the fake it registers for `torchvision::nms` at import (torchvision/_meta_registrations.py:
`operator torchvision::nms does not exist`), which vLLM meets whenever transformers imports torchvision for an image
processor. A torchvision is built for one torch release and one variant (CPU, a CUDA release): pytorch/vision's README
pairs torchvision 0.(N+15) with torch 2.N, and a wheel of the right number from another index fails the same way
(pytorch/pytorch#122494: torch 2.2.1+cpu beside PyPI's torchvision 0.17.1; its CPU wheel fixed it). vllm-ascend pinned
torchvision below 0.21 to match torch 2.5.1 for exactly this error (vllm-ascend PR #479).
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
    raised = next((e for e in events if e.message in ("assert", "no_cuda_library")), None)
    if raised is None:
        return []
    platform = next((e.component for e in events if e.message == "platform" and e.component), None)
    plugin = next((e.message for e in facts.events_of(LogEventKind.PLATFORM_PLUGIN) if e.message), None)
    build = next((e for e in events if e.message == "cpu_build"), None)
    return [_finding(raised, build, platform or plugin)]


def _finding(raised: LogEvent, build: LogEvent | None, platform: str | None) -> Finding:
    said = (
        f"{raised.component}: cannot open shared object file"
        if raised.message == "no_cuda_library"
        else "Torch not compiled with CUDA enabled"
    )
    evidence = [c.log_evidence(raised, name="PyTorch without CUDA", value=said)]
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
        summary=(
            f"vLLM's compiled ops link against PyTorch's CUDA library ({raised.component}), which only a CUDA build "
            "of PyTorch ships; the loader found none. "
            if raised.message == "no_cuda_library"
            else "torch refused before looking at any GPU: its compiled core has no CUDA. "
        )
        + "vLLM's CUDA wheel pins a "
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
        checks="torch's `AssertionError: Torch not compiled with CUDA enabled`, or the loader's `libtorch_cuda.so: "
        "cannot open shared object file` (vLLM's ops need PyTorch's CUDA library); beside it, the installed build's "
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

# --- OP-7.51 torchvision built for another torch -----------------------------------------------------------------


def _check_torchvision(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.TORCHVISION_MISMATCH)
    if not events:
        return []
    event = next((e for e in events if e.message == "cuda"), events[0])
    if event.message == "cpu_build":
        title = (
            f"torchvision's {event.component} has no CUDA kernel here: a CPU build of torchvision beside a CUDA torch"
        )
    elif event.message == "cuda":
        title = (
            f"torchvision was built for CUDA {event.version}, the installed PyTorch for CUDA {event.installed}: "
            "torchvision is not the build made for this torch"
        )
    else:
        missing = f" ({event.component} is missing)" if event.component else ""
        title = f"torchvision's compiled ops did not load{missing}: torchvision is not the build made for this torch"
    return [
        RULE_TORCHVISION.finding(
            Severity.CRITICAL,
            title,
            summary="A torchvision wheel is built for one torch release and one variant (CPU, or one CUDA release); "
            "beside another, its C++ ops do not load and importing torchvision fails. vLLM imports it through "
            "transformers for image processors, so the server stops before it serves.",
            evidence=[c.log_evidence(event, name="torchvision", value=event.component or event.message)],
            actions=[
                "`pip show torch torchvision`: torch 2.N pairs with torchvision 0.(N+15) (pytorch/vision's README: "
                "0.20 with 2.5), and both must come from the same index: a `+cpu` torch with the CPU "
                "torchvision, a `+cu128` torch with the cu128 one.",
                "Reinstall torchvision to match without touching torch: `pip install --force-reinstall --no-deps "
                "torchvision==<pair> --index-url https://download.pytorch.org/whl/<cpu|cu128|…>`; a package installed "
                "after vLLM that pulled torchvision from PyPI (another CUDA variant) is the usual cause.",
            ],
            confidence=0.9,
        )
    ]


RULE_TORCHVISION = Rule(
    code="OP-7.51",
    title="torchvision is not the build made for the installed torch",
    category=Category.STARTUP,
    check=_check_torchvision,
    needs=("events",),
    page=RulePage(
        checks="torch's `operator torchvision::nms does not exist` and `Could not run 'torchvision::nms' with "
        "arguments from the 'CUDA' backend` (a CPU torchvision); torchvision's `Couldn't load custom C++ ops. This "
        "can happen if your PyTorch and torchvision versions are incompatible` and `Detected that PyTorch and "
        "torchvision were compiled with different CUDA major versions`.",
        why="torchvision's C++ library is built against one torch release and variant; beside another it fails to "
        "load silently and the import fails at the first op it registers, which vLLM reaches through transformers.",
        example="torch 2.2.1+cpu with PyPI's torchvision 0.17.1 (pytorch/pytorch#122494: the CPU wheel of the same "
        "release fixed it); vllm-ascend pinning torchvision<0.21 for torch 2.5.1 (vllm-ascend PR #479).",
        fix="torchvision 0.(N+15) for torch 2.N, from the same index as torch (cpu, cu128 …), installed with "
        "--no-deps so torch stays.",
        limits="The words do not say which side moved; `pip show torch torchvision` does.",
        references=[
            "https://github.com/pytorch/vision#installation",
            "https://github.com/pytorch/pytorch/issues/122494",
            "https://github.com/vllm-project/vllm-ascend/pull/479",
        ],
    ),
)

RULES: list[Rule] = [RULE, RULE_TORCHVISION]
