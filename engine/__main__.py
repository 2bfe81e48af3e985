"""`python -m engine serve [MODEL] [--flags]`: the bundled engine's OpenAI-compatible server.

Why a module entry point: `servops serve`, the tests and the demo start the engine as a
process, exactly as they would start `vllm serve`, and the advisor never imports engine
internals. Bad flags and unusable configurations end in one line on stderr and exit 2.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from engine.api.cli_args import EXIT_USAGE, build_serve_parser, check_supported, prog_name
from engine.api.omp_wait import apply_server_wait_policy
from engine.observability.logger import init_logger

USAGE = "usage: python -m engine serve [MODEL] [--flags]  (see 'python -m engine serve --help')"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return EXIT_USAGE if not argv else 0
    if argv[0] != "serve":
        print(
            f"python -m engine: error: unknown command {argv[0]!r}; the only command is 'serve' ({USAGE})",
            file=sys.stderr,
        )
        return EXIT_USAGE
    prog = prog_name()
    args = build_serve_parser(prog).parse_args(argv[1:])
    try:
        check_supported(args)
        # before torch loads libgomp, which reads its wait policy once (engine/api/omp_wait.py)
        init_logger("engine.api.omp_wait").info(apply_server_wait_policy(os.environ))
        from engine.api.server import serve  # torch and friends load only for a valid command line

        return serve(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # one line for what the user can fix; a traceback means a bug
        if getattr(exc, "user_facing", False):
            print(f"{prog}: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        raise


if __name__ == "__main__":
    sys.exit(main())
