"""Model implementations that read and write the paged KV cache (Llama family)."""
