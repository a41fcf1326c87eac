"""What the compiler made of the trainable GH kernels (:mod:`lrnnkit.kernels.gh.wy`), for tuning on the GPU.

    python3 benchmarks/inspect_gh.py [--dtype float32] [--prec tf32] [--nh 1] [--ncu] [--dump DIR]
                                     [--set "state_bwd=32:8;wy_bwd=16:8"] [--time] [--compile-only]

Runs one forward+backward at the shape of issue 12 (B=8, T=4096, H=16, K=V=128), then prints per compiled kernel:
registers per thread, spills (ptxas: the register cap is 255, more goes to local memory), shared memory, warps,
stages, and counts of the product instructions in its PTX (``wgmma.mma_async`` = Hopper warp-group products,
``mma.sync`` = the older warp products). ``--ncu`` brackets one more forward+backward with
cudaProfilerStart / Stop, for ``ncu --profile-from-start off``. ``--dump DIR`` writes each kernel's TTGIR and PTX.
``--set`` overrides entries of the dtype's kernel table (``wy.config_table``; block:warps[:stages]); ``--time`` adds
the forward and forward+backward medians and each kernel's device time in one forward+backward (ms).
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def compiled(fn):
    """The compiled kernels in a Triton JITFunction's caches (triton 3.x keeps them per device)."""
    out = []
    for entry in getattr(fn, "device_caches", {}).values():
        cache = entry[0] if isinstance(entry, tuple) else entry
        out += [k for k in cache.values() if hasattr(k, "asm")]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="float32", choices=["bfloat16", "float16", "float32"])
    ap.add_argument("--prec", default=None)
    ap.add_argument("--nh", type=int, default=1)
    ap.add_argument("--chunk", type=int, default=None)
    ap.add_argument("--ncu", action="store_true")
    ap.add_argument("--dump", default=None)
    ap.add_argument("--set", default="")
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--compile-only", action="store_true")
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F

    from lrnnkit.kernels.gh import wy
    from lrnnkit.kernels.gh.api import chunk_gh
    if a.prec:
        wy.FP32_PRECISION = a.prec
    dt = getattr(torch, a.dtype)
    table = wy.config_table(dt)
    for spec in filter(None, a.set.split(";")):
        key, val = spec.split("=")
        table[key] = tuple(int(x) for x in val.split(":")) if ":" in val else int(val)
    B, T, H, K, V, nh = 8, 4096, 16, 128, 128, a.nh
    gen = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(B, T, H, K, device="cuda", generator=gen).to(dt).requires_grad_()
    k = F.normalize(torch.randn(B, T, nh, H, K, device="cuda", generator=gen), dim=-1).to(dt).requires_grad_()
    v = torch.randn(B, T, nh, H, V, device="cuda", generator=gen).to(dt).requires_grad_()
    b = (2 * torch.rand(B, T, nh, H, device="cuda", generator=gen)).to(dt).requires_grad_()
    do = torch.randn(B, T, H, V, device="cuda", generator=gen).to(dt)

    def step():
        chunk_gh(q, k, v, b, None, nh, None, scale=1.0, chunk_size=a.chunk)[0].backward(do)

    step()
    torch.cuda.synchronize()
    if a.compile_only:
        return
    times = {}
    if a.time:
        from torch.profiler import ProfilerActivity, profile
        from triton.testing import do_bench
        with torch.no_grad():
            tf = do_bench(lambda: chunk_gh(q, k, v, b, None, nh, None, scale=1.0, chunk_size=a.chunk), warmup=10,
                          rep=60)
        tb = do_bench(step, warmup=10, rep=60)
        print(f"TIME {a.dtype} {wy.FP32_PRECISION if dt == torch.float32 else ''} set={a.set or '-'}: "
              f"fwd {tf:.3f} fwd+bwd {tb:.3f}", flush=True)
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(3):
                step()
            torch.cuda.synchronize()
        for e in prof.key_averages():
            t = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
            times[e.key] = (t / 3 / 1000, e.count // 3)
    if a.ncu:
        torch.cuda.cudart().cudaProfilerStart()
        step()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()
    print(f"# {torch.cuda.get_device_name()} {a.dtype} prec={wy.FP32_PRECISION if dt == torch.float32 else '-'}")
    print(f"{'kernel':24s} {'regs':>5s} {'spill':>6s} {'smem':>7s} {'warps':>5s} {'stg':>3s} {'wgmma':>6s} "
          f"{'mma.sync':>8s} {'cvt.tf32':>8s} {'ms(all launches)':>16s}")
    for name in ("_t_kernel", "_state_fwd_kernel", "_state_bwd_kernel", "_dqkwg_kernel", "_wy_bwd_kernel"):
        for ck in compiled(getattr(wy, name)):
            ptx = ck.asm.get("ptx", "")
            md = ck.metadata
            print(f"{name:24s} {getattr(ck, 'n_regs', -1):5d} {getattr(ck, 'n_spills', -1):6d} "
                  f"{getattr(md, 'shared', -1):7d} {getattr(md, 'num_warps', -1):5d} "
                  f"{getattr(md, 'num_stages', -1):3d} {ptx.count('wgmma.mma_async'):6d} {ptx.count('mma.sync'):8d} "
                  f"{ptx.count('cvt.rna.tf32'):8d} {'%.3f x%d' % times.get(name, (0.0, 0)):>16s}", flush=True)
            if a.dump:
                os.makedirs(a.dump, exist_ok=True)
                for ext in ("ttgir", "ptx"):
                    with open(os.path.join(a.dump, f"{a.dtype}-{name}-{md.num_warps}w.{ext}"), "w") as f:
                        f.write(ck.asm.get(ext, ""))


if __name__ == "__main__":
    main()
