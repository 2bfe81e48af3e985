"""A fitted Forecaster from a ramp document and a command line, as `servops predict` builds one: parse both,
then fit.

Why a helper: the performance model takes typed inputs (a MeasuredRamp, a ServerContext) that the CLI
parses once from the user's file and flags; the benchmarks and the tests hold ramps as documents and
launches as text, and say so in one line each."""

from __future__ import annotations

from typing import Any

from advisor.collect.server_args import ServeCommand, parse_command
from advisor.perf.measured import measured_ramp
from advisor.perf.whatif import Forecaster, ServerContext


def fitted(document: dict[str, Any], source: str, server_args: str | ServeCommand, **context: Any) -> Forecaster:
    """`context`: the rest of ServerContext (engine, kv_cache_tokens, device_share, deployment)."""
    command = server_args if isinstance(server_args, ServeCommand) else parse_command(server_args, flag="--server-args")
    return Forecaster(measured_ramp(document, source), source, ServerContext(command=command, **context)).fit()
