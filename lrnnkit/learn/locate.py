"""Which kind of model a path names, without loading torch: a trained one (a training run directory, a checkpoint
JSON, a saved pretrained directory; :mod:`lrnnkit.learn.trained`) or, otherwise, a compiled model file
(:mod:`lrnnkit.model.io`). The command line's ``run``, ``verify``, ``precision collapse``, ``info`` and ``extract``
decide with :func:`is_trained_path` before they import either loader."""
from __future__ import annotations

import json
import os
import re

from .. import limits
from ..fileio import open_regular

__all__ = ["is_trained_path", "CHECKPOINT_FORMAT", "PRETRAINED_FORMAT", "CKPT_JSON", "CONFIG_FILE"]

CHECKPOINT_FORMAT = "lrnnkit.train-checkpoint"     # checkpoint.json (lrnnkit.learn.checkpoint)
PRETRAINED_FORMAT = "lrnnkit.trained-model"         # config.json of TrainedModel.save_pretrained
CKPT_JSON = "checkpoint.json"
CONFIG_FILE = "config.json"
_HEAD = 1 << 16       # a larger file is parsed only when its first 64 KiB name a trained format (lrnnkit writes it first)
_FORMAT_RE = re.compile(rb'"format"\s*:\s*"lrnnkit\.(train-checkpoint|trained-model)"')


def is_trained_path(path: str) -> bool:
    """Whether ``path`` names a trained model: a directory holding ``checkpoint.json`` (a ``lrnnkit train --out``
    run) or ``config.json`` (:meth:`~lrnnkit.learn.trained.TrainedModel.save_pretrained`), or a JSON file whose
    ``format`` is a checkpoint's or a pretrained config's (read with the model file's bound)."""
    if os.path.isdir(path):
        return any(os.path.isfile(os.path.join(path, f)) for f in (CKPT_JSON, CONFIG_FILE))
    if not os.path.isfile(path):
        return False
    with open_regular(path, "model or checkpoint file") as fh:     # the head first: a model file is not parsed twice
        head = fh.read(_HEAD + 1)
    if len(head) > _HEAD and not _FORMAT_RE.search(head):
        return False
    raw = head if len(head) <= _HEAD else \
        limits.read_bounded(path, limits.MAX_MODEL_BYTES, "model or checkpoint file", "MAX_MODEL_BYTES")
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        return False
    return isinstance(doc, dict) and doc.get("format") in (CHECKPOINT_FORMAT, PRETRAINED_FORMAT)
