"""Collectors: read a server from the outside, as an operator would, and fill `rules.facts`.

- `metrics`      /metrics text (a live endpoint or a saved file) → MetricSnapshot / MetricWindow
- `prometheus`   a Prometheus server's HTTP API (many replicas, rates, quantile windows)
- `logs`         a log file or stdin → typed LogEvents (`log_patterns` holds vLLM's wording)
- `server_args`  a `vllm serve …` line, a log's `non-default args`, cache_config_info → flags
- `facts`        the above → one `rules.facts.Facts` (ServerConfig, MemoryFacts from the log)

Each collector raises a `UserError` subclass with one actionable line for bad input, and
partial input yields the facts it supports.
"""
