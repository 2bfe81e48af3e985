"""The operations agent: everything that looks at a server from the outside and advises.

advisor owns the GPU and model catalogs, the memory math that sizes a vLLM deployment,
launch-config planning, the collectors that read a live server (its /metrics text, a
Prometheus server's HTTP API, its log files), triage orchestration, scheduled runs and
the `servops` CLI. It talks to engines over HTTP and logs exactly as it would to vLLM,
never through engine internals; advisor/cli.py is the one place that wires rules,
loadtest and reports together.
"""

__version__ = "0.1.0"
