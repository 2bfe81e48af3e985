"""One module per `servops` subcommand: `register(subparsers)` and `run(args) -> int`."""
