"""OP-7.209: vLLM on TPU asks JAX for a device mesh larger than the TPU devices the host shows.

Why a rule of its own: vLLM's TPU backend (tpu-inference) lays the model over a JAX device mesh whose shape is its
parallelism (data × tensor), and JAX refuses a mesh bigger than the devices it found: `ValueError: Number of devices 4
must be >= the product of mesh_shape (1, 8)`. The words are JAX's, about a mesh, not vLLM's flags; the flag is
`--tensor-parallel-size`. A v4 or v5p slice's name counts TensorCores, two per chip: a v5p-8 has 4 chips, so
`--tensor-parallel-size 8` there asks for twice what JAX sees (marin-community/marin#6230, vllm-tpu 0.19.0 on a v5p-8
worker).
"""

from __future__ import annotations

import math
import re

from rules.catalog import common as c
from rules.events import LogEvent
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# JAX's words (its mesh utilities, which tpu-inference calls to build the mesh) for a mesh bigger than the devices found
MESH_TOO_LARGE = re.compile(
    r"Number of devices (?P<devices>\d+) must be >= the product of mesh_shape \((?P<shape>\d+(?:,\s*\d+)*),?\)"
)


def _mesh_finding(_facts: Facts, event: LogEvent, found: re.Match[str]) -> Finding:
    devices = int(found["devices"])
    shape = [int(n) for n in found["shape"].split(",")]
    asked, others = math.prod(shape), math.prod(shape[:-1])
    fits = devices // others if others else 0  # the tensor-parallel size the other axes leave room for
    if not devices:
        limit = "no TPU device is visible to JAX"
    else:
        limit = f"at most --tensor-parallel-size {fits} here" if fits >= 1 else "fewer data-parallel ranks here"
    changes = (
        [
            ConfigChange(
                flag="--tensor-parallel-size",
                current=str(shape[-1]),
                proposed=str(fits),
                reason=f"JAX sees {devices} TPU devices; with the mesh's other axes ({others}) that leaves {fits} "
                "for tensor parallelism",
            )
        ]
        if 1 <= fits < shape[-1]
        else []
    )
    return RULE.finding(
        Severity.CRITICAL,
        f"the TPU parallelism asks for {asked} devices and JAX sees {devices}: {limit}",
        summary=f"vLLM's TPU backend builds a JAX device mesh of shape {tuple(shape)} (data × tensor parallel), "
        f"{asked} devices, and JAX found {devices}. A v4 or v5p slice's name counts TensorCores, two per chip, and "
        "JAX shows the chips: a v5p-8 has 4 (marin-community/marin#6230).",
        evidence=[c.log_evidence(event, name="TPU devices", value=devices, threshold=asked, comparison="<")],
        changes=changes,
        actions=[
            "Check what JAX sees on the host: `python -c 'import jax; print(jax.devices())'`; a larger slice (or "
            f"more hosts) is the way to {asked} devices"
            + ("; none seen is a host whose TPU is held by another process or not attached." if not devices else "."),
        ],
        confidence=0.85,
    )


RULE = Rule(
    code="OP-7.209",
    title="a TPU device mesh larger than the devices JAX sees",
    category=Category.PARALLELISM,
    check=c.on_phrase(MESH_TOO_LARGE, _mesh_finding, kinds=c.RELAYED_TOO),
    needs=("events",),
    page=RulePage(
        checks="JAX's `Number of devices N must be >= the product of mesh_shape (…)`.",
        why="vLLM's TPU backend lays the model over a JAX mesh of its parallelism; a v4 or v5p slice's name counts "
        "TensorCores, so a tensor-parallel size taken from it is twice the chips.",
        example="`ValueError: Number of devices 4 must be >= the product of mesh_shape (1, 8)` with "
        "--tensor-parallel-size 8 on a v5p-8 (marin-community/marin#6230).",
        fix="`--tensor-parallel-size` at most the devices JAX sees, or a larger slice.",
        limits="The mesh's last axis is read as the tensor-parallel size; a mesh with other axes is named as asked.",
        references=["https://github.com/marin-community/marin/issues/6230"],
    ),
)

RULES: list[Rule] = [RULE]
