"""Compile the Triton kernels for NVIDIA targets on a machine without a GPU; report registers.

The interpreter checks what the kernels compute, not whether they compile: layouts, dot
shapes, loop-carried types and register pressure only show up in the real compiler. Triton
ships its NVIDIA backend and `ptxas` in the wheel, so `triton.compile` can lower every kernel
variant to a cubin for sm_80 and sm_90 here, and `cuobjdump` reads back registers and stack
(spill) bytes. Arguments get the 16-divisibility hints Triton's JIT adds at launch for aligned
tensors and strides (head_dim 128, KV heads x head_dim, ...), except the block-table row
stride, which need not be a multiple of 16.

Run as `python -m tests.unit.servops_kernels.aot_compile_worker 80 90` WITHOUT TRITON_INTERPRET (the
kernels must be decorated for compiling); prints one JSON line per variant.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from servops_kernels import cache_write, paged_decode, paged_prefill

CUOBJDUMP = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
HEAD_DIM = 128


def variants():
    """(label, kernel, argument types, constexprs, warps) for the variants the engine launches."""
    for dt, torch_dtype in (("fp16", torch.float16), ("fp32", torch.float32)):
        precision = "ieee" if dt == "fp32" else "tf32"
        kv_tile = paged_decode.decode_kv_tile(torch_dtype)
        for group in (1, 8):
            for split in (False, True):
                partial = "fp32" if split else dt
                yield (
                    f"decode {dt} group={group} split={split}",
                    paged_decode._decode_partition_kernel,
                    dict(
                        q_ptr=f"*{dt}",
                        k_cache_ptr=f"*{dt}",
                        v_cache_ptr=f"*{dt}",
                        block_tables_ptr="*i32",
                        context_lens_ptr="*i32",
                        out_ptr=f"*{partial}",
                        max_logits_ptr=f"*{partial}",
                        exp_sums_ptr=f"*{partial}",
                        scale_log2="fp32",
                    ),
                    dict(
                        GROUP=group,
                        GROUP_PAD=max(16, triton.next_power_of_2(group)),
                        HEAD_DIM=HEAD_DIM,
                        DIM_PAD=HEAD_DIM,
                        BLOCK_SIZE=16,
                        KV_TILE=kv_tile,
                        PARTITION_SIZE=512 if split else paged_decode.NO_SPLIT_PARTITION,
                        SPLIT=split,
                        DOT_PRECISION=precision,
                    ),
                    4,
                )
        yield (
            f"decode-reduce {dt}",
            paged_decode._decode_reduce_kernel,
            dict(
                out_ptr=f"*{dt}",
                partial_ptr="*fp32",
                max_logits_ptr="*fp32",
                exp_sums_ptr="*fp32",
                context_lens_ptr="*i32",
            ),
            dict(HEAD_DIM=HEAD_DIM, DIM_PAD=HEAD_DIM, PARTITION_SIZE=512, PARTS_TILE=32),
            4,
        )
        for max_query_len in (16, 512):
            block_m, block_n, num_warps = paged_prefill.prefill_tiles(torch_dtype, max_query_len)
            yield (
                f"prefill {dt} block_m={block_m} block_n={block_n} warps={num_warps}",
                paged_prefill._prefill_kernel,
                dict(
                    q_ptr=f"*{dt}",
                    k_cache_ptr=f"*{dt}",
                    v_cache_ptr=f"*{dt}",
                    block_tables_ptr="*i32",
                    cu_seqlens_ptr="*i32",
                    context_lens_ptr="*i32",
                    out_ptr=f"*{dt}",
                    scale_log2="fp32",
                ),
                dict(
                    GROUP=4,
                    HEAD_DIM=HEAD_DIM,
                    DIM_PAD=HEAD_DIM,
                    BLOCK_SIZE=16,
                    BLOCK_M=block_m,
                    BLOCK_N=block_n,
                    DOT_PRECISION=precision,
                ),
                num_warps,
            )
        yield (
            f"cache-write {dt}",
            cache_write._reshape_and_cache_kernel,
            dict(key_ptr=f"*{dt}", value_ptr=f"*{dt}", k_cache_ptr=f"*{dt}", v_cache_ptr=f"*{dt}", slot_ptr="*i64"),
            dict(BLOCK_SIZE=16, NUM_KV_HEADS=8, HEAD_DIM=HEAD_DIM, HEADS_PAD=8, DIM_PAD=HEAD_DIM),
            4,
        )


def compile_variant(kernel, types: dict, consts: dict, num_warps: int, arch: int) -> dict:
    signature = {name: "constexpr" if name in consts else types.get(name, "i32") for name in kernel.arg_names}
    aligned = {
        (i,): [["tt.divisibility", 16]]
        for i, name in enumerate(kernel.arg_names)
        if name not in consts
        and (signature[name].startswith("*") or (name.startswith("stride") and name != "stride_bt"))
    }
    source = ASTSource(fn=kernel, signature=signature, constexprs=consts, attrs=aligned)
    compiled = triton.compile(source, target=GPUTarget("cuda", arch, 32), options={"num_warps": num_warps})
    return _resource_usage(compiled.asm["cubin"])


def _resource_usage(cubin: bytes) -> dict:
    if not os.path.exists(CUOBJDUMP):
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.cubin")
        with open(path, "wb") as fh:
            fh.write(cubin)
        text = subprocess.run(
            [CUOBJDUMP, "--dump-resource-usage", path], capture_output=True, text=True, timeout=60
        ).stdout
    fields = dict(part.split(":", 1) for line in text.splitlines() if "REG:" in line for part in line.split())
    return {"registers": int(fields["REG"]), "stack_bytes": int(fields["STACK"])} if fields else {}


def main(archs: list[int]) -> None:
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9's default, without its warning
    for arch in archs:
        for label, kernel, types, consts, num_warps in variants():
            record = {"arch": arch, "variant": label}
            try:
                record.update(ok=True, **compile_variant(kernel, types, consts, num_warps, arch))
            except Exception as exc:  # reported to the test, which names the variant
                record.update(ok=False, error=f"{type(exc).__name__}: {str(exc)[:500]}")
            print(json.dumps(record), flush=True)


if __name__ == "__main__":
    if paged_decode.INTERPRETED:
        sys.exit("unset TRITON_INTERPRET: the kernels were decorated for the interpreter")
    main([int(arch) for arch in sys.argv[1:]] or [80, 90])
