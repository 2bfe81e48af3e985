"""Attention kernels for the paged KV cache, each with a PyTorch twin.

kernels owns paged decode attention, prefill (and chunked prefill) attention over paged
KV, the KV-cache write (`reshape_and_cache`), and the backend choice: Triton on CUDA,
the PyTorch path on CPU, `SERVOPS_ATTENTION_BACKEND=torch|triton` to force one. The
PyTorch twins are both the CPU path and the reference the Triton kernels are tested
against. It imports nothing else of the project.
"""
