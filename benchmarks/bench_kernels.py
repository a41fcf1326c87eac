"""GPU benchmark of lrnnkit.ops against flash-linear-attention (fla) 0.6.0, in ONE run on the device.

    python benchmarks/bench_kernels.py --out DIR            # on the GPU machine: prints the table, writes DIR/kernels.md
    python benchmarks/bench_kernels.py --record DIR/kernels.md   # here: copy that markdown into RESULTS.md ("kernels")

On the device machine (fla as wheels in .whl/, carried):
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
    TRITON_INTERPRET=0 python3 -m pytest -q proofs_tests/ops/      # the tests, compiled on the GPU
    python3 benchmarks/bench_kernels.py --out $OUT [--sections train,gate,varlen,fp32,short,s5] [--sweep] [--quick]
``--sweep`` re-tunes block sizes / warps first (many compilations, a few minutes); ``--quick`` runs smaller sizes
(a smoke test; needs a GPU all the same).

Sections: train, gate, varlen: the trainable GH layer ``chunk_gh`` (Triton WY forward + backward,
:mod:`lrnnkit.ops.gh.wy`) forward and forward+backward at B=8, T=4096, H=16, K=V=128, bf16 (and fp32), unit
keys, beta in [0, 2], n_h in {1, 2, 3}, plain / gated / packed, vs fla (chunk_delta_rule for n_h = 1,
chunk_gated_delta_product for n_h > 1: both interleave n_h Householder steps), with errors against float64;
fp32: the forward in fp32 end to end, ``chunk_gh`` (no autograd) and our fused recurrent kernel vs fla's
fused_recurrent_delta_rule in fp32 (fla's chunked kernels refuse fp32; on the interleaved sequence for n_h > 1);
short: many short states (B=1024, T=4096, K=V=16, fp32); s5: a compiled S_5 word-problem model on 10^6-token
sequences (throughput, and exactness against exact permutation composition).
Timings: triton.testing.do_bench medians (ms), inputs random (never zeros), validation off for both sides
(``validate=False``: fla does not validate either). The IO floor is the fewest bytes a kernel must move (inputs
read once, outputs written once) over the copy bandwidth measured in the same run.
floor: every kernel of chunk_gh's fwd + bwd beside its floor (benchmarks/_floor.py: bytes as written and at the
least, tensor-core FLOPs, the larger time at the measured bandwidth and the H200's product rates, each kernel timed
on its own) for bf16 n_h = 1, 2, 3 and float32 (3xTF32, tf32) n_h = 1; writes floor.md and floor.json.
once: the backward's fused stage as _dqk_wy_once_kernel (wy_config's ``once``: every tile read once) beside
_dqk_wy_kernel, each on its own with its floor, chunk_gh's fwd + bwd with the switch off and on, and the largest
relative gradient difference between the two (bf16 n_h = 1, 2, 3, tf32 n_h = 1); writes once.json.
``--smoke``: the floor section at tiny shapes, in the Triton interpreter when there is no GPU (under a minute).
"""
from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from _peers import fla_gh  # noqa: E402


SECTIONS = ("train", "gate", "varlen", "fp32", "short", "s5", "floor", "once")


def fmt(x, nd=3):
    return "n/a" if x is None else (f"{x:.{nd}f}" if isinstance(x, float) else str(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--record", help="write this markdown file into benchmarks/RESULTS.md (section kernels)")
    ap.add_argument("--record-section", default="kernels",
                    help="the RESULTS.md section --record replaces (floor.md of --sections floor: 'kernel floor')")
    ap.add_argument("--quick", action="store_true", help="smaller sizes (smoke test)")
    ap.add_argument("--sweep", action="store_true", help="tune kernel configs first (slow: many compilations)")
    ap.add_argument("--sections", default="train,gate,varlen,short,s5",
                    help="comma list of sections to run: train, gate, varlen (chunk_gh fwd and fwd+bwd vs fla, bf16 "
                         "and fp32, errors vs float64: plain / gated / packed), fp32 (fp32 forward: chunk_gh and our "
                         "fused recurrent kernel vs fla's fused recurrent), short (many short states), s5 (compiled "
                         "S_5 model), floor (every kernel of chunk_gh beside its floor; not in the default), once (the "
                         "backward's fused stage reading each tile once beside the current one; not in the default)")
    ap.add_argument("--lean", action="store_true", help="train tables: bf16 timings only (fp32 at n_h = 1), no errors")
    ap.add_argument("--fp32-precision", choices=["tf32x3", "tf32", "ieee"], help="dot precision of the fp32 path")
    ap.add_argument("--smoke", action="store_true", help="the floor section only, tiny shapes, CPU (interpreter) "
                    "when no GPU: checks that the GPU run will not crash")
    a = ap.parse_args()
    unknown = set(a.sections.split(",")) - set(SECTIONS)
    if unknown:
        ap.error(f"--sections: unknown {', '.join(sorted(unknown))} (choose from {', '.join(SECTIONS)})")
    if a.smoke:
        return smoke(a)
    if a.record:
        sys.path.insert(0, HERE)
        from _record import record
        body = open(a.record).read()
        record(a.record_section, body, "Recorded from the GPU run's markdown (the 'Measured on' line names the machine "
               "that recorded it; the GPU, versions and date of the measurement are in the table header).")
        return
    run(a)


VARLEN_LENGTHS = (1000, 7200, 2100, 6100, 3000, 5168, 4100, 4100)   # 8 sequences, 32768 tokens, not multiples of 64


def train_tables(a, out, bench, dev, sections, B, T, H, K, V):
    """The trainable chunk_gh (Triton WY forward + backward) vs fla 0.6.0, plain / gated / packed.

    Timed: forward (no grad) and forward+backward (o.backward(do)) at bf16, ours also at fp32 (3xTF32 dots).
    Errors: relative L2 error of o and of every gradient against our float64 path (IEEE float64 dots; the
    same code, checked against autograd of the naive loop by proofs_tests/ops/gh/test_wy.py), for ours at bf16,
    fla at bf16 and ours at fp32, on the first 2 batch rows (fp64 memory), same inputs rounded per dtype."""
    import torch
    import torch.nn.functional as F

    from lrnnkit.ops.gh import wy, wy_config
    from lrnnkit.ops.gh.api import chunk_gh
    peer = fla_gh()

    def make(nh, gate, varlen, Bx, seed=0):
        g = torch.Generator(device=dev).manual_seed(seed)
        Bt, Tt = (1, sum(VARLEN_LENGTHS)) if varlen else (Bx, T)
        q = torch.randn(Bt, Tt, H, K, device=dev, generator=g, dtype=torch.float64)
        k = F.normalize(torch.randn(Bt, Tt, nh, H, K, device=dev, generator=g, dtype=torch.float64), dim=-1)
        v = torch.randn(Bt, Tt, nh, H, V, device=dev, generator=g, dtype=torch.float64)
        beta = 2 * torch.rand(Bt, Tt, nh, H, device=dev, generator=g, dtype=torch.float64)
        gt = F.logsigmoid(torch.randn(Bt, Tt, H, device=dev, generator=g, dtype=torch.float64) + 3) if gate else None
        do = torch.randn(Bt, Tt, H, V, device=dev, generator=g, dtype=torch.float64)
        cu = None
        if varlen:
            cu = torch.tensor([0] + list(VARLEN_LENGTHS), device=dev).cumsum(0)
        return [q, k, v, beta, gt], do, cu

    def cast(xs, dtype, grad):
        res = []
        for i, x in enumerate(xs):
            if x is None:
                res.append(None)
                continue
            y = x.to(torch.float32 if i == 4 and dtype != torch.float64 else dtype)   # gates in fp32 (as fla)
            res.append(y.detach().requires_grad_(grad))
        return res

    def ours(xs, nh, cu):   # xs in the order (q, k, v, beta, g) of the tables; chunk_gh takes fla's (g before beta)
        q, k, v, beta, g = xs
        return chunk_gh(q, k, v, g, beta, nh, scale=1.0, cu_seqlens=cu, validate=False)[0]

    def fla(xs, nh, cu):
        return peer(*xs, nh, cu)

    def grads(fn, xs, do, nh, cu):
        o = fn(xs, nh, cu)
        o.backward(do.to(o.dtype))
        return [o.detach().double()] + [None if x is None else x.grad.detach().double() for x in xs]

    def rel(a_, r_):
        return None if a_ is None or r_ is None else float((a_ - r_).norm() / r_.norm())

    # ---- tuning sweep: one kernel's config at a time, timing bf16 fwd+bwd at n_h = 1 (coordinate descent)
    if a.sweep:
        xs0, do0, _ = make(1, False, False, B)
        xb = cast(xs0, torch.bfloat16, True)
        dob = do0.to(torch.bfloat16)

        def fb():
            ours(xb, 1, None).backward(dob)
        notes = []
        default = dict(wy.CONFIG)
        options = {"state_fwd": [(32, 4), (64, 4), (128, 4), (64, 8), (128, 8)],
                   "state_rec": [(32, 4), (64, 4), (128, 4), (64, 8)],
                   "state_bwd": [(32, 4), (64, 4), (32, 8), (64, 8)],
                   "dqkwg": [(64, 4), (32, 4), (64, 8), (128, 8)], "dqkwg_bk": [64, 32, 128],
                   "wy_bwd": [(64, 4), (32, 4), (64, 8), (128, 8)], "t_warps": [4, 8]}
        for key, opts in options.items():
            best = None
            for opt in opts:
                wy.CONFIG[key] = opt
                try:
                    t = bench(fb)
                except Exception as exc:   # e.g. out of shared memory for a big tile
                    traceback.print_exc()
                    notes.append(f"{key}={opt}: failed ({repr(exc)[:80]})")
                    continue
                notes.append(f"{key}={opt}: {t:.3f}")
                if best is None or t < best[0]:
                    best = (t, opt)
            wy.CONFIG[key] = best[1] if best else default[key]
        del xs0, xb, do0, dob
        torch.cuda.empty_cache()
        out("Tuning sweep of the trainable kernels (bf16 fwd+bwd ms, n_h = 1, one setting at a time): "
            + "; ".join(notes) + ".")
    lean = getattr(a, "lean", False)
    out(f"Kernel settings used: {wy.CONFIG} (bf16), {wy.config_table(torch.float32)} (fp32), fp32 dot precision "
        f"{wy_config.FP32_PRECISION!r}"
        + ("; lean run: bf16 timings, fp32 at n_h = 1 only, no error table" if lean else "") + ".")
    out()

    if lean and "gate" in sections:
        # the gated backward at full key width against an independent reference: the chunk equations in torch
        # (cuBLAS float64, autograd), B=1 T=2048 H=4 (fla refuses its gated backward on Hopper with triton < 3.7.1,
        # fla issue #640, so this checks that ours is not hit by a similar miscompile)
        out("Gated backward vs the torch chunk equations in float64 (B=1, T=2048, H=4, K=V=128): rel. L2 error")
        out()
        out("| n_h | who | o | dq | dk | dv | dbeta | dg |")
        out("|---|---|---|---|---|---|---|---|")
        TG = 2048 if dev != "cpu" else 40
        for nh in (1, 2):
            try:
                g0 = torch.Generator(device=dev).manual_seed(7)
                xs = [torch.randn(1, TG, 4, K, device=dev, generator=g0, dtype=torch.float64),
                      F.normalize(torch.randn(1, TG, nh, 4, K, device=dev, generator=g0, dtype=torch.float64), dim=-1),
                      torch.randn(1, TG, nh, 4, V, device=dev, generator=g0, dtype=torch.float64),
                      2 * torch.rand(1, TG, nh, 4, device=dev, generator=g0, dtype=torch.float64),
                      F.logsigmoid(torch.randn(1, TG, 4, device=dev, generator=g0, dtype=torch.float64) + 3)]
                do_ = torch.randn(1, TG, 4, V, device=dev, generator=g0, dtype=torch.float64)
                ref = grads(lambda x_, n_, c_: chunk_gh(x_[0], x_[1], x_[2], x_[4], x_[3], n_, scale=1.0,
                                                        cu_seqlens=c_, backend="torch", validate=False)[0],
                            cast(xs, torch.float64, True), do_, nh, None)
                for who, dt_ in (("ours bf16", torch.bfloat16),
                                 (f"ours fp32 ({wy_config.FP32_PRECISION})", torch.float32)):
                    got = grads(ours, cast(xs, dt_, True), do_, nh, None)
                    out(f"| {nh} | {who} | " + " | ".join(f"{rel(a_, r_):.2e}" for a_, r_ in zip(got, ref)) + " |")
            except Exception as exc:
                traceback.print_exc()
                out(f"| {nh} | error: {repr(exc)[:150]} | | | | | | |")
        out()
    for variant in ("train", "varlen", "gate"):
        if variant not in sections:
            continue
        gate, varlen = variant == "gate", variant == "varlen"
        shape = (f"B=1 packed, {len(VARLEN_LENGTHS)} sequences of lengths {list(VARLEN_LENGTHS)} (sum "
                 f"{sum(VARLEN_LENGTHS)}), cu_seqlens" if varlen else f"B={B} T={T}")
        out(f"### Trainable GH layer (chunk_gh, Triton fwd + bwd){', gated' if gate else ''}: {shape}, H={H}, "
            f"K=V={K}, unit keys, beta in [0, 2]{', g = logsigmoid(N(3, 1))' if gate else ''}")
        out()
        out("| n_h | ours fwd ms | fla fwd ms | fwd ratio | ours fwd+bwd ms | fla fwd+bwd ms | fwd+bwd ratio | "
            "ours fp32 fwd+bwd ms | fp32 / bf16 (ours) |")
        out("|---|---|---|---|---|---|---|---|---|")
        errs = {}
        for nh in (1, 2, 3):
            row, notes = {}, []

            def attempt(name, fn):
                try:
                    row[name] = fn()
                except Exception as exc:   # one failing measurement (e.g. fla refusing a case) spares the rest
                    traceback.print_exc()
                    notes.append(f"{name}: {repr(exc)[:150]}")
            try:
                xs64, do64, cu = make(nh, gate, varlen, B)
                xb = cast(xs64, torch.bfloat16, False)
                with torch.no_grad():
                    attempt("fwd", lambda: bench(lambda: ours(xb, nh, cu)))
                    if peer is not None:
                        attempt("fla_fwd", lambda: bench(lambda: fla(xb, nh, cu)))
                xb = cast(xs64, torch.bfloat16, True)
                dob = do64.to(torch.bfloat16)
                attempt("fb", lambda: bench(lambda: ours(xb, nh, cu).backward(dob)))
                if peer is not None:
                    attempt("fla_fb", lambda: bench(lambda: fla(xb, nh, cu).backward(dob)))
                xf = cast(xs64, torch.float32, True)
                dof = do64.float()
                if not lean or nh == 1:
                    attempt("fb32", lambda: bench(lambda: ours(xf, nh, cu).backward(dof)))
                del xb, xf
                torch.cuda.empty_cache()
                if lean:
                    raise StopIteration
                # errors against float64, on 2 batch rows (or the whole packed batch)
                sub = (lambda x: x) if varlen else (lambda x: None if x is None else x[:2])
                xs_e, do_e = [sub(x) for x in xs64], sub(do64)
                del xs64
                ref = grads(ours, cast(xs_e, torch.float64, True), do_e, nh, cu)
                e = {}
                attempt("e_b", lambda: grads(ours, cast(xs_e, torch.bfloat16, True), do_e, nh, cu))
                attempt("e_f", lambda: grads(ours, cast(xs_e, torch.float32, True), do_e, nh, cu))
                if peer is not None:
                    attempt("e_fla", lambda: grads(fla, cast(xs_e, torch.bfloat16, True), do_e, nh, cu))
                for who, key in (("ours bf16", "e_b"), ("fla bf16", "e_fla"), ("ours fp32", "e_f")):
                    if key in row:
                        e[who] = row.pop(key)
                errs[nh] = {who: [rel(a_, r_) for a_, r_ in zip(gs, ref)] for who, gs in e.items()}
                if "fla bf16" in e and "ours bf16" in e:
                    errs[nh]["ours bf16 vs fla bf16"] = [rel(a_, r_) for a_, r_ in zip(e["ours bf16"], e["fla bf16"])]
                del xs_e, ref, e
            except StopIteration:
                pass
            except Exception as exc:
                traceback.print_exc()
                notes.append(repr(exc)[:160])
            if notes:
                row["err"] = "; ".join(notes)
            torch.cuda.empty_cache()
            r1 = row["fwd"] / row["fla_fwd"] if row.get("fwd") and row.get("fla_fwd") else None
            r2 = row["fb"] / row["fla_fb"] if row.get("fb") and row.get("fla_fb") else None
            r3 = row["fb32"] / row["fb"] if row.get("fb32") and row.get("fb") else None
            out(f"| {nh} | {fmt(row.get('fwd'))} | {fmt(row.get('fla_fwd'))} | {fmt(r1, 2)} | {fmt(row.get('fb'))} | "
                f"{fmt(row.get('fla_fb'))} | {fmt(r2, 2)} | {fmt(row.get('fb32'))} | {fmt(r3, 2)} |"
                + (f" error: {row['err']}" if "err" in row else ""))
        out()
        if lean:
            continue
        names = ["o", "dq", "dk", "dv", "dbeta"] + (["dg"] if gate else [])
        out(f"Relative L2 error vs float64 ({'all packed sequences' if varlen else 'batch rows 0-1'}); last rows: "
            "ours bf16 vs fla bf16 (rel. to fla)")
        out()
        out("| n_h | who | " + " | ".join(names) + " |")
        out("|---|---|" + "---|" * len(names))
        for nh, per in errs.items():
            for who, vals in per.items():
                idx = [0, 1, 2, 3, 4] + ([5] if gate else [])
                out(f"| {nh} | {who} | " + " | ".join(f"{vals[i]:.2e}" if vals[i] is not None else "n/a" for i in idx)
                    + " |")
        out()


FLOOR_CASES = (("bf16", 1), ("bf16", 2), ("bf16", 3), ("tf32x3", 1), ("tf32", 1))   # (dtype / fp32 mode, n_h)


def floor_tables(out, bench, dev, bw, shape, cases=FLOOR_CASES, json_dir=None):
    """Item "floor" of the kernels: per stage of one chunk_gh forward + backward (benchmarks/_floor.py), the bytes
    moved as written and at the least, the tensor-core FLOPs, the floor max(least bytes / bandwidth, FLOPs / rate)
    and the stage's kernel timed on its own, with the distance measured / floor. Writes floor.json to json_dir."""
    import json

    import torch

    import _floor
    from lrnnkit.fileio import atomic_write_text
    from lrnnkit.ops.gh.api import chunk_gh
    B, T, H, K, V = shape
    mine: list = []
    say = out

    def out(s=""):
        mine.append(s)
        say(s)
    out(f"Device: {torch.cuda.get_device_name(0) if dev != 'cpu' else 'cpu (interpreter)'}; torch "
        f"{torch.__version__}.")
    out()
    out(f"### Floor of every kernel: chunk_gh fwd + bwd, B={B} T={T} H={H} K=V={K}, no gate; bandwidth "
        f"{bw / 1e12:.2f} TB/s, products at {_floor.H200['bf16'] / 1e12:.0f} (bf16) / {_floor.H200['tf32'] / 1e12:.0f} "
        "(tf32) TFLOP/s dense, 3xTF32 three products per dot")
    out()
    out("| case | n_h | stage | kernel | GB written | GB least | GFLOP | written ms | mem ms | mma ms | floor ms | "
        "measured ms | distance |")
    out("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    record, passes = [], []
    for name, nh in cases:
        dtype, prec = (torch.bfloat16, None) if name == "bf16" else (torch.float32, name)
        try:
            rows = _floor.measure(dtype, nh, shape, bench, bw, dev, prec)
        except Exception as exc:   # one case failing (e.g. out of memory) spares the others
            traceback.print_exc()
            out(f"| {name} | {nh} | error: {repr(exc)[:150]} | | | | | | | | | | |")
            continue
        keys = ("written_ms", "mem_ms", "mma_ms", "floor_ms", "ms")
        total = dict(stage="all", kernel="", **{k: sum(r[k] for r in rows) for k in ("bytes", "min_bytes", "flops")
                                                  + keys})
        try:   # the whole fwd + bwd through autograd (allocations and gradient accumulation included)
            q, k, v, beta, do = _floor.inputs(nh, *shape, dtype, dev)
            xs = [x.requires_grad_(True) for x in (q, k, v, beta)]
            e2e = bench(lambda: chunk_gh(xs[0], xs[1], xs[2], None, xs[3], nh, scale=1.0, fp32_precision=prec,
                                         validate=False)[0].backward(do))
            del q, k, v, beta, do, xs
        except Exception as exc:
            traceback.print_exc()
            e2e = None
        total["e2e_ms"] = e2e
        fwd_b, bwd_b = _floor.pass_bytes(dtype, nh, *shape)
        total["pass_bytes"] = fwd_b + bwd_b
        passes.append(f"{name} n_h={nh}: {(fwd_b + bwd_b) / 1e9:.3f} GB, {(fwd_b + bwd_b) / bw * 1e3:.3f} ms"
                      + (f", fwd+bwd measured {e2e:.3f} ms ({e2e / ((fwd_b + bwd_b) / bw * 1e3):.1f}x)" if e2e else ""))
        for r in rows + [total]:
            out(f"| {name} | {nh} | {r['stage']} | {r['kernel']} | {r['bytes'] / 1e9:.3f} | "
                f"{r['min_bytes'] / 1e9:.3f} | {r['flops'] / 1e9:.1f} | {r['written_ms']:.3f} | {r['mem_ms']:.3f} | "
                f"{r['mma_ms']:.3f} | {r['floor_ms']:.3f} | {r['ms']:.3f}"
                + (f" (fwd+bwd {e2e:.3f})" if r is total and e2e else "") + f" | {r['ms'] / r['floor_ms']:.1f} |")
            record.append(dict(r, case=name, nh=nh))
        if dev != "cpu":
            torch.cuda.empty_cache()
        if json_dir:   # after every case: a run cut short keeps what it measured
            os.makedirs(json_dir, exist_ok=True)
            atomic_write_text(os.path.join(json_dir, "floor.json"),
                              json.dumps(dict(shape=shape, bandwidth=bw, rows=record), indent=1) + "\n")
    out()
    out("GB written: every load and store as the kernel issues it (a tile loaded once per value block counts each "
        "time); GB least: every tensor the stage touches, once; mem ms: GB least at the bandwidth; mma ms: the "
        "tl.dot FLOPs (tile shapes as launched) at the product rate; floor = the larger; written ms: GB written at the "
        "bandwidth; distance = measured / floor, each kernel timed on its own; 'all' adds the stages (the floor of "
        "the whole fwd + bwd as run), and beside it the fwd + bwd through autograd (gradients accumulated into "
        ".grad, as the train table times it).")
    out()
    out("Floor of the whole fwd + bwd (inputs read once, outputs written once, no intermediates: what any "
        "arrangement of kernels must move) at the bandwidth: " + "; ".join(passes) + ".")
    out()
    if json_dir:
        atomic_write_text(os.path.join(json_dir, "floor.md"), "\n".join(mine) + "\n")


ONCE_CASES = (("bf16", 1), ("bf16", 2), ("bf16", 3), ("tf32", 1))   # (dtype / fp32 mode, n_h)


def once_table(out, bench, dev, bw, shape, json_dir=None):
    """Item "once": the backward's fused stage as _dqk_wy_once_kernel (the table's ``once``: every tile read once)
    beside _dqk_wy_kernel, per case: each timed on its own with its floor (benchmarks/_floor.py), chunk_gh's
    fwd + bwd with the switch off and on (the fused backward forced on for float32, whose table runs two kernels),
    and the largest relative difference of a gradient between the two (the same math; bf16 rounding only).
    Writes once.json to json_dir (after every case: a run cut short keeps what it measured)."""
    import json

    import torch

    import _floor
    from lrnnkit.fileio import atomic_write_text
    from lrnnkit.ops.gh import wy_config
    from lrnnkit.ops.gh.api import chunk_gh
    B, T, H, K, V = shape
    out(f"### The fused backward stage read once: _dqk_wy_once_kernel beside _dqk_wy_kernel, B={B} T={T} H={H} "
        f"K={K} V={V}, no gate; bandwidth {bw / 1e12:.2f} TB/s")
    out()
    out("| case | n_h | GB written (fused / once) | floor ms | stage ms fused | stage ms once | fwd+bwd ms fused | "
        "fwd+bwd ms once | max rel grad diff |")
    out("|---|---|---|---|---|---|---|---|---|")
    rows = []
    for mode, nh in ONCE_CASES:
        dtype, prec = (torch.bfloat16, None) if mode == "bf16" else (torch.float32, mode)
        table = wy_config.config_table(dtype, prec)
        saved = {k_: table[k_] for k_ in ("fuse", "once")}
        try:
            table["fuse"] = True
            q, k, v, beta, do = _floor.inputs(nh, B, T, H, K, V, dtype, dev)
            st = _floor.Stages(q, k, v, beta, do, nh, None, prec)
            plans = {}
            for once in (False, True):
                table["once"] = once
                plans[once] = [s_ for s_ in _floor.plan(dtype, nh, B, T, H, st.c.K, st.c.V, st.c.BT, prec, table)
                               if s_.name.startswith("dqkwy")][0]
            ms = {once: bench(st.run[plans[once].name]) for once in (False, True)}
            del st
            xs = [x.detach().requires_grad_(True) for x in (q, k, v, beta)]
            e2e, grads = {}, {}
            for once in (False, True):
                table["once"] = once

                def fb():
                    o, _ = chunk_gh(xs[0], xs[1], xs[2], None, xs[3], nh, scale=1.0, chunk_size=None,
                                    fp32_precision=prec, validate=False)
                    return torch.autograd.grad(o, xs, do)
                grads[once] = fb()
                e2e[once] = bench(fb)
            diff = max(float((a_.double() - b_.double()).norm() / b_.double().norm())
                       for a_, b_ in zip(grads[True], grads[False]))
        finally:
            table.update(saved)
        floor = plans[True].floor_ms(bw)[2]
        row = dict(case=mode, nh=nh, gb_fused=plans[False].bytes / 1e9, gb_once=plans[True].bytes / 1e9,
                   floor_ms=floor, stage_ms_fused=ms[False], stage_ms_once=ms[True], fwd_bwd_ms_fused=e2e[False],
                   fwd_bwd_ms_once=e2e[True], max_rel_grad_diff=diff)
        rows.append(row)
        out(f"| {mode} | {nh} | {row['gb_fused']:.3f} / {row['gb_once']:.3f} | {floor:.3f} | {ms[False]:.3f} | "
            f"{ms[True]:.3f} | {e2e[False]:.3f} | {e2e[True]:.3f} | {diff:.1e} |")
        if json_dir:
            os.makedirs(json_dir, exist_ok=True)
            atomic_write_text(os.path.join(json_dir, "once.json"),
                              json.dumps(dict(shape=shape, bandwidth=bw, rows=rows), indent=1) + "\n")
    out()
    return rows


def smoke(a):
    """--smoke: the floor section at tiny shapes, on the GPU when there is one, else in the Triton interpreter."""
    import torch
    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
    dev = "cuda" if torch.cuda.is_available() else "cpu"

    def bench(fn):
        t0 = time.perf_counter()
        fn()
        if dev == "cuda":
            torch.cuda.synchronize()
        return (time.perf_counter() - t0) * 1e3
    import _floor
    floor_tables(print, bench, dev, _floor.H200["bandwidth"], (1, 40, 2, 32, 32), json_dir=a.out)


def run(a):
    import numpy as np
    import torch
    import triton
    from triton.testing import do_bench

    from lrnnkit.ops.gh import wy_config
    from lrnnkit.ops.gh.api import chunk_gh
    from lrnnkit.ops.gh.fused_recurrent import fused_recurrent_delta_product

    dev = torch.device("cuda")
    lines: list = []

    def out(s=""):
        print(s, flush=True)
        lines.append(s)

    try:
        import fla
        fla_ver = getattr(fla, "__version__", "?")
        from fla.ops.delta_rule import fused_recurrent_delta_rule
    except Exception as exc:  # fla travels as a wheel; the table says when it is missing
        fla_ver = f"missing ({exc})"
        fused_recurrent_delta_rule = None

    def bench(fn):
        return do_bench(fn, warmup=25, rep=100, return_mode="median")

    # copy bandwidth (bytes read + written)
    x = torch.empty(2 ** 29, dtype=torch.float32, device=dev).uniform_()
    y = torch.empty_like(x)
    t_copy = bench(lambda: y.copy_(x))
    bw = 2 * x.numel() * 4 / (t_copy * 1e-3)
    del x, y
    torch.cuda.empty_cache()
    out(f"Device: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; triton {triton.__version__}; "
        f"fla {fla_ver}; {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; "
        f"copy bandwidth {bw / 1e12:.2f} TB/s (read + write, measured).")
    out()

    if a.fp32_precision:
        wy_config.FP32_PRECISION = a.fp32_precision
    B, T, H, K, V = (2, 1024, 4, 128, 128) if a.quick else (8, 4096, 16, 128, 128)
    FR_BEST: dict = {}
    sections = set(a.sections.split(","))
    if "floor" in sections:
        floor_tables(out, bench, dev, bw, (B, T, H, K, V), json_dir=a.out)
    if "once" in sections:
        once_table(out, bench, dev, bw, (B, T, H, K, V), json_dir=a.out)
    if sections & {"train", "gate", "varlen"}:
        train_tables(a, out, bench, dev, sections, B, T, H, K, V)

    def inputs(nh, dtype, gen_seed=0):
        g = torch.Generator(device=dev).manual_seed(gen_seed)
        q = torch.randn(B, T, H, K, device=dev, generator=g).to(dtype)
        k = torch.nn.functional.normalize(torch.randn(B, T, nh, H, K, device=dev, generator=g), dim=-1).to(dtype)
        v = torch.randn(B, T, nh, H, V, device=dev, generator=g).to(dtype)
        beta = (2 * torch.rand(B, T, nh, H, device=dev, generator=g)).to(dtype)
        return [q, k, v, beta]

    def chunk_fwd(q, k, v, beta, nh):
        """Our chunked forward: the trainable chunk_gh (lrnnkit.ops.gh.wy) without autograd."""
        with torch.no_grad():
            return chunk_gh(q, k, v, None, beta, nh, scale=1.0, validate=False)[0]

    def io_bytes(nh, dtype):
        """The forward's IO floor: q, k, v, beta read once, o written once (:func:`_floor.pass_bytes`)."""
        import _floor
        return _floor.pass_bytes(dtype, nh, B, T, H, K, V)[0]

    # ---------------------------------------------------------------- tuning sweep (picks the configs used below)
    tune = []
    try:
        if not a.sweep or "fp32" not in sections:
            raise StopIteration
        q, k, v, beta = inputs(1, torch.float32)
        def best_fused(q, k, v, beta, block_vs, label):
            """(value block, warps) of the fastest fused recurrent call among ``block_vs`` x warps 1, 2, 4."""
            best = None
            for bv in block_vs:
                for nw in (1, 2, 4):
                    t = bench(lambda bv=bv, nw=nw: fused_recurrent_delta_product(q, k, v, beta, scale=1.0,
                                                                                 validate=False, block_v=bv,
                                                                                 num_warps=nw))
                    tune.append(f"fused fp32 {label} BV={bv} warps={nw}: {t:.3f}")
                    if best is None or t < best[0]:
                        best = (t, bv, nw)
            return best[1:]

        FR_BEST["k128"] = best_fused(q, k, v, beta, (8, 16, 32, 64), "K=128")
        g = torch.Generator(device=dev).manual_seed(3)
        qs = torch.randn(1024, 4096, 1, 16, device=dev, generator=g)
        ks = torch.nn.functional.normalize(torch.randn(1024, 4096, 1, 16, device=dev, generator=g), dim=-1)
        bs = 2 * torch.rand(1024, 4096, 1, device=dev, generator=g)
        FR_BEST["k16"] = best_fused(qs, ks, qs, bs, (4, 8, 16), "K=16")
        del qs, ks, bs
    except StopIteration:
        tune.append("not run (defaults from an earlier sweep, see the code)")
    except Exception as exc:
        traceback.print_exc()
        tune.append(f"sweep failed: {repr(exc)[:200]}")
    if "fp32" in sections:
        out("Tuning sweep of the fused recurrent kernel (ms): " + "; ".join(tune) + ".")
        out(f"Chosen: fused recurrent (BV, warps) {FR_BEST}.")
        out()

    # ---------------------------------------------------------------- fp32 GH layer
    if "fp32" in sections:
        out(f"### GH layer forward, fp32 end to end, B={B} T={T} H={H} K=V={K} (fla's chunked kernels refuse fp32: "
            f"its peer here is fused_recurrent_delta_rule in fp32, on the interleaved sequence for n_h > 1; ours "
            f"chunk: chunk_gh without autograd, fp32 dot precision {wy_config.FP32_PRECISION!r})")
        out()
        out("| n_h | ours chunk fwd ms | ours fused recurrent fwd ms | fla fused recurrent fwd ms | ratio (best ours / "
            "fla) | IO floor ms | rel err chunk vs fused (fp32) |")
        out("|---|---|---|---|---|---|---|")
    for nh in ((1, 2, 3) if "fp32" in sections else ()):
        row = {}
        try:
            q, k, v, beta = inputs(nh, torch.float32)
            row["chunk"] = bench(lambda: chunk_fwd(q, k, v, beta, nh))
            bv, nw = FR_BEST.get("k128", (None, None))
            row["fr"] = bench(lambda: fused_recurrent_delta_product(q, k, v, beta, scale=1.0, validate=False,
                                                                    block_v=bv, num_warps=nw))
            oc = chunk_fwd(q, k, v, beta, nh)
            of = fused_recurrent_delta_product(q, k, v, beta, scale=1.0, validate=False)[0]
            row["err"] = float((oc - of).norm() / of.norm())
            if fused_recurrent_delta_rule is not None:
                if nh == 1:
                    row["fla"] = bench(lambda: fused_recurrent_delta_rule(q, k[:, :, 0], v[:, :, 0], beta[:, :, 0],
                                                                          scale=1.0))
                else:
                    qi = torch.zeros(B, T, nh, H, K, device=dev)
                    qi[:, :, -1] = q
                    qi, ki, vi, bi = qi.flatten(1, 2), k.flatten(1, 2), v.flatten(1, 2), beta.flatten(1, 2)
                    row["fla"] = bench(lambda: fused_recurrent_delta_rule(qi, ki, vi, bi, scale=1.0))
        except Exception as exc:
            traceback.print_exc()
            row["x"] = repr(exc)[:120]
        best = min([t for t in (row.get("chunk"), row.get("fr")) if t], default=None)
        ratio = best / row["fla"] if best and row.get("fla") else None
        out(f"| {nh} | {fmt(row.get('chunk'))} | {fmt(row.get('fr'))} | {fmt(row.get('fla'))} | {fmt(ratio, 2)} | "
            f"{io_bytes(nh, torch.float32) / bw * 1e3:.3f} | {fmt(row.get('err'), 7)} |" + (f" error: {row['x']}" if "x" in row else ""))
        torch.cuda.empty_cache()
    out()

    # ---------------------------------------------------------------- many short states
    Bs, Ts, Ks = (64, 1024, 16) if a.quick else (1024, 4096, 16)
    out(f"### Many short states: B={Bs}, T={Ts}, H=1, K=V={Ks}, fp32, n_h=1")
    out()
    out("| ours fused recurrent ms | ours chunk ms | fla fused recurrent ms | ratio (best ours / fla) | IO floor ms |")
    out("|---|---|---|---|---|")
    try:
        if "short" not in sections:
            raise StopIteration
        g = torch.Generator(device=dev).manual_seed(1)
        q = torch.randn(Bs, Ts, 1, Ks, device=dev, generator=g)
        k = torch.nn.functional.normalize(torch.randn(Bs, Ts, 1, Ks, device=dev, generator=g), dim=-1)
        v = torch.randn(Bs, Ts, 1, Ks, device=dev, generator=g)
        beta = 2 * torch.rand(Bs, Ts, 1, device=dev, generator=g)
        bv, nw = FR_BEST.get("k16", (None, None))
        t_fr = bench(lambda: fused_recurrent_delta_product(q, k, v, beta, scale=1.0, validate=False, block_v=bv,
                                                           num_warps=nw))
        t_ch = bench(lambda: chunk_fwd(q, k, v, beta, 1))
        t_fla = bench(lambda: fused_recurrent_delta_rule(q, k, v, beta, scale=1.0)) if fused_recurrent_delta_rule else None
        best = min(t_fr, t_ch)
        floor = Bs * Ts * (3 * Ks + 1 + Ks) * 4 / bw * 1e3
        out(f"| {t_fr:.3f} | {t_ch:.3f} | {fmt(t_fla)} | {fmt(best / t_fla if t_fla else None, 2)} | {floor:.3f} |")
    except StopIteration:
        out("| not run | | | | |")
    except Exception as exc:
        traceback.print_exc()
        out(f"| error: {repr(exc)[:150]} | | | | |")
    out()

    # ---------------------------------------------------------------- compiled S_5 model, 10^6 tokens
    from lrnnkit.layers import load
    from lrnnkit.testing.examples import group_truth, permutation_group_model
    from itertools import permutations
    n = 5
    letters = sorted(permutations(range(n)))
    model = permutation_group_model(n, letters)
    Bm, Tm = (8, 100_000) if a.quick else (132, 1_000_000)
    out(f"### Compiled S_5 word problem (paper 000, Theorem 3 in reflections; 120 letters, width 5, <= 4 GH factors "
        f"per letter), B={Bm} sequences x T={Tm} tokens, fp32")
    out()
    out("| mode | ms | tokens/s | exact (all B*T outputs = exact prefix products) |")
    out("|---|---|---|---|")
    if "s5" not in sections:
        Bm, Tm = 1, 1
    rng = np.random.default_rng(5)
    words = rng.integers(0, len(letters), size=(Bm, Tm))
    t0 = time.time()
    truth = group_truth(n, letters, words)
    t_truth = time.time() - t0
    wd = torch.as_tensor(words, device=dev)
    for mode in (("matrix", "factors") if "s5" in sections else ()):
        try:
            mod = load(model, backend="triton", dtype=torch.float32, device=dev, gh_mode=mode)
            with torch.no_grad():
                res = mod(wd)
                torch.cuda.synchronize()
                t0 = time.time()
                res = mod(wd)
                torch.cuda.synchronize()
                dt = time.time() - t0
            exact = bool((res.cpu().numpy() == truth).all())
            wrong = int((res.cpu().numpy() != truth).sum())
            out(f"| {mode} | {dt * 1e3:.1f} | {Bm * Tm / dt:.3g} | {'yes' if exact else f'NO ({wrong} wrong)'} |")
        except Exception as exc:
            traceback.print_exc()
            out(f"| {mode} | error: {repr(exc)[:150]} | | |")
    out()
    out(f"(exact truth by numpy permutation-table composition took {t_truth:.1f} s on the host.)")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "kernels.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
