"""OP-7.118: building vLLM from source with a CUDA toolkit of another release than the one PyTorch was built with.

Why a rule of its own: vLLM's kernels compile against the installed PyTorch with the system's nvcc, and torch's
extension builder (torch/utils/cpp_extension.py) refuses when the two CUDA releases differ: `The detected CUDA
version (12.1) mismatches the version that was used to compile PyTorch (11.7). Please make sure to use the same CUDA
versions.` Nothing of vLLM is at fault; the pair is. In vllm#129 vLLM's maintainer answered a reporter with nvcc 11.8
to install PyTorch's CUDA 11.8 build. A released vLLM wheel needs no toolkit at all.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


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

RULES: list[Rule] = [RULE]
