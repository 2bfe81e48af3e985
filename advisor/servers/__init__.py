"""Starting and stopping inference servers as processes, the way an operator would.

Answers "how do I run this engine?": `process` builds and supervises the bundled engine's or vLLM's
command line and waits for it to serve; `vllm` finds the real vLLM install (`.venv-vllm` or
SERVOPS_VLLM_PYTHON) and the flags vLLM's CPU backend needs. Nothing here reads metrics or judges.
"""
