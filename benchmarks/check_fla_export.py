"""GPU check of `lrnnkit export MODEL --to fla`: flash-linear-attention's ``fused_recurrent_delta_rule`` run on the
exported per-token tensors reproduces the certified outputs over 10^5-token words.

    python benchmarks/check_fla_export.py --out DIR [--tokens 100000] [--batch 2]   # on the GPU machine
    python benchmarks/check_fla_export.py --record DIR/fla_export.md               # here: into RESULTS.md

On the device machine (fla 0.6.0 carried as wheels in .whl/):
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
    python3 benchmarks/check_fla_export.py --out $OUT

For each compiled one-layer GH model (parity, Z_3, Z_5, S_3 in two constructions, A_5 by 3-D rotations, S_5 by
transposition reflections): compile, export (lrnnkit.export.export_fla), gather the fla tensors of ``batch`` random
words of ``tokens`` letters (n_h interleaved delta-rule steps per token), run fla in fp32 (inputs fp32, fla
accumulates in fp32), decode (argmax over the heads = decoder rows, plus the bias), and compare with the automaton's
output trace (the model is certified, so these are its outputs at every length). The same tensors rounded to bf16
(the precision the papers train in) give, for information, the first wrong step: no claim is made about them.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

CASES = [("parity", None), ("group:Z3", None), ("counter:5", None), ("group:S3", None),
         ("group:S3", "deltaproduct-symmetric"), ("group:A5", None), ("group:S5", None)]


def check(tokens: int, batch: int, seed: int = 0, dev: str = "cuda", dtypes=("fp32", "bf16")):
    rows = []
    for src, cons in CASES:
        try:
            rows.append(_case(src, cons, tokens, batch, seed, dev, dtypes))
        except Exception as exc:  # record and go on: one failing case must not cost the others' device time
            rows.append([src + (f" ({cons})" if cons else ""), "error", type(exc).__name__, str(exc)[:120]]
                        + [""] * (len(HEADERS) - 4))
        print(rows[-1], flush=True)
    return rows


def _case(src, cons, tokens, batch, seed, dev, dtypes):
    import numpy as np
    import torch
    from fla.ops.delta_rule import fused_recurrent_delta_rule

    import lrnnkit as L
    from lrnnkit.export import decode_fla_outputs, export_fla, fla_inputs
    fsa = L.load_source(src)
    model = L.compile(fsa, cons)
    cert = L.certify(model, fsa)
    exp = export_fla(model)
    rng = np.random.default_rng(seed)
    w = rng.integers(0, len(model.alphabet), size=(batch, tokens))
    truth_states = fsa.trace_batch(w)
    lab_index = {lab: i for i, lab in enumerate(model.output_labels)}
    truth = np.vectorize(lambda q: lab_index[fsa.outputs[q]])(truth_states)
    res = {}
    for name, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        if name not in dtypes:
            res[name] = ("not run", None, 0.0)
            continue
        x = fla_inputs(exp, w, dtype=dt, device=dev)
        sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
        sync()
        t0 = time.perf_counter()
        o, _ = fused_recurrent_delta_rule(x["q"], x["k"], x["v"], x["beta"], scale=1.0,
                                          initial_state=x["initial_state"].float())
        sync()
        ms = (time.perf_counter() - t0) * 1e3
        if name == "fp32":  # a second, warm call (the first one includes Triton's compilation)
            sync()
            t0 = time.perf_counter()
            fused_recurrent_delta_rule(x["q"], x["k"], x["v"], x["beta"], scale=1.0,
                                       initial_state=x["initial_state"].float())
            sync()
            ms = (time.perf_counter() - t0) * 1e3
        got = decode_fla_outputs(exp, o.float(), w)
        bad = got != truth
        first = None
        if bad.any():
            first = int(np.min(np.argmax(bad, axis=1)[bad.any(axis=1)])) + 1
        res[name] = (int(bad.sum()), first, ms)
        del x, o
        if dev == "cuda":
            torch.cuda.empty_cache()
    return [src + (f" ({cons})" if cons else ""), model.provenance.get("construction"),
            "yes" if cert.certified else "NO", exp.K, exp.heads, exp.n_h, f"{batch} x {tokens}",
            res["fp32"][0], "yes" if res["fp32"][0] == 0 else "NO", f"{res['fp32'][2]:.1f}",
            res["bf16"][0], res["bf16"][1] if res["bf16"][1] is not None else "none"]


HEADERS = ["automaton", "construction", "certified", "K", "heads", "n_h", "words x tokens", "fp32 mismatches",
           "fla fp32 reproduces certified outputs", "fla fp32 ms (warm call)", "bf16 mismatches",
           "bf16 first wrong step"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--record")
    ap.add_argument("--tokens", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--device", default="cuda", help="cpu only for a dry run with a stand-in fla")
    ap.add_argument("--dtypes", default="fp32,bf16")
    a = ap.parse_args()
    from _record import record, table
    if a.record:
        with open(a.record) as fh:
            body = fh.read()
        notes = ("Command: on the GPU machine `python3 benchmarks/check_fla_export.py --out $OUT --dtypes fp32` "
                 "(fla 0.6.0 as wheels, "
                 "see the script's docstring); here `python benchmarks/check_fla_export.py --record fla_export.md`. "
                 "Export: `lrnnkit export MODEL --to fla` (one head per decoder row, V = 1, n_h interleaved "
                 "delta-rule steps per token, scale 1). Truth: the automaton's outputs (the models are certified for "
                 "every length). One run, fp32 only (`--dtypes fp32`: the team's device time was nearly spent; the "
                 "bf16 columns of `--dtypes fp32,bf16` are information only). Timings: one warm call each, wall "
                 "clock after synchronize; fla's kernel is sequential over the T x n_h interleaved steps, one "
                 "program per (sequence, head).")
        record("fla export", body, notes)
        return
    import torch
    import fla
    rows = check(a.tokens, a.batch, dev=a.device, dtypes=tuple(a.dtypes.split(",")))
    dev = torch.cuda.get_device_name(0) if a.device == "cuda" else a.device
    body = (f"Device: {dev}; torch {torch.__version__}; fla {getattr(fla, '__version__', '?')}.\n\n"
            + table(HEADERS, rows))
    print(body)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "fla_export.md"), "w") as fh:
            fh.write(body + "\n")


if __name__ == "__main__":
    main()
