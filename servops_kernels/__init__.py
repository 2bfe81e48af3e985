"""Attention kernels for the paged KV cache and the decoder layer's elementwise ops, each with a
PyTorch twin.

servops_kernels owns paged decode attention, prefill (and chunked prefill) attention over paged
KV, the KV-cache write (`reshape_and_cache`), the layer ops (`layer_ops`: RMSNorm, fused
residual-add RMSNorm, RoPE, SiLU-and-multiply, and the linear layers: native bf16 GEMM on CPUs
without bf16 arithmetic), and the backend choice: Triton on CUDA for
attention; on CPU native C++ attention, KV write and layer ops (built at first use), or the
twins alone where they cannot be built; `SERVOPS_ATTENTION_BACKEND=cpu|torch|triton` to force
one. The PyTorch twins are the reference every other kernel is tested against. It imports
nothing else of the project.

Why not plain `kernels`: Hugging Face ships a distribution of that import name, and transformers
5.25 requires it (`transformers.integrations.hub_kernels` imports `kernels` whenever it is
installed). A project folder named `kernels` shadowed it, so importing any transformers model
class failed with `cannot import name 'CUDAProperties' from 'kernels'`.
"""
