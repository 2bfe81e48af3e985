"""What the engine tells its operators: vLLM-style log lines (`logger`), the Prometheus
metrics with vLLM V1's names (`metrics`), and the periodic stats line (`stats_logger`)."""
