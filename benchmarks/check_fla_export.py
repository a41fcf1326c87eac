"""GPU check of `lrnnkit export MODEL --to fla`: flash-linear-attention's own kernels, run through the exported
tables with the export's wiring between layers (lrnnkit.export.run_fla), reproduce the certified outputs over
10^5-token words, for one-layer and multi-layer models.

    python benchmarks/check_fla_export.py --out DIR [--tokens 100000] [--batch 2]   # on the GPU machine
    python benchmarks/check_fla_export.py --record DIR/fla_export.md               # here: into RESULTS.md
    python benchmarks/check_fla_export.py --stand-in --device cpu --tokens 200     # dry run without fla

On the device machine (fla 0.6.0 carried as wheels in .whl/):
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
    python3 benchmarks/check_fla_export.py --out $OUT

Models: one-layer groups (parity, Z_3, Z_5, S_3 in two constructions, A_5 by 3-D rotations, S_5 by transposition
reflections) and multi-layer ones (D_4 by the two-layer dihedral construction of 001, a diagonal layer feeding a
reflection layer; the Krohn-Rhodes cascades of even pairs, 2 layers with a lag-1 read, and of mod-arith:3,
4 layers). For each: compile, certify, export (lrnnkit.export.export_fla: compact readout, one head per state
coordinate), draw ``batch`` random words of ``tokens`` letters, run every layer through fla's kernel (one call per
layer, the layers' outputs decoded and wired into the next layer's symbols on the host), and compare the outputs
with the automaton's output trace (the model is certified, so these are its outputs at every length):

* fp32: ``fla.ops.delta_rule.fused_recurrent_delta_rule`` (the delta_rule layout: T n_h steps, the query at a
  token's last step; fla's chunk kernels refuse float32);
* bf16, for information: ``fla.ops.gated_delta_product.chunk_gated_delta_product`` (fla's DeltaProduct kernel,
  product layout, ``g = 0``, K padded to 16) -- the first wrong step; no claim is made about it.
"""
from __future__ import annotations

import argparse
import functools
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

CASES = [("parity", None), ("group:Z3", None), ("counter:5", None), ("group:S3", None),
         ("group:S3", "deltaproduct-symmetric"), ("group:A5", None), ("group:S5", None),
         ("group:D4", None), ("even-pairs", None), ("mod-arith:3", None)]
KERNELS = {"fp32": ("fla.ops.delta_rule", "fused_recurrent_delta_rule", "delta_rule", None),
           "bf16": ("fla.ops.gated_delta_product", "chunk_gated_delta_product", "product", 16)}


def _kernel(name: str, stand_in: bool, dev: str):
    """(callable, layout, min_K, timer): fla's kernel (or lrnnkit's reference_kernel) wrapped to sum the
    synchronized wall time of its calls; the initial state goes in as float32 (fla's convention)."""
    import importlib

    import torch
    mod, fn, layout, min_K = KERNELS[name]
    if stand_in:
        from lrnnkit.export import reference_kernel as k
    else:
        k = getattr(importlib.import_module(mod), fn)
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    spent = [0.0]

    @functools.wraps(k)
    def timed(*args, **kw):
        if kw.get("initial_state") is not None:
            kw["initial_state"] = kw["initial_state"].float()
        sync()
        t0 = time.perf_counter()
        out = k(*args, **kw)
        sync()
        spent[0] += time.perf_counter() - t0
        return out
    return timed, layout, min_K, spent


def check(tokens: int, batch: int, seed: int = 0, dev: str = "cuda", kernels=("fp32", "bf16"),
          stand_in: bool = False):
    """One row per case. Every case runs in fp32 before any runs in bf16 (an illegal memory access in one kernel
    would poison the CUDA context of the calls after it)."""
    cases, rows = [], []
    for src, cons in CASES:
        name = src + (f" ({cons})" if cons else "")
        try:
            cases.append((name, _prepare(src, cons, tokens, batch, seed)))
        except Exception as exc:  # record and go on: one failing case must not cost the others' device time
            cases.append((name, None))
            print(f"{name}: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
    res = {name: {} for name, _ in cases}
    for kname in ("fp32", "bf16"):
        for name, c in cases:
            if c is not None:
                res[name][kname] = _run(c, kname, dev, kernels, stand_in)
                print(name, kname, res[name][kname], flush=True)
    for name, c in cases:
        if c is None:
            rows.append([name, "error"] + [""] * (len(HEADERS) - 2))
            continue
        model, cert, exp = c["model"], c["cert"], c["exp"]
        r32, r16 = res[name]["fp32"], res[name]["bf16"]
        per = lambda f: "/".join(str(f(ly)) for ly in exp.layers)  # noqa: E731
        rows.append([name, model.provenance.get("construction"), len(exp.layers),
                     "yes" if cert.certified else "NO", per(lambda ly: ly.K), per(lambda ly: ly.heads),
                     per(lambda ly: ly.n_out), per(lambda ly: ly.n_h), f"{batch} x {tokens}",
                     r32[0], "yes" if r32[0] == 0 else "NO", f"{r32[2]:.1f}", f"{r32[3]:.1f}",
                     r16[0], r16[1] if r16[1] is not None else ("-" if r16[0] == "not run" else "none")])
    return rows


def _prepare(src, cons, tokens, batch, seed) -> dict:
    import numpy as np

    import lrnnkit as L
    from lrnnkit.export import export_fla
    fsa = L.load_source(src)
    model = L.compile(fsa, cons)
    cert = L.certify(model, fsa)
    exp = export_fla(model)
    w = np.random.default_rng(seed).integers(0, len(model.alphabet), size=(batch, tokens))
    lab_index = {lab: i for i, lab in enumerate(model.output_labels)}
    truth = np.vectorize(lambda q: lab_index[fsa.outputs[q]])(fsa.trace_batch(w))
    return {"model": model, "cert": cert, "exp": exp, "w": w, "truth": truth}


def _run(c: dict, name: str, dev: str, kernels, stand_in: bool) -> tuple:
    """(mismatches, first wrong step, kernel ms, run_fla ms) of one kernel on one case; fp32 timed on a warm run."""
    import numpy as np
    import torch

    from lrnnkit.export import run_fla
    if name not in kernels:
        return ("not run", None, 0.0, 0.0)
    try:
        kern, layout, min_K, spent = _kernel(name, stand_in, dev)
    except (ImportError, AttributeError) as exc:
        return (type(exc).__name__, None, 0.0, 0.0)
    dt = torch.float32 if name == "fp32" else torch.bfloat16
    run = functools.partial(run_fla, c["exp"], c["w"], kern, layout=layout, dtype=dt, device=dev, min_K=min_K)
    try:
        got = run().outputs
        total = 0.0
        if name == "fp32":  # a second, warm run (the first one includes Triton's compilation)
            spent[0] = 0.0
            t0 = time.perf_counter()
            got = run().outputs
            total = time.perf_counter() - t0
    except Exception as exc:  # one kernel failing must not cost the other's result
        print(f"{name}: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
        return (f"error ({type(exc).__name__})", None, 0.0, 0.0)
    finally:
        if dev == "cuda":
            torch.cuda.empty_cache()
    bad = got != c["truth"]
    first = None
    if bad.any():
        first = int(np.min(np.argmax(bad, axis=1)[bad.any(axis=1)])) + 1
    return (int(bad.sum()), first, spent[0] * 1e3, total * 1e3)


HEADERS = ["automaton", "construction", "layers", "certified", "K per layer", "heads per layer",
           "decoder rows per layer", "n_h per layer", "words x tokens", "fp32 mismatches",
           "fla fp32 reproduces certified outputs", "fla fp32 kernel ms (warm, all layers)",
           "run_fla fp32 ms (kernels + wiring)", "bf16 chunk_gated_delta_product mismatches",
           "bf16 first wrong step"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--record")
    ap.add_argument("--tokens", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--device", default="cuda", help="cpu only for a dry run with --stand-in")
    ap.add_argument("--kernels", default="fp32,bf16", help="fp32 (fused_recurrent_delta_rule), bf16 "
                    "(chunk_gated_delta_product, information only)")
    ap.add_argument("--stand-in", action="store_true", help="lrnnkit's reference_kernel instead of fla (dry run)")
    a = ap.parse_args()
    from _record import record, table
    if a.record:
        with open(a.record) as fh:
            body = fh.read()
        notes = ("Command: on the GPU machine `python3 benchmarks/check_fla_export.py --out $OUT` (fla 0.6.0 as "
                 "wheels, see the script's docstring); here `python benchmarks/check_fla_export.py --record "
                 "fla_export.md`. Export: `lrnnkit export MODEL --to fla` (one fla call per layer, the wiring "
                 "between layers executed on the host by lrnnkit.export.run_fla; compact readout: one head per state "
                 "coordinate the decoder reads, V = 1, scale 1; the decoder argmax in float64 on the host). Truth: "
                 "the automaton's outputs (the models are certified for every length). fp32: "
                 "fused_recurrent_delta_rule on the T x n_h interleaved steps; timings: one warm run, wall clock "
                 "after synchronize, kernel calls summed over the layers, and the whole run_fla (host decoding and "
                 "gathering included). bf16 columns: fla's chunk_gated_delta_product (g = 0, K padded to 16), "
                 "information only.")
        record("fla export", body, notes)
        return
    import torch
    rows = check(a.tokens, a.batch, dev=a.device, kernels=tuple(a.kernels.split(",")), stand_in=a.stand_in)
    dev = torch.cuda.get_device_name(0) if a.device == "cuda" else a.device
    if a.stand_in:
        ver = "stand-in (lrnnkit.export.reference_kernel), not fla"
    else:
        import fla
        ver = f"fla {getattr(fla, '__version__', '?')}"
    body = f"Device: {dev}; torch {torch.__version__}; {ver}.\n\n" + table(HEADERS, rows)
    print(body)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "fla_export.md"), "w") as fh:
            fh.write(body + "\n")


if __name__ == "__main__":
    main()
