"""The `servops` command line: the one place that wires advisor, rules, loadtest and reports.

Each subcommand lives in its own module under `advisor/cli/commands/` and exposes
`register(subparsers) -> argparse.ArgumentParser` and `run(args) -> int`. Keeping them
apart lets each grow (and be tested) without touching the others; this file only lists
them, sets up logging and applies the one error style: a user error is one line on
stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from advisor import __version__
from advisor.cli.options import bind_command_line_values, harden_numeric_options
from advisor.cli.output import say
from advisor.errors import EXIT_INTERRUPTED, EXIT_USAGE, is_user_facing

# Order is the order `servops --help` lists them in.
COMMAND_MODULES: tuple[str, ...] = (
    "advise",
    "serve",
    "ramp",
    "triage",
    "rules",
    "report",
    "demo",
    "tune",
    "predict",
    "probe",
    "alerts",
)

log = logging.getLogger("servops")


class _Parser(argparse.ArgumentParser):
    """argparse with our error style: one line naming the problem, exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="servops",
        description=(
            "Operations agent for vLLM-style LLM serving: size a deployment (advise), "
            "serve the bundled engine (serve), load-test an endpoint (ramp), triage a "
            "live server (triage), render reports (report), and predict what a flag change does (predict)."
        ),
    )
    parser.add_argument("--version", action="version", version=f"servops {__version__}")
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="logging verbosity on stderr (default: INFO)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        module = _load_command(name)
        if module is None:
            continue
        sub = module.register(subparsers)
        sub.set_defaults(_run=module.run)
    harden_numeric_options(parser)  # no option of any command takes NaN or Inf
    return parser


def _load_command(name: str):
    spec = importlib.util.find_spec(f"advisor.cli.commands.{name}")
    if spec is None:  # a command whose issue has not landed yet
        return None
    return importlib.import_module(f"advisor.cli.commands.{name}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(bind_command_line_values(parser, sys.argv[1:] if argv is None else argv))
    logging.basicConfig(
        level=getattr(logging, args.log_level),
        format="%(levelname)s %(asctime)s [servops] %(message)s",
        datefmt="%m-%d %H:%M:%S",
    )
    if not getattr(args, "_run", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args._run(args) or 0)
    except KeyboardInterrupt:
        say(f"servops {args.command}: interrupted", sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # one line for user errors; the traceback only for bugs
        if is_user_facing(exc):
            say(f"servops {args.command}: error: {exc}", sys.stderr)
            return EXIT_USAGE
        raise


if __name__ == "__main__":
    sys.exit(main())
