"""The diagonal scan on the CPU: step by step against log-depth doubling, the scan alone and inside a training step.

    python benchmarks/bench_cpu_scan.py [--seconds 1] [--learn-seeds N] [--record]   # --record: RESULTS.md
    python benchmarks/bench_cpu_scan.py --smoke                       # tiny shapes, seconds

Off CUDA, :func:`lrnnkit.ops.diagonal.parallel.diagonal_scan` (the diagonal mixer, Mamba's block through
:func:`lrnnkit.ops.diagonal.selective.selective_scan_reference`, the fixed-point layer's iterations) runs one of two
torch kernels of ``h_t = a_t h_{t-1} + b_t``, forward and, reversed, backward (:mod:`lrnnkit.ops.linear_scan`):
:func:`lrnnkit.ops.diagonal.parallel.sequential_scan` (one fused multiply-add a step into the output) or
:func:`lrnnkit.ops.linear_scan.doubling_scan` (``ceil(log2 T)`` steps of several full-size tensors each). This
script times both on the same inputs, in one process: the scan alone (float32, forward, and forward + backward
through ``diagonal_scan``'s reverse scan), and one training step (forward, backward, AdamW) of models the CPU trains,
with each kernel forced; the ``rule`` column is what ``cpu_kernel`` picks for the shape. Medians of repeated calls for
``--seconds`` each (at least 3 calls; a step slower than that is timed once after one warm-up call).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import torch  # noqa: E402

#: (name, B, T, D): the scan's rows x steps x channels as the layers call it
SCANS = [("000 parity, small scale (64 x 40, width 128)", 64, 40, 128),
         ("000 parity, protocol batch (1024 x 40, width 128)", 1024, 40, 128),
         ("Mamba block, 003 copy (128 x 100, 256 channels x 16 states)", 128, 100, 4096),
         ("003 fixed point (128 x 16, 2 x 512 channels x 4 states)", 128, 16, 4096),
         ("long and narrow (4 x 4096, 64)", 4, 4096, 64),
         ("mid (8 x 512, 256)", 8, 512, 256)]
#: (name, TrainConfig fields): one step of each model (the device is the CPU)
STEPS = [("diagonal, 000 parity at small scale", dict(task="parity", layer="diagonal", width=128, heads=4,
                                                      batch=64, train_len=(3, 40), short_conv=True)),
         ("Mamba block, 003 copy at its protocol", dict(task="copy:26", layer="mamba", eig_range=(0.0, 1.0),
                                                        layers=2, width=128, batch=128, train_len=(5, 50),
                                                        short_conv=True)),
         ("fixed point r=2, 003 A5 at small width", dict(task="group:A5", layer="fixed-point", n_h=2, width=128,
                                                         batch=64, train_len=(16, 16)))]
SMOKE_SCANS = [("smoke", 2, 9, 5), ("smoke, long", 1, 130, 3)]
SMOKE_STEPS = [("diagonal, smoke", dict(task="parity", layer="diagonal", width=8, heads=2, batch=4,
                                        train_len=(2, 6), short_conv=False))]


def _median_seconds(fn, seconds: float) -> float:
    fn()                                       # warm-up (allocations)
    times, t0 = [], time.perf_counter()
    while len(times) < 3 or time.perf_counter() - t0 < seconds:
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        if times[-1] > seconds:                # a slow call: once is enough
            break
    return statistics.median(times)


def _kernels():
    from lrnnkit.ops.diagonal.parallel import sequential_scan
    from lrnnkit.ops.linear_scan import doubling_scan
    return {"step by step": sequential_scan, "doubling": doubling_scan}


def _forced(kernel):
    """A context in which ``diagonal_scan`` runs ``kernel`` off CUDA (``parallel._kernel`` replaced)."""
    import contextlib

    from lrnnkit.ops.diagonal import parallel

    @contextlib.contextmanager
    def ctx():
        old = parallel._kernel
        parallel._kernel = lambda a, b: kernel(a, b)
        try:
            yield
        finally:
            parallel._kernel = old
    return ctx()


def _rule(B, T, D) -> str:
    from lrnnkit.ops.diagonal.parallel import cpu_kernel
    return {"sequential": "step by step", "doubling": "doubling"}[cpu_kernel((B, T, D))]


def scan_rows(shapes, seconds: float) -> list:
    from lrnnkit.ops.diagonal.parallel import diagonal_scan
    rows = []
    for name, B, T, D in shapes:
        g = torch.Generator().manual_seed(0)
        a, b = torch.rand(B, T, D, generator=g), torch.randn(B, T, D, generator=g)
        got = {}
        for kname, k in _kernels().items():
            ag, bg = a.clone().requires_grad_(), b.clone().requires_grad_()

            def fb():
                with _forced(k):
                    diagonal_scan(ag, bg).sum().backward()
            got[kname] = (_median_seconds(lambda: k(a, b), seconds), _median_seconds(fb, seconds))
        (fs, fbs), (fd, fbd) = got["step by step"], got["doubling"]
        rows.append([name, _rule(B, T, D), f"{fd * 1e3:.2f}", f"{fs * 1e3:.2f}", f"{fd / fs:.1f}x",
                     f"{fbd * 1e3:.2f}", f"{fbs * 1e3:.2f}", f"{fbd / fbs:.1f}x"])
        print(rows[-1], flush=True)
    return rows


def step_rows(models, seconds: float) -> list:
    from lrnnkit.learn.step import train_loss
    from lrnnkit.learn.tasks import batch_rng
    from lrnnkit.learn.train import TrainConfig, build
    rows = []
    for name, fields in models:
        cfg = TrainConfig(device="cpu", **fields)
        got = {}
        for kname, k in _kernels().items():
            task, model, opt = build(cfg)
            x, y = (torch.as_tensor(v) for v in task.sample(cfg.batch, cfg.train_len, batch_rng(cfg.seed, 0)))

            def step():
                with _forced(k):
                    loss, _ = train_loss(model, x, y, False)
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
            got[kname] = _median_seconds(step, seconds)
        rows.append([name, f"{got['doubling'] * 1e3:.0f}", f"{got['step by step'] * 1e3:.0f}",
                     f"{got['doubling'] / got['step by step']:.1f}x"])
        print(rows[-1], flush=True)
    return rows


#: the learning check: a small parity run of the diagonal layer (000 Fig. 1's model at CPU size), trained once with
#: each kernel forced, per seed
LEARN = dict(task="parity", layer="diagonal", width=64, heads=4, batch=64, train_len=(3, 40), test_len=(40, 128),
             steps=400, lr=1e-2, eig_range=(-1.0, 1.0), short_conv=True, eval_n=512, log_every=100)
SMOKE_LEARN = dict(LEARN, width=8, steps=4, test_len=(8,), train_len=(2, 6), eval_n=16)


def learn_rows(fields: dict, seeds: int) -> list:
    """Per seed, the token accuracy at each test length after training with each kernel forced (the same seed,
    batches and initial weights; only the scan's rounding differs)."""
    from lrnnkit.learn.train import TrainConfig, train
    rows = []
    for seed in range(seeds):
        cfg = TrainConfig(device="cpu", seed=seed, **fields)
        acc = {}
        for kname, k in _kernels().items():
            with _forced(k):
                acc[kname] = train(cfg)["test_accuracy"]
        rows.append([seed] + [f"{acc['doubling'][str(L)]:.3f} / {acc['step by step'][str(L)]:.3f}"
                              for L in cfg.test_len])
        print(rows[-1], flush=True)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=1.0, help="timed seconds per measurement (default 1)")
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes, seconds")
    ap.add_argument("--learn-seeds", dest="learn_seeds", type=int, default=0,
                    help="also train LEARN's parity run for this many seeds with each kernel (default 0: none)")
    ap.add_argument("--record", action="store_true",
                    help="write the tables into RESULTS.md, section 'CPU diagonal scan'")
    a = ap.parse_args(argv)
    if a.threads:
        torch.set_num_threads(a.threads)
    from _record import record, table
    scans = scan_rows(SMOKE_SCANS if a.smoke else SCANS, 0.05 if a.smoke else a.seconds)
    steps = step_rows(SMOKE_STEPS if a.smoke else STEPS, 0.05 if a.smoke else a.seconds)
    body = (table(["scan (float32)", "rule", "fwd ms, doubling", "fwd ms, step by step", "ratio",
                   "fwd+bwd ms, doubling", "fwd+bwd ms, step by step", "ratio"], scans) + "\n\n"
            + table(["training step (forward, backward, AdamW)", "ms, doubling", "ms, step by step", "ratio"],
                    steps))
    learn = SMOKE_LEARN if a.smoke else LEARN
    if a.learn_seeds:
        body += "\n\n" + table(["seed"] + [f"token accuracy at {L}: doubling / step by step"
                                            for L in learn["test_len"]], learn_rows(learn, a.learn_seeds))
    notes = (f"`python benchmarks/bench_cpu_scan.py --seconds {a.seconds:g}"
             + (f" --learn-seeds {a.learn_seeds}" if a.learn_seeds else "") + " --record`, torch threads "
             f"{torch.get_num_threads()}; medians of repeated calls, both kernels on the same inputs in one process. "
             "'rule': the kernel `lrnnkit.ops.diagonal.parallel.cpu_kernel` picks off CUDA for the shape (step "
             "by step when a step holds at least `SEQUENTIAL_MIN_STEP` numbers or the sequence has at most "
             "`SEQUENTIAL_MAX_T` steps). fwd+bwd: through `diagonal_scan`, whose backward is the same kernel on the "
             "reversed sequence. Training steps: one batch of the configuration's training lengths, "
             "`lrnnkit.learn.train.build`'s model and AdamW, the scan kernel forced."
             + (f" Learning (`--learn-seeds {a.learn_seeds}`): {learn['task']}, the diagonal layer [-1,1], width "
                f"{learn['width']}, {learn['steps']} steps of batch {learn['batch']} at lengths "
                f"{learn['train_len'][0]}-{learn['train_len'][1]}, lr {learn['lr']:g}, {learn['eval_n']} test words "
                "a length; each seed trained twice, the same batches and initial weights, the kernel forced."
                if a.learn_seeds else ""))
    if a.record and not a.smoke:
        record("CPU diagonal scan", body, notes)
    else:
        print(body + "\n\n" + notes)


if __name__ == "__main__":
    main()
