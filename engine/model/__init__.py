"""The model side: the Llama-family model over the paged KV cache (`llama`), the model runner
that prepares batches and runs it, sampling, incremental detokenizing, KV-budget sizing
(`memory_profile`), CPU memory settings, and the embedded default model."""
