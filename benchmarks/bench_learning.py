"""The papers' learning experiments at a scale: runs the named reproductions of
:mod:`lrnnkit.learn.experiments` (and flash-linear-attention 0.6.0's ``GatedDeltaProduct`` on S3 beside ours),
several runs at once as separate processes on one GPU, and records what finished.

    python benchmarks/bench_learning.py --scale small --device cuda --workers 8 --budget 540 --out OUT
    python benchmarks/bench_learning.py --smoke --device cuda --out OUT      # every layer kind: ms/step, a few steps
    python benchmarks/bench_learning.py --record OUT                          # RESULTS.md "learning" + docs plots
    python benchmarks/bench_learning.py --scale paper --protocol --only 000-parity --gpus 4 --safety-cap 480 \
        --out OUT [--dry-run]      # the papers' seeds x lrs, batched per shape group, resumable (protocol_grid.py)
    python benchmarks/bench_learning.py --import-layer-vs-fla JSON --into DIR --provenance '{"call": ...}'
                                        # 001 Fig. 3 cells of bench_layer_vs_fla.py as runs (then --summarise DIR)

Each run is its own process (a crash fails that run only) and is capped by its ``max_seconds`` (wall clock: concurrent runs share the GPU, so a run's steps depend on
what runs beside it; the step count actually used is recorded, and rerunning one configuration with that step
count reproduces it). Runs that cannot start before ``--budget`` seconds minus their cap are skipped and listed.
Outputs under OUT: ``runs/<experiment>/<run>.json`` (one per finished run), ``<experiment>.json`` (claim, runs,
judgement), ``<experiment>.png`` (accuracy vs length), ``summary.json``, ``RESULTS_learning.md``.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
from lrnnkit.run_records import call_terms, with_seed_outcomes  # noqa: E402  (torch-free)

FLA_LABEL = "fla GatedDeltaProduct n_h={n} [-1,1]"
ANCHOR_S = 120


# ------------------------------------------------------------------------------------------------ fla model
def _import_fla_layer():
    """fla 0.6.0's GatedDeltaProduct; ``fla.layers``' package init imports transformers (absent on the GPU
    machine), so the layer module is loaded under a bare package stub when that import fails."""
    try:
        from fla.layers.gated_deltaproduct import GatedDeltaProduct
        return GatedDeltaProduct
    except ModuleNotFoundError:
        import types

        import fla
        for k in [k for k in sys.modules if k == "fla.layers" or k.startswith("fla.layers.")]:
            del sys.modules[k]
        pkg = types.ModuleType("fla.layers")
        pkg.__path__ = [os.path.join(os.path.dirname(fla.__file__), "layers")]
        sys.modules["fla.layers"] = pkg
        from fla.layers.gated_deltaproduct import GatedDeltaProduct
        return GatedDeltaProduct


def fla_model_fn(n_h: int, width: int = 384, heads: int = 12, head_dim: int = 32, gate: bool = False):
    """The anchor's model: embedding, one fla GatedDeltaProduct layer (allow_neg_eigval, short
    convolutions, output gate as fla's defaults; no forget gate unless ``gate``), an MLP block, a linear head."""
    import torch
    from torch import nn

    from lrnnkit.layers.mixers import MLP

    GDP = _import_fla_layer()

    class FlaModel(nn.Module):
        def __init__(self, vocab, n_out):
            super().__init__()
            self.config = {"layer": "fla-gated-deltaproduct", "n_h": n_h, "width": width, "heads": heads,
                           "head_dim": head_dim, "gate": gate}
            self.embed = nn.Embedding(vocab, width)
            self.n1, self.n2, self.nf = nn.RMSNorm(width), nn.RMSNorm(width), nn.RMSNorm(width)
            self.mix = GDP(hidden_size=width, expand_v=1, head_dim=head_dim, num_heads=heads, mode="chunk",
                           use_forget_gate=gate, allow_neg_eigval=True, num_householder=n_h)
            self.mlp = MLP(width)
            self.head = nn.Linear(width, n_out)

        def forward(self, tokens):
            x = self.embed(tokens)
            x = x + self.mix(self.n1(x))[0]
            x = x + self.mlp(self.n2(x))
            return self.head(self.nf(x))

    def make(task):
        return FlaModel(task.n_in, task.n_out)
    return make, torch


# ------------------------------------------------------------------------------------------------ jobs
def jobs_for(names, scale: str, device: str, fla: bool):
    from lrnnkit.learn.experiments import get_experiment
    jobs = []
    for name in names:
        for label, cfg in get_experiment(name).runs(scale):
            jobs.append({"experiment": name, "label": label, "scale": scale,
                         "config": dataclasses.replace(cfg, device=device).to_json()})
    if fla:
        # the anchor: fla's layer on S3 (n_h = 1, 2), 150 s each; ours with the same settings and cap are the S3
        # runs of 001-deltaproduct (their cap raised to 150 s here), compared in summarise()
        base = get_experiment("001-deltaproduct").runs(scale)[0][1]
        for n in (1, 2):
            cfg = dataclasses.replace(base, device=device, n_h=n, task="group:S3", max_seconds=ANCHOR_S).to_json()
            jobs.append({"experiment": "001-fla-anchor", "label": FLA_LABEL.format(n=n), "config": cfg, "fla": n})
        for j in jobs:
            if j["experiment"] == "001-deltaproduct" and j["label"].startswith("S3 ") and j["config"]["n_h"] <= 2:
                j["config"]["max_seconds"] = ANCHOR_S
    return jobs


def run_job(job: dict, out: str, threads: int = 2) -> dict:
    import torch
    torch.set_num_threads(threads)
    from lrnnkit.learn.experiments import get_experiment
    from lrnnkit.learn.train import TrainConfig, train
    cfg = TrainConfig.from_json(dict(job["config"]))
    t = time.time()
    try:
        model_fn = fla_model_fn(job["fla"], cfg.width, cfg.heads, cfg.head_dim or 32)[0] if job.get("fla") else None
        res = train(cfg, None, model_fn=model_fn)
        model = res.pop("_model", None)
        measure = get_experiment(job["experiment"]).measure if job["experiment"] != "001-fla-anchor" else None
        if measure is not None and model is not None:   # e.g. 003's fixed-point iterations per test length
            from lrnnkit.learn.tasks import make_task
            res.update(measure(model, make_task(cfg.task), cfg))
        if model is not None:   # the trained model's horizon (lrnnkit.learn.horizon), as `lrnnkit experiment` records
            from lrnnkit.learn.experiments import run_horizon
            try:
                res["horizon"] = run_horizon(model, cfg, job.get("scale", "small"))
            except Exception as exc:   # the training result stands without it
                res["horizon"] = {"error": f"{type(exc).__name__}: {exc}", "statement": "horizon failed"}
        res["ms_per_step"] = round(1000 * res["seconds"] / max(1, res["steps"]), 2)
        status = "ok"
    except Exception as exc:   # a failed run is recorded, the others go on
        import traceback
        res = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-3000:]}
        status = "failed"
    rec = {**job, "status": status, "wall": round(time.time() - t, 1), "result": res}
    rp = _record_path(out, job)
    os.makedirs(os.path.dirname(rp), exist_ok=True)
    with open(rp, "w") as fh:
        json.dump(rec, fh, indent=1)
    print(f"[{time.strftime('%H:%M:%S')}] {status:6} {job['experiment']:22} {job['label']:48} "
          f"{res.get('steps', '-')} steps {res.get('seconds', '-')} s  acc {res.get('test_accuracy', res.get('error'))}",
          flush=True)
    return rec


def _record_path(out: str, job: dict) -> str:
    from lrnnkit.learn.experiments import _slug
    return os.path.join(out, "runs", job["experiment"], _slug(job["label"]) + ".json")


def _work(job: dict) -> float:
    """A run's work, to order runs longest first: steps x batch x the longest training length x width x layers (the
    tokens a run pushes through its layers; mixers of one kind differ by constant factors only)."""
    c = job["config"]
    return float(c["steps"] * c["batch"] * max(c["train_len"]) * c["width"] * c["layers"])


def run_grid(jobs, out: str, workers: int, budget: float, threads: int = 2, gpus: int = 1) -> list:
    """Each run in its own process (``--job``), ``workers`` at a time: a run that crashes (a CUDA error, a library
    that aborts) is recorded as failed and takes no other run with it. With ``gpus`` > 1 each process sees one card
    (``CUDA_VISIBLE_DEVICES``), the one with the fewest runs on it when it starts."""
    import subprocess

    from benchmarks.protocol_grid import cards
    visible = cards(gpus)       # the caller's CUDA_VISIBLE_DEVICES where it names enough cards
    t0 = time.time()
    # in the given order (experiments as listed, fla's anchor runs first), longest caps first within each, then the
    # most work first (longest-processing-time order onto the free cards)
    order = {e: i for i, e in enumerate(dict.fromkeys(j["experiment"] for j in jobs))}
    order["001-fla-anchor"] = -1
    queue = sorted(jobs, key=lambda j: (order[j["experiment"]], -(j["config"].get("max_seconds") or 0), -_work(j)))
    jd = os.path.join(out, "jobs")
    os.makedirs(jd, exist_ok=True)
    done, skipped, running = [], [], []
    n = 0
    while queue or running:
        while queue and len(running) < workers:
            j = queue.pop(0)
            cap = (j["config"].get("max_seconds") or 60) + 30
            if time.time() - t0 + cap > budget:
                skipped.append(j)
                continue
            path = os.path.join(jd, f"{n}.json")
            n += 1
            with open(path, "w") as fh:
                json.dump(j, fh)
            busy = [sum(g == gpu for _, _, g in running) for gpu in range(gpus)]
            gpu = busy.index(min(busy))
            env = dict(os.environ, **({"CUDA_VISIBLE_DEVICES": visible[gpu]} if gpus > 1 else {}))
            proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--job", path, "--out", out,
                                     "--threads", str(threads)], env=env)
            running.append((proc, j, gpu))
        time.sleep(0.5)
        for proc, j, gpu in list(running):
            if proc.poll() is None:
                continue
            running.remove((proc, j, gpu))
            rp = _record_path(out, j)
            if proc.returncode != 0 and not os.path.exists(rp):
                os.makedirs(os.path.dirname(rp), exist_ok=True)
                with open(rp, "w") as fh:
                    json.dump({**j, "status": "failed", "result": {"error": f"process exited with status "
                                                                             f"{proc.returncode}"}}, fh, indent=1)
                print(f"failed (exit {proc.returncode}) {j['experiment']} / {j['label']}", flush=True)
            done.append(j)
    for j in skipped:
        print(f"skipped (budget): {j['experiment']} / {j['label']}", flush=True)
    return done, skipped


# ------------------------------------------------------------------------------------------------ probe
GH_VARIANTS = ("chunk", "torch")


def probe(device: str, out: str, steps: int = 8) -> dict:
    """ms per training step of our one-layer DeltaProduct (S3, n_h = 2, the 001 small settings) for each kernel
    backend (under bf16 autocast the layer's projections, hence q/k/v, are bf16); the fastest whose loss is finite
    is used by the grid."""
    import torch

    from lrnnkit.learn.experiments import get_experiment
    from lrnnkit.learn.train import build, lr_at  # noqa: F401
    from lrnnkit.learn.tasks import IGNORE, batch_rng
    base = [c for lab, c in get_experiment("001-deltaproduct").runs("small") if lab.startswith("S3") and c.n_h == 2][0]
    rows = []
    for be in GH_VARIANTS:
        cfg = dataclasses.replace(base, device=device, backend=be)
        try:
            task, model, opt = build(cfg)
            times = []
            for s in range(steps + 3):
                x, y = (torch.as_tensor(a, device=device) for a in task.sample(cfg.batch, cfg.train_len,
                                                                               batch_rng(0, s)))
                torch.cuda.synchronize()
                t = time.perf_counter()
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(x)
                loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, task.n_out), y.reshape(-1),
                                                         ignore_index=IGNORE)
                opt.zero_grad()
                loss.backward()
                opt.step()
                torch.cuda.synchronize()
                if s >= 3:
                    times.append(time.perf_counter() - t)
            ok = bool(torch.isfinite(loss))
            rows.append({"backend": be, "ms_per_step": round(1000 * sorted(times)[len(times) // 2], 2),
                         "finite": ok, "mem_gb": round(torch.cuda.max_memory_allocated() / 2**30, 2)})
        except Exception as exc:  # noqa: BLE001 - a variant that fails is reported and skipped
            rows.append({"backend": be, "error": f"{type(exc).__name__}: {exc}"[:500]})
        torch.cuda.reset_peak_memory_stats()
        print("probe", json.dumps(rows[-1]), flush=True)
    good = [r for r in rows if r.get("finite")]
    best = min(good, key=lambda r: r["ms_per_step"]) if good else None
    doc = {"rows": rows, "best": best}
    with open(os.path.join(out, "probe.json"), "w") as fh:
        json.dump(doc, fh, indent=1)
    return doc


def apply_probe(jobs, out: str) -> None:
    path = os.path.join(out, "probe.json")
    if not os.path.exists(path):
        return
    best = json.load(open(path)).get("best")
    if not best:
        return
    for j in jobs:
        if j["config"]["layer"] in ("deltanet", "deltaproduct") and not j.get("fla"):
            j["config"]["backend"] = best["backend"]


# ------------------------------------------------------------------------------------------------ smoke
def smoke(device: str, out: str) -> None:
    """Every layer kind (and fla's layer) at the 001 small width: a few steps, ms per step, accuracy sanity."""
    import torch

    from lrnnkit.learn.train import TrainConfig, train
    rows = []
    combos = [("deltaproduct", 2, "auto"), ("fla", 2, ""), ("deltaproduct", 2, "torch"),
              ("diagonal", 1, "auto"), ("deltanet", 1, "auto"), ("deltaproduct", 4, "auto"), ("deltaproduct", 3, "gate"),
              ("block-diagonal", 1, "auto"), ("bilinear", 1, "auto")]
    for layer, n_h, be in combos:
        cfg = TrainConfig(task="group:S3", layer="deltaproduct" if layer == "fla" else layer, n_h=n_h, width=384,
                          heads=12, head_dim=32, mlp=True, steps=40, batch=512, lr=1e-3, train_len=(128, 128),
                          test_len=(128, 512), eval_n=256, device=device, log_every=10, block_size=8,
                          backend=be if be in ("torch", "naive") else "auto", gate=be == "gate")
        if layer in ("block-diagonal", "bilinear"):
            cfg = dataclasses.replace(cfg, width=128, heads=4, head_dim=16)
        t = time.time()
        try:
            fn = fla_model_fn(n_h)[0] if layer == "fla" else None
            r = train(cfg, None, model_fn=fn)
            r.pop("_model", None)
            if device == "cuda":
                torch.cuda.synchronize()
            rows.append({"layer": layer, "n_h": n_h, "backend": be, "ms_per_step": round(1000 * r["seconds"] / r["steps"], 1),
                         "wall": round(time.time() - t, 1), "test_accuracy": r.get("test_accuracy"),
                         "mem_gb": round(torch.cuda.max_memory_allocated() / 2**30, 2) if device == "cuda" else None})
        except Exception as exc:
            import traceback
            rows.append({"layer": layer, "n_h": n_h, "backend": be, "error": f"{type(exc).__name__}: {exc}",
                         "traceback": traceback.format_exc()[-2500:]})
        print(json.dumps(rows[-1])[:3000], flush=True)
        if device == "cuda":
            torch.cuda.reset_peak_memory_stats()
    with open(os.path.join(out, "smoke.json"), "w") as fh:
        json.dump(rows, fh, indent=1)


# ------------------------------------------------------------------------------------------------ summarise
def _task(rec: dict):
    return rec["result"].get("task") or (rec.get("config") or {}).get("task")


def label_filters(text: str) -> list:
    """``--labels``: the comma-separated substrings of ``text``, a comma inside brackets kept (labels such as
    ``"DeltaNet [-1,1]"`` hold one): ``"Mamba [0,1],DeltaNet"`` -> ``["Mamba [0,1]",
    "DeltaNet"]``."""
    out, cur, depth = [], "", 0
    for ch in text:
        depth += (ch in "[(") - (ch in "])")
        if ch == "," and depth <= 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [x.strip() for x in out if x.strip()]


def _over_training(ok: dict) -> dict:
    """{configuration: {run: [(step, token accuracy at the longest test length)]}} where every run of ``ok`` kept
    two or more evaluations during training (``TrainConfig.eval_every``), else {}."""
    out: dict = {}
    for k, r in ok.items():
        evs = r.get("evaluations")
        if not isinstance(evs, list) or len(evs) < 2:
            return {}
        pts = []
        for ev in evs:
            acc = ev.get("test_accuracy") if isinstance(ev, dict) else None
            if not isinstance(acc, dict) or not acc or "step" not in ev:
                return {}
            pts.append((ev["step"], acc[str(max(int(x) for x in acc))]))
        out.setdefault(r.get("config_label") or k, {})[k] = pts
    return out


def summarise(out: str, scale: str, skipped=(), note_for=None) -> dict:
    """Group the run files by experiment, judge, plot, write ``<experiment>.json`` and the RESULTS fragment."""
    from lrnnkit.learn.protocols import as_reported, protocol_record
    from lrnnkit.learn.evaluate import plot_accuracy, plot_over_training
    from lrnnkit.learn.experiments import EXPERIMENTS
    runs: dict = {}
    rd = os.path.join(out, "runs")
    for exp in sorted(os.listdir(rd)) if os.path.isdir(rd) else []:
        for f in sorted(os.listdir(os.path.join(rd, exp))):
            with open(os.path.join(rd, exp, f)) as fh:
                rec = json.load(fh)
            runs.setdefault(exp, {})[rec["label"]] = rec
    superseded = {exp: {k: r for k, r in recs.items() if r.get("superseded")} for exp, recs in runs.items()}
    runs = {exp: {k: r for k, r in recs.items() if not r.get("superseded")} for exp, recs in runs.items()}
    if "001-fla-anchor" in runs:    # ours beside fla, same settings, from the same GPU call and on the same task
        peers = {((r.get("provenance") or {}).get("call"), _task(r)) for r in runs["001-fla-anchor"].values()}
        for k, r in runs.get("001-deltaproduct", {}).items():
            if ((r.get("provenance") or {}).get("call"), _task(r)) in peers:
                runs["001-fla-anchor"]["lrnnkit " + k] = r
    summary = {"scale": scale, "experiments": {}, "skipped": [f"{j['experiment']} / {j['label']}" for j in skipped]}
    for exp, recs in runs.items():
        ok = {k: r["result"] for k, r in recs.items() if r["status"] == "ok"}
        e = EXPERIMENTS.get(exp)
        e = as_reported(e) if e is not None else None     # seeds x rates reduced as reported, as the registry does
        doc = {"name": exp, "scale": scale, "runs": ok,
               "failed": {k: r["result"].get("error") for k, r in recs.items() if r["status"] != "ok"}}
        doc["horizons"] = {k: (r.get("horizon") or {}).get("statement", "not computed") for k, r in ok.items()}
        calls = {}
        for r in recs.values():
            pv = r.get("provenance")
            if pv:
                calls[pv["call"]] = pv
        if calls:
            doc["calls"] = calls
        if superseded.get(exp):   # kept beside the runs, never judged
            doc["superseded"] = {k: r["result"] for k, r in superseded[exp].items()}
            doc["superseded_calls"] = {(r.get("provenance") or {}).get("call"): r.get("provenance")
                                       for r in superseded[exp].values()}
        if e is not None:
            doc.update(e.to_json())
            from lrnnkit.learn.experiments import best_per_config
            labels = [lab for lab, _ in e.runs(scale)]
            have = best_per_config(ok)
            n_have = sum(lab in have for lab in labels)
            if n_have == len(labels):
                try:
                    doc["judgement"] = with_seed_outcomes(e.judge_runs(ok), e.judge_runs, ok)
                except Exception as exc:   # noqa: BLE001 - a judge that cannot read the numbers is reported
                    doc["judgement"] = {"outcome": f"not judged ({type(exc).__name__}: {exc})"}
            else:
                doc["judgement"] = {"outcome": f"incomplete ({n_have} of {len(labels)} configurations finished)"}
            parts = {}
            for part, (claim, _, _) in e.parts.items():
                plabels = e.part_labels(part, have)     # as the runs name them (a Mamba configuration: either name)
                pj = {"claim": claim, "configurations": plabels}
                if all(lab in have for lab in plabels):
                    pj["judgement"] = with_seed_outcomes(e.judge_part(part, ok),
                                                          lambda rr, part=part: e.judge_part(part, rr), ok)
                    pj["protocol"] = protocol_record(exp, ok, plabels)
                else:
                    pj["judgement"] = {"outcome": "incomplete"}
                parts[part] = pj
            if parts:
                doc["parts"] = parts
            if ok:      # how the runs differ from the paper's protocol (a paper-scale verdict needs none)
                doc["protocol"] = protocol_record(exp, ok)
        else:
            doc.update({"paper": "001", "figure_or_table": "Fig. 3 / fla anchor (fla 0.6.0 beside lrnnkit)",
                        "kind": "comparison",   # not a registry entry (lrnnkit.theorems.empirical skips it)
                        "claim": "001 Fig. 3 cells, one layer d=384, 12 heads of 32, MLP, batch 512, length 128: "
                                 "fla's GatedDeltaProduct and lrnnkit's layer, same network, data, seed and steps, "
                                 "from the same GPU call; fla's reference on S3: n_h=2 reaches 1.0/1.0/0.9998 at "
                                 "128/256/512 in 150 s, n_h=1 stays 0.38"})
        if note_for and exp in note_for:
            doc["note"] = note_for[exp]
        with open(os.path.join(out, f"{exp}.json"), "w") as fh:
            json.dump(doc, fh, indent=1)
        over = _over_training(ok)
        if over:        # every run evaluated during training: the curve the paper's 'best over training' reads
            plot_over_training(over, os.path.join(out, f"{exp}.png"),
                               title=f"{exp} ({scale}): token accuracy at the longest test length over training",
                               ylabel="token accuracy")
        elif ok:
            plot_accuracy({k: v["test_accuracy"] for k, v in ok.items()}, os.path.join(out, f"{exp}.png"),
                          train_len=e.plot_len if e else 128, title=f"{exp} ({scale})")
        summary["experiments"][exp] = {"judgement": doc.get("judgement"), "failed": doc["failed"],
                                       **({"parts": {k: v["judgement"] for k, v in doc["parts"].items()}}
                                          if doc.get("parts") else {})}
    with open(os.path.join(out, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=1)
    return summary


# ------------------------------------------------------------------------------------------------ merging calls
def _write_run(into: str, rec: dict) -> None:
    rp = _record_path(into, rec)
    os.makedirs(os.path.dirname(rp), exist_ok=True)
    with open(rp, "w") as fh:
        json.dump(rec, fh, indent=1)


def _with_provenance(into: str, rec: dict, pv: dict) -> dict:
    """``rec`` with the GPU call that made it (``pv``: call, when, commit, command, concurrency, cap) recorded in the
    run and in its result; a label already taken under ``into`` by another call gets ``(call NAME)`` appended (and
    ``config_label`` names the configuration, so the judges see several runs of one configuration)."""
    rec = {**rec, "provenance": pv, "result": {**rec["result"], "provenance": pv}}
    if os.path.exists(_record_path(into, rec)):
        with open(_record_path(into, rec)) as fh:
            other = json.load(fh)
        if (other.get("provenance") or {}).get("call") != pv["call"]:
            # a protocol run's label names its rate and seed, its result the configuration: keep the latter
            rec["result"].setdefault("config_label", rec["label"])
            rec["label"] = f"{rec['label']} (call {pv['call']})"
            pv.setdefault("tag", f"call {pv['call']}")
    return rec


def unpack_results(res_dir: str, into: str, pv: dict, scale: str = "small") -> int:
    """Run files (``runs/<experiment>/<run>.json``) from the committed experiment files of one scale, so that a
    later GPU call's runs can be merged beside them and everything re-summarised (``--summarise``). A learning-rate
    sweep's file (``kind: "lr-sweep"``) is not unpacked: its runs stay out of the experiment's record
    (:mod:`lrnnkit.theorems.rate_sweeps`)."""
    n = 0
    for f in sorted(os.listdir(res_dir)):
        if not f.endswith(".json"):
            continue
        with open(os.path.join(res_dir, f)) as fh:
            doc = json.load(fh)
        if not isinstance(doc, dict) or doc.get("scale") != scale or not isinstance(doc.get("runs"), dict) \
                or doc.get("kind") == "lr-sweep":
            continue
        own = doc["runs"].items()
        if doc.get("kind") == "comparison":   # lrnnkit's side is assembled from the experiments' runs by summarise()
            own = [(k, r) for k, r in own if not k.startswith("lrnnkit ")]
        for label, res in list(own) + list((doc.get("superseded") or {}).items()):
            rec = {"experiment": doc["name"], "label": label, "config": res.get("config"),
                   "status": "failed" if "error" in res and "test_accuracy" not in res else "ok", "result": res}
            if res.get("superseded"):
                rec["superseded"] = res["superseded"]
            if res.get("provenance"):   # already merged once: keep each run's own call
                _write_run(into, {**rec, "provenance": res["provenance"]})
            else:
                _write_run(into, _with_provenance(into, rec, dict(pv)))
            n += 1
        for label, err in (doc.get("failed") or {}).items():
            _write_run(into, {"experiment": doc["name"], "label": label, "status": "failed", "provenance": pv,
                              "result": {"error": err, "provenance": pv}})
            n += 1
    return n


def import_runs(src: str, into: str, pv: dict) -> int:
    """Copy a GPU call's run files (``SRC/runs/...``) under ``into``, each with the call's provenance."""
    n = 0
    rd = os.path.join(src, "runs")
    if not os.path.isdir(rd):
        from lrnnkit.errors import InputError
        raise InputError(f"no runs/ folder in {src!r} (give the folder a call's runs.tgz unpacks into, the one "
                         "that holds runs/)")
    for exp in sorted(os.listdir(rd)):
        for f in sorted(os.listdir(os.path.join(rd, exp))):
            with open(os.path.join(rd, exp, f)) as fh:
                rec = json.load(fh)
            _write_run(into, _with_provenance(into, rec, dict(pv)))
            n += 1
    return n


LAYER_VS_FLA = {"ours": ("001-deltaproduct", "{g} DeltaProduct n_h={n} [-1,1]", "lrnnkit.layers.DeltaProductLayer"),
                "fla": ("001-fla-anchor", "fla GatedDeltaProduct {g} n_h={n} [-1,1]",
                        "fla.layers.GatedDeltaProduct (flash-linear-attention {fla})")}


def layer_vs_fla_config(cell: dict) -> dict:
    """The training settings of a ``bench_layer_vs_fla.py --parts fig3`` cell as the learning format writes them
    (:class:`lrnnkit.learn.train.TrainConfig`'s fields; that script's network and loop: one mixer d = 384, 12 heads
    of 32, MLP 4x, batch 512 at length 128, AdamW lr 1e-3 constant, weight decay 0.1, clipping 1.0, bf16 autocast,
    512 held-out words per test length)."""
    return {"task": f"group:{cell['group']}", "layer": "deltaproduct", "n_h": int(cell["n_h"]),
            "eig_range": [-1.0, 1.0], "layers": 1, "width": 384, "heads": 12, "head_dim": 32, "mlp": True,
            "short_conv": True, "gate": False, "train_len": [128, 128],
            "test_len": sorted(int(L) for L in cell["final"]), "steps": int(cell["steps"]), "batch": 512,
            "lr": 1e-3, "weight_decay": 0.1, "warmup": 0.0, "min_lr": 1e-3, "clip": 1.0, "seed": int(cell["seed"]),
            "device": "cuda", "bf16": True, "eval_n": 512}


def import_layer_vs_fla(src: str, into: str, pv: dict) -> int:
    """The 001 Fig. 3 cells of a ``benchmarks/bench_layer_vs_fla.py --parts fig3`` JSON (``"fig3"``: one entry per
    layer kind, group, n_h) as run files under ``into``: lrnnkit's layer (kind ``ours``) as runs of
    001-deltaproduct, fla's GatedDeltaProduct (kind ``fla``) as the peer in the 001-fla-anchor comparison; each with
    the call's provenance ``pv`` and the source file. Token accuracy at every test length after the cell's steps is
    the run's ``test_accuracy``; the held-out probe curve (step, training seconds, accuracy at 128) is kept."""
    from lrnnkit.errors import InputError
    with open(src) as fh:
        doc = json.load(fh)
    cells = doc.get("fig3") if isinstance(doc, dict) else None
    if not isinstance(cells, list):
        raise InputError(f"{src}: no 'fig3' list (a bench_layer_vs_fla.py --parts fig3 JSON)")
    n = 0
    for c in cells:
        if c.get("kind") not in LAYER_VS_FLA:
            raise InputError(f"{src}: a fig3 cell of unknown kind {c.get('kind')!r} (ours or fla)")
        exp, label, layer = LAYER_VS_FLA[c["kind"]]
        res = {"task": f"group:{c['group']}", "config": layer_vs_fla_config(c), "steps": int(c["steps"]),
               "seconds": round(float(c["wall"]), 2), "ms_per_step": round(float(c["ms_step"]), 2),
               "test_accuracy": {str(L): float(a) for L, a in sorted(c["final"].items(), key=lambda x: int(x[0]))},
               "first_step_at_0.99": c.get("first_step"), "probe_curve": c.get("curve", []),
               "source": {"file": os.path.relpath(os.path.abspath(src), ROOT), "kind": c["kind"],
                          "layer": layer.format(fla=doc.get("fla")), "device": doc.get("device"),
                          "torch": doc.get("torch"), "script": "benchmarks/bench_layer_vs_fla.py --parts fig3",
                          "ms_per_step": "median step time after 10 steps; seconds: training time, probes excluded"}}
        rec = {"experiment": exp, "label": label.format(g=c["group"], n=c["n_h"]), "config": res["config"],
               "status": "ok", "result": res}
        _write_run(into, _with_provenance(into, rec, dict(pv)))
        n += 1
    return n


def supersede(into: str, experiment: str, calls, reason: str, labels=()) -> int:
    """Mark the run files of ``experiment`` under ``into`` that came from ``calls`` as superseded (``reason``, e.g.
    measured with an earlier layer): summarise() keeps them in the experiment's file under ``superseded``, out of
    ``runs``, so no judge sees them. ``labels``: substrings, of which a run's configuration label must hold one
    (none: every run of those calls). A superseded run labelled by its configuration alone is relabelled
    ``LABEL (call NAME)``, which leaves the plain label to the runs that replace it."""
    rd = os.path.join(into, "runs", experiment)
    n = 0
    for f in sorted(os.listdir(rd)) if os.path.isdir(rd) else []:
        path = os.path.join(rd, f)
        with open(path) as fh:
            rec = json.load(fh)
        call = (rec.get("provenance") or rec["result"].get("provenance") or {}).get("call")
        config = rec["result"].get("config_label", rec["label"])
        if call not in calls or rec.get("superseded") or (labels and not any(x in config for x in labels)):
            continue
        rec["superseded"] = reason
        res = rec["result"] = {**rec["result"], "superseded": reason}
        if "config_label" not in res:
            res["config_label"] = rec["label"]
            rec["label"] = f"{rec['label']} (call {call})"
        os.remove(path)
        _write_run(into, rec)
        n += 1
    return n


def results_markdown(out: str) -> str:
    from benchmarks._record import table
    lines = []
    for f in sorted(os.listdir(out)):
        if not f.endswith(".json") or f in ("summary.json", "smoke.json"):
            continue
        with open(os.path.join(out, f)) as fh:
            doc = json.load(fh)
        if "runs" not in doc:
            continue
        j = doc.get("judgement") or {}
        lines.append(f"### {doc['name']} — {doc.get('paper')} {doc.get('figure_or_table')}\n")
        lines.append(f"Claim: {doc.get('claim')}\n")
        lines.append(f"Outcome at scale `{doc.get('scale')}`: **{j.get('outcome', 'n/a')}**"
                     + (f" ({j['criterion']})" if j.get("criterion") else "") + "\n")
        for part, pj in (doc.get("parts") or {}).items():
            pjj = pj["judgement"]
            lines.append(f"Part {part} ({pj['claim']}): **{pjj.get('outcome')}**"
                         + (f" ({pjj['criterion']})" if pjj.get("criterion") else "") + "\n")
        if doc.get("note"):
            lines.append(doc["note"] + "\n")
        calls = doc.get("calls") or {}
        for c, pv in (calls.items() if len(calls) > 1 or doc.get("kind") == "comparison" else ()):
            lines.append(f"Call `{c}`: {pv.get('when', '')}, commit {pv.get('commit', '?')}, {call_terms(pv)}: "
                         f"`{pv.get('command', '')}`"
                         + (f" (runs labelled `({pv['tag']})` where a configuration ran more than once)"
                            if pv.get("tag") else "") + "\n")
        rows = []
        for label, r in doc["runs"].items():
            acc = " / ".join(f"{L}: {a:.3f}" for L, a in r["test_accuracy"].items())
            sc = r.get("scaled_accuracy") or {}
            smean = sum(sc.values()) / len(sc) if sc else float("nan")
            ev = r.get("eigenvalues") or {}
            call = (r.get("provenance") or {}).get("call", "-")
            rows.append([label, call, r["steps"], f"{r['seconds']:.0f}", r.get("ms_per_step", "-"), acc,
                         f"{smean:.3f}" if sc else "-",
                         f"{ev['min_real']:.2f}" if ev and ev.get("min_real") is not None else "-"])
        lines.append(table(["run", "call", "steps", "s", "ms/step", "token accuracy by length", "scaled (mean)",
                            "min Re(eig)"], rows))
        if doc.get("failed"):
            lines.append("\nFailed: " + "; ".join(f"{k}: {v}" for k, v in doc["failed"].items()))
        if doc.get("superseded"):
            why = sorted({r.get("superseded", "") for r in doc["superseded"].values()})
            lines.append(f"\nSuperseded, not judged and not listed above: {len(doc['superseded'])} runs of call(s) "
                         f"{', '.join(f'`{c}`' for c in sorted(doc.get('superseded_calls') or {}))} ({'; '.join(why)}); "
                         f"kept in the JSON under `superseded`.")
        lines.append("")
    return "\n".join(lines)


def record_from(out: str, only=None) -> None:
    """Splice the GPU run's section into benchmarks/RESULTS.md (the section was made on the GPU machine, so its
    "Measured ... on" line names that machine), copy plots to docs/_static and JSON to benchmarks/results/learning
    (with ``only``: those experiments' files and ``summary.json``, the other committed files left as they are)."""
    import re
    import shutil

    from lrnnkit.fileio import atomic_write_text
    frag = open(os.path.join(out, "RESULTS_learning.md")).read()
    m = re.search(r"<!-- BEGIN learning -->.*?<!-- END learning -->", frag, re.S)
    block = m.group(0)
    path = os.path.join(HERE, "RESULTS.md")
    text = open(path).read()
    pat = re.compile(r"<!-- BEGIN learning -->.*?<!-- END learning -->", re.S)
    text = pat.sub(lambda _: block, text) if pat.search(text) else text.rstrip() + "\n\n" + block + "\n"
    atomic_write_text(path, text)
    res = os.path.join(HERE, "results", "learning")
    st = os.path.join(ROOT, "docs", "_static")
    os.makedirs(res, exist_ok=True)
    for f in os.listdir(out):
        if only is not None and f != "summary.json" and f.rsplit(".", 1)[0] not in only:
            continue
        if f.endswith(".json"):
            shutil.copy(os.path.join(out, f), os.path.join(res, f))
        elif f.endswith(".png"):
            shutil.copy(os.path.join(out, f), os.path.join(st, f"learning_{f}"))


def record_sweep(merged: str, experiment: str, results: str | None = None, static: str | None = None) -> list:
    """Record a rate sweep beyond a paper's protocol (runs made with ``--protocol --lrs``, summarised under
    ``merged``): ``merged/<experiment>.json`` becomes ``benchmarks/results/learning/<experiment>-lr-sweep.json``
    with ``kind: "lr-sweep"`` (so the registry never reads it as the experiment's own paper-scale record;
    :mod:`lrnnkit.theorems.rate_sweeps` reads it for the corrected statement), its plot
    ``docs/_static/learning_<experiment>-lr-sweep.png`` (``results`` / ``static``: other directories). Returns the
    paths written."""
    import shutil

    from lrnnkit.errors import InputError
    from lrnnkit.fileio import atomic_write_text
    src = os.path.join(merged, f"{experiment}.json")
    if not os.path.exists(src):
        raise InputError(f"--record-sweep: no {src} (run --summarise {merged} --scale paper first)")
    with open(src) as fh:
        doc = json.load(fh)
    if doc.get("scale") != "paper" or (doc.get("protocol") or {}).get("follows") is not False:
        raise InputError(f"--record-sweep: {src} is not a paper-scale record whose runs leave the protocol")
    doc = {"kind": "lr-sweep", "sweep_of": experiment, **doc}
    out = os.path.join(results or os.path.join(HERE, "results", "learning"), f"{experiment}-lr-sweep.json")
    atomic_write_text(out, json.dumps(doc, indent=1))
    written = [out]
    png = os.path.join(merged, f"{experiment}.png")
    if os.path.exists(png):
        written.append(os.path.join(static or os.path.join(ROOT, "docs", "_static"),
                                    f"learning_{experiment}-lr-sweep.png"))
        shutil.copy(png, written[-1])
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", default="small", choices=["tiny", "small", "paper"])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--gpus", type=int, default=1, help="cards to spread the runs over (one CUDA_VISIBLE_DEVICES each)")
    ap.add_argument("--budget", type=float, default=540, help="seconds for the whole grid")
    ap.add_argument("--only", default="", help="comma-separated experiment names (default: all)")
    ap.add_argument("--fla", action="store_true", help="add fla's GatedDeltaProduct on S3 (n_h = 1, 2)")
    ap.add_argument("--out", default="bench_learning_out")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--job", metavar="FILE", help=argparse.SUPPRESS)   # one run, in its own process (run_grid)
    ap.add_argument("--summarise", metavar="DIR", help="judge, plot and tabulate the runs already under DIR")
    ap.add_argument("--header", default="", help="text above the tables (with --summarise)")
    ap.add_argument("--notes", default="", help="text below the tables (with --summarise)")
    ap.add_argument("--unpack", metavar="RESULTS_DIR", help="write run files under --into from committed results")
    ap.add_argument("--import-runs", metavar="SRC", help="copy a GPU call's run files under --into")
    ap.add_argument("--import-layer-vs-fla", metavar="JSON",
                    help="the fig3 cells of a bench_layer_vs_fla.py JSON as run files under --into (ours: "
                         "001-deltaproduct; fla: the 001-fla-anchor comparison)")
    ap.add_argument("--supersede", metavar="EXPERIMENT=CALL[,CALL]", action="append", default=[],
                    help="mark the runs of these calls under --into superseded (kept, not judged); needs --reason; "
                         "with --labels only the configurations whose label holds one of its substrings")
    ap.add_argument("--reason", default="", help="why the runs are superseded (with --supersede)")
    ap.add_argument("--into", metavar="DIR", help="merge directory (with --unpack / --import-runs / "
                                                  "--import-layer-vs-fla / --supersede)")
    ap.add_argument("--provenance", default="{}", help="JSON: call, when, commit, command, concurrency, cap")
    ap.add_argument("--note", action="append", default=[], metavar="EXPERIMENT=TEXT",
                    help="a note recorded with an experiment (with --summarise)")
    ap.add_argument("--record", metavar="DIR", help="record a finished GPU run (RESULTS.md, docs plots, JSON)")
    ap.add_argument("--record-only", default="", metavar="EXPERIMENT[,EXPERIMENT]",
                    help="with --record: copy only these experiments' JSON and plots (and summary.json)")
    ap.add_argument("--threads", type=int, default=2, help="torch CPU threads per run")
    ap.add_argument("--probe", action="store_true", help="time our GH kernel variants first; the grid uses the best")
    ap.add_argument("--anchor-only", action="store_true", help="only the S3 anchor: fla n_h=1,2 and ours n_h=1,2")
    ap.add_argument("--skip-anchor", action="store_true", help="leave out our S3 n_h<=2 runs (run by --anchor-only)")
    ap.add_argument("--cap", type=float, default=None, help="override every run's max_seconds (and size its schedule to it: auto_steps)")
    ap.add_argument("--labels", default="", help="comma-separated substrings: keep the runs whose label holds one "
                                                 "(a comma inside [...] belongs to the label: 'DeltaNet [-1,1]')")
    ap.add_argument("--safety-cap", type=float, default=None,
                    help="every run's max_seconds with its schedule unchanged: a run that trains all its steps inside "
                         "it is uncapped, one that reaches it is recorded as capped")
    ap.add_argument("--protocol", action="store_true",
                    help="with --scale paper: the papers' seeds x lrs, each shape group one batched job "
                         "(benchmarks/protocol_grid.py); resumes from the run directories under --out")
    ap.add_argument("--record-sweep", metavar="EXPERIMENT",
                    help="with --into DIR (summarised): record DIR's EXPERIMENT runs, made with --lrs, as the "
                         "experiment's rate sweep (benchmarks/results/learning/EXPERIMENT-lr-sweep.json)")
    ap.add_argument("--lrs", metavar="LR,LR,...",
                    help="with --protocol: every configuration's runs at these learning rates instead of the paper's "
                         "(a sweep beyond the protocol: the summary reports the difference, so the runs never pass "
                         "for the paper's; keep them under their own --out)")
    ap.add_argument("--seeds", metavar="S,S,...",
                    help="with --protocol: every configuration's runs at these seeds instead of the paper's count "
                         "(more seeds for a verdict, or the seeds a later call adds)")
    ap.add_argument("--dry-run", action="store_true", help="with --protocol: print the jobs and minutes per GPU")
    ap.add_argument("--debug", action="store_true", help="a traceback instead of the one-line error")
    ap.add_argument("--deadline", type=float, default=None,
                    help="with --protocol: wall seconds for the whole call; each GPU starts the next job whose "
                         "estimated time fits (else the first, to resume later), capped to what is left (less 60 s "
                         "for its evaluation, 150 s for fixed-point runs), and none with under 20 s")
    ap.add_argument("--split", type=int, default=1, metavar="N",
                    help="with --protocol: each batched job split into N batched jobs of its runs (for N cards: "
                         "a job too long for one call on one card finishes in one call on N)")
    ap.add_argument("--per-gpu", type=int, default=1, metavar="N",
                    help="with --protocol: N processes per GPU, the runs of jobs that are not batched each its own "
                         "job (small models leave most of a GPU idle)")
    ap.add_argument("--order", choices=["long", "short"], default="long",
                    help="with --protocol: longest jobs first (default) or shortest first (more jobs finish)")
    a = ap.parse_args(argv)
    if a.per_gpu < 1:
        ap.error(f"--per-gpu must be at least 1, not {a.per_gpu}")
    if a.job:
        with open(a.job) as fh:
            run_job(json.load(fh), a.out, a.threads)
        return 0
    if a.record:
        record_from(a.record, [x for x in a.record_only.split(",") if x] or None)
        return 0
    if a.supersede:
        if not a.into or not a.reason:
            ap.error("--supersede needs --into DIR and --reason TEXT")
        for spec in a.supersede:
            exp, _, calls = spec.partition("=")
            if not exp or not calls:
                ap.error(f"--supersede takes EXPERIMENT=CALL[,CALL], got {spec!r}")
            n = supersede(a.into, exp, set(calls.split(',')), a.reason, label_filters(a.labels))
            print(f"{n} runs of {exp} superseded")
        return 0
    if a.unpack or a.import_runs or a.import_layer_vs_fla:
        try:
            pv = json.loads(a.provenance)
        except json.JSONDecodeError as exc:
            ap.error(f"--provenance is not JSON: {exc}")
        if not a.into or not isinstance(pv, dict) or "call" not in pv:
            ap.error("--unpack / --import-runs / --import-layer-vs-fla need --into DIR and --provenance with a "
                     "'call' name")
        from lrnnkit.errors import InputError
        src = a.unpack or a.import_runs or a.import_layer_vs_fla
        try:
            if a.unpack:
                n = unpack_results(a.unpack, a.into, pv, a.scale)
            elif a.import_runs:
                n = import_runs(a.import_runs, a.into, pv)
            else:
                n = import_layer_vs_fla(a.import_layer_vs_fla, a.into, pv)
        except (InputError, OSError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            if a.debug:
                raise
            print(f"error: {src}: {exc}", file=sys.stderr)
            return 2
        print(f"{n} run files under {a.into}")
        return 0
    if a.record_sweep:
        if not a.into:
            ap.error("--record-sweep EXPERIMENT needs --into DIR (the summarised merge directory)")
        from lrnnkit.errors import InputError
        try:
            print("\n".join(record_sweep(a.into, a.record_sweep)))
        except InputError as exc:
            ap.error(str(exc))
        return 0
    if a.summarise:   # re-judge and re-tabulate the run files under DIR (e.g. runs merged from several GPU calls)
        summarise(a.summarise, a.scale, note_for=dict(x.split("=", 1) for x in a.note))
        from benchmarks._record import record
        record("learning", a.header + "\n\n" + results_markdown(a.summarise), a.notes,
               path=os.path.join(a.summarise, "RESULTS_learning.md"))
        return 0
    os.makedirs(a.out, exist_ok=True)
    if a.smoke:
        smoke(a.device, a.out)
        return 0
    from lrnnkit.learn.experiments import EXPERIMENTS
    names = [n for n in a.only.split(",") if n] or list(EXPERIMENTS)
    if a.dry_run and not a.protocol:
        ap.error("--dry-run prints the jobs of --protocol: give --protocol")
    if a.protocol:
        if a.scale != "paper":
            ap.error("--protocol runs the papers' protocols: give --scale paper")
        from benchmarks import protocol_grid as pg
        from lrnnkit.errors import InputError
        try:
            seeds = None if a.seeds is None else [int(x) for x in a.seeds.split(",") if x.strip()]
        except ValueError:
            ap.error(f"--seeds takes comma-separated integers, not {a.seeds!r}")
        try:
            lrs = None if a.lrs is None else [float(x) for x in a.lrs.split(",") if x.strip()]
        except ValueError:
            ap.error(f"--lrs takes comma-separated numbers, not {a.lrs!r}")
        try:
            pjobs = pg.protocol_jobs(names, a.device, seeds, lrs)
        except InputError as exc:      # e.g. a seed given twice: one line
            ap.error(str(exc))
        if a.labels:
            pjobs = [j for j in pjobs if any(x in j["label"] for x in label_filters(a.labels))]
        if a.split < 1:
            ap.error(f"--split must be at least 1, not {a.split}")
        pjobs = pg.split_batched(pjobs, a.split)
        if a.dry_run:
            print(pg.dry_run(pjobs, a.gpus, order=a.order, per_gpu=a.per_gpu, out=a.out))
            return 0
        pg.run_protocol(pjobs, a.out, a.gpus, a.safety_cap, a.deadline, a.order, a.per_gpu)
        summarise(a.out, a.scale)
        return 0
    if a.probe:
        probe(a.device, a.out)
    jobs = jobs_for(names, a.scale, a.device, a.fla or a.anchor_only)
    anchor = lambda j: j.get("fla") or (j["experiment"] == "001-deltaproduct" and j["label"].startswith("S3 ")  # noqa
                                        and j["config"]["n_h"] <= 2)
    if a.anchor_only:
        jobs = [j for j in jobs if anchor(j)]
    elif a.skip_anchor:
        jobs = [j for j in jobs if not anchor(j)]
    if a.labels:
        jobs = [j for j in jobs if any(x in j["label"] for x in label_filters(a.labels))]
    apply_probe(jobs, a.out)
    if a.cap is not None:
        for j in jobs:
            j["config"]["max_seconds"] = a.cap
            j["config"]["auto_steps"] = True     # the cosine schedule sized to the cap, not cut mid-way
    if a.safety_cap is not None:
        for j in jobs:
            j["config"]["max_seconds"] = a.safety_cap
    print(f"{len(jobs)} runs, {a.workers} at a time, budget {a.budget:.0f} s", flush=True)
    done, skipped = run_grid(jobs, a.out, a.workers, a.budget, a.threads, a.gpus)
    summarise(a.out, a.scale, skipped)
    from benchmarks._record import record
    body = results_markdown(a.out)
    notes = (f"`python benchmarks/bench_learning.py --scale {a.scale} --workers {a.workers} --budget {a.budget:.0f}"
             f"{' --fla' if a.fla else ''}{' --only ' + a.only if a.only else ''}`: {len(done)} runs finished, "
             f"{len(skipped)} skipped for time; up to {a.workers} runs share the GPU at once (wall-clock caps, so "
             "steps depend on the neighbours; the steps used are recorded). Raw JSON: benchmarks/results/learning/.")
    record("learning", body, notes, path=os.path.join(a.out, "RESULTS_learning.md"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
