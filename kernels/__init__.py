"""Attention kernels for the paged KV cache and the decoder layer's elementwise ops, each with a
PyTorch twin.

kernels owns paged decode attention, prefill (and chunked prefill) attention over paged
KV, the KV-cache write (`reshape_and_cache`), the layer ops (`layer_ops`: RMSNorm, fused
residual-add RMSNorm, RoPE, SiLU-and-multiply, and the linear layers: native bf16 GEMM on CPUs
without bf16 arithmetic), and the backend choice: Triton on CUDA for
attention; on CPU native C++ attention, KV write and layer ops (built at first use), or the
twins alone where they cannot be built; `SERVOPS_ATTENTION_BACKEND=cpu|torch|triton` to force
one. The PyTorch twins are the reference every other kernel is tested against. It imports
nothing else of the project.
"""
