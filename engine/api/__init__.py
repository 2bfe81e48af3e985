"""The OpenAI-compatible aiohttp server behind `python -m engine serve`: command-line flags
(`cli_args`), server start and shutdown (`server`), routes, request handling shared by the
endpoints (`serving`), chat and completions, the request/response models (`protocol`),
server-sent events and the HTTP error bodies (`errors`)."""
