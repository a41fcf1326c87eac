"""What the verbs of the command line share: the parser class (one-line errors), the argparse types of ``--seed``
and ``--device``, the help texts used by several verbs and the JSON printer."""
from __future__ import annotations

import argparse
import json
from ..errors import InputError
from ..automata.sources import is_preset
from ..learn.device import check_device
from ..learn.locate import is_trained_path
from ..limits import MAX_SEED, check_int
from ..model import Model

_JSON_HELP = "print machine-readable JSON (keys: docs/cli.rst) instead of text"
_FORMAT_HELP = ("number format: fp64, fp32, tf32, bf16, fp16, fp8-e4m3fn, fp8-e5m2, fp8-e4m3-ieee (max 240), "
                "fp6-e2m3fn, fp6-e3m2fn, fp4-e2m1fn, fp8-e8m0fnu, the fnuz formats, any ml_dtypes name "
                "(float8_e4m3fn, ...), or eXmY for X exponent and Y mantissa bits (e.g. e5m7); docs: formats")
_ROUNDING_HELP = ("rounding mode: nearest-even (default), nearest-away, toward-positive, toward-negative, "
                  "toward-zero, to-odd, stochastic (with --seed)")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse prints usage + message by default)
        raise InputError(f"{message} (see `{self.prog} --help`)")


def _print_json(obj) -> None:
    print(json.dumps(obj, indent=2, default=_json_default))


def _json_default(o):
    import numpy as np
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if hasattr(o, "to_json"):
        return o.to_json()
    return str(o)


def _load_model(path: str):
    return Model.load(path)


def _trained(path: str) -> bool:
    """A trained model (checkpoint, run directory, pretrained directory) rather than a compiled model file or an
    automaton source (presets win, as everywhere)."""
    return not is_preset(path) and is_trained_path(path)


def seed_arg(text: str) -> int:
    """The argparse type of every ``--seed`` of the command line: :func:`lrnnkit.limits.check_int` in 0..MAX_SEED on
    the parsed text (argparse turns the refusal into one line and exit status 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer in 0..{MAX_SEED}, got {text[:40]!r}") from None
    try:
        return check_int("seed", value, 0, MAX_SEED, "MAX_SEED")
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def device_arg(text: str) -> str:
    """The argparse type of every ``--device``: :func:`lrnnkit.learn.device.check_device` (argparse turns the
    refusal into one line and exit status 2)."""
    try:
        return check_device(text, "--device")
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
