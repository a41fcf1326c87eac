"""Which kind of model a path names, without loading torch: a trained one (a training run directory, a checkpoint
JSON, a saved pretrained directory; :mod:`lrnnkit.learn.trained`) or, otherwise, a compiled model file
(:mod:`lrnnkit.model.io`). The command line's ``run``, ``verify``, ``precision collapse``, ``info`` and ``extract``
decide with :func:`is_trained_path` before they import either loader."""
from __future__ import annotations

import json
import os

from .. import limits

__all__ = ["is_trained_path", "CHECKPOINT_FORMAT", "PRETRAINED_FORMAT", "CKPT_JSON", "CONFIG_FILE"]

CHECKPOINT_FORMAT = "lrnnkit.train-checkpoint"     # checkpoint.json (lrnnkit.learn.checkpoint)
PRETRAINED_FORMAT = "lrnnkit.trained-model"         # config.json of TrainedModel.save_pretrained
CKPT_JSON = "checkpoint.json"
CONFIG_FILE = "config.json"


def is_trained_path(path: str) -> bool:
    """Whether ``path`` names a trained model: a directory holding ``checkpoint.json`` (a ``lrnnkit train --out``
    run) or ``config.json`` (:meth:`~lrnnkit.learn.trained.TrainedModel.save_pretrained`), or a JSON file whose
    ``format`` is a checkpoint's or a pretrained config's (read with the model file's bound)."""
    if os.path.isdir(path):
        return any(os.path.isfile(os.path.join(path, f)) for f in (CKPT_JSON, CONFIG_FILE))
    if not os.path.isfile(path):
        return False
    raw = limits.read_bounded(path, limits.MAX_MODEL_BYTES, "model or checkpoint file", "MAX_MODEL_BYTES")
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        return False
    return isinstance(doc, dict) and doc.get("format") in (CHECKPOINT_FORMAT, PRETRAINED_FORMAT)
