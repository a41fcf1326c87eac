"""Training checkpoints: written as one unit, read with every field checked, one writer per run directory.

A run directory (``lrnnkit train --out DIR``) holds

* ``checkpoint-<step>-<sha>.safetensors``: the model's and the optimizer's tensors (safetensors, no pickle);
* ``checkpoint.json``: the step, the training config, the model config, the optimizer's hyper-parameters, the torch
  RNG states, the elapsed time, the run's progress counters, the **name and SHA-256** of its tensor file, and the
  code that computed the steps (torch's version and lrnnkit's :func:`code_id`);
* ``checkpoint.json`` also records ``inputs``: the absolute path and SHA-256 of every file the run's task read
  (:func:`lrnnkit.fileio.recording_reads`; empty for presets);
* ``checkpoint.prev.json``: the checkpoint before it (its tensor file is kept as well);
* ``metrics.jsonl`` (one JSON line per logged step) and ``.lock``.

**One unit.** :func:`save` writes (1) the tensors to a new file named by step and hash, (2) the previous good JSON
to ``checkpoint.prev.json``, (3) ``checkpoint.json`` naming the new tensors -- the commit: an atomic rename -- and
(4) removes tensor files neither JSON names; SIGINT, SIGTERM and SIGHUP arriving meanwhile are held and delivered
after step 4 (:func:`lrnnkit.signals.deferred`: a second Ctrl-C no longer cuts a save short). Each write is
atomic (temporary file + rename), so a process killed at any instant leaves ``checkpoint.json`` either the old or
the new document, each naming a complete tensor file that is still there. :func:`find` reads ``checkpoint.json``
and, when it does not pass the checks below (a damaged or edited file), falls back to ``checkpoint.prev.json``.

**Checks on reading** (:func:`read`; each failure is one :class:`~lrnnkit.errors.InputError` line): both files
are regular files read with a bound (``lrnnkit.limits.CHECKPOINT_MAX_JSON_BYTES`` / ``CHECKPOINT_MAX_BYTES``; a
FIFO or ``/dev/zero`` is refused before reading), the JSON has exactly the known keys, ``step`` is an integer in
``0 .. config.steps``, the config passes :class:`~lrnnkit.learn.train.TrainConfig`'s checks, the RNG states are hex
of the right length, ``param_groups`` is a list of tables of numbers, ``tensors`` is a plain file name in the
checkpoint's own directory (no path, no link), ``torch`` (optional) is a short string and ``code`` (optional) a
table of short strings and booleans, and the tensor file's SHA-256 is the recorded one. Tensor names and
shapes are checked against the model and optimizer they are loaded into (:func:`restore`).

**Same inputs.** A run is keyed by what it read, not only by its settings: :func:`run_lock` is told the inputs the
run's task read, every checkpoint written under the lock records them, and :func:`inputs_mismatch` (called when a
run resumes) names the first file whose content differs between the checkpoint and this run -- a task file edited
between two runs into the same ``--out`` is refused in one line, not trained on from the middle of another task's
run. Checkpoints written before ``inputs`` was recorded resume without the check.

**Same code, same bits.** A resumed run repeats an uninterrupted one bit for bit only where the same code computes
both parts (and the same torch and device, with ``deterministic``). :func:`code_mismatch` compares the checkpoint's
``code`` and ``torch`` with this process's; resuming warns on a difference (checkpoints written before ``code`` was
recorded resume without a word).

**One writer.** :func:`run_lock` holds an exclusive ``flock`` on ``DIR/.lock`` while a run writes there; a second
process is refused at once (the kernel drops the lock when its holder dies, even by ``kill -9``).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import subprocess

import numpy as np
import torch

from .._version import __version__
from ..errors import MESSAGE_CHARS, InputError, SizeLimitError
from .. import limits
from ..signals import deferred
from .tasks import make_task
from ..fileio import (atomic_write_bytes, atomic_write_chunks, atomic_write_text, changed_reads, exclusive_lock,
                      make_dir, open_append, open_regular, read_regular)

__all__ = ["CKPT_JSON", "PREV_JSON", "METRICS", "run_lock", "make_run_dir", "save", "read", "find", "restore",
           "state_bytes", "rng_state", "set_rng_state", "truncate_metrics", "open_metrics", "code_id",
           "code_mismatch", "inputs_mismatch", "task_of"]

CKPT_JSON = "checkpoint.json"
PREV_JSON = "checkpoint.prev.json"
METRICS = "metrics.jsonl"
LOCK = ".lock"
FORMAT = "lrnnkit.train-checkpoint"
VERSION = 2
_TENSORS_RE = re.compile(r"^checkpoint(-\d{9}-[0-9a-f]{12})?\.safetensors$")
_KEYS = {"format", "version", "step", "config", "model_config", "param_groups", "rng", "elapsed", "tensors",
         "sha256", "torch", "progress", "code", "inputs"}
_REQUIRED = _KEYS - {"torch", "progress", "code", "inputs"}
_MAX_INPUTS = 64            # files one task reads (lrnnkit's read one)
_MAX_PATH = 4096
_CODE_KEY_RE = re.compile(r"[a-z_]{1,32}")
_SHORT = 80      # the longest string of a checkpoint's ``torch`` and ``code`` fields
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_code: dict | None = None
_run_inputs: dict = {}     # realpath of a locked run directory -> the inputs its run read (run_lock)


# ------------------------------------------------------------------------------------------------ code identity
def _source_hash() -> str:
    """The first 16 hex digits of the SHA-256 of the package's files (paths and contents, in sorted order; compiled
    caches left out): the code as it runs, also in a copied tree without git."""
    h = hashlib.sha256()
    for d, dirs, files in os.walk(_PACKAGE):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in sorted(files):
            p = os.path.join(d, f)
            if f.endswith((".pyc", ".pyo")) or not os.path.isfile(p):
                continue
            h.update(os.path.relpath(p, _PACKAGE).encode("utf-8", "surrogateescape") + b"\0")
            with open(p, "rb") as fh:
                h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()[:16]


def _git(root: str, *args: str) -> str:
    r = subprocess.run(["git", "-C", root, *args], stdin=subprocess.DEVNULL, capture_output=True, timeout=5,
                       check=True, env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    return r.stdout.decode("utf-8", "replace")


def code_id() -> dict:
    """The code that computes this process's training steps: ``{"lrnnkit": version, "source": hash of the package's
    files, "commit": HEAD, "dirty": tracked files under lrnnkit/ changed since HEAD}``, the last two only when lrnnkit
    runs from a git checkout (git missing, slow or failing leaves them out). Computed once per process."""
    global _code
    if _code is None:
        code = {"lrnnkit": str(__version__)[:_SHORT]}
        try:
            code["source"] = _source_hash()
        except OSError:
            pass
        root = os.path.dirname(_PACKAGE)
        if os.path.exists(os.path.join(root, ".git")):
            try:
                head = _git(root, "rev-parse", "HEAD").strip()
                dirty = bool(_git(root, "status", "--porcelain", "--untracked-files=no", "--",
                                  os.path.basename(_PACKAGE)).strip())
                if re.fullmatch(r"[0-9a-f]{40,64}", head):
                    code.update(commit=head, dirty=dirty)
            except (OSError, subprocess.SubprocessError, ValueError):
                pass
        _code = code
    return dict(_code)


def _describe(code: dict, torch_version) -> str:
    parts = [f"lrnnkit {code.get('lrnnkit', '?')}"]
    if "source" in code:
        parts.append(f"source {code['source']}")
    if "commit" in code:
        parts.append(f"commit {str(code['commit'])[:12]}" + (" with uncommitted changes" if code.get("dirty") else ""))
    return ", ".join(parts) + f" (torch {torch_version or '?'})"


def code_mismatch(doc: dict) -> tuple | None:
    """``(theirs, ours)``, two descriptions, when the checkpoint ``doc`` (read by :func:`read`) records other code
    than this process's :func:`code_id` or another torch; ``None`` when they agree or the checkpoint records no
    ``code``. Where both record a source hash it decides (a commit that changed no package file changes no bit);
    else the commit and its uncommitted changes do; lrnnkit's and torch's versions always count."""
    theirs = doc.get("code")
    if theirs is None:
        return None
    ours = code_id()
    if "source" in theirs and "source" in ours:
        keys = ("lrnnkit", "source")
    else:
        keys = ("lrnnkit", "commit", "dirty")
    if all(theirs.get(k) == ours.get(k) for k in keys) and doc.get("torch", torch.__version__) == torch.__version__:
        return None
    return _describe(theirs, doc.get("torch")), _describe(ours, torch.__version__)


def task_of(doc: dict, where: str):
    """The task the checkpoint ``doc`` was trained on, rebuilt from its config's name
    (:func:`lrnnkit.learn.tasks.make_task`), refused (InputError, one line) when its files now hold other contents
    than the run read (``inputs``), or when its token or output count is not the model's (a task file that gained a
    letter would feed the padding token to the model as that letter)."""
    name = doc["config"]["task"]
    task = make_task(name)
    changed = changed_reads(doc["inputs"], task.inputs) if "inputs" in doc else None
    if changed is not None:
        raise InputError(f"{where} was trained on other input: {changed}")
    mc = doc.get("model_config") or {}
    if mc and (mc.get("vocab"), mc.get("n_out")) != (task.n_in, task.n_out):
        raise InputError(f"{where}: the model reads {mc.get('vocab')} tokens and gives {mc.get('n_out')} outputs, "
                         f"but its task {name!r} now has {task.n_in} tokens (letters and padding) and {task.n_out} "
                         "outputs: the task changed since training"[:300])
    return task


# ------------------------------------------------------------------------------------------------ files
def make_run_dir(out: str) -> str:
    """Create the output directory ``out`` (and its parents) if needed; InputError if it is something else."""
    return make_dir(out, "--out")


@contextlib.contextmanager
def run_lock(directory: str, inputs: dict | None = None):
    """``with run_lock(directory, inputs):`` -- one writer per run directory: :func:`lrnnkit.fileio.exclusive_lock`
    on ``directory/.lock`` (a second holder gets an InputError naming the directory and the holder's pid). While
    it is held, ``inputs`` (``{absolute path: sha256}``, the files the run's task read) is the run's: :func:`save`
    records it in every checkpoint and :func:`inputs_mismatch` compares a checkpoint's record with it."""
    key = os.path.realpath(directory)
    with exclusive_lock(os.path.join(directory, LOCK), "run directory"):
        _run_inputs[key] = dict(inputs or {})
        try:
            yield
        finally:
            _run_inputs.pop(key, None)


def inputs_mismatch(doc: dict, directory: str) -> str | None:
    """``None`` when the checkpoint ``doc`` (read by :func:`read`) was written by a run that read the same files,
    with the same contents, as the run now holding ``directory``'s lock (or when either records none: a
    checkpoint older than the record, a run outside :func:`run_lock`); else one phrase naming the first
    difference (:func:`lrnnkit.fileio.changed_reads`)."""
    now = _run_inputs.get(os.path.realpath(directory))
    then = doc.get("inputs")
    if now is None or then is None:
        return None
    return changed_reads(then, now)


def open_metrics(path: str):
    """``metrics.jsonl`` opened for appending text, never through a link or into a FIFO
    (:func:`lrnnkit.fileio.open_append`)."""
    return os.fdopen(open_append(path), "a", encoding="utf-8")


def truncate_metrics(path: str, step: int) -> None:
    """Keep the complete records of ``metrics.jsonl`` with ``step <= step`` (a resumed run writes the later ones
    again); lines cut short by a kill are dropped, and so are lines longer than ``_METRICS_LINE`` bytes (lrnnkit
    writes ~120). Streamed line by line into an atomic rewrite: memory stays one line, whatever the file's size."""
    if not os.path.lexists(path):
        return
    with open_regular(path, "metrics file", follow=False) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limits.CHECKPOINT_MAX_BYTES:
            raise SizeLimitError(f"metrics file {path!r} has {size} bytes, more than {limits.CHECKPOINT_MAX_BYTES} "
                                 "(lrnnkit.limits.CHECKPOINT_MAX_BYTES)")
        atomic_write_chunks(path, _kept_metrics(fh, step))


_METRICS_LINE = 1 << 16


def read_evaluations(path: str) -> list:
    """The evaluation records (``{"step", "evaluation": {...}}``, :func:`lrnnkit.learn.train.training_evaluation`)
    of a run's ``metrics.jsonl``, in file order; [] without the file. Read after :func:`truncate_metrics`, they are
    the ones a resumed run made before its checkpoint."""
    if not os.path.lexists(path):
        return []
    with open_regular(path, "metrics file", follow=False) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limits.CHECKPOINT_MAX_BYTES:
            raise SizeLimitError(f"metrics file {path!r} has {size} bytes, more than {limits.CHECKPOINT_MAX_BYTES} "
                                 "(lrnnkit.limits.CHECKPOINT_MAX_BYTES)")
        recs = [json.loads(line) for line in _kept_metrics(fh, limits.TRAIN_MAX_STEPS)]
    return [r for r in recs if isinstance(r.get("evaluation"), dict)]


def _kept_metrics(fh, step: int):
    while True:
        line = fh.readline(_METRICS_LINE + 1)
        if not line:
            return
        if not line.endswith(b"\n"):        # a torn last write, or an over-long line: skip to its end
            while line and not line.endswith(b"\n"):
                line = fh.readline(_METRICS_LINE + 1)
            continue
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            continue
        s = rec.get("step") if isinstance(rec, dict) else None
        if isinstance(s, int) and not isinstance(s, bool) and 0 < s <= step:
            yield line


# ------------------------------------------------------------------------------------------------ RNG
def rng_state() -> dict:
    st = {"torch": torch.get_rng_state().numpy().tobytes().hex()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        st["cuda"] = [s.numpy().tobytes().hex() for s in torch.cuda.get_rng_state_all()]
    return st


def _hex_state(h, n: int | None, where: str) -> torch.Tensor:
    if not isinstance(h, str) or len(h) > 1 << 16:
        raise InputError(f"{where}: not a hex string")
    try:
        b = bytes.fromhex(h)
    except ValueError:
        raise InputError(f"{where}: not a hex string") from None
    if n is not None and len(b) != n:
        raise InputError(f"{where}: {len(b)} bytes, expected {n}")
    return torch.from_numpy(np.frombuffer(b, dtype=np.uint8).copy())


def _check_rng(st, where: str) -> None:
    if not isinstance(st, dict) or "torch" not in st or set(st) - {"torch", "cuda"}:
        raise InputError(f"{where}: 'rng' must be a table with 'torch' (and optionally 'cuda') states")
    _hex_state(st["torch"], torch.get_rng_state().numel(), f"{where}: rng.torch")
    if "cuda" in st:
        if not isinstance(st["cuda"], list) or len(st["cuda"]) > 1024:
            raise InputError(f"{where}: rng.cuda must be a list of hex states")
        for i, h in enumerate(st["cuda"]):
            _hex_state(h, None, f"{where}: rng.cuda[{i}]")


def set_rng_state(st: dict) -> None:
    torch.set_rng_state(_hex_state(st["torch"], None, "rng.torch"))
    if "cuda" in st and torch.cuda.is_available():
        states = [_hex_state(s, None, "rng.cuda") for s in st["cuda"]]
        try:
            torch.cuda.set_rng_state_all(states[:torch.cuda.device_count()])
        except RuntimeError as exc:
            raise InputError(f"checkpoint: cannot restore the CUDA RNG state: {exc}") from None


# ------------------------------------------------------------------------------------------------ writing
def _tensors_of(model, opt) -> dict:
    tensors = {f"model.{k}": v.detach().contiguous() for k, v in model.state_dict().items()}
    for i, st in opt.state_dict()["state"].items():
        for k, v in st.items():
            tensors[f"opt.{i}.{k}"] = (v if torch.is_tensor(v) else torch.tensor(v)).detach().contiguous()
    return {k: v.cpu() for k, v in tensors.items()}


def save(out: str, *, step: int, config: dict, model, opt, elapsed: float, progress: dict,
         prev_text: str | None) -> str:
    """Write the checkpoint of ``step`` into ``out`` as one unit (module docstring); ``prev_text`` is the JSON of
    the last good checkpoint of this run (kept as ``checkpoint.prev.json``; ``None`` removes a stale one).
    Returns the new JSON text."""
    with deferred():      # a signal during the writes is delivered after the commit, never half-way
        return _save(out, step=step, config=config, model=model, opt=opt, elapsed=elapsed, progress=progress,
                     prev_text=prev_text)


def _save(out: str, *, step: int, config: dict, model, opt, elapsed: float, progress: dict,
          prev_text: str | None) -> str:
    from safetensors.torch import save as st_save

    blob = st_save(_tensors_of(model, opt))
    sha = hashlib.sha256(blob).hexdigest()
    name = f"checkpoint-{step:09d}-{sha[:12]}.safetensors"
    atomic_write_bytes(os.path.join(out, name), blob)
    keep = {name}
    if prev_text is not None:
        atomic_write_text(os.path.join(out, PREV_JSON), prev_text)
        keep.add(json.loads(prev_text)["tensors"])
    elif os.path.lexists(os.path.join(out, PREV_JSON)):
        os.unlink(os.path.join(out, PREV_JSON))
    groups = [{k: (list(v) if isinstance(v, tuple) else float(v) if torch.is_tensor(v) else v) for k, v in g.items()}
              for g in opt.state_dict()["param_groups"]]     # a tensor learning rate (the device loop) as its value
    doc = {"format": FORMAT, "version": VERSION, "step": step, "config": config,
           "model_config": getattr(model, "config", None), "param_groups": groups, "rng": rng_state(),
           "elapsed": elapsed, "progress": progress, "tensors": name, "sha256": sha, "torch": torch.__version__,
           "code": code_id()}
    inputs = _run_inputs.get(os.path.realpath(out))
    if inputs is not None:
        doc["inputs"] = inputs
    text = json.dumps(doc, indent=1, allow_nan=False) + "\n"
    atomic_write_text(os.path.join(out, CKPT_JSON), text)
    for f in os.listdir(out):
        if _TENSORS_RE.match(f) and f not in keep:
            try:
                os.unlink(os.path.join(out, f))
            except OSError:
                pass
    return text


# ------------------------------------------------------------------------------------------------ reading
def _num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _check_groups(groups, where: str) -> None:
    if not isinstance(groups, list) or not 1 <= len(groups) <= 64:
        raise InputError(f"{where}: 'param_groups' must be a non-empty list of tables")
    for i, g in enumerate(groups):
        w = f"{where}: param_groups[{i}]"
        if not isinstance(g, dict) or not isinstance(g.get("params"), list):
            raise InputError(f"{w} must be a table with a 'params' list")
        if not all(isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in g["params"]):
            raise InputError(f"{w}: 'params' must list parameter indices")
        for k in ("lr", "eps", "weight_decay"):
            if not _num(g.get(k)) or g[k] < 0:
                raise InputError(f"{w}: {k!r} must be a finite number >= 0, got {g.get(k)!r}"[:MESSAGE_CHARS])
        b = g.get("betas")
        if not (isinstance(b, list) and len(b) == 2 and all(_num(x) and 0 <= x < 1 for x in b)):
            raise InputError(f"{w}: 'betas' must be two numbers in [0, 1), got {b!r}"[:MESSAGE_CHARS])
        for k, v in g.items():
            if k == "params" or v is None or isinstance(v, bool) or _num(v) or (
                    isinstance(v, list) and len(v) <= 8 and all(_num(x) for x in v)):
                continue
            raise InputError(f"{w}: {k!r} must be a number, a list of numbers, true, false or null, got {v!r}"[:MESSAGE_CHARS])


def _check_code(doc: dict, where: str) -> None:
    if "torch" in doc and not (isinstance(doc["torch"], str) and len(doc["torch"]) <= _SHORT):
        raise InputError(f"{where}: 'torch' must be a version string, got {doc['torch']!r}"[:MESSAGE_CHARS])
    code = doc.get("code", {})
    if not isinstance(code, dict) or len(code) > 8 or not all(
            isinstance(k, str) and _CODE_KEY_RE.fullmatch(k)
            and (isinstance(v, bool) or (isinstance(v, str) and len(v) <= _SHORT)) for k, v in code.items()):
        raise InputError(f"{where}: 'code' must be a table of at most 8 short strings and booleans, "
                         f"got {code!r}"[:MESSAGE_CHARS])


def _check_inputs(inputs, where: str) -> None:
    if not isinstance(inputs, dict) or len(inputs) > _MAX_INPUTS or not all(
            isinstance(k, str) and 0 < len(k) <= _MAX_PATH and os.path.isabs(k)
            and isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v) for k, v in inputs.items()):
        raise InputError(f"{where}: 'inputs' must be a table of at most {_MAX_INPUTS} absolute paths to SHA-256 "
                         f"hex digests, got {inputs!r}"[:MESSAGE_CHARS])


def read(path: str, parse_config, tensor_bytes: int | None = None) -> tuple:
    """``(doc, tensors, text)`` of the checkpoint JSON ``path``, every field checked (module docstring);
    ``parse_config(dict)`` checks the training config (:meth:`TrainConfig.from_json`: an object with ``steps``, or
    an InputError). ``tensor_bytes``: a tighter bound on the tensor file (resuming: what the model and its
    optimizer state can take)."""
    from safetensors.torch import load as st_load
    text_b = read_regular(path, limits.CHECKPOINT_MAX_JSON_BYTES, "checkpoint", "CHECKPOINT_MAX_JSON_BYTES")
    where = f"checkpoint {path!r}"
    try:
        text = text_b.decode("utf-8")
        doc = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InputError(f"{where} is not valid JSON: {str(exc).splitlines()[0][:120]}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(f"{path!r} is not an lrnnkit training checkpoint")
    if doc.get("version") not in (1, VERSION):
        raise InputError(f"{where}: unknown version {doc.get('version')!r} (this lrnnkit reads 1 and {VERSION})")
    missing, extra = sorted(_REQUIRED - set(doc)), sorted(set(doc) - _KEYS)
    if missing or extra:
        raise InputError(f"{where}: " + "; ".join(
            ([f"missing key(s) {', '.join(missing)}"] if missing else [])
            + ([f"unknown key(s) {', '.join(map(repr, extra))}"[:MESSAGE_CHARS]] if extra else [])))
    if not isinstance(doc["config"], dict):
        raise InputError(f"{where}: 'config' must be a table")
    try:
        cfg = parse_config(doc["config"])
    except InputError as exc:
        raise InputError(f"{where}: config: {exc}") from None
    step = doc["step"]
    if not isinstance(step, int) or isinstance(step, bool) or not 0 <= step <= cfg.steps:
        raise InputError(f"{where}: 'step' must be an integer in 0..{cfg.steps} (the config's steps), "
                         f"got {step!r}"[:MESSAGE_CHARS])
    if not _num(doc["elapsed"]) or doc["elapsed"] < 0:
        raise InputError(f"{where}: 'elapsed' must be a number of seconds >= 0, got {doc['elapsed']!r}"[:MESSAGE_CHARS])
    _check_rng(doc["rng"], where)
    _check_groups(doc["param_groups"], where)
    if doc["model_config"] is not None and not isinstance(doc["model_config"], dict):
        raise InputError(f"{where}: 'model_config' must be a table")
    prog = doc.get("progress", {})
    if not isinstance(prog, dict) or set(prog) - {"recent_train_accuracy", "skipped_nonfinite_steps", "loop"} or not (
            prog.get("loop", "host") in ("host", "device")
            and isinstance(prog.get("recent_train_accuracy", []), list)
            and all(_num(a) for a in prog.get("recent_train_accuracy", []))
            and isinstance(prog.get("skipped_nonfinite_steps", 0), int)):
        raise InputError(f"{where}: bad 'progress' table")
    _check_code(doc, where)
    _check_inputs(doc.get("inputs", {}), where)
    sha = doc["sha256"]
    if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
        raise InputError(f"{where}: 'sha256' must be 64 lowercase hex digits")
    name = doc["tensors"]
    if not isinstance(name, str) or not _TENSORS_RE.match(name):
        raise InputError(f"{where}: 'tensors' must name a checkpoint tensor file in the checkpoint's own "
                         f"directory (checkpoint-<step>-<hash>.safetensors), got {name!r}"[:240])
    tpath = os.path.join(os.path.dirname(os.path.abspath(path)), name)
    cap = limits.CHECKPOINT_MAX_BYTES if tensor_bytes is None else min(tensor_bytes, limits.CHECKPOINT_MAX_BYTES)
    blob = read_regular(tpath, cap, "checkpoint tensors", "CHECKPOINT_MAX_BYTES", follow=False)
    if hashlib.sha256(blob).hexdigest() != sha:
        raise InputError(f"checkpoint tensors {tpath!r} do not match {path!r} (SHA-256 differs)")
    try:
        tensors = st_load(blob)
    except Exception as exc:  # noqa: BLE001 - safetensors raises its own error type on a malformed file
        raise InputError(f"checkpoint tensors {tpath!r} are not a safetensors file: {exc}"[:240]) from None
    for k in tensors:
        if not (k.startswith("model.") or re.fullmatch(r"opt\.\d{1,6}\.[A-Za-z_]+", k)):
            raise InputError(f"checkpoint tensors {tpath!r}: unexpected tensor {k!r}"[:240])
    return doc, tensors, text


def find(directory: str, parse_config, warn=None, tensor_bytes: int | None = None) -> tuple | None:
    """The newest good checkpoint of a run directory: ``read(checkpoint.json)``, or when that fails its checks,
    ``read(checkpoint.prev.json)`` (``warn(message)`` is told why); ``None`` when there is none. Raises the first
    error when neither is good."""
    errors = []
    for nm in (CKPT_JSON, PREV_JSON):
        p = os.path.join(directory, nm)
        if not os.path.lexists(p):
            continue
        try:
            return read(p, parse_config, tensor_bytes)
        except InputError as exc:
            errors.append(exc)
            if warn is not None and nm == CKPT_JSON and os.path.lexists(os.path.join(directory, PREV_JSON)):
                warn(f"{exc}; trying the previous checkpoint")
    if errors:
        raise errors[0]
    return None


def state_bytes(model) -> int:
    """An upper bound on the tensor file of a checkpoint of ``model`` with AdamW: the parameters and buffers, two
    moments per parameter, a step counter each, and room for the safetensors header."""
    n = sum(p.numel() * p.element_size() for p in model.state_dict().values())
    k = len(model.state_dict())
    return 3 * n + 512 * (3 * k + 16) + (1 << 16)


# how the optimizer computes, not what: the live optimizer's choice (the device loop's fused kernel), never restored
_IMPLEMENTATION = ("fused", "foreach", "capturable", "differentiable")


def restore(doc: dict, tensors: dict, model, opt, device, where: str = "checkpoint") -> None:
    """Load a checkpoint's tensors into ``model`` and ``opt`` (names and shapes checked against them)."""
    sd = {k[6:]: v for k, v in tensors.items() if k.startswith("model.")}
    try:
        model.load_state_dict(sd, strict=True)
    except (RuntimeError, ValueError, KeyError) as exc:
        raise InputError(f"{where}: its tensors do not fit the model: {str(exc).splitlines()[0][:MESSAGE_CHARS]}") from None
    if opt is None:
        return
    live = opt.state_dict()
    groups = doc["param_groups"]
    if len(groups) != len(live["param_groups"]):
        raise InputError(f"{where}: {len(groups)} optimizer parameter groups, the model has "
                         f"{len(live['param_groups'])}")
    params = [p for g in opt.param_groups for p in g["params"]]
    new_groups = []
    for g, lg in zip(groups, live["param_groups"]):
        if g["params"] != lg["params"] or set(g) - set(lg):
            raise InputError(f"{where}: optimizer parameter groups do not fit the model")
        new_groups.append({**lg, **{k: (tuple(v) if isinstance(lg[k], tuple) else v) for k, v in g.items()
                                    if k not in _IMPLEMENTATION}})
    state: dict = {}
    for k, v in tensors.items():
        if k.startswith("opt."):
            _, i, name = k.split(".", 2)
            i = int(i)
            if i >= len(params):
                raise InputError(f"{where}: optimizer state for parameter {i}, the model has {len(params)}")
            if name != "step" and tuple(v.shape) != tuple(params[i].shape):
                raise InputError(f"{where}: optimizer state {k} has shape {tuple(v.shape)}, its parameter "
                                 f"{tuple(params[i].shape)}")
            state.setdefault(i, {})[name] = v.to(device) if name != "step" else v
    try:
        opt.load_state_dict({"state": state, "param_groups": new_groups})
    except (RuntimeError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{where}: cannot restore the optimizer: {str(exc).splitlines()[0][:MESSAGE_CHARS]}") from None
