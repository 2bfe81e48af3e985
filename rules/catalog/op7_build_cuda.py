"""OP-7.118 and OP-7.120: building vLLM (or another CUDA extension) from source, with a CUDA toolkit of another release
than PyTorch's, or with none.

Why a rule of its own: vLLM's kernels compile against the installed PyTorch with the system's nvcc, and torch's
extension builder (torch/utils/cpp_extension.py) refuses when the two CUDA releases differ: `The detected CUDA
version (12.1) mismatches the version that was used to compile PyTorch (11.7). Please make sure to use the same CUDA
versions.` Nothing of vLLM is at fault; the pair is. In vllm#129 vLLM's maintainer answered a reporter with nvcc 11.8
to install PyTorch's CUDA 11.8 build. A released vLLM wheel needs no toolkit at all.

With no toolkit at all the same builder says `CUDA_HOME environment variable is not set. Please set it to your CUDA
install root.`, and vLLM's setup.py of the CUDA target `AssertionError: CUDA_HOME is not set` (tenstorrent/tt-xla#2338:
a fork of vLLM pip-installed from a git branch on a machine without CUDA). pip builds from source only when no wheel
fits (a git URL or fork, a Python or platform no wheel was made for, `--no-binary`); the released wheel, a toolkit of
PyTorch's CUDA, or vLLM's build for another device (VLLM_TARGET_DEVICE=cpu) are the ways out. The same words while vLLM
runs are a kernel compiled at its first use (OP-7.13), not an install.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity


def _check(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.BUILD_CUDA_MISMATCH)
    if not events:
        return []
    event = events[0]
    toolkit = event.version or "the toolkit's"
    built = f" ({event.cuda_required})" if event.cuda_required else ""
    return [
        RULE.finding(
            Severity.CRITICAL,
            f"building vLLM from source: the CUDA toolkit ({toolkit}) is another release than PyTorch's{built}",
            summary="vLLM's kernels compile against the installed PyTorch with the system's nvcc, and PyTorch's "
            "extension builder refuses a toolkit of another CUDA release than the one PyTorch was built with. The "
            "build stops before any kernel compiles.",
            evidence=[c.log_evidence(event, name="the toolkit's CUDA", value=toolkit)],
            actions=[
                f"Install the PyTorch build for CUDA {toolkit} (its wheel index, e.g. `--index-url "
                "https://download.pytorch.org/whl/cuXYZ`), as vLLM's maintainer advised in vllm#129; or point "
                f"CUDA_HOME at a toolkit of PyTorch's own release{built} (`python -c 'import torch; "
                "print(torch.version.cuda)'`).",
                "Or install a released vLLM wheel (`pip install vllm`), which brings its kernels and needs no toolkit.",
            ],
            confidence=0.85,
        )
    ]


RULE = Rule(
    code="OP-7.118",
    title="building vLLM: the CUDA toolkit and PyTorch's CUDA differ",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="torch's `The detected CUDA version (X) mismatches the version that was used to compile PyTorch (Y)`.",
        why="The source build stops on a pair of versions, not on vLLM; the fix is one of the pair, or no build.",
        example="`The detected CUDA version (12.1) mismatches the version that was used to compile PyTorch (11.7)` "
        "building vLLM in NVIDIA's PyTorch container (vllm#129).",
        fix="PyTorch built for the toolkit's CUDA, CUDA_HOME at PyTorch's, or a released wheel.",
        limits="A paste cut before PyTorch's release names only the toolkit's.",
        references=["https://github.com/vllm-project/vllm/issues/129"],
    ),
)


# --- OP-7.120 a build with no CUDA toolkit -------------------------------------------------------------------------


def vllm_was_running(facts: Facts) -> bool:
    """Whether the text is vLLM's own log (a line under its header or a process prefix, its version): a build there
    is a kernel compiled at engine start, not an install."""
    return any(e.level is not None or e.process or e.kind == LogEventKind.VERSION for e in facts.events)


def _check_no_toolkit(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.BUILD_NO_CUDA_HOME)
    if not events or vllm_was_running(facts):
        return []
    event = events[0]
    setup = event.component == "vLLM's setup.py"
    what = "vLLM's build" if setup else "a build of CUDA code (vLLM's, or a package pip compiles for it)"
    return [
        RULE_NO_TOOLKIT.finding(
            Severity.CRITICAL,
            f"{what} found no CUDA toolkit: pip is building from source where a released wheel needs none",
            summary="The build compiles CUDA kernels with the toolkit's nvcc, found through CUDA_HOME (else "
            "/usr/local/cuda), and this host has none. pip builds from source only when it found no wheel to "
            "install: a git URL or a fork, a Python or a platform no wheel was made for, or `--no-binary`.",
            evidence=[c.log_evidence(event, name="the build's check", value=event.message)],
            changes=[
                ConfigChange(
                    flag="CUDA_HOME",
                    proposed="<a CUDA toolkit of PyTorch's CUDA release, holding bin/nvcc>",
                    reason="the build needs nvcc and the CUDA headers; `python -c 'import torch; "
                    "print(torch.version.cuda)'` names the release to install",
                    cost="a toolkit (several GB) and a build of many minutes",
                    kind="env",
                )
            ],
            actions=[
                "Install a released vLLM wheel instead (`pip install vllm`, or the wheel for the Python and CUDA "
                "you have): it brings its kernels and needs no toolkit. A fork or a git branch has no wheels; use "
                "its release, or build where a toolkit is.",
                "On a host with no NVIDIA GPU, build for the device it has (`VLLM_TARGET_DEVICE=cpu pip install -e .` "
                "for vLLM's CPU backend; an accelerator's plugin package for the others) instead of CUDA.",
            ],
            confidence=0.8,
        )
    ]


RULE_NO_TOOLKIT = Rule(
    code="OP-7.120",
    title="building CUDA code with no CUDA toolkit",
    category=Category.STARTUP,
    check=_check_no_toolkit,
    needs=("events",),
    page=RulePage(
        checks="torch's `CUDA_HOME environment variable is not set. Please set it to your CUDA install root.` and "
        "vLLM setup.py's `AssertionError: CUDA_HOME is not set` (in 2023-24: `Cannot find CUDA_HOME. CUDA must be "
        "available to build the package.`), outside a running vLLM's log.",
        why="pip is compiling vLLM (or a CUDA package) from source on a host without a toolkit: a wheel would need "
        "none, so why pip built is the question.",
        example="`AssertionError: CUDA_HOME is not set` pip-installing a vLLM fork's git branch on a machine without "
        "CUDA (tenstorrent/tt-xla#2338).",
        fix="A released wheel; or a toolkit of PyTorch's CUDA with CUDA_HOME at it; or VLLM_TARGET_DEVICE for a "
        "host without NVIDIA GPUs.",
        limits="Which package pip was building is in pip's lines above, not in this one.",
        references=["https://github.com/tenstorrent/tt-xla/issues/2338", "https://github.com/OpenBMB/MiniCPM/issues/6"],
    ),
)

RULES: list[Rule] = [RULE, RULE_NO_TOOLKIT]
