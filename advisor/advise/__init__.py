"""Launch-configuration advice: `servops advise`, before a server exists.

Answers "how should I launch this model on these GPUs?": `plan` sizes one launch with the memory
model, `search` weighs the candidate layouts and flags for a workload, `cpu_plan` does the same for
vLLM's CPU backend, `result` is the JSON document and `text` its terminal view.
"""
