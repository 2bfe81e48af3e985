"""Turn an advise result (JSON kind "advise") into what the advise template shows.

The memory breakdown as table rows and a stacked bar, the fit verdict as advise stated it,
the command and its recommendations. It shows advise's figures; it recomputes none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reports.fields import number, pick


def advise_view(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Memory breakdown, fit verdict (as advise stated it), command and recommendations."""
    recommended = doc.get("recommended") if isinstance(doc.get("recommended"), Mapping) else {}
    return {
        "fits": doc.get("fits"),
        "failure": doc.get("failure"),
        "memory": _memory_view(doc.get("memory")),
        "recommended_memory": _memory_view(recommended.get("memory")) if recommended.get("memory") else None,
        "max_model_len_that_fits": doc.get("max_model_len_that_fits"),
        "command": doc.get("command"),
        "recommendations": [r for r in (doc.get("recommendations") or []) if isinstance(r, Mapping)],
        "warnings": doc.get("warnings") or [],
        "model": _name_of(doc.get("model")),
        "gpu": _name_of(doc.get("gpu")),
    }


def _memory_view(memory: Any) -> dict[str, Any]:
    """Table rows and a stacked bar (parts of the requested memory) for one memory breakdown."""
    memory = memory if isinstance(memory, Mapping) else {}
    # The advise JSON lists the memory keys in the order of the budget (advisor/memory/budget.py's
    # MEMORY_KEYS: total, then its parts, then what they buy); the table keeps that order.
    rows = [(k, v) for k, v in memory.items() if not isinstance(v, (dict, list))]
    parts = [
        (k, number(memory.get(k)))
        for k in ("weights_gib", "activation_gib", "non_torch_gib", "cudagraph_gib", "kv_pool_gib")
    ]
    parts = [(k, v) for k, v in parts if v and v > 0]
    total = number(memory.get("requested_gib")) or sum(v for _, v in parts) or 1.0
    bar = [
        {"name": k.removesuffix("_gib").replace("_", " "), "gib": v, "percent": max(0.5, 100.0 * v / total)}
        for k, v in parts
    ]
    return {"rows": rows, "bar": bar}


def _name_of(value: Any) -> Any:
    """A catalog entry shown by its name (advise writes the whole model/GPU record)."""
    if isinstance(value, Mapping):
        return pick(value, "name", "hf_id", default=None) or value
    return value
