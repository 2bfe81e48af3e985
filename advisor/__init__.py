"""The servops application: everything that looks at a vLLM-style server from the outside and advises.

It talks to engines over HTTP and their logs exactly as it would to vLLM, never through engine
internals, and is cut into layers that each answer one question; imports run only downwards
(docs/design.md, held by tests/unit/advisor/test_layers.py):

    cli        what did the user ask, and which files are read and written?
    tune       does the change the model picks help once it is measured?
    triage     what is wrong with this server, and what would each proposed change do?
    advise     what should I launch?        | perf     how fast would it run under other flags?
               | oncall   what do Prometheus and Alertmanager get (the alert pack)?
    memory     does it fit in memory?       | servers  how is an engine started and stopped?
    collect    what does the server say (metrics, Prometheus, logs, the launch command)?
    catalog    what is fixed and published (GPUs, models, vLLM's defaults per version)?
    base       errors, redaction, units (the modules at this package's root)
"""

__version__ = "0.1.0"
