"""Units servops computes in, stated once (binary GiB, as vLLM's logs and PyTorch's allocator count)."""

GIB = 1024**3
