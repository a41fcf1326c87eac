"""lrnnkit: linear recurrent networks and finite automata, made executable.

The small public API::

    from lrnnkit import load_source, compile, certify, run_float
    fsa = load_source("group:S5")          # an automaton (FSA) from a preset or a JSON file
    model = compile(fsa)                   # the cheapest applicable construction (000, Theorem 3 here), a Model
    cert = certify(model)                  # exact, for inputs of every length
    run_float(model, [[0, 1, 2]]).labels() # run it

Subpackages: ``automata``, ``constructions``, ``precision``, ``kernels``, ``theorems``, ``learn``, ``sweep``, and
``showcase`` (the demo, its report, the generated docs). Formats and conventions: ``docs/`` (conventions,
fsa_format, model_format, cli, algorithms).
"""
from .automata.fsa import FSA
from .certify import Certificate, certify
from .constructions import catalogue, compile
from .errors import CertificationError, InputError, LrnnkitError, SizeLimitError
from .executor import run_exact, run_float
from .export import export_fla, run_fla
from .learn.extract import extract_automaton, extract_checkpoint, model_oracle
from .model import Decoder, GHFactor, Layer, Model, Read, TableMap, Transition

__version__ = "0.1.0"

__all__ = ["FSA", "Model", "Layer", "Transition", "GHFactor", "Decoder", "TableMap", "Read", "compile", "catalogue",
           "certify", "Certificate", "run_float", "run_exact", "load_source", "describe", "load_model",
           "InputError", "LrnnkitError", "SizeLimitError", "CertificationError", "DeltaProductLayer", "chunk_gh",
           "export_fla", "run_fla", "extract_automaton", "extract_checkpoint", "model_oracle", "SequenceModel",
           "make_task", "TrainConfig", "train", "run_experiment", "run_sweep"]

_LAZY_KERNELS = ("DeltaProductLayer", "chunk_gh")
_LAZY_LEARN = {"SequenceModel": ".learn.models", "make_task": ".learn.tasks", "TrainConfig": ".learn.train",
               "train": ".learn.train", "run_experiment": ".learn.experiments"}


def __getattr__(name):
    """The torch-based kernel API (:class:`lrnnkit.kernels.DeltaProductLayer`, :func:`lrnnkit.kernels.chunk_gh`),
    imported on first use so that ``import lrnnkit`` does not load torch."""
    if name in _LAZY_KERNELS:
        from . import kernels
        return getattr(kernels, name)
    if name in _LAZY_LEARN:   # learning (torch), imported on first use like the kernels
        import importlib
        return getattr(importlib.import_module(_LAZY_LEARN[name], __name__), name)
    raise AttributeError(f"module 'lrnnkit' has no attribute {name!r}")


def load_source(source, *, complete: bool | str = False) -> FSA:
    """An automaton from a preset (``parity``, ``group:S5``, ...), a file (FSA JSON, docs/fsa_format.rst; Graphviz
    DOT) or a Python object (automata-lib DFA/NFA, AALpy Dfa/MooreMachine; docs/interop.rst). ``complete=True``
    adds a sink state named ``sink`` to a partial automaton (``complete="NAME"`` names it); without it a partial
    automaton is refused."""
    from .automata.sources import load_source as _ls
    return _ls(source, complete=complete)


def describe(fsa: FSA) -> dict:
    """The structure of an automaton: the keys of ``lrnnkit info --json``."""
    from .automata.info import describe as _d
    return _d(fsa)


def load_model(path: str) -> Model:
    return Model.load(path)


def run_sweep(spec, out_dir: str, executor: str = "serial", address: str | None = None, **kw) -> dict:
    """Run a grid of jobs (collapse, certify, theorems, train) from a TOML spec, serially or on Ray, resumable;
    returns the keys of ``lrnnkit sweep --json`` (:func:`lrnnkit.sweep.run_sweep`, docs/sweeps.rst)."""
    from .sweep import run_sweep as _rs
    return _rs(spec, out_dir, executor, address, **kw)
