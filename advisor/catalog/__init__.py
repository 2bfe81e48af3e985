"""What servops knows before it looks at a server: GPUs, models, and vLLM itself.

Answers "what is this hardware, this model, this vLLM version?": the GPU catalog (`gpus`), the model
specs (`models`, with `model_configs` holding the config.json figures of known models), the one table
of vLLM's defaults per version and device (`vllm_versions`), and vLLM's own failure wording
(`vllm_failures`). Pure data and lookups: it imports nothing of servops but `advisor.errors`.
"""
