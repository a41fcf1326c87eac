"""``lrnnkit train`` and ``lrnnkit experiment`` (docs/cli.rst); hooked into :mod:`lrnnkit.cli`."""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from ..errors import MESSAGE_CHARS, InputError
from ..fileio import atomic_write_text
from ._common import device_arg, seed_arg
from ..learn.kinds import BATCH, LAYER_KINDS, TEST_LEN, TRAIN_LEN, WIDTH
from ..learn.protocols import follow, protocol_record, reduce_as_reported

ORDER = 110

__all__ = ["add_parser", "run_train", "run_experiment_cmd", "VERBS"]


def _range(s: str) -> tuple:
    a, sep, b = s.partition(":")
    try:
        lo = int(a)
        hi = int(b) if sep else lo
    except ValueError:
        raise InputError(f"--train-len expects A:B (integers), got {s!r}") from None
    if lo < 1 or hi < lo:
        raise InputError(f"--train-len expects 1 <= A <= B, got {s!r}")
    return lo, hi


def _lengths(s: str) -> tuple:
    try:
        out = tuple(int(x) for x in s.split(",") if x.strip())
    except ValueError:
        raise InputError(f"--test-len expects comma-separated integers, got {s!r}") from None
    if not out or min(out) < 1:
        raise InputError(f"--test-len expects positive integers, got {s!r}")
    return out


def _test_mix(s: str | None) -> tuple | None:
    """``--test-mix N,LO,HI``: N test words of lengths uniform in LO..HI, scored as one set (000, Fig. 4 caption);
    the values are checked by TrainConfig."""
    if s is None:
        return None
    parts = s.split(",")
    try:
        out = tuple(int(x) for x in parts)
    except ValueError:
        raise InputError(f"--test-mix expects N,LO,HI (integers), got {s!r}"[:MESSAGE_CHARS]) from None
    if len(out) != 3:
        raise InputError(f"--test-mix expects three integers N,LO,HI, got {s!r}"[:MESSAGE_CHARS])
    return out


def _every(s: str) -> tuple:
    """``--checkpoint-every``: ``N`` steps, ``Ts`` / ``Tm`` seconds / minutes, both (``500,60s``), or ``off``:
    ``(steps, seconds)``, 0 = not by that measure."""
    steps, seconds = 0, 0.0
    if s.strip().lower() in ("off", "0", "never"):
        return 0, 0.0
    for part in s.split(","):
        p = part.strip().lower()
        try:
            if p.endswith("min") or p.endswith("m"):
                seconds = 60.0 * float(p[:-3] if p.endswith("min") else p[:-1])
            elif p.endswith("s"):
                seconds = float(p[:-1])
            else:
                steps = int(p)
        except ValueError:
            raise InputError(f"--checkpoint-every expects N (steps), Ts / Tm (seconds / minutes), both as N,Ts, "
                             f"or off; got {s!r}"[:MESSAGE_CHARS]) from None
    if steps < 0 or not seconds >= 0:
        raise InputError(f"--checkpoint-every must not be negative, got {s!r}"[:MESSAGE_CHARS])
    return steps, seconds


def add_parser(sub) -> None:
    s = sub.add_parser("train", help="train an LRNN on an automaton's words and evaluate it past the training length")
    s.add_argument("source", help="task: any SOURCE (parity, group:S5, mod-arith:5, a JSON file, ...) or a paper "
                   "variant (S5-swaps, S5-4tok, sum:5, even-pair:5, mod-arith-nb:5, mod-arith-br:5, "
                   "mod-arith-lr:5); an automaton task + '+last' supervises each word's last position only "
                   "(parity+last, as 004 App. B.1)")
    s.add_argument("--layer", required=True, choices=LAYER_KINDS, help="the LRNN layer to train")
    s.add_argument("--n-h", type=int, default=1, help="Householder factors per token (deltaproduct)")
    s.add_argument("--eig-range", default="-1,1", help="eigenvalue range of the transitions: 0,1 or -1,1")
    # argparse reads a value starting with '-' as an option unless it looks like a negative number; let "-1,1"
    # count as one (argparse's own matcher, widened to comma-separated numbers)
    s._negative_number_matcher = re.compile(r"^-\d+$|^-\d*\.\d+$|^-\d*\.?\d+(,-?\d*\.?\d+)+$")
    s.add_argument("--layers", type=int, default=1, help="number of LRNN layers (default 1)")
    s.add_argument("--width", type=int, default=WIDTH, help=f"model width (default {WIDTH})")
    s.add_argument("--heads", type=int, default=None, help="heads per layer (default: 8 for deltanet / deltaproduct, 4 "
                   "for the other layers)")
    s.add_argument("--head-dim", type=int, default=None, help="key/value size per head (default: width / heads)")
    s.add_argument("--mlp", action="store_true", help="an MLP block after every LRNN layer")
    s.add_argument("--gate", action="store_true", help="gated DeltaNet / DeltaProduct (fla's forget gate)")
    s.add_argument("--no-output-gate", action="store_true",
                   help="DeltaNet / DeltaProduct without fla's output gate RMSNorm(o) * silu(W_g x)")
    sc = s.add_mutually_exclusive_group()
    sc.add_argument("--short-conv", dest="short_conv", action="store_const", const=True, default=None,
                    help="a short causal convolution before the LRNN, as in fla's DeltaNet / DeltaProduct (default: "
                    "off for every layer: at the default sizes it keeps a DeltaProduct from learning the S3 word "
                    "problem; docs/learning.rst)")
    sc.add_argument("--no-short-conv", dest="short_conv", action="store_const", const=False,
                    help="no short causal convolution before the LRNN")
    s.add_argument("--train-len", default="%d:%d" % TRAIN_LEN,
                   help="training word lengths A:B (inclusive; default %d:%d)" % TRAIN_LEN)
    s.add_argument("--test-len", default=",".join(map(str, TEST_LEN)),
                   help=f"evaluation lengths, comma-separated (default {','.join(map(str, TEST_LEN))})")
    s.add_argument("--steps", type=int, default=None, help="optimizer steps (default: 500 for diagonal, 1000 "
                   "for the other layers)")
    s.add_argument("--batch", type=int, default=BATCH, help=f"words per batch (default {BATCH})")
    s.add_argument("--lr", type=float, default=None, help="learning rate (default: 1e-2 for diagonal, 1e-3 for the "
                   "other layers)")
    s.add_argument("--seed", type=seed_arg, default=0, help="random seed of data and initialization (default 0)")
    s.add_argument("--device", type=device_arg, default="cpu", help="cpu, cuda or cuda:N")
    s.add_argument("--max-seconds", type=float, default=None, help="stop after this many seconds")
    s.add_argument("--out", default=None, help="run directory: checkpoint, metrics.jsonl, result.json (resumes "
                   "from a checkpoint found there)")
    s.add_argument("--checkpoint-every", default="60s", metavar="EVERY",
                   help="periodic checkpoints with --out: N steps, Ts seconds, both (500,60s), or off (default 60s; "
                   "one is always written at the end and on Ctrl-C)")
    s.add_argument("--deterministic", action="store_true",
                   help="deterministic algorithms: a CUDA run repeats bit for bit (a little slower)")
    s.add_argument("--loop", default="auto", choices=["auto", "host", "device"],
                   help="training loop: host (numpy batches, host-driven steps), device (batches made on the device, "
                        "the step captured as a CUDA graph on CUDA); auto: device on CUDA, host on the CPU")
    s.add_argument("--train-words", type=int, default=None, metavar="N",
                   help="train on a fixed set of N words, run for steps x batch / N epochs, each epoch in its own "
                        "order (default: fresh batches every step)")
    s.add_argument("--fp-train-iters", type=int, default=None, metavar="N",
                   help="fixed-point layer: at most N iterations per forward in training (default: the layer's, 16, "
                        "as 003 trains state tracking; 003's other results use 100); evaluation runs up to 100")
    s.add_argument("--eval-every", type=int, default=0, metavar="N",
                   help="also evaluate on the test words every N steps (default 0: at the end only); the result "
                        "lists them as evaluations, and the text the best at the longest length")
    s.add_argument("--schedule", default="cosine", choices=["cosine", "linear", "constant"],
                   help="learning-rate schedule after the warm-up: cosine (default), linear decay to min_lr, or "
                        "constant")
    s.add_argument("--test-mix", default=None, metavar="N,LO,HI",
                   help="also score N test words of lengths uniform in LO..HI as one set (000, Fig. 4: "
                        "8192,40,256); reported as test_mix")
    s.add_argument("--seeds", default=None, metavar="S,S,...",
                   help="several runs trained together as one batched model (diagonal, deltanet, deltaproduct, "
                        "block-diagonal): comma-separated seeds; with --out each run writes DIR/seed-S "
                        "(docs/learning.rst)")
    s.add_argument("--lrs", default=None, metavar="LR,LR,...",
                   help="with or without --seeds: comma-separated learning rates, each seed trained at each "
                        "(one batched model; with --out DIR/seed-S-lr-LR)")
    s.add_argument("--json", action="store_true", help="print machine-readable JSON instead of text")

    s = sub.add_parser("experiment", help="a named reproduction of a paper's learning experiment")
    s.add_argument("name", nargs="?", help="experiment name (see --list)")
    s.add_argument("--list", action="store_true", help="list the experiments")
    s.add_argument("--scale", default="tiny", choices=["tiny", "small", "paper"],
                   help="tiny (default, minutes on a CPU), small, or the paper's own sizes")
    s.add_argument("--device", type=device_arg, default="cpu", help="cpu (default), cuda or cuda:N")
    s.add_argument("--out", default=None, help="output directory for the runs and the result")
    s.add_argument("--no-horizon", action="store_true",
                   help="skip each trained model's horizon (shortest wrong word, accuracy against length, "
                   "extracted automaton; docs/learning.rst)")
    s.add_argument("--protocol", action="store_true",
                   help="with --scale paper: the runs changed to follow the paper's protocol, each configuration at "
                   "the paper's seeds x learning rates (docs/learning.rst, 'The papers' protocols')")
    s.add_argument("--seeds", default=None, metavar="S,S,...",
                   help="with --protocol: every configuration at these seeds instead of the paper's count")
    s.add_argument("--lrs", default=None, metavar="LR,LR,...",
                   help="with --protocol: every configuration at these learning rates instead of the paper's (a "
                        "sweep beyond the protocol: the record names the difference, so it decides no registry entry "
                        "itself; docs/registry.rst)")
    s.add_argument("--json", action="store_true", help="print machine-readable JSON instead of text")


def _protocol_runs(a) -> list | None:
    """``--protocol`` / ``--seeds`` / ``--lrs``: the experiment's paper runs as
    :func:`lrnnkit.learn.protocols.follow` changes them, at ``--seeds`` and ``--lrs`` where given; None without
    ``--protocol``."""
    for flag, val in (("--seeds", a.seeds), ("--lrs", a.lrs)):
        if val is not None and not a.protocol:
            raise InputError(f"experiment: {flag} goes with --protocol")
    if not a.protocol:
        return None
    if a.scale != "paper":
        raise InputError(f"experiment: --protocol follows the paper's own settings: give --scale paper, not "
                         f"--scale {a.scale}")
    return follow(a.name, seeds=None if a.seeds is None else _csv(a.seeds, seed_arg, "--seeds"),
                  lrs=None if a.lrs is None else _csv(a.lrs, float, "--lrs"))


def _print_json(obj) -> None:
    print(json.dumps(obj, indent=2))


def run_train(a) -> int:
    from ..learn.train import TrainConfig, train
    layer = a.layer
    every_steps, every_seconds = _every(a.checkpoint_every)
    # heads, short convolution, steps and lr left out (None) take the layer's defaults inside TrainConfig
    cfg = TrainConfig(task=a.source, layer=layer, n_h=a.n_h, eig_range=a.eig_range, layers=a.layers, width=a.width,
                      heads=a.heads, head_dim=a.head_dim, mlp=a.mlp, gate=a.gate, short_conv=a.short_conv,
                      output_gate=not a.no_output_gate, train_len=_range(a.train_len), test_len=_lengths(a.test_len),
                      steps=a.steps, batch=a.batch, lr=a.lr, seed=a.seed, device=a.device, max_seconds=a.max_seconds,
                      checkpoint_every=every_steps, checkpoint_seconds=every_seconds,
                      deterministic=a.deterministic, loop=a.loop, train_words=a.train_words,
                      schedule=a.schedule, test_mix=_test_mix(a.test_mix), eval_every=a.eval_every,
                      **({} if a.fp_train_iters is None else {"fp_train_iters": a.fp_train_iters}))
    if a.seeds is not None or a.lrs is not None:
        return _run_batched(a, cfg)
    res = train(cfg, a.out, progress=not a.json and sys.stderr.isatty())
    res.pop("_model", None)
    if a.out:
        atomic_write_text(os.path.join(a.out, "result.json"), json.dumps(res, indent=1) + "\n")
    if a.json:
        _print_json(res)
    else:
        _print_result(cfg, res)
    return 0


def _run_batched(a, cfg) -> int:
    """``--seeds`` / ``--lrs``: every (lr, seed) of the lists as one batched model (:mod:`lrnnkit.learn.batched`)."""
    import dataclasses
    from ..learn.batched import train_batched
    seeds = _csv(a.seeds, seed_arg, "--seeds") if a.seeds is not None else [cfg.seed]
    lrs = _csv(a.lrs, float, "--lrs") if a.lrs is not None else [cfg.lr]
    cfgs = [dataclasses.replace(cfg, seed=sd, lr=lr) for lr in lrs for sd in seeds]
    outs = None if not a.out else [os.path.join(a.out, f"seed-{c.seed}" + (f"-lr-{c.lr:g}" if a.lrs else ""))
                                   for c in cfgs]
    results = train_batched(cfgs, outs, progress=not a.json and sys.stderr.isatty())
    for i, (c, res) in enumerate(zip(cfgs, results)):
        res.pop("_model", None)
        if outs:
            atomic_write_text(os.path.join(outs[i], "result.json"), json.dumps(res, indent=1) + "\n")
        if not a.json:
            print(f"run {i + 1} of {len(cfgs)}: seed {c.seed}, lr {c.lr:g}")
            _print_result(c, res)
    if a.json:
        _print_json(results)
    return 0


def _csv(s: str, conv, flag: str) -> list:
    try:
        out = [conv(x.strip()) for x in s.split(",") if x.strip()]
    except (ValueError, TypeError, argparse.ArgumentTypeError) as exc:
        raise InputError(f"{flag} expects comma-separated values, got {s!r}: {exc}"[:200]) from None
    if not out:
        raise InputError(f"{flag} expects comma-separated values, got {s!r}"[:200])
    return out


def _print_result(cfg, res) -> None:
    """The text summary of one run."""
    from ..learn.train import best_evaluation
    tacc = "n/a" if res["train_accuracy"] is None else f"{res['train_accuracy']:.3f}"
    print(f"{cfg.task} / {cfg.layer} [{cfg.eig_range[0]:g},{cfg.eig_range[1]:g}]: {res['steps']} steps in "
          f"{res['seconds']:.1f} s{' (stopped by --max-seconds)' if res['stopped_early'] else ''}, "
          f"train accuracy {tacc}")
    for L, acc in res["test_accuracy"].items():
        print(f"  length {L:>6}: accuracy {acc:.4f}  final {res['final_accuracy'][L]:.4f}  "
              f"scaled {res['scaled_accuracy'][L]:.3f}")
    if res.get("evaluations"):
        L = max(res["test_accuracy"], key=int)
        best = best_evaluation(res["evaluations"], lambda e: e["test_accuracy"][L])
        print(f"  best over training at length {L}: accuracy {best['test_accuracy'][L]:.4f} at step {best['step']} "
              f"({len(res['evaluations'])} evaluations)")
    ev = res["eigenvalues"]
    if ev and ev.get("min_real") is not None:
        print(f"  eigenvalues: min real part {ev['min_real']:.3f}, fraction negative "
              f"{ev['fraction_negative']:.3f}")
    else:
        print("  eigenvalues: not finite (the model diverged)")
    if res["checkpoint"]:
        print(f"  checkpoint: {res['checkpoint']}")


def run_experiment_cmd(a) -> int:
    from ..learn.experiments import list_experiments, run_experiment
    if a.list:
        lst = list_experiments()
        if a.json:
            _print_json(lst)
        else:
            for e in lst:
                print(f"{e['name']:<24} {e['paper']}  {e['figure_or_table']}\n    {e['claim']}")
        return 0
    if not a.name:
        raise InputError("experiment: give a NAME or --list (see `lrnnkit experiment --list`)")
    rec = run_experiment(a.name, a.scale, a.device, a.out, progress=not a.json and sys.stderr.isatty(),
                         horizons=not a.no_horizon, annotate=lambda name, runs: {"protocol": protocol_record(name, runs)},
                         reduce=reduce_as_reported, runs=_protocol_runs(a))
    if a.json:
        _print_json(rec)
    else:
        j = rec.get("judgement", {})
        print(f"{rec['name']} ({rec['paper']}, {rec['figure_or_table']}), scale {a.scale}: {j.get('outcome')}")
        print(f"  claim: {rec['claim']}")
        print(f"  measured: {json.dumps(j.get('measured'))}")
        for label, line in rec.get("horizons", {}).items():
            print(f"  horizon, {label}: {line}")
        if a.out:
            print(f"  results: {os.path.join(a.out, 'results.json')}")
    return 0


VERBS = {"train": run_train, "experiment": run_experiment_cmd}
