"""``lrnnkit run``: a model run on a word, by one of the backends."""
from __future__ import annotations

import sys
from ..errors import InputError
from ..automata.io import fsa_from_dict
from ..automata.sampling import random_word
from ..cli_format import shown
from ..executor import run_exact, run_float
from . import _trained as trained_verbs
from .. import limits
from ..limits import check_int
from ._common import _JSON_HELP, _load_model, _print_json, _trained, seed_arg

ORDER = 40


def add_parser(sub) -> None:
    s = sub.add_parser("run", help="run a model on a word")
    s.add_argument("model", help="model JSON file, or a trained model (checkpoint, run or pretrained directory)")
    g = s.add_mutually_exclusive_group(required=True)
    g.add_argument("--word", help='space-separated symbols, e.g. "a b c"; over one-character symbols also a plain '
                   'string, e.g. "101"')
    g.add_argument("--random", type=int, metavar="N", help="a random word of length N: uniform letters, avoiding "
                   "letters that enter a trap state such as mod-arith's error state (see --uniform)")
    s.add_argument("--uniform", action="store_true", help="with --random: uniform letters, traps included (random "
                   "words over mod-arith's alphabet are then mostly ungrammatical)")
    s.add_argument("--seed", type=seed_arg, default=0, help="seed of the random word (default 0)")
    s.add_argument("--backend", choices=["reference", "exact", "torch", "triton"], default="reference",
                   help="reference: float64 numpy executor (default); exact: exact arithmetic; torch: torch layers; "
                   "triton: the Triton kernels (interpreter on CPU)")
    s.add_argument("--dtype", default=None, help="float64 (reference default) / float32 (torch, triton default) / "
                   "bfloat16 / float16")
    s.add_argument("--gh-mode", choices=["matrix", "factors"], default="matrix",
                   help="torch/triton: run GH layers as precomputed letter matrices (matrix, default) or factor by "
                   "factor through the GH kernel (factors)")
    s.add_argument("--json", action="store_true", help=_JSON_HELP)


def run(a) -> int:
    import numpy as np
    if _trained(a.model):
        return trained_verbs.run(a)
    if a.random is not None:
        check_int("--random", a.random, 0, limits.RUN_MAX_LENGTH, "RUN_MAX_LENGTH")
    elif len(a.word) > 64 * limits.RUN_MAX_LENGTH or len(a.word.split()) > limits.RUN_MAX_LENGTH:
        raise InputError(f"--word: more than {limits.RUN_MAX_LENGTH} symbols (lrnnkit.limits.RUN_MAX_LENGTH)")
    model = _load_model(a.model)
    if getattr(model, "inconsistencies", None):
        print(f"lrnnkit: warning: {a.model}: {model.inconsistencies[0]}; running the rounding of the exact weights "
              f"(`lrnnkit verify` refuses this file)", file=sys.stderr)
    if a.word is not None:
        word = model.encode(a.word)
        if len(word) > limits.RUN_MAX_LENGTH:
            raise InputError(f"--word: more than {limits.RUN_MAX_LENGTH} symbols (lrnnkit.limits.RUN_MAX_LENGTH)")
    else:
        word = _random_word(model, a.random, a.seed, a.uniform)
    backend = a.backend
    if backend == "reference":
        dtype = a.dtype or "float64"
        if dtype != "float64":
            raise InputError(f"the reference backend runs in float64 (got --dtype {dtype}); use torch or triton")
        outs = run_float(model, np.array([word], dtype=np.int64)).outputs[0].tolist() if word else []
    elif backend == "exact":
        dtype = "exact"
        outs = run_exact(model, word)
    else:
        dtype = a.dtype or "float32"
        from ..layers import run_model
        outs = run_model(model, np.array([word], dtype=np.int64), backend=backend, dtype=dtype,
                         gh_mode=a.gh_mode)[0].tolist() if word else []
    labels = [model.output_labels[o] if o >= 0 else "<tie>" for o in outs]
    res = {"word": [model.alphabet[x] for x in word], "outputs": labels, "backend": backend, "dtype": dtype}
    if a.json:
        _print_json(res)
    else:
        print(" ".join(shown(x) for x in labels))
    return 0


def _random_word(model, n: int, seed: int, uniform: bool) -> list:
    """``--random N``: a word over the model's alphabet; unless ``uniform``, letters entering a trap state of the
    model's recorded automaton (mod-arith's "error") are avoided (lrnnkit.automata.sampling)."""
    import numpy as np
    auto = (model.provenance or {}).get("automaton")
    if not uniform and auto:
        fsa = fsa_from_dict(auto, "the model's recorded automaton")
        if list(fsa.alphabet) == list(model.alphabet):
            return random_word(fsa, n, seed)
    return np.random.default_rng(seed).integers(0, len(model.alphabet), size=n).tolist()


VERBS = {"run": run}
