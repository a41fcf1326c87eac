"""Per-kernel profile of the trainable GH kernels (:mod:`lrnnkit.kernels.gh.wy`) on the GPU, for tuning.

    python3 benchmarks/profile_gh.py [--nh 1,2,3] [--variants fused,unfused] [--fp32 tf32,bf16x3,tf32x3]

Prints, per variant and n_h: forward (no grad) and forward+backward medians (triton.testing.do_bench, ms), fla's
beside them when fla is importable, and the device time of every kernel of one fwd+bwd (torch.profiler), so a
change can be judged kernel by kernel. Shape of issue 12: B=8, T=4096, H=16, K=V=128, bf16.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nh", default="1,2,3")
    ap.add_argument("--variants", default="fused,unfused")
    ap.add_argument("--fp32", default="", help="comma list of fp32 dot precisions to time (fwd+bwd, n_h = 1)")
    ap.add_argument("--B", type=int, default=8)
    ap.add_argument("--T", type=int, default=4096)
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--sweep", default="", help="e.g. state_fwd=64:4,128:4,32:4;state_bwd=64:4,32:4")
    a = ap.parse_args()
    import torch
    import torch.nn.functional as F
    from triton.testing import do_bench

    from lrnnkit.kernels.gh import wy
    from lrnnkit.kernels.gh.api import chunk_gh
    try:
        from fla.ops.delta_rule import chunk_delta_rule
        from fla.ops.gated_delta_product import chunk_gated_delta_product
    except Exception:
        chunk_delta_rule = None
    dev = "cuda" if torch.cuda.is_available() else "cpu"   # cpu: a smoke test under TRITON_INTERPRET=1
    B, T, H, K, V = a.B, a.T, 16, 128, 128
    print(f"# {torch.cuda.get_device_name() if dev == 'cuda' else 'cpu'}  B={B} T={T} H={H} K=V={K}", flush=True)

    def make(nh, dtype, grad):
        g = torch.Generator(device=dev).manual_seed(nh)
        q = torch.randn(B, T, H, K, device=dev, generator=g)
        k = F.normalize(torch.randn(B, T, nh, H, K, device=dev, generator=g), dim=-1)
        v = torch.randn(B, T, nh, H, V, device=dev, generator=g)
        b = 2 * torch.rand(B, T, nh, H, device=dev, generator=g)
        do = torch.randn(B, T, H, V, device=dev, generator=g).to(dtype)
        return [x.to(dtype).requires_grad_(grad) for x in (q, k, v, b)], do

    def ours(xs, nh):
        return chunk_gh(xs[0], xs[1], xs[2], xs[3], None, nh, scale=1.0)[0]

    def fla(xs, nh):
        q, k, v, b = xs
        if nh == 1:
            return chunk_delta_rule(q, k[:, :, 0], v[:, :, 0], b[:, :, 0], scale=1.0)[0]
        return chunk_gated_delta_product(q, k.flatten(1, 2), v.flatten(1, 2), None, b.flatten(1, 2), nh,
                                         scale=1.0)[0]

    def bench(fn):
        if dev == "cpu":
            import time
            t0 = time.perf_counter()
            fn()
            return (time.perf_counter() - t0) * 1e3
        return do_bench(fn, warmup=10, rep=60)

    def kernels(fn):
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
            if t > 0 and e.key != "ProfilerStep*":
                rows.append((t / 3 / 1000, e.key[:60], e.count // 3))
        rows.sort(reverse=True)
        return "; ".join(f"{n} x{c} {t:.3f}" for t, n, c in rows[:12])

    for spec in filter(None, a.sweep.split(";")):
        key, opts = spec.split("=")
        xs, do = make(1, torch.bfloat16, True)
        for opt in opts.split(","):
            old = wy.CONFIG[key]
            wy.CONFIG[key] = tuple(int(x) for x in opt.split(":")) if ":" in opt else int(opt)
            try:
                with torch.no_grad():
                    tf = bench(lambda: ours(xs, 1))
                tb = bench(lambda: ours(xs, 1).backward(do))
                print(f"sweep {key}={opt}: fwd {tf:.3f} fwd+bwd {tb:.3f}", flush=True)
            except Exception as exc:
                print(f"sweep {key}={opt}: failed {repr(exc)[:100]}", flush=True)
            wy.CONFIG[key] = old
    for nh in [int(x) for x in a.nh.split(",")]:
        xs, do = make(nh, torch.bfloat16, True)
        line = {}
        if chunk_delta_rule is not None:
            with torch.no_grad():
                line["fla fwd"] = bench(lambda: fla(xs, nh))
            line["fla fb"] = bench(lambda: fla(xs, nh).backward(do))
        for var in a.variants.split(","):
            wy.FUSED = var == "fused"
            with torch.no_grad():
                line[f"{var} fwd"] = bench(lambda: ours(xs, nh))
            line[f"{var} fb"] = bench(lambda: ours(xs, nh).backward(do))
            if not a.no_profile:
                with torch.no_grad():
                    print(f"n_h={nh} {var} fwd kernels: {kernels(lambda: ours(xs, nh))}", flush=True)
                print(f"n_h={nh} {var} fwd+bwd kernels: {kernels(lambda: ours(xs, nh).backward(do))}", flush=True)
        wy.FUSED = True
        txt = "  ".join(f"{k_} {v_:.3f}" for k_, v_ in line.items())
        if "fla fwd" in line:
            txt += "  | ratios: " + "  ".join(f"{k_} {line[k_] / line['fla ' + k_.split()[1]]:.3f}"
                                             for k_ in line if not k_.startswith("fla"))
        print(f"n_h={nh} bf16: {txt}", flush=True)
        del xs, do
        torch.cuda.empty_cache()
    if a.fp32:
        xs, do = make(1, torch.bfloat16, True)
        tb = bench(lambda: ours(xs, 1).backward(do))
        del xs
        sub = [x.detach()[:1].double().requires_grad_(True) for x in make(1, torch.float32, True)[0]]
        dsub = make(1, torch.float32, True)[1][:1].double()
        ref = chunk_gh(*sub, None, 1, scale=1.0)[0]
        ref.backward(dsub)
        refs = [ref.detach()] + [x.grad for x in sub]
        for prec in a.fp32.split(","):
            wy.FP32_PRECISION = prec
            xs, do = make(1, torch.float32, True)
            t = bench(lambda: ours(xs, 1).backward(do))
            s1 = [x.detach()[:1].float().requires_grad_(True) for x in xs]
            o = chunk_gh(*s1, None, 1, scale=1.0)[0]
            o.backward(dsub.float())
            got = [o.detach()] + [x.grad for x in s1]
            errs = [float((g_.double() - r_).norm() / r_.norm()) for g_, r_ in zip(got, refs)]
            print(f"fp32 {prec}: fwd+bwd {t:.3f} ms = {t / tb:.2f} x bf16 ({tb:.3f}); rel err o/dq/dk/dv/db "
                  + " ".join(f"{e:.1e}" for e in errs), flush=True)
            del xs, do
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
