"""The documents triage takes and gives: the request, the result, and the changes it turned down.

Why apart from `run`: the performance model's forecast (`forecast`), the scheduled runs and the CLI
all name these types; holding them below the code that fills them keeps imports running one way.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from advisor import __version__
from advisor.collect import metrics as metrics_collector
from advisor.collect import prometheus as prometheus_collector
from advisor.collect.server_args import ServeCommand
from advisor.memory.kv_change import Deployment
from advisor.triage.run_diff import RunDiff
from rules.evaluate import Resolution, RuleError
from rules.facts import Facts, FactSource, Workload
from rules.model import ConfigChange, Finding


class RejectedChange(BaseModel):
    """A change a rule proposed, or the value of its flag the model's search came closest with (a gain
    at the percentiles' nominal ranks that a half-rank shift undoes), predicted not to help."""

    rule: str
    change: ConfigChange
    reason: str
    predicted: dict[str, Any] | None = Field(default=None, description="the predicted ramp with the change")
    command: str | None = Field(default=None, description="`servops predict` that gives the predicted figures again")


class TriageRequest(BaseModel):
    """Everything `servops triage` was given; echoed in the result as `inputs`."""

    endpoint: str | None = None
    prometheus: str | None = None
    selector: str = ""
    window_s: float = prometheus_collector.DEFAULT_WINDOW_S
    metrics_files: list[str] = Field(default_factory=list)
    metrics_interval_s: float | None = None
    logs: str | None = None
    server_args: str | None = None
    model: str | None = None
    gpu: str | None = None
    gpus: int | None = None
    gpu_memory_gib: float | None = None
    timeout_s: float = metrics_collector.DEFAULT_TIMEOUT_S
    workload: Workload | None = None
    ramp: str | None = Field(default=None, description="a ramp result of this server: latency predictions per change")
    save_window: str | None = Field(
        default=None, description="where to write the live window as the one-step ramp the model calibrated on"
    )
    host_profile: str | None = Field(
        default=None, description="`servops probe` of the serving host: the CPU floors' bandwidth and FLOPS"
    )
    headers: dict[str, str] = Field(default_factory=dict, exclude=True, repr=False)  # secrets: never echoed

    def has_input(self) -> bool:
        return bool(self.endpoint or self.prometheus or self.metrics_files or self.logs or self.server_args)


class TriageResult(BaseModel):
    """The JSON document `servops triage --json` writes and `servops report` renders."""

    kind: str = "triage"
    servops_version: str = __version__
    created_at: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    inputs: TriageRequest
    sources: list[FactSource] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    resolutions: list[Resolution] = Field(default_factory=list)
    current_command: str | None = None
    proposed_command: str | None = None
    rules_run: list[str] = Field(default_factory=list)
    rules_skipped: list[str] = Field(default_factory=list)
    rule_errors: list[RuleError] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    rule_pages: dict[str, str] = Field(default_factory=dict, description="rule code → its page, for fired rules")
    rejected_changes: list[RejectedChange] = Field(
        default_factory=list, description="changes rules proposed that the performance model predicts not to help"
    )
    changes_since_last: RunDiff | None = None  # scheduled runs only
    facts: Facts | None = Field(default=None, description="what the rules saw (left out of the JSON by --no-facts)")
    window_ramp: dict[str, Any] | None = Field(
        default=None,
        exclude=True,
        description="the live window as the one-step ramp the model calibrated on; the CLI writes it (--save-window)",
    )

    @property
    def top(self) -> Finding | None:
        return self.findings[0] if self.findings else None


class Collected(BaseModel):
    """Facts plus what is not a fact: the command to edit, the deployment the catalogs resolved (model,
    device, launch; None when either is unknown), and notes for the user.

    The deployment is resolved while collecting because resolving may read a model's config.json or a
    host profile from disk; the decision (`run.decide`) then only reads it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)  # Deployment is the memory model's dataclass

    facts: Facts
    command: ServeCommand | None = None
    command_rebuilt: bool = False  # from the log/metrics, not typed by the user
    deployment: Deployment | None = None
    notes: list[str] = Field(default_factory=list)
