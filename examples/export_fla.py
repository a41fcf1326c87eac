"""Run compiled models -- a two-layer one and a four-layer Krohn-Rhodes cascade -- through flash-linear-attention's
delta-rule kernel, one kernel call per layer, and check the outputs against the automaton (docs/export_fla.rst).

    python examples/export_fla.py          # CPU: lrnnkit's pure-torch stand-in for fla's kernel
    python examples/export_fla.py --fla    # GPU with flash-linear-attention installed: fla's own kernel
"""
import sys
import tempfile

import numpy as np

import lrnnkit as L
from lrnnkit.export import FlaExport, decode_fla_outputs, export_fla, fla_inputs, run_fla

if "--fla" in sys.argv:
    from fla.ops.delta_rule import fused_recurrent_delta_rule as kernel
    device = "cuda"
else:
    from lrnnkit.export import reference_kernel as kernel
    device = "cpu"

for source in ("group:D4", "mod-arith:3"):
    fsa = L.load_source(source)
    model = L.compile(fsa)                     # D4: 001's diagonal layer + reflection layer; mod-arith:3: a cascade
    assert L.certify(model, fsa).certified     # correct for inputs of every length
    exp = export_fla(model)                    # every layer's tables and the wiring between the layers
    with tempfile.TemporaryDirectory() as out:
        exp.save(out)                          # what `lrnnkit export MODEL --to fla -o OUT` writes
        exp = FlaExport.load(out)

    words = np.random.default_rng(0).integers(0, len(model.alphabet), size=(2, 200))
    truth = [fsa.output_trace(w.tolist()) for w in words]

    # all layers at once: one kernel call per layer, outputs decoded and wired into the next layer on the host
    r = run_fla(exp, words, kernel, layout="delta_rule", device=device)
    assert r.labels().tolist() == truth

    # the same by hand: the kernel inputs of layer i need the decoded outputs of the layers below it
    below = []
    for i in range(len(exp.layers)):
        x = fla_inputs(exp, words, layer=i, below=below, device=device)    # q, k, v, beta, initial_state, scale
        o, _ = kernel(**x)
        below.append(decode_fla_outputs(exp, o, words, layer=i, below=below))
    assert all((a == b).all() for a, b in zip(below, r.layer_outputs))

    shape = "; ".join(f"{ly.heads} head(s) of K = {ly.K}, n_h = {ly.n_h}" for ly in exp.layers)
    print(f"{source}: {len(exp.layers)} kernel calls ({shape}): {words.size} outputs equal the automaton's")
