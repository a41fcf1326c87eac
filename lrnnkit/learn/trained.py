"""A trained model as a model: one call loads a training checkpoint (or a saved pretrained directory) as something
that runs on words, is checked up to a horizon, collapses (or not) in a lower precision, and describes itself.

:func:`load_trained` wraps :func:`lrnnkit.learn.train.load_checkpoint` (every field of the checkpoint checked
there) and returns a :class:`TrainedModel`: the torch module, its task, and the task's letters and output labels.
The command line's ``run``, ``verify``, ``precision collapse`` and ``info`` accept the same paths as a compiled
model file (:func:`is_trained_path` tells the two apart).

What a trained model can and cannot be told. A compiled model is certified for every input length by an exact
search over its reachable states (:func:`lrnnkit.certify`; 000, Theorem 3). A trained network's state is a real
vector that need not take finitely many values, so no such search exists: :meth:`TrainedModel.verify` reports the
*horizon* instead (:func:`lrnnkit.learn.horizon.horizon`): the exhaustive search's bound (right on every word up to
that length, each one run), the shortest wrong word known, and the accuracy against length up to the asked
horizon. :meth:`TrainedModel.collapse` runs a long random word in a torch dtype and reports the first step at which
the output is wrong, and the first at which it leaves the same network's float64 run (000, Section 5: finite
precision makes a trained LRNN's state drift).

Hugging Face conventions where they fit: :meth:`TrainedModel.save_pretrained` writes ``config.json`` (a
:class:`TrainedConfig`) and ``model.safetensors``; :meth:`TrainedModel.from_pretrained` reads that directory, or a
checkpoint.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np
import torch

from .. import limits
from ..errors import MESSAGE_CHARS, InputError
from ..fileio import atomic_write_bytes, atomic_write_text, make_dir, open_regular, read_regular
from .locate import CKPT_JSON, CONFIG_FILE, PRETRAINED_FORMAT as FORMAT, is_trained_path
from .compare import torch_outputs
from .horizon import horizon, horizon_target
from .models import SequenceModel
from .tasks import make_task

__all__ = ["TrainedConfig", "TrainedModel", "load_trained", "is_trained_path", "TORCH_FORMATS"]

WEIGHTS_FILE = "model.safetensors"
#: number formats a trained model runs in (torch dtypes), each under the names every verb accepts
TORCH_FORMATS = {"fp64": torch.float64, "float64": torch.float64, "fp32": torch.float32, "float32": torch.float32,
                 "bf16": torch.bfloat16, "bfloat16": torch.bfloat16, "fp16": torch.float16, "float16": torch.float16}


@dataclass(frozen=True)
class TrainedConfig:
    """What rebuilds a trained model: its task (any ``lrnnkit train`` task name), the :class:`SequenceModel`
    keyword arguments, the training step it was saved at (and the configured total), and the task's letters and
    output labels as the model sees them (token ``letters[i]`` for letter ``alphabet[i]``; class ``j`` =
    ``labels[j]``). Its JSON form's schema is published as ``lrnnkit/data/trained-model.schema.json``;
    :meth:`from_json` checks that and the bounds a schema cannot state, one line per failure."""
    task: str
    model: dict
    step: int
    steps: int
    alphabet: tuple
    letters: tuple
    labels: tuple

    def to_json(self) -> dict:
        return {"format": FORMAT, "version": 1, "task": self.task, "model": dict(self.model), "step": self.step,
                "steps": self.steps, "alphabet": list(self.alphabet), "letters": list(self.letters),
                "labels": list(self.labels)}

    @classmethod
    def from_json(cls, d, where: str = "config.json") -> "TrainedConfig":
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise InputError(f"{where}: not an lrnnkit trained-model config (format {FORMAT!r})")
        keys = {"format", "version", "task", "model", "step", "steps", "alphabet", "letters", "labels"}
        if set(d) != keys:
            raise InputError(f"{where}: keys must be {sorted(keys)}, got {sorted(d)}"[:240])
        if d["version"] != 1 or not isinstance(d["task"], str) or not isinstance(d["model"], dict):
            raise InputError(f"{where}: version must be 1, task a string, model a table")
        for k in ("step", "steps"):
            limits.check_int(f"{where} {k}", d[k], 0, 10 ** 12)
        for k in ("alphabet", "labels"):
            if not isinstance(d[k], list) or not all(isinstance(x, str) for x in d[k]):
                raise InputError(f"{where}: {k} must be a list of strings")
        if not isinstance(d["letters"], list) or len(d["letters"]) != len(d["alphabet"]):
            raise InputError(f"{where}: letters must be a list as long as the alphabet")
        for x in d["letters"]:
            limits.check_int(f"{where} letters", x, 0, limits.MAX_LETTERS + 2, "MAX_LETTERS")
        return cls(d["task"], dict(d["model"]), d["step"], d["steps"], tuple(d["alphabet"]), tuple(d["letters"]),
                   tuple(d["labels"]))


class TrainedModel:
    """A trained :class:`SequenceModel` with its task: ``run`` words, ``verify`` up to a horizon, ``collapse`` in a
    torch dtype, ``describe`` itself, ``save_pretrained``. Build it with :func:`load_trained` /
    :meth:`from_pretrained`."""

    def __init__(self, module: SequenceModel, config: TrainedConfig, source: str = "", device: str = "cpu",
                 info: dict | None = None):
        self.module = module.eval()
        self.config = config
        self.source = source
        self.device = device
        self.info = dict(info or {})
        self.alphabet = list(config.alphabet)
        self.output_labels = list(config.labels)
        self._letters = np.asarray(config.letters, dtype=np.int64)
        self._index = {s: i for i, s in enumerate(self.alphabet)}

    # ---------------------------------------------------------------- loading and saving
    @classmethod
    def from_pretrained(cls, path: str, device: str = "cpu") -> "TrainedModel":
        """A directory written by :meth:`save_pretrained`, or a checkpoint (:func:`load_trained`)."""
        cfg_path = os.path.join(path, CONFIG_FILE)
        if not (os.path.isdir(path) and os.path.isfile(cfg_path) and not os.path.isfile(os.path.join(path, CKPT_JSON))):
            return load_trained(path, device)
        raw = read_regular(cfg_path, limits.CHECKPOINT_MAX_JSON_BYTES, "trained-model config",
                           "CHECKPOINT_MAX_JSON_BYTES")
        try:
            cfg = TrainedConfig.from_json(json.loads(raw), cfg_path)
        except (ValueError, RecursionError) as exc:
            raise InputError(f"{cfg_path}: not JSON ({exc})"[:240]) from None
        try:
            module = SequenceModel(**cfg.model)
        except (TypeError, ValueError) as exc:
            raise InputError(f"{cfg_path}: bad model config: {exc}"[:240]) from None
        from safetensors import safe_open
        wpath = os.path.join(path, WEIGHTS_FILE)
        with open_regular(wpath, "trained-model weights") as fh:       # a regular file, within the bound
            if os.fstat(fh.fileno()).st_size > limits.CHECKPOINT_MAX_BYTES:
                raise InputError(f"trained-model weights {wpath!r} are larger than {limits.CHECKPOINT_MAX_BYTES} "
                                 f"bytes (lrnnkit.limits.CHECKPOINT_MAX_BYTES)")
        want = module.state_dict()
        try:
            with safe_open(wpath, framework="pt", device="cpu") as fh:
                names = set(fh.keys())
                if names != set(want):
                    raise InputError(f"{wpath}: tensor names differ from the model's (missing "
                                     f"{sorted(set(want) - names)[:3]}, unknown {sorted(names - set(want))[:3]})"[:240])
                state = {k: fh.get_tensor(k) for k in names}
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001  (safetensors' own errors: a damaged file is bad input)
            raise InputError(f"{wpath}: not a readable safetensors file ({type(exc).__name__}: {exc})"[:240]) \
                from None
        bad = [k for k in want if tuple(state[k].shape) != tuple(want[k].shape)]
        if bad:
            raise InputError(f"{wpath}: tensor {bad[0]!r} has shape {tuple(state[bad[0]].shape)}, the model's is "
                             f"{tuple(want[bad[0]].shape)}")
        module.load_state_dict(state)
        return cls(module.to(device), cfg, path, device)

    def save_pretrained(self, path: str) -> str:
        """Write ``path/config.json`` and ``path/model.safetensors`` (each atomically); returns ``path``."""
        from safetensors.torch import save
        make_dir(path)
        state = {k: v.detach().cpu().contiguous() for k, v in self.module.state_dict().items()}
        atomic_write_bytes(os.path.join(path, WEIGHTS_FILE), save(state, metadata={"format": FORMAT}))
        atomic_write_text(os.path.join(path, CONFIG_FILE), json.dumps(self.config.to_json(), indent=1) + "\n")
        return path

    # ---------------------------------------------------------------- running
    def encode(self, text: str) -> list:
        """Letter indices of ``text``: space-separated symbols, or over one-character symbols a plain string."""
        parts = text.split()
        if len(parts) == 1 and parts[0] not in self._index and all(len(s) == 1 for s in self.alphabet):
            parts = list(parts[0])
        bad = [s for s in parts if s not in self._index]
        if bad:
            raise InputError(f"symbol {bad[0]!r} is not in the model's alphabet {self.alphabet[:12]}"[:MESSAGE_CHARS])
        return [self._index[s] for s in parts]

    def outputs(self, words, dtype: str = "float32") -> np.ndarray:
        """The output label after every prefix of each word (``words``: (B, T) letter indices), the network run in
        ``dtype`` (a name of :data:`TORCH_FORMATS`)."""
        dt = _dtype(dtype)
        words = np.asarray(words, dtype=np.int64)
        if words.size == 0:
            return np.empty(words.shape, dtype=object)
        module = self.module if dt == torch.float32 else _cast(self.module, dt)
        return torch_outputs(module, self.output_labels, self.device)(self._letters[words])

    def run(self, word, dtype: str = "float32") -> list:
        """The labels after every prefix of ``word`` (letter indices or a text for :meth:`encode`)."""
        w = self.encode(word) if isinstance(word, str) else list(word)
        return self.outputs(np.array([w], dtype=np.int64), dtype)[0].tolist() if w else []

    def __call__(self, word, dtype: str = "float32") -> list:
        return self.run(word, dtype)

    def random_word(self, n: int, seed: int = 0) -> list:
        return np.random.default_rng(seed).integers(0, len(self.alphabet), size=n).tolist()

    # ---------------------------------------------------------------- checks
    def verify(self, max_len: int | None = None, **kw) -> dict:
        """The horizon (:func:`lrnnkit.learn.horizon.horizon`) on the model's own task up to ``max_len`` (default:
        its longest test length), plus ``certified`` (always False: no certificate for every length exists for a
        trained network) and ``wrong`` (whether any wrong word is known)."""
        h = horizon(self.module, self.config.task, max_len=int(max_len or self.info.get("max_test_len") or 256),
                    device=self.device, **kw)
        return {**h, "certified": False, "wrong": h["wrong_at_length"] is not None}

    def collapse(self, fmt: str, length: int = 4096, seed: int = 0) -> dict:
        """One random word of ``length`` letters (seeded) run in ``fmt`` (a torch dtype name) and in float64:
        ``first_wrong_step`` (1-based; the output differs from the task automaton's), ``first_drift_step`` (it
        differs from the float64 run of the same network), and the two accuracies."""
        dt = _dtype(fmt)
        fsa, _, _ = horizon_target(self.config.task)
        word = np.array([self.random_word(length, seed)], dtype=np.int64)
        target = np.array(fsa.outputs, dtype=object)[fsa.trace_batch(word)][0]
        low = self.outputs(word, fmt)[0]
        ref = self.outputs(word, "float64")[0]

        def first(mask):
            i = np.nonzero(mask)[0]
            return int(i[0]) + 1 if i.size else None
        return {"format": _canonical(dt), "steps": length, "seed": seed,
                "first_wrong_step": first(low != target), "first_drift_step": first(low != ref),
                "first_wrong_step_float64": first(ref != target),
                "accuracy": round(float(np.mean(low == target)), 4),
                "accuracy_float64": round(float(np.mean(ref == target)), 4)}

    def describe(self) -> dict:
        """The model's description: task, layer kind and sizes, parameters, training step, letters and labels."""
        m = self.config.model
        return {"kind": "trained", "path": self.source, "task": self.config.task, "layer": m.get("layer"),
                "eig_range": m.get("eig_range"), "layers": m.get("layers"), "width": m.get("width"),
                "heads": m.get("heads"), "n_h": m.get("n_h"),
                "parameters": int(sum(p.numel() for p in self.module.parameters())),
                "step": self.config.step, "steps": self.config.steps, "alphabet": self.alphabet,
                "output_labels": self.output_labels, **{k: v for k, v in self.info.items() if k != "max_test_len"}}


def _dtype(name: str):
    dt = TORCH_FORMATS.get(str(name).lower())
    if dt is None:
        raise InputError(f"a trained model runs in torch's dtypes: {', '.join(TORCH_FORMATS)} (got {name!r}); the "
                         f"other formats are for compiled models")
    return dt


def _canonical(dt) -> str:
    return {torch.float64: "fp64", torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}[dt]


def _cast(module, dt):
    import copy
    return copy.deepcopy(module).to(dt)


def load_trained(path: str, device: str = "cpu") -> TrainedModel:
    """A training checkpoint (a ``lrnnkit train --out`` directory -- its newest good checkpoint -- or its
    ``checkpoint.json``) or a :meth:`TrainedModel.save_pretrained` directory, as a :class:`TrainedModel`."""
    if os.path.isdir(path) and os.path.isfile(os.path.join(path, CONFIG_FILE)) \
            and not os.path.isfile(os.path.join(path, CKPT_JSON)):
        return TrainedModel.from_pretrained(path, device)
    from .train import load_checkpoint
    doc, net = load_checkpoint(path, device)
    doc.pop("_tensors", None)
    cfg = doc["config"]
    task = make_task(cfg["task"])
    try:
        fsa, letters, labels = horizon_target(task)
        alphabet = list(fsa.alphabet)
    except InputError:          # a task that is not one token per letter of an automaton: tokens are its letters
        alphabet = [str(i) for i in range(task.n_in)]
        letters, labels = np.arange(task.n_in), [str(x) for x in getattr(task, "labels", range(task.n_out))]
    tc = TrainedConfig(cfg["task"], dict(doc["model_config"]), int(doc["step"]), int(cfg["steps"]),
                       tuple(alphabet), tuple(int(x) for x in letters), tuple(str(x) for x in labels))
    info = {"elapsed_s": round(float(doc.get("elapsed", 0.0)), 1), "max_test_len": max(cfg["test_len"]),
            "train_len": list(cfg["train_len"]), "code": doc.get("code")}
    res = os.path.join(path if os.path.isdir(path) else os.path.dirname(path), "result.json")
    if os.path.isfile(res):
        try:
            r = json.loads(limits.read_bounded(res, limits.CHECKPOINT_MAX_JSON_BYTES, "result.json",
                                               "CHECKPOINT_MAX_JSON_BYTES"))
            if isinstance(r, dict) and isinstance(r.get("test_accuracy"), dict):
                info["test_accuracy"] = r["test_accuracy"]
        except (ValueError, RecursionError, InputError):
            pass            # a damaged result.json only loses the recorded accuracies
    return TrainedModel(net, tc, path, device, info)
