"""lrnnkit: linear recurrent networks and finite automata, made executable.

The small public API::

    from lrnnkit import load_source, compile, certify, run_float
    fsa = load_source("group:S5")          # an automaton (FSA) from a preset or a JSON file
    model = compile(fsa)                   # the cheapest applicable construction (000, Theorem 3 here), a Model
    cert = certify(model)                  # exact, for inputs of every length
    run_float(model, [[0, 1, 2]]).labels() # run it

Subpackages: ``automata``, ``constructions``, ``precision``, ``ops``, ``layers``, ``theorems``, ``learn``,
``sweep``, ``testing``, ``cli`` and ``showcase`` (the demo, its report, the generated docs). Formats and
conventions: ``docs/`` (conventions, fsa_format, model_format, cli, algorithms).
"""
from .automata.fsa import FSA
from .automata.info import describe
from .automata.sources import load_source
from .certify import Certificate, certify
from .constructions import catalogue, compile
from .errors import CertificationError, InputError, LrnnkitError, SizeLimitError
from .executor import run_exact, run_float
from .export import export_fla, run_fla
from .learn.extract import extract_automaton, extract_checkpoint, model_oracle
from .learn.protocols import as_reported
from .learn.tasks import make_task
from .model import Decoder, GHFactor, Layer, Model, Read, TableMap, Transition
from .sweep import run_sweep
from .theorems.registry import set_judge_source
from ._version import __version__

__all__ = ["FSA", "Model", "Layer", "Transition", "GHFactor", "Decoder", "TableMap", "Read", "compile", "catalogue",
           "certify", "Certificate", "run_float", "run_exact", "load_source", "describe", "load_model",
           "InputError", "LrnnkitError", "SizeLimitError", "CertificationError", "DeltaProductLayer", "chunk_gh",
           "export_fla", "run_fla", "extract_automaton", "extract_checkpoint", "model_oracle", "SequenceModel",
           "make_task", "TrainConfig", "train", "run_experiment", "run_sweep", "load_trained", "TrainedModel"]

_LAZY_KERNELS = ("DeltaProductLayer", "chunk_gh")
_LAZY_LEARN = {"SequenceModel": ".learn.models", "TrainConfig": ".learn.train",
               "train": ".learn.train", "run_experiment": ".learn.experiments",
               "load_trained": ".learn.trained", "TrainedModel": ".learn.trained"}


def __getattr__(name):
    """The torch-based kernel API (:class:`lrnnkit.layers.DeltaProductLayer`, :func:`lrnnkit.ops.chunk_gh`),
    imported on first use so that ``import lrnnkit`` does not load torch."""
    if name in _LAZY_KERNELS:
        from . import layers, ops
        return getattr(layers if name == "DeltaProductLayer" else ops, name)
    if name in _LAZY_LEARN:   # learning (torch), imported on first use like the kernels
        import importlib
        return getattr(importlib.import_module(_LAZY_LEARN[name], __name__), name)
    raise AttributeError(f"module 'lrnnkit' has no attribute {name!r}")


def load_model(path: str) -> Model:
    return Model.load(path)


def _experiment_judges() -> dict:
    """The learning experiments (:data:`lrnnkit.learn.experiments.EXPERIMENTS`), whose judges the registry's
    empirical entries apply to a given record (``lrnnkit theorems --check ID --perturbed``). The registry and
    lrnnkit.learn are siblings, so the root package wires them; torch loads only when a judge is first asked for.
    Each judge reduces a configuration's several seeds x learning rates as its paper reports them
    (:func:`lrnnkit.learn.protocols.reduce_as_reported`): one run never decides a verdict on a paper that reports
    several seeds."""
    from .learn.experiments import EXPERIMENTS
    return {name: as_reported(e) for name, e in EXPERIMENTS.items()}


set_judge_source(_experiment_judges)
