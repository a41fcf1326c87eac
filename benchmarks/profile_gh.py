"""Per-kernel profile of the trainable GH kernels (:mod:`lrnnkit.ops.gh.wy`) on the GPU, for tuning.

    python3 benchmarks/profile_gh.py [--dtype bfloat16|float32] [--prec tf32] [--nh 1,2,3] [--gate] [--varlen]
                                     [--sweep "state_bwd=64:4,128:4;dqkwg_bk=64,128"] [--errors] [--no-fla]
                                     [--set "wy_bk=32;split=0"] [--inspect] [--ncu] [--dump DIR]

Prints, per n_h: forward (no grad) and forward+backward medians (triton.testing.do_bench, ms), fla's
bf16 beside them when fla is importable, the device time of every kernel of one fwd+bwd (torch.profiler), and with
``--errors`` the relative L2 error of o and every gradient against float64 (batch row 0). ``--sweep`` times
settings of the kernel table for the run's dtype and precision (``wy.config_table``) one at a time at
n_h = ``--sweep-nh`` (1). A crash (a miscompiled setting) poisons the CUDA context: run risky settings in their own
process. ``--fla-dtype float32`` runs fla at float32 (fla 0.6.0 refuses it: its chunk kernels are bf16/fp16 only).
``--set`` changes table entries for the whole run (same syntax). ``--inspect`` prints, after each n_h, what the
compiler made of every kernel: registers per thread, spills (ptxas: above the cap of 255 registers), shared memory,
warps, stages, and the counts of Hopper warp-group products (``wgmma.mma_async``) and older warp products
(``mma.sync``) in its PTX; ``--dump DIR`` also writes each kernel's TTGIR and PTX. ``--ncu`` brackets one more
forward+backward of each n_h with cudaProfilerStart / Stop, for ``ncu --profile-from-start off``.
``--compile-only`` without ``--sweep`` runs each n_h once, untimed (fills Triton's cache for parallel compiles).
``--roofline`` prints, per kernel of one fwd+bwd, the bytes it must move at the least (:func:`traffic`: every
tensor it reads or writes, once), its device time, and the bandwidth that implies as a share of ``--peak`` (GB/s;
default 3350, the H100 SXM's HBM3): a kernel far below the others is where time is lost.
The training shape: B=8, T=4096, H=16, K=V=128.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def setting(opt: str):
    """A table entry from its text: "64:4" or "64:4:2" -> (block, warps[, stages]); "64" -> 64."""
    return tuple(int(x) for x in opt.split(":")) if ":" in opt else int(opt)


def compiled(fn) -> list:
    """The compiled kernels in a Triton JITFunction's caches (triton 3.x keeps them per device)."""
    out = []
    for entry in getattr(fn, "device_caches", {}).values():
        cache = entry[0] if isinstance(entry, tuple) else entry
        out += [k for k in cache.values() if hasattr(k, "asm")]
    return out


def inspect(dump=None, tag=""):
    """One line per compiled kernel of :mod:`lrnnkit.ops.gh.wy` (its module text lists them; each lives in the
    module of its stage); ``dump``: write TTGIR and PTX there."""
    from lrnnkit.ops.gh import wy_grad, wy_output, wy_state, wy_t
    print(f"{'kernel':20s} {'regs':>5s} {'spill':>6s} {'smem':>7s} {'warps':>5s} {'stg':>3s} {'wgmma':>6s} "
          f"{'mma.sync':>8s}")
    for mod, name in ((wy_t, "_t_kernel"), (wy_state, "_state_fwd_kernel"), (wy_output, "_output_kernel"),
                      (wy_state, "_state_bwd_kernel"), (wy_grad, "_dqkwg_kernel"), (wy_grad, "_wy_bwd_kernel"),
                      (wy_grad, "_dqk_wy_kernel")):
        for i, ck in enumerate(compiled(getattr(mod, name))):
            ptx, md = ck.asm.get("ptx", ""), ck.metadata
            print(f"{name:20s} {ck.n_regs:5d} {ck.n_spills:6d} {md.shared:7d} {md.num_warps:5d} {md.num_stages:3d} "
                  f"{ptx.count('wgmma.mma_async'):6d} {ptx.count('mma.sync'):8d}", flush=True)
            if dump:
                os.makedirs(dump, exist_ok=True)
                for ext in ("ttgir", "ptx"):
                    with open(os.path.join(dump, f"{tag}{name}-{i}.{ext}"), "w") as f:
                        f.write(ck.asm.get(ext, ""))


def traffic(dtype, nh, B, T, H, K, V, C, split, keep, fuse=True):
    """Least bytes each kernel of one fwd+bwd of :mod:`lrnnkit.ops.gh.wy` moves (no gate, no initial or final
    state): each tensor it reads or writes counted once, at its storage width -- inputs and gradients at the input
    dtype's, the stored intermediates (T, S_n, U', dS_n, dY, dX) at the storage dtype's (2-byte inputs keep theirs,
    float32 keeps float32), dk's partial sum in float32. Keys are (profiler kernel name, bytes); the state pass runs
    twice unless ``keep`` (the split forward's S_n, U' reused; it implies ``split``, as in wy._Ctx), and once of
    those as the one-pass forward when not ``split``. "elementwise" is autograd adding the new q, k, v gradients into existing ``.grad`` (read, read,
    write): the benchmark's repeated backward does that, a training step with zeroed (None) gradients does not."""
    import torch
    e = torch.tensor([], dtype=dtype).element_size()
    st, acc = e, 4
    tok, pos = B * T * H, B * T * nh * H                     # (token, head) and (position, head) pairs
    chunks = -(-T * nh // C) * B * H
    q = tok * K * e
    k, v, b, t = pos * K * e, pos * V * e, pos * e, pos * C * st
    hs, un = chunks * K * V * st, pos * V * st
    rec = k + v + b + t + hs + un                             # state pass storing S_n and U'
    one = q + k + v + b + t + tok * V * e                     # one-pass forward (outputs inside)
    split = split or keep                                     # kept states come from the split forward
    passes = [rec] * (1 if keep else 2) if split else [one, rec]
    dv_rev = e == 2                                           # where dv is written (wy._bwd)
    out = {"_t_kernel": k + b + t,
           "_state_fwd_kernel": sum(passes),
           "_output_kernel": (q + k + hs + un + tok * V * e) if split else 0,
           "_state_bwd_kernel": q + k + tok * V * e + t + b + hs + un + (v if dv_rev else 0)}   # un: dY; v: dv
    if fuse:   # dk's partial sum in float32 written and read back once (2-byte dk: a float32 scratch)
        out["_dqk_wy_kernel"] = (q + k + v + b + t + 2 * hs + 2 * un + tok * V * e + q + k + b
                                 + (0 if dv_rev else v) + 2 * pos * K * acc)
    else:
        out["_dqkwg_kernel"] = q + k + 2 * hs + 2 * un + tok * V * e + q + pos * K * (acc + st)
        out["_wy_bwd_kernel"] = (k + v + b + t + pos * K * st + un + pos * K * acc + k + b   # k + b: dk, db
                                 + (0 if dv_rev else v))
    out["elementwise"] = 3 * (q + k + v)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nh", default="1,2,3")
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    ap.add_argument("--prec", default=None, help="fp32 dot precision (wy_config.FP32_PRECISION)")
    ap.add_argument("--chunk", type=int, default=None, help="chunk size of ours (16, 32, 64; default: chunk_gh's)")
    ap.add_argument("--B", type=int, default=8)
    ap.add_argument("--T", type=int, default=4096)
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--no-fla", action="store_true")
    ap.add_argument("--fla-dtype", default="bfloat16", choices=["bfloat16", "float32"],
                    help="fla's input dtype (float32: fla's tf32 path, the peer of our float32 rows)")
    ap.add_argument("--errors", action="store_true")
    ap.add_argument("--sweep", default="", help="e.g. state_fwd=64:4,128:4:2;dqkwg_bk=64,128 (block:warps[:stages])")
    ap.add_argument("--sweep-nh", type=int, default=1, help="n_h of the sweep's timings")
    ap.add_argument("--compile-only", action="store_true",
                    help="run each sweep setting (or, without --sweep, each n_h) once, untimed (fills Triton's cache; "
                         "see sweep_gh.sh)")
    ap.add_argument("--set", default="", help="table entries for the whole run, e.g. wy_bk=32;split=0")
    ap.add_argument("--inspect", action="store_true", help="registers, spills, shared memory, products per kernel")
    ap.add_argument("--ncu", action="store_true", help="bracket one fwd+bwd per n_h for ncu --profile-from-start off")
    ap.add_argument("--dump", default=None, help="with --inspect: write each kernel's TTGIR and PTX to this folder")
    ap.add_argument("--roofline", action="store_true", help="bytes, time and bandwidth per kernel (traffic())")
    ap.add_argument("--peak", type=float, default=3350.0, help="HBM bandwidth in GB/s for --roofline's share")
    ap.add_argument("--gate", action="store_true", help="with a gate g = logsigmoid(N(3, 1)) (fla: chunk_gated_*)")
    ap.add_argument("--varlen", action="store_true",
                    help="B=1 packed: 8 sequences of lengths VARLEN (sum 32768), cu_seqlens, on both sides")
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F

    from lrnnkit.ops.gh import wy, wy_config
    from lrnnkit.ops.gh.api import chunk_gh
    from _peers import fla_gh
    peer = None if a.no_fla else fla_gh()
    if a.prec:
        wy_config.FP32_PRECISION = a.prec
    dev = "cuda" if torch.cuda.is_available() else "cpu"   # cpu: a smoke test under TRITON_INTERPRET=1
    dtype = getattr(torch, a.dtype)
    table = wy.config_table(dtype)
    for spec in filter(None, a.set.split(";")):
        key, val = spec.split("=")
        table[key] = setting(val)
    B, T, H, K, V = a.B, a.T, 16, 128, 128
    from bench_kernels import VARLEN_LENGTHS as VARLEN
    cu = None
    if a.varlen:
        B, T = 1, sum(VARLEN)
        cu = torch.tensor((0,) + VARLEN, device=dev).cumsum(0)
    print(f"# {torch.cuda.get_device_name() if dev == 'cuda' else 'cpu'}  B={B} T={T} H={H} K=V={K} {a.dtype}"
          + (" gated" if a.gate else "") + (f" packed {VARLEN}" if a.varlen else "")
          + (f" fp32 dots {wy_config.FP32_PRECISION}" if dtype == torch.float32 else ""), flush=True)

    def make(nh, dt, grad, rows=None):
        g = torch.Generator(device=dev).manual_seed(nh)
        q = torch.randn(B, T, H, K, device=dev, generator=g)
        k = F.normalize(torch.randn(B, T, nh, H, K, device=dev, generator=g), dim=-1)
        v = torch.randn(B, T, nh, H, V, device=dev, generator=g)
        b = 2 * torch.rand(B, T, nh, H, device=dev, generator=g)
        do = torch.randn(B, T, H, V, device=dev, generator=g)
        gg = torch.nn.functional.logsigmoid(torch.randn(B, T, H, device=dev, generator=g) + 3)
        xs = [x[:rows] if rows else x for x in (q, k, v, b)]
        xs = [x.to(dtype).to(dt).detach().requires_grad_(grad) for x in xs]
        gt = (gg[:rows] if rows else gg).to(torch.float64 if dt == torch.float64 else torch.float32)
        xs.append(gt.detach().requires_grad_(grad) if a.gate else None)
        return xs, (do[:rows] if rows else do).to(dtype).to(dt)

    def ours(xs, nh):
        return chunk_gh(xs[0], xs[1], xs[2], xs[4], xs[3], nh, scale=1.0, cu_seqlens=cu, chunk_size=a.chunk,
                        validate=False)[0]

    def fla(xs, nh):
        return peer(*xs, nh, cu)

    def bench(fn):
        if dev == "cpu":
            t0 = time.perf_counter()
            fn()
            return (time.perf_counter() - t0) * 1e3
        from triton.testing import do_bench
        return do_bench(fn, warmup=10, rep=60)

    def kernels(fn, raw=False):
        from torch.profiler import ProfilerActivity, profile
        fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
        rows = []
        for e in prof.key_averages():
            t = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
            if t > 0:
                rows.append((t / 3 / 1000, e.key[:40], e.count // 3))
        rows.sort(reverse=True)
        if raw:
            return rows
        return "; ".join(f"{n} x{c} {t:.3f}" for t, n, c in rows[:10])

    for spec in filter(None, a.sweep.split(";")):
        key, opts = spec.split("=")
        nh = a.sweep_nh
        xs, do = make(nh, dtype, True)
        for opt in opts.split(","):
            old = table[key]
            table[key] = setting(opt)
            try:
                if a.compile_only:
                    ours(xs, nh).backward(do)
                    if dev == "cuda":
                        torch.cuda.synchronize()
                    print(f"compiled n_h={nh} {key}={opt}", flush=True)
                    table[key] = old
                    continue
                with torch.no_grad():
                    tf = bench(lambda: ours(xs, nh))
                tb = bench(lambda: ours(xs, nh).backward(do))
                print(f"sweep n_h={nh} {key}={opt}: fwd {tf:.3f} fwd+bwd {tb:.3f}", flush=True)
            except Exception as exc:   # e.g. out of shared memory; a CUDA fault poisons every later setting
                print(f"sweep n_h={nh} {key}={opt}: failed {repr(exc)[:120]}", flush=True)
            table[key] = old
    fl = "fla-bf16" if a.fla_dtype == "bfloat16" else "fla-fp32"
    for nh in [int(x) for x in a.nh.split(",") if x]:
        xs, do = make(nh, dtype, True)
        if a.compile_only:
            ours(xs, nh).backward(do)
            print(f"compiled n_h={nh} {a.set or ''}", flush=True)
            continue
        line = {}
        if peer is not None:
            xb, dob = make(nh, getattr(torch, a.fla_dtype), True)
            with torch.no_grad():
                line[fl + " fwd"] = bench(lambda: fla(xb, nh))
            try:
                line[fl + " fb"] = bench(lambda: fla(xb, nh).backward(dob))
            except Exception as exc:   # fla refuses its gated backward on Hopper with triton < 3.7.1 (fla #640)
                print(f"n_h={nh} fla fwd+bwd refused: {repr(exc)[:160]}", flush=True)
            del xb, dob
        with torch.no_grad():
            line["ours fwd"] = bench(lambda: ours(xs, nh))
        line["ours fb"] = bench(lambda: ours(xs, nh).backward(do))
        if not a.no_profile and dev == "cuda":
            print(f"n_h={nh} ours fwd+bwd kernels: {kernels(lambda: ours(xs, nh).backward(do))}", flush=True)
        if a.roofline and dev == "cuda":
            cfg = wy.config_table(dtype, None, K, V, dev)
            C = a.chunk or wy.default_chunk(dtype, None, K, V, dev)
            need = traffic(dtype, nh, B, T, H, K, V, C, cfg["split"], cfg["keep"], cfg["fuse"])
            got = {}
            for t_, name, _ in kernels(lambda: ours(xs, nh).backward(do), raw=True):
                key = "elementwise" if "elementwise" in name else name
                got[key] = got.get(key, 0.0) + t_
            print(f"{'kernel':20s} {'GB':>7s} {'ms':>7s} {'GB/s':>7s} {'of peak':>7s}")
            tot_b = tot_t = 0.0
            for key, byt in need.items():
                if byt and key in got:
                    tot_b, tot_t = tot_b + byt, tot_t + got[key]
                    print(f"{key:20s} {byt / 1e9:7.3f} {got[key]:7.3f} {byt / got[key] / 1e6:7.0f} "
                          f"{byt / got[key] / 1e6 / a.peak:7.0%}")
            print(f"{'all':20s} {tot_b / 1e9:7.3f} {tot_t:7.3f} {tot_b / tot_t / 1e6:7.0f} "
                  f"{tot_b / tot_t / 1e6 / a.peak:7.0%}  (at peak: {tot_b / a.peak / 1e6:.3f} ms)", flush=True)
        if a.ncu and dev == "cuda":
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStart()
            ours(xs, nh).backward(do)
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStop()
        if a.inspect and dev == "cuda":
            inspect(a.dump, f"{a.dtype}-nh{nh}-")
        txt = "  ".join(f"{k_} {v_:.3f}" for k_, v_ in line.items())
        if fl + " fwd" in line:
            txt += f"  | / {fl}: " + "  ".join(f"{k_} {line[k_] / line[fl + ' ' + k_.split()[1]]:.3f}"
                                               for k_ in line if not k_.startswith("fla")
                                               and fl + " " + k_.split()[1] in line)
        print(f"n_h={nh} {a.dtype}: {txt}", flush=True)
        del xs, do
        if dev == "cuda":
            torch.cuda.empty_cache()
        if a.errors:
            x64, d64 = make(nh, torch.float64, True, rows=1)
            o = ours(x64, nh)
            o.backward(d64)
            ref = [o.detach()] + [x.grad for x in x64 if x is not None]
            xs, do = make(nh, dtype, True, rows=1)
            o = ours(xs, nh)
            o.backward(do)
            got = [o.detach()] + [x.grad for x in xs if x is not None]
            print(f"n_h={nh} {a.dtype} rel err vs float64 o/dq/dk/dv/dbeta{'/dg' if a.gate else ''}: "
                  + " ".join(f"{float((g_.double() - r_).norm() / r_.norm()):.2e}" for g_, r_ in zip(got, ref)),
                  flush=True)
            if peer is not None:
                xs, do = make(nh, torch.bfloat16, True, rows=1)
                try:
                    o = fla(xs, nh)
                    o.backward(do)
                    got = [o.detach()] + [x.grad for x in xs if x is not None]
                    print(f"n_h={nh} fla bf16 rel err vs float64: "
                          + " ".join(f"{float((g_.double() - r_).norm() / r_.norm()):.2e}"
                                     for g_, r_ in zip(got, ref)), flush=True)
                except Exception as exc:
                    print(f"n_h={nh} fla bf16 errors: n/a ({repr(exc)[:80]})", flush=True)


if __name__ == "__main__":
    main()
