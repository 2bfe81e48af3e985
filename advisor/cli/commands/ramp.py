"""`servops ramp`: a Locust ramp test of a streaming OpenAI endpoint (thin CLI over loadtest).

All the work is in loadtest.runner; this module only turns flags into a RampConfig, prints
one progress line per step on stderr and writes the JSON result. `--worker` turns this
machine into a Locust worker for a `--master` elsewhere.

Every option that sets a RampConfig field is a row of `OPTIONS`: its argparse default and its
help text are read from the field (loadtest/config.py states each default once), its value goes
to the model, and the model's constraints refuse a bad value. argparse's types (cli_types) refuse
a malformed number first; what only the model can judge (a warm-up as long as a step, a
fractional stream count, a uniform length spread past its mean) comes back as a ValidationError
that `_validation_line` turns into one line naming the flag, the value and the fix (exit 2).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from advisor.cli.options import (
    factor_above_one,
    non_negative_float,
    non_negative_int,
    percent,
    port,
    positive_float,
    positive_int,
    prompt_lengths,
    unit_interval,
)
from advisor.cli.output import print_json, result_json, say, write_result
from advisor.cli.output_paths import check_output_file
from advisor.errors import EXIT_INTERRUPTED, UserError
from advisor.redact import redact, split_url_credentials
from loadtest.config import RampConfig
from loadtest.errors import RampInterrupted
from loadtest.results import RampResult
from loadtest.workload import KIND_ONLY_FIELDS, LengthSpec


@dataclass(frozen=True)
class Option:
    """One flag that sets one RampConfig field (`workload.NAME` for the workload's)."""

    flag: str
    field: str
    type: Callable[[str], Any] | None = None
    scale: float = 1.0  # field value = flag value × scale (--max-send-lateness-ms sets seconds)
    negate: bool = False  # a --no-… switch that turns a boolean field off
    needs: str | None = None  # "master" or "worker": the flag means something only with that switch

    @property
    def dest(self) -> str:
        """The argparse attribute: the flag's name, or the field's for a --no-… switch (True = on)."""
        return self.field.rpartition(".")[2] if self.negate else self.flag.removeprefix("--").replace("-", "_")

    @property
    def info(self) -> FieldInfo:
        model: type[BaseModel] = RampConfig
        *parents, name = self.field.split(".")
        for parent in parents:
            model = model.model_fields[parent].annotation  # type: ignore[assignment]
        return model.model_fields[name]

    @property
    def default(self) -> Any:
        """The field's default in the flag's own terms (a length as text, milliseconds for a ms flag)."""
        if self.info.is_required():
            return None
        value = self.info.get_default(call_default_factory=True)
        if value == []:  # an empty list (no prefill probe) is "not given", as None is
            return None
        if isinstance(value, LengthSpec):
            return value.text
        if self.scale != 1.0 and value is not None:
            return round(value / self.scale, 9)
        return value

    @property
    def kind_only(self) -> str | None:
        """The workload kind this workload field belongs to, if only one."""
        parent, _, name = self.field.rpartition(".")
        return KIND_ONLY_FIELDS.get(name) if parent == "workload" else None

    def description(self) -> str:
        return self.info.description or ""

    def help(self) -> str:
        text = self.description().replace("%", "%%")
        default = self.default
        if self.negate:
            return f"{text} (default on; this flag turns it off)"
        if isinstance(default, bool) or default is None:
            return text
        shown = f"{default:g}" if isinstance(default, float) else str(default)
        return f"{text} (default {shown})"


# Order is the order of `servops ramp --help`.
OPTIONS: tuple[Option, ...] = (
    Option("--endpoint", "endpoint"),
    Option("--model", "model"),
    Option("--api-key", "api_key"),
    Option("--step-seconds", "step_s", positive_float),
    Option("--warmup-seconds", "warmup_s", non_negative_float),
    Option("--cooldown-seconds", "cooldown_s", non_negative_float),
    Option("--arrival", "arrival"),
    Option("--workload", "workload.kind"),
    Option("--api", "workload.api"),
    Option("--input-len", "workload.input_len"),
    Option("--output-len", "workload.output_len"),
    Option("--no-force-output-len", "workload.force_output_len", negate=True),
    Option("--prefix-len", "workload.prefix_len", positive_int),
    Option("--prefix-groups", "workload.groups", positive_int),
    Option("--prefix-share", "workload.share", unit_interval),
    Option("--unique-prefix-per-step", "workload.unique_prefix_per_step"),
    Option("--prompts", "workload.path"),
    Option("--seed", "workload.seed", int),
    Option("--slo", "slo"),
    Option("--records", "records_path"),
    Option("--prefill-probe", "prefill_probe", prompt_lengths),
    Option("--request-timeout", "request_timeout_s", positive_float),
    Option("--max-ttft", "max_ttft_s", positive_float),
    Option("--tokenizer", "tokenizer"),
    Option("--knee-factor", "knee_factor", factor_above_one),
    Option("--max-client-cpu", "max_client_cpu_percent", percent),
    Option("--max-send-lateness-ms", "max_send_lateness_s", positive_float, scale=1e-3),
    Option("--metrics-url", "metrics_url"),
    Option("--workers", "workers", non_negative_int),
    Option("--master", "master"),
    Option("--expect-workers", "expect_workers", positive_int, needs="master"),
    Option("--master-bind-host", "master_bind_host", needs="master"),
    Option("--master-port", "master_port", port),
    Option("--master-host", "master_host", needs="worker"),
    Option("--master-timeout", "master_timeout_s", positive_float, needs="worker"),
)


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "ramp",
        help="ramp load on a streaming OpenAI endpoint; per-step TTFT/ITL, knee, safe point",
        description="Step load up over request rate (open loop) or concurrency (closed loop) against an "
        "OpenAI-compatible streaming endpoint, with Locust; writes a 'ramp' JSON result. "
        "Defaults and bounds are loadtest.config.RampConfig's.",
    )
    load = p.add_mutually_exclusive_group()
    load.add_argument("--rates", help="open-loop request rates per step, requests/s, e.g. 1,2,4,8")
    load.add_argument("--concurrency", help="closed-loop concurrent streams per step, e.g. 1,2,4,8")
    p.add_argument("--json", dest="json_path", help="write the ramp result JSON here")
    p.add_argument("--worker", action="store_true", help="be a Locust worker of a master at --master-host")
    for option in OPTIONS:
        _add(p, option)
    return p


def _add(parser: argparse.ArgumentParser, option: Option) -> None:
    kwargs: dict[str, Any] = {"default": option.default, "help": option.help(), "dest": option.dest}
    annotation = option.info.annotation
    if option.negate:
        kwargs["action"] = "store_false"
    elif annotation is bool:
        kwargs["action"] = "store_true"
    elif get_origin(annotation) is Literal:
        kwargs["choices"] = get_args(annotation)  # the model's own Literal, never a second list
    elif option.type is not None:
        kwargs["type"] = option.type
    parser.add_argument(option.flag, **kwargs)


def run(args: argparse.Namespace) -> int:
    if args.worker:
        return _worker(args)
    from loadtest.runner import run_ramp

    if not args.endpoint:
        raise UserError("--endpoint is required (e.g. --endpoint http://127.0.0.1:8000)")
    if not (args.rates or args.concurrency):
        raise UserError("give --rates 1,2,4 (open loop) or --concurrency 1,2,4 (closed loop)")
    check_output_file(args.json_path, "--json")  # before minutes of measurement, not after
    check_output_file(args.records, "--records")
    config = ramp_config(args)
    try:
        result = run_ramp(config, progress=lambda line: say(line, sys.stderr))
    except RampInterrupted as interrupted:
        # Minutes of measurement are not thrown away for a Ctrl-C: the finished steps and the
        # partial one are written as usual, and the exit status still says it was interrupted.
        _hand_over(interrupted.result, args.json_path)
        return EXIT_INTERRUPTED
    _hand_over(result, args.json_path)
    _check_any_request_succeeded(result, args.json_path)
    return 0


def _hand_over(result: RampResult, json_path: str | None) -> None:
    """The result into --json (saying where) or onto stdout."""
    if json_path:
        write_result(json_path, result, "--json")
        say(f"ramp: {result.summary}; wrote {json_path}", sys.stderr)
    else:
        print_json(result_json(result))


def ramp_config(args: argparse.Namespace) -> RampConfig:
    """The flags as a RampConfig; a bad value or a flag its mode ignores is a UserError naming the flag."""
    # The URL's user:password is taken out of the URL (never stored or echoed) and sent as Basic
    # auth, unless --api-key gives the Authorization header explicitly.
    endpoint, url_auth = split_url_credentials(args.endpoint)
    flag = "--rates" if args.rates else "--concurrency"
    values: dict[str, Any] = {
        "mode": "rate" if args.rates else "concurrency",
        "levels": _levels(args.rates or args.concurrency, flag),
    }
    workload: dict[str, Any] = {}
    for option in OPTIONS:
        value = getattr(args, option.dest)
        if option.needs and value != option.default and not getattr(args, option.needs):
            raise UserError(
                f"{_given(option.flag, value)}: used only with --{option.needs}; "
                f"add --{option.needs} or leave {option.flag} out"
            )
        if option.kind_only and option.kind_only != args.workload:
            if value != option.default:
                raise UserError(
                    f"{_given(option.flag, value)}: used only with --workload {option.kind_only}, "
                    f"not {args.workload}; add --workload {option.kind_only} or leave {option.flag} out"
                )
            continue  # the field means nothing for this kind: the model's default stands
        if value is None:
            continue  # the model's default (or its rule, e.g. the warm-up's share of a step)
        if option.field in ("workload.input_len", "workload.output_len"):
            try:
                value = LengthSpec.fields_from_text(value)
            except ValueError as exc:
                raise UserError(f"{option.flag} {value!r}: {exc}") from None
        elif option.scale != 1.0:
            value = value * option.scale
        parent, _, name = option.field.rpartition(".")
        (workload if parent == "workload" else values)[name] = value
    values.update(endpoint=endpoint, authorization=None if args.api_key else url_auth)
    try:
        return RampConfig(**values, workload=workload)
    except ValidationError as exc:
        raise UserError(_validation_line(exc, args)) from None


def _validation_line(exc: ValidationError, args: argparse.Namespace) -> str:
    """The first error as `FLAG VALUE: what is wrong; the fix`, in the CLI's terms (flags, not fields)."""
    error = exc.errors(include_url=False)[0]
    loc = [str(part) for part in error["loc"]]
    option = _option_at(loc)
    if loc and loc[0] == "levels":
        flag, value, example = ("--rates" if args.rates else "--concurrency"), args.rates or args.concurrency, "1,2,4"
    elif option is not None:
        flag, value, example = option.flag, getattr(args, option.dest), option.default
    else:
        flag, value, example = ".".join(loc), error.get("input"), None
    return f"{_given(flag, value)}: {_in_flags(_reason(error, example))}"


def _option_at(loc: list[str]) -> Option | None:
    """The option whose field holds the error's location (`workload.input_len.mean` → --input-len)."""
    path = ".".join(loc)
    matches = [o for o in OPTIONS if path == o.field or path.startswith(o.field + ".")]
    return max(matches, key=lambda o: len(o.field), default=None)


def _reason(error: Any, example: Any) -> str:
    """What is wrong and what to pass, from pydantic's error type and its bound."""
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "value_error":  # the model's own words, which carry the fix
        return str(error["msg"]).removeprefix("Value error, ")
    bound = {
        "greater_than": f"must be greater than {ctx.get('gt')}",
        "greater_than_equal": f"must be {ctx.get('ge')} or more",
        "less_than_equal": f"must be at most {ctx.get('le')}",
        "finite_number": "is not a finite number",
    }.get(kind)
    if bound is None:
        return f"{str(error['msg']).lower()}; see 'servops ramp --help'"
    return f"{bound}; pass e.g. {_shown(example).strip(chr(39))}" if example is not None else f"{bound}"


def _in_flags(text: str) -> str:
    """Field names in a model's message (`step_s`) as the flags that set them (`--step-seconds`)."""
    fields = {o.field.rpartition(".")[2]: o.flag for o in OPTIONS}
    return re.sub(r"\b[a-z]+(?:_[a-z]+)+\b", lambda m: fields.get(m.group(0), m.group(0)), text)


def _given(flag: str, value: Any) -> str:
    """A flag as the user gave it: a switch alone, an option with its value."""
    return flag if isinstance(value, bool) else f"{flag} {_shown(value)}"


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def options_markdown() -> str:
    """The options table of docs/loadtest.md, generated from RampConfig (`python -m advisor.cli.commands.ramp`)."""
    rows = ["| flag | default | meaning |", "|---|---|---|"]
    for option in OPTIONS:
        default = option.default
        if option.negate:
            shown = "on (`--no-…` turns it off)"
        elif isinstance(default, bool):
            shown = "off"
        elif default is None:
            shown = "—"
        else:
            shown = f"`{default:g}`" if isinstance(default, float) else f"`{default}`"
        meaning = option.description().replace("|", "\\|")
        rows.append(f"| `{option.flag}` | {shown} | {meaning} |")
    return "\n".join(rows) + "\n"


def _check_any_request_succeeded(result, json_path: str | None) -> None:
    """A ramp where every request failed measured the errors, not the server: exit 2 and say why."""
    sent = sum(step.requests for step in result.steps)
    if sent == 0 or any(step.ok_requests for step in result.steps):
        return
    errors: dict[str, int] = {}
    example = ""
    for step in result.steps:
        for kind, count in step.errors.items():
            errors[kind] = errors.get(kind, 0) + count
        example = example or next(iter(step.error_examples.values()), "")
    counts = ", ".join(f"{kind}: {count}" for kind, count in sorted(errors.items(), key=lambda item: -item[1]))
    shown = f", e.g. {redact(example)[:160]!r}" if example else ""
    where = f"; the result is in {json_path}" if json_path else ""
    raise UserError(
        f"every one of the {sent} requests failed ({counts}{shown}); check that the server at "
        f"--endpoint serves --model and accepts the --api-key{where}"
    )


def _worker(args: argparse.Namespace) -> int:
    """Be a Locust worker; give up with one line when no master answers within --master-timeout."""
    from loadtest.errors import EXIT_NO_MASTER

    print(
        f"ramp: Locust worker connecting to a master at {args.master_host}:{args.master_port} "
        f"(waiting up to {args.master_timeout:g} s)",
        file=sys.stderr,
        flush=True,
    )
    code = subprocess.call(
        [
            sys.executable,
            "-m",
            "loadtest.locust_main",
            "worker",
            "--master-host",
            args.master_host,
            "--master-port",
            str(args.master_port),
            "--connect-timeout",
            str(args.master_timeout),
        ]
    )
    if code == EXIT_NO_MASTER:
        raise UserError(
            f"--worker: no Locust master answered at {args.master_host}:{args.master_port} within "
            f"{args.master_timeout:g} s; start 'servops ramp --master …' there first, or fix "
            "--master-host/--master-port"
        )
    return code


def _levels(text: str, flag: str) -> list[float]:
    """The comma-separated levels as numbers (their bounds are RampConfig's)."""
    try:
        levels = [float(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise UserError(f"{flag} {text!r}: expected comma-separated numbers, e.g. 1,2,4,8") from exc
    if not levels:
        raise UserError(f"{flag} {text!r}: give at least one level, e.g. 1,2,4,8")
    return levels


if __name__ == "__main__":
    say(options_markdown(), end="")
