"""The tensor-parallel size a memory shortage needs, chosen by the memory model.

Why here and not in the rules: the rules are pure and hold no memory model, so when the
weights do not load (OP-1.4) or leave no KV room (OP-1.2) they propose the next doubling of
--tensor-parallel-size. Doubling is a rule of thumb: Llama-3.1-70B in bf16 does not start on
two H100s at its default length any more than on one, and a proposal the memory model itself
predicts to fail answers nothing. With the model and the GPU known, the proposal becomes the
smallest valid TP (attention and KV heads divisible, at most the GPUs the rules count: `--gpus`,
else the launch's TP x PP) at which one request of --max-model-len fits: the same `predict.figures` test
whose `starts_after` the finding then shows, so the value is reproducible from its prediction.
A change of TP that regroups the server's own GPUs (tensor parallel over PCIe swapped for replicas,
or replicas merged into wider ones) is a layout choice, made by the performance model
(advisor/triage/layouts.py).
"""

from __future__ import annotations

from advisor.catalog.models import valid_tp
from advisor.memory.budget import LaunchConfig
from advisor.memory.kv_change import Deployment, figures
from advisor.perf.limits import TENSOR_PARALLEL_FLAG as TP_FLAG
from advisor.triage.layouts import regrouping_change
from rules.model import ConfigChange


def valued_tensor_parallel(
    change: ConfigChange, siblings: list[ConfigChange], deployment: Deployment | None, gpus: int | None
) -> ConfigChange:
    """A TP increase re-valued by the memory model (a new change); any other change as it is. `siblings`: the
    list the change is in (a regrouping of the server's GPUs is the layout choice's, not this one's); `gpus`:
    the count the rules saw (rules.catalog.common.gpu_count), unknown meaning no more than proposed."""
    if deployment is None or change.flag != TP_FLAG:
        return change
    if regrouping_change(siblings, int(change.current or 1)) is not None:
        return change
    return _choose(change, deployment, gpus or 0)


def smallest_starting_tp(deployment: Deployment, above: int, limit: int) -> int | None:
    """The smallest valid TP in (above, limit] at which the memory model predicts the server starts."""
    for tp in range(above + 1, limit + 1):
        if not valid_tp(deployment.model, tp):
            continue
        launch = LaunchConfig.model_validate({**deployment.launch.model_dump(), "tensor_parallel_size": tp})
        if figures(deployment, launch).fits:
            return tp
    return None


def _choose(change: ConfigChange, deployment: Deployment, limit: int) -> ConfigChange:
    try:
        current, proposed = int(change.current or 1), int(change.proposed)
    except ValueError:
        return change
    if proposed <= current:
        return change
    bound = max(limit, proposed)
    chosen = smallest_starting_tp(deployment, current, bound)
    if chosen is None:
        reason = f"; the memory model finds no tensor-parallel size up to {bound} GPUs that starts this launch"
        return change.model_copy(update={"reason": change.reason + reason})
    update = {
        "proposed": str(chosen),
        "reason": change.reason + f"; {chosen} is the smallest tensor-parallel size the memory model predicts to start",
    }
    if chosen != proposed:
        update["cost"] = change.cost.replace(f"{proposed} GPUs", f"{chosen} GPUs")
    return change.model_copy(update=update)
