"""Training: AdamW, linear warm-up then cosine decay, gradient clipping, bf16 autocast on CUDA, checkpoints that
resume bit-identically, a progress bar, metrics as JSON lines.

The papers' recipe (000, App. E.1.1 / 001, App. on state tracking): AdamW, cosine annealing to a minimum learning
rate of 1e-6 after 10% warm-up, weight decay, gradient clipping at 1.0, batches generated fresh at every step.

Reproducibility: the model is initialised from ``torch.manual_seed(seed)``; batch ``s`` is drawn from
``batch_rng(seed, s)`` (:mod:`.tasks`), so it does not depend on the batches before it. A checkpoint
(``checkpoint.safetensors``: the model's and the optimizer's tensors; ``checkpoint.json``: the step, the config,
the optimizer's hyper-parameters, the torch RNG states, the elapsed time) taken at step s and resumed continues
with exactly the parameters, optimizer moments, learning rate and data an uninterrupted run has at step s, so the
two runs end bit-identical (on the same device and library versions). Files are written atomically, the tensors
before the JSON that names them (with their SHA-256), so a crash never leaves a checkpoint pointing at the wrong
tensors. No pickle: tensors through safetensors, everything else JSON.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import time
from dataclasses import dataclass, field

import numpy as np
import torch
from torch.nn import functional as F

from ..errors import InputError
from .evaluate import eigenvalue_summary, evaluate
from .models import SequenceModel, parse_eig_range
from .tasks import IGNORE, batch_rng, make_task

__all__ = ["TrainConfig", "train", "build", "load_checkpoint", "lr_at"]

CKPT_JSON = "checkpoint.json"
CKPT_TENSORS = "checkpoint.safetensors"
METRICS = "metrics.jsonl"


@dataclass
class TrainConfig:
    """Everything a run depends on (a JSON-able dataclass). ``train_len`` = inclusive range (A, B) of word
    lengths; ``test_len`` the evaluation lengths. ``max_seconds`` stops early (the result says so); with
    ``auto_steps`` the step count is cut, once after 25 timed steps, to what fits in ``max_seconds`` (so the
    cosine schedule completes; the result's config records the steps actually used)."""

    task: str = "parity"
    layer: str = "deltaproduct"
    n_h: int = 1
    eig_range: tuple = (-1.0, 1.0)
    layers: int = 1
    width: int = 64
    heads: int = 4
    head_dim: int | None = None
    mlp: bool = False
    short_conv: bool = True
    gate: bool = False
    block_size: int = 8
    backend: str = "auto"
    output_gate: bool = True
    train_len: tuple = (3, 40)
    test_len: tuple = (40, 128, 256)
    steps: int = 1000
    batch: int = 64
    lr: float = 1e-3
    weight_decay: float = 0.1
    warmup: float = 0.1
    min_lr: float = 1e-6
    clip: float = 1.0
    seed: int = 0
    device: str = "cpu"
    bf16: bool = True
    max_seconds: float | None = None
    auto_steps: bool = False
    eval_n: int = 256
    eval_batch: int = 256
    checkpoint_every: int = 0
    log_every: int = 50

    def __post_init__(self):
        self.eig_range = parse_eig_range(self.eig_range)
        self.train_len = tuple(int(x) for x in self.train_len)
        self.test_len = tuple(int(x) for x in self.test_len)
        if len(self.train_len) != 2 or not 1 <= self.train_len[0] <= self.train_len[1]:
            raise InputError(f"train_len must be a range A:B with 1 <= A <= B, got {self.train_len}")
        if not self.test_len or min(self.test_len) < 1:
            raise InputError(f"test lengths must be positive integers, got {self.test_len}")
        for nm in ("steps", "batch", "eval_n", "eval_batch"):
            v = getattr(self, nm)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InputError(f"{nm} must be a positive integer, got {v!r}")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise InputError(f"lr must be a positive number, got {self.lr!r}")
        if self.device not in ("cpu", "cuda") and not str(self.device).startswith("cuda:"):
            raise InputError(f"device must be cpu or cuda, got {self.device!r}")

    def to_json(self) -> dict:
        d = dataclasses.asdict(self)
        d["eig_range"], d["train_len"], d["test_len"] = list(self.eig_range), list(self.train_len), list(self.test_len)
        return d

    @classmethod
    def from_json(cls, d: dict) -> "TrainConfig":
        names = {f.name for f in dataclasses.fields(cls)}
        bad = sorted(set(d) - names)
        if bad:
            raise InputError(f"unknown training option(s) {bad}")
        return cls(**d)

    def model_kwargs(self, task) -> dict:
        return dict(vocab=task.n_in, n_out=task.n_out, layer=self.layer, n_h=self.n_h, eig_range=self.eig_range,
                    layers=self.layers, width=self.width, heads=self.heads, head_dim=self.head_dim, mlp=self.mlp,
                    short_conv=self.short_conv, gate=self.gate, block_size=self.block_size, backend=self.backend,
                    output_gate=self.output_gate)


def lr_at(cfg: TrainConfig, step: int) -> float:
    """Linear warm-up over ``warmup * steps`` steps, then cosine from ``lr`` to ``min_lr`` (000, App. E.1.1)."""
    w = int(cfg.warmup * cfg.steps)
    if step < w:
        return cfg.lr * (step + 1) / w
    p = (step - w) / max(1, cfg.steps - w)
    return cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1 + math.cos(math.pi * min(1.0, p)))


def build(cfg: TrainConfig, model_fn=None):
    """``(task, model, optimizer)`` for a config, the model initialised from ``torch.manual_seed(cfg.seed)``;
    ``model_fn(task) -> nn.Module`` replaces :class:`SequenceModel` (e.g. a peer library's layer)."""
    if cfg.device.startswith("cuda") and not torch.cuda.is_available():
        raise InputError(f"device {cfg.device!r} requested but CUDA is not available")
    task = make_task(cfg.task)
    torch.manual_seed(cfg.seed)
    model = (model_fn(task) if model_fn is not None else SequenceModel(**cfg.model_kwargs(task))).to(cfg.device)
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr, betas=(0.9, 0.999), eps=1e-8)
    return task, model, opt


# ------------------------------------------------------------------------------------------------ checkpoints
def _rng_state() -> dict:
    st = {"torch": torch.get_rng_state().numpy().tobytes().hex()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        st["cuda"] = [s.numpy().tobytes().hex() for s in torch.cuda.get_rng_state_all()]
    return st


def _set_rng_state(st: dict) -> None:
    torch.set_rng_state(torch.from_numpy(np.frombuffer(bytes.fromhex(st["torch"]), dtype=np.uint8).copy()))
    if "cuda" in st and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([torch.from_numpy(np.frombuffer(bytes.fromhex(s), dtype=np.uint8).copy())
                                      for s in st["cuda"]])


def save_checkpoint(out: str, cfg: TrainConfig, model, opt, step: int, elapsed: float, extra: dict) -> str:
    from safetensors.torch import save

    from ..fileio import atomic_write_bytes, atomic_write_text
    tensors = {f"model.{k}": v.detach().contiguous() for k, v in model.state_dict().items()}
    sd = opt.state_dict()
    for i, st in sd["state"].items():
        for k, v in st.items():
            tensors[f"opt.{i}.{k}"] = (v if torch.is_tensor(v) else torch.tensor(v)).detach().contiguous()
    blob = save({k: v.cpu() for k, v in tensors.items()})
    atomic_write_bytes(os.path.join(out, CKPT_TENSORS), blob)
    groups = [{k: (list(v) if isinstance(v, tuple) else v) for k, v in g.items()} for g in sd["param_groups"]]
    doc = {"format": "lrnnkit.train-checkpoint", "version": 1, "step": step, "config": cfg.to_json(),
           "model_config": model.config, "param_groups": groups, "rng": _rng_state(), "elapsed": elapsed,
           "tensors": CKPT_TENSORS, "sha256": hashlib.sha256(blob).hexdigest(),
           "torch": torch.__version__, **extra}
    atomic_write_text(os.path.join(out, CKPT_JSON), json.dumps(doc, indent=1) + "\n")
    return os.path.join(out, CKPT_JSON)


def load_checkpoint(path: str, device: str = "cpu"):
    """``(doc, model)``: a checkpoint's JSON and its model (``path`` = the run directory or checkpoint.json)."""
    from safetensors.torch import load
    if os.path.isdir(path):
        path = os.path.join(path, CKPT_JSON)
    try:
        with open(path) as fh:
            doc = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read checkpoint {path!r}: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != "lrnnkit.train-checkpoint":
        raise InputError(f"{path!r} is not an lrnnkit training checkpoint")
    tpath = os.path.join(os.path.dirname(path), doc["tensors"])
    try:
        with open(tpath, "rb") as fh:
            blob = fh.read()
    except OSError as exc:
        raise InputError(f"cannot read checkpoint tensors {tpath!r}: {exc}") from None
    if hashlib.sha256(blob).hexdigest() != doc["sha256"]:
        raise InputError(f"checkpoint tensors {tpath!r} do not match {path!r} (SHA-256 differs)")
    tensors = load(blob)
    mc = dict(doc["model_config"])
    model = SequenceModel(**mc).to(device)
    model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
    doc["_tensors"] = tensors
    return doc, model


def _restore_optimizer(opt, doc: dict, device) -> None:
    tensors = doc["_tensors"]
    state: dict = {}
    for k, v in tensors.items():
        if k.startswith("opt."):
            _, i, name = k.split(".", 2)
            state.setdefault(int(i), {})[name] = v.to(device) if name != "step" else v
    opt.load_state_dict({"state": state, "param_groups": doc["param_groups"]})


def _truncate_metrics(path: str, step: int) -> None:
    if not os.path.exists(path):
        return
    from ..fileio import atomic_write_text
    keep = []
    with open(path) as fh:
        for line in fh:
            try:
                if json.loads(line).get("step", 0) <= step:
                    keep.append(line)
            except json.JSONDecodeError:
                pass
    atomic_write_text(path, "".join(keep))


# ------------------------------------------------------------------------------------------------ training
def train(cfg: TrainConfig, out: str | None = None, *, resume: bool = True, progress: bool = False,
          stop_at: int | None = None, evaluate_at_end: bool = True, model_fn=None) -> dict:
    """Train (or resume from ``out``) and evaluate. ``stop_at`` ends after that many steps (as an interruption
    would: the tests use it to check resumption). Returns the result dict of ``lrnnkit train --json``."""
    task, model, opt = build(cfg, model_fn)
    device = torch.device(cfg.device)
    step, elapsed = 0, 0.0
    ckpt_path = None
    if out:
        os.makedirs(out, exist_ok=True)
        ckpt_path = os.path.join(out, CKPT_JSON)
        if resume and os.path.exists(ckpt_path):
            doc, m2 = load_checkpoint(ckpt_path, cfg.device)
            skip = ("max_seconds", "checkpoint_every", "log_every", "device") + (("steps",) if cfg.auto_steps else ())
            want = {k: v for k, v in cfg.to_json().items() if k not in skip}
            have = {k: v for k, v in doc["config"].items() if k in want}
            if have != want:
                diff = sorted(k for k in want if have.get(k) != want[k])
                raise InputError(f"checkpoint {ckpt_path!r} was made with other settings ({', '.join(diff)}); "
                                 "use another --out or remove it")
            model.load_state_dict(m2.state_dict())
            _restore_optimizer(opt, doc, device)
            _set_rng_state(doc["rng"])
            step, elapsed = int(doc["step"]), float(doc["elapsed"])
            _truncate_metrics(os.path.join(out, METRICS), step)
    use_amp = cfg.bf16 and device.type == "cuda"
    bar = None
    if progress:
        try:
            from tqdm import tqdm
            bar = tqdm(total=cfg.steps, initial=step, desc=f"{cfg.task} {cfg.layer}", leave=False)
        except ImportError:
            bar = None
    metrics_fh = open(os.path.join(out, METRICS), "a") if out else None
    window = []
    t0 = time.perf_counter() - elapsed
    end = cfg.steps if stop_at is None else min(cfg.steps, stop_at)
    stopped_early = False
    t5 = None
    nonfinite = 0
    model.train()
    try:
        while step < end:
            if cfg.max_seconds is not None and time.perf_counter() - t0 > cfg.max_seconds:
                stopped_early = True
                break
            x, y = task.sample(cfg.batch, cfg.train_len, batch_rng(cfg.seed, step))
            x = torch.as_tensor(x, device=device)
            y = torch.as_tensor(y, device=device)
            lr = lr_at(cfg, step)
            for g in opt.param_groups:
                g["lr"] = lr
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=use_amp):
                logits = model(x)
            loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.reshape(-1),
                                   ignore_index=IGNORE)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip if cfg.clip and cfg.clip > 0
                                                   else float("inf"))
            if bool(torch.isfinite(gnorm)):
                opt.step()
            else:   # a non-finite gradient would poison every parameter: skip the update, count it
                nonfinite += 1
            step += 1
            if cfg.auto_steps and cfg.max_seconds is not None:
                if step == 5:
                    if device.type == "cuda":
                        torch.cuda.synchronize()
                    t5 = time.perf_counter()
                elif step == 25 and t5 is not None:
                    if device.type == "cuda":
                        torch.cuda.synchronize()
                    per = (time.perf_counter() - t5) / 20
                    left = 0.9 * cfg.max_seconds - (time.perf_counter() - t0)
                    cfg.steps = max(step + 1, min(cfg.steps, step + int(left / per)))
                    end = cfg.steps if stop_at is None else min(cfg.steps, stop_at)
                    if bar is not None:
                        bar.total = cfg.steps
            if step % max(1, cfg.log_every) == 0 or step == end:
                with torch.no_grad():
                    m = y != IGNORE
                    acc = float(((logits.argmax(-1) == y) & m).sum()) / max(1, int(m.sum()))
                rec = {"step": step, "loss": float(loss.detach()), "train_accuracy": acc, "lr": lr,
                       "seconds": round(time.perf_counter() - t0, 3)}
                window.append(acc)
                if metrics_fh:
                    metrics_fh.write(json.dumps(rec) + "\n")
                    metrics_fh.flush()
                if bar is not None:
                    bar.set_postfix(loss=f"{rec['loss']:.3f}", acc=f"{acc:.3f}")
            if bar is not None:
                bar.update(1)
            if out and cfg.checkpoint_every and step % cfg.checkpoint_every == 0:
                save_checkpoint(out, cfg, model, opt, step, time.perf_counter() - t0, {})
    finally:
        if bar is not None:
            bar.close()
        if metrics_fh:
            metrics_fh.close()
    seconds = time.perf_counter() - t0
    if out:
        save_checkpoint(out, cfg, model, opt, step, seconds, {})
    res = {"task": cfg.task, "config": cfg.to_json(), "steps": step, "seconds": round(seconds, 3),
           "stopped_early": stopped_early, "checkpoint": ckpt_path, "skipped_nonfinite_steps": nonfinite,
           "train_accuracy": float(np.mean(window[-3:])) if window else None,
           "chance": task.chance, "n_out": task.n_out,
           "parameters": sum(p.numel() for p in model.parameters())}
    if evaluate_at_end:
        ev = evaluate(model, task, cfg.test_len, n=cfg.eval_n, seed=0, batch=cfg.eval_batch,
                      device=device, autocast=use_amp)
        res["test_accuracy"] = ev["accuracy"]
        res["final_accuracy"] = ev["final_accuracy"]
        res["scaled_accuracy"] = ev["scaled_accuracy"]
        res["eigenvalues"] = (eigenvalue_summary(model, task, length=min(64, max(cfg.train_len)), seed=0,
                                                 device=device) if hasattr(model, "transition_matrices") else None)
    res["_model"] = model
    return res
