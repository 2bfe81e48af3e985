"""Attention kernels for the paged KV cache, each with a PyTorch twin.

kernels owns paged decode attention, prefill (and chunked prefill) attention over paged
KV, the KV-cache write (`reshape_and_cache`), and the backend choice: Triton on CUDA; on
CPU native C++ decode and prefill kernels (built at first use) with the PyTorch twin for the
KV write, or the twins alone where they cannot be built; `SERVOPS_ATTENTION_BACKEND=cpu|torch|triton` to
force one. The PyTorch twins are the reference every other kernel is tested against. It
imports nothing else of the project.
"""
