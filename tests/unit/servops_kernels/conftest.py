"""Kernel tests run the Triton kernels against their PyTorch twins.

Without CUDA the kernels run under the Triton interpreter. Triton fixes interpret-or-compile
when a `@triton.jit` function is *decorated*, and that includes Triton's own library
functions, decorated when `triton` is first imported; so TRITON_INTERPRET=1 must be set
before the first `import triton` in the process and stay set (Triton's lazy imports re-check
it). This conftest sets it at collection time. Nothing collected before it imports triton
(servops_kernels.attention imports the Triton modules lazily), and on a CPU machine the variable only
matters to code that runs Triton, i.e. these tests. Should some earlier module ever import
triton compiled, the kernel tests skip and say how to run them, rather than fail obscurely.
"""

from __future__ import annotations

import os
import sys

import pytest
import torch

HAS_CUDA = torch.cuda.is_available()
TRITON_IMPORTED_COMPILED = False

if not HAS_CUDA:
    if "triton" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1":
        TRITON_IMPORTED_COMPILED = True
    else:
        os.environ["TRITON_INTERPRET"] = "1"


def pytest_collection_modifyitems(config, items):
    if not TRITON_IMPORTED_COMPILED:
        return
    skip = pytest.mark.skip(
        reason="triton was imported without TRITON_INTERPRET=1 before the kernel tests; "
        "run them alone: .venv/bin/python -m pytest tests/unit/servops_kernels"
    )
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def device() -> torch.device:
    """CUDA when present (compiled kernels), else CPU (interpreted kernels)."""
    return torch.device("cuda" if HAS_CUDA else "cpu")


@pytest.fixture(params=[1, 2], ids=lambda n: f"{n}-threads")
def threads(request):
    """Run the test on 1 and on 2 PyTorch threads (the native kernels split work by it)."""
    before = torch.get_num_threads()
    torch.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(before)
