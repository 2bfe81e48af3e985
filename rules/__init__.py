"""The rule engine: facts in, ranked findings out.

rules owns the facts model (metric snapshots, typed log events, server configuration,
hardware, model and memory figures, workload, load-test results), the rule model with
stable codes (OP-1 … OP-6, AP-n) and a page per rule, the catalog, evaluation, ranking
and conflict resolution of proposed flag changes. It is pure: no I/O, no clock, no
printing, so every rule can be tested from a fixture and trusted to say the same twice.
"""
