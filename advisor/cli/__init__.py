"""The `servops` command line: the one place that reads arguments and files and writes results.

`main` builds the parser from one module per subcommand (`commands/`); `options` holds the shared
argument types; `output_paths` refuses unwritable outputs before any work; `result_files` reads and
writes the JSON documents every command produces. Everything below this layer is given typed
values and returns typed results.
"""
