"""Triage: what is wrong with this server, and which change fixes it, with its predicted effect.

Answers "why is my vLLM slow or down?": `run` turns collected facts into ranked findings (rules from
`rules/`), `context` resolves the deployment (model, GPU, measured pool), `forecast` prices each
proposed change with the performance model, `layouts` and `tp_choice` choose parallel layouts,
`result` holds the request and result documents, `text` the terminal view, `schedule` and `run_diff`
the scheduled runs (`--every`).
"""
