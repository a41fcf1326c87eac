"""``lrnnkit export MODEL --to fla``: a compiled GH model exported to flash-linear-attention's delta-rule kernels
(:mod:`lrnnkit.export`), with the per-token kernel inputs of a word when asked."""
from __future__ import annotations

import json
import os
import sys
import numpy as np
from .. import limits
from ..errors import InputError
from ..export import _check_token_size, export_fla, write_tokens
from ..limits import check_int
from ..model import Model
from ._common import seed_arg

ORDER = 90


def add_parser(sub) -> None:
    s = sub.add_parser("export", help="export a compiled model for another library (fla: delta-rule kernel tables, "
                       "one call per layer)")
    s.add_argument("model", help="a model JSON written by `lrnnkit compile` (layers of kind gh / diagonal)")
    s.add_argument("--to", required=True, choices=["fla"], help="target library (fla = flash-linear-attention)")
    s.add_argument("-o", "--output", help="output directory (default: MODEL stem + '_fla')")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--word", help='also write the per-token kernel inputs of this word ("a b c") to '
                   "tokens.safetensors")
    g.add_argument("--random", type=int, metavar="N", help="also write the per-token kernel inputs of a random word "
                   "of N letters")
    s.add_argument("--seed", type=seed_arg, default=0, help="seed of --random")
    s.add_argument("--layout", choices=["delta-rule", "product"], default="delta-rule",
                   help="layout of tokens.safetensors: delta-rule (fused_recurrent_delta_rule, chunk_delta_rule: "
                   "T*n_h steps) or product (chunk_gated_delta_product: one query per token)")
    s.add_argument("--max-pairs", type=int, default=None, help="reachable pairs the certifier may explore before "
                   "the export (as `verify --max-pairs`; a model not certified is not exported)")
    s.add_argument("--unverified", action="store_true", help="export even a model `lrnnkit verify` does not "
                   "certify (a paper's construction as printed, to study it); a warning line says so")
    s.add_argument("--json", action="store_true", help="print a JSON summary")


def run(a) -> int:
    if a.max_pairs is not None:
        check_int("--max-pairs", a.max_pairs, 1, limits.MAX_PAIRS_LIMIT, "MAX_PAIRS_LIMIT")
    if a.random is not None:
        check_int("--random", a.random, 1, limits.RUN_MAX_LENGTH, "RUN_MAX_LENGTH")
    elif a.word is not None and (len(a.word) > 64 * limits.RUN_MAX_LENGTH or len(a.word.split()) > limits.RUN_MAX_LENGTH):
        raise InputError(f"--word: more than {limits.RUN_MAX_LENGTH} symbols (lrnnkit.limits.RUN_MAX_LENGTH)")
    model = Model.load(a.model)
    exp = export_fla(model, os.path.basename(a.model), verify=not a.unverified, max_pairs=a.max_pairs)
    if a.unverified:
        print(f"lrnnkit: warning: {a.model}: exported without certification (--unverified)", file=sys.stderr)
    out = a.output or (os.path.splitext(a.model)[0] + "_fla")
    word = None
    if a.word is not None:
        word = model.encode(a.word)
    elif a.random is not None:
        word = np.random.default_rng(a.seed).integers(0, len(model.alphabet), size=a.random).tolist()
    if word is not None:
        if not word:
            raise InputError("--word: the word is empty")
        check_int("--word length", len(word), 1, limits.RUN_MAX_LENGTH, "RUN_MAX_LENGTH")
        _check_token_size(exp, len(word))
    files = exp.save(out)
    if word is not None:
        files.append(write_tokens(exp, model, word, out, a.layout.replace("-", "_")))
    per_layer = [{"K": ly.K, "V": 1, "n_h": ly.n_h, "heads": ly.heads, "decoder_rows": ly.n_out,
                  "symbols": ly.n_symbols, "reads": [[r.source, r.lag] for r in ly.input_map.reads]}
                 for ly in exp.layers]
    summary = {"output": out, "files": files, "layers": per_layer, "symbols": len(exp.alphabet),
               "construction": exp.meta.get("construction")}
    if a.json:
        print(json.dumps(summary, indent=2))
    else:
        desc = "; ".join(f"layer {i}: {ly.heads} head(s) of K = {ly.K}, n_h = {ly.n_h}"
                         for i, ly in enumerate(exp.layers))
        print(f"wrote {out}: {len(exp.layers)} fla call(s), V = 1 ({desc}); {len(exp.alphabet)} symbols")
    return 0


VERBS = {"export": run}
