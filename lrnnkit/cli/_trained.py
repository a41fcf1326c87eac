"""The command line's verbs on a trained model (``run``, ``verify``, ``precision collapse``, ``info`` given a
checkpoint or a pretrained directory; docs/cli.rst, docs/learning.rst); :mod:`lrnnkit.cli` hands a path over here
when :func:`lrnnkit.learn.locate.is_trained_path` says it names a trained model."""
from __future__ import annotations

import json
from .. import limits
from ..cli_format import shown
from ..errors import EXIT_NEGATIVE, EXIT_OK, InputError
from ..limits import check_int

__all__ = ["run", "verify", "collapse", "info", "COLLAPSE_LENGTH"]

COLLAPSE_LENGTH = 4096      # precision collapse's default word length for a trained network (one forward pass)


def _load(path: str, device: str = "cpu"):
    from ..learn.trained import load_trained
    return load_trained(path, device)


def _print_json(obj) -> None:
    print(json.dumps(obj, indent=2, default=str))


def run(a) -> int:
    """``lrnnkit run CHECKPOINT --word W | --random N``: the label after every prefix, the network in ``--dtype``
    (float32 by default; the backends of compiled models do not apply)."""
    if a.backend not in ("reference", "torch"):
        raise InputError(f"--backend {a.backend}: a trained model runs in torch (--backend torch, the default for "
                         f"a checkpoint); reference, exact and triton run compiled models")
    if a.random is not None:
        check_int("--random", a.random, 0, limits.RUN_MAX_LENGTH, "RUN_MAX_LENGTH")
    m = _load(a.model)
    dtype = a.dtype or "float32"
    word = m.encode(a.word) if a.word is not None else m.random_word(a.random, a.seed)
    if len(word) > limits.RUN_MAX_LENGTH:
        raise InputError(f"--word: more than {limits.RUN_MAX_LENGTH} symbols (lrnnkit.limits.RUN_MAX_LENGTH)")
    labels = m.run(word, dtype)
    if a.json:
        _print_json({"word": [m.alphabet[x] for x in word], "outputs": labels, "backend": "torch",
                     "dtype": dtype, "trained": True})
    else:
        print(" ".join(shown(x) for x in labels))
    return EXIT_OK


def verify(a) -> int:
    """``lrnnkit verify CHECKPOINT [--horizon N]``: a trained network has no certificate for every length; the
    answer is its horizon up to N. Exit 0 when no wrong word is known up to N, 1 when one is (printed: the
    shortest known)."""
    if a.source:
        raise InputError("--source: a trained model is checked against its own task (the one it was trained on)")
    if a.horizon is not None:
        check_int("--horizon", a.horizon, 1, limits.RUN_MAX_LENGTH, "RUN_MAX_LENGTH")
    m = _load(a.model)
    h = m.verify(a.horizon)
    if a.json:
        _print_json(h)
    else:
        top = max(int(k) for k in h["accuracy_by_length"])
        print(f"NOT certified for all input lengths (a trained model: no exact certificate exists); checked up to "
              f"length {top}")
        print(f"  {h['statement']}")
        if h["wrong_word"] is not None:
            print(f"  shortest wrong word known: {' '.join(shown(x) for x in h['wrong_word'])} "
                  f"(length {h['wrong_at_length']})")
        acc = ", ".join(f"{k}: {v:.4f}" for k, v in h["accuracy_by_length"].items())
        print(f"  accuracy by length ({h['samples']} random words): {acc}")
    return EXIT_NEGATIVE if h["wrong"] else EXIT_OK


def collapse(a) -> int:
    """``lrnnkit precision collapse CHECKPOINT --format F``: the network run in a torch dtype on one random word;
    the first wrong step and the first step that leaves its float64 run."""
    if a.policy != "matvec" or a.rounding != "nearest-even":
        raise InputError("--policy / --rounding: a trained model runs in torch's dtypes as torch rounds them "
                         "(compiled models take the simulated policies and rounding modes)")
    length = COLLAPSE_LENGTH if a.length is None else a.length
    check_int("--length", length, 1, limits.RUN_MAX_LENGTH, "RUN_MAX_LENGTH")
    m = _load(a.model)
    res = m.collapse(a.fmt, length, a.seed)
    if a.json:
        _print_json(res)
        return EXIT_OK
    w, d = res["first_wrong_step"], res["first_drift_step"]
    print(f"{res['format']}, one random word of {length} letters (seed {a.seed}): "
          + (f"first wrong output at step {w}" if w else "no wrong output") + "; "
          + (f"leaves its float64 run at step {d}" if d else "the same outputs as its float64 run"))
    print(f"  accuracy {res['accuracy']:.4f} ({res['format']}), {res['accuracy_float64']:.4f} (float64; first "
          f"wrong step {res['first_wrong_step_float64'] or 'none'})")
    return EXIT_OK


def info(a) -> int:
    """``lrnnkit info CHECKPOINT``: the trained model's description."""
    d = _load(a.source).describe()
    if a.json:
        _print_json(d)
        return EXIT_OK
    print(f"trained model {d['path']}: task {d['task']}, layer {d['layer']} (eigenvalues in "
          f"[{d['eig_range'][0]:g}, {d['eig_range'][1]:g}]), {d['layers']} layer(s), width {d['width']}, "
          f"{d['heads']} head(s), {d['parameters']:,} parameters")
    print(f"  step {d['step']} of {d['steps']}" + (f", {d['elapsed_s']} s of training" if "elapsed_s" in d else ""))
    print(f"  alphabet of {len(d['alphabet'])}: {' '.join(shown(x) for x in d['alphabet'][:12])}"
          f"{' ...' if len(d['alphabet']) > 12 else ''}; outputs: {' '.join(shown(x) for x in d['output_labels'][:12])}")
    if d.get("test_accuracy"):
        print("  test accuracy: " + ", ".join(f"length {k}: {v:.4f}" for k, v in d["test_accuracy"].items()))
    print("  (structure of its task's automaton: lrnnkit info " + d["task"] + ")")
    return EXIT_OK
