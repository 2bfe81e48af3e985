"""Units servops computes in, stated once (binary GiB, as vLLM's logs and PyTorch's allocator count)."""

GIB = 1024**3

# The largest sizes any server can have, against which sizes from users and logs are checked. Why
# these: the most memory one machine holds is about 16 TiB (an 8-socket CPU server; eight 192 GB
# GPUs are 1.5 TB), and no model keeps less than 1 KiB of KV cache per token (SmolLM2-135M, among
# the smallest served, takes 11 KiB in fp8). A figure above them is a misreading (bytes given as
# tokens, a corrupt log), and taken as a size it would make a replay allocate without bound.
MAX_MEMORY_GIB = 16 * 1024
MAX_KV_TOKENS = 10**10
