"""The command line's discovery (lrnnkit.cli.main): every module of lrnnkit/cli/ not starting with ``_`` (and not
``main``) is a verb module with ``add_parser``, ``VERBS`` and ``ORDER``; the parser is assembled from exactly those,
in ``ORDER``; a verb the parser knows runs its module's function; the shared argparse types refuse bad values in one
line."""
import argparse
import os

import pytest

import lrnnkit.cli as C
from lrnnkit.cli import (compile, constructions, convert, demo, docs, export, extract, info, learn, precision, run,
                         sweep, theorems, verify)
from lrnnkit.cli._common import device_arg, seed_arg
from lrnnkit.cli.main import build_parser, verb_modules

MODULES = [info, compile, verify, run, constructions, theorems, precision, demo, export, sweep, learn, convert,
           extract, docs]


def test_the_verb_modules_are_found_in_order():
    folder = os.path.dirname(C.__file__)
    files = {f[:-3] for f in os.listdir(folder) if f.endswith(".py") and not f.startswith("_")} - {"main"}
    found = verb_modules()
    assert {m.__name__.rsplit(".", 1)[1] for m in found} == files == {m.__name__.rsplit(".", 1)[1] for m in MODULES}
    assert found == MODULES                                  # the order of `lrnnkit --help`
    assert [m.ORDER for m in found] == sorted(m.ORDER for m in found)


def test_every_verb_runs_its_modules_function():
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    want = {verb: fn for m in MODULES for verb, fn in m.VERBS.items()}
    assert list(sub.choices) == list(want)
    assert all(C.VERBS[v] is fn for v, fn in want.items())
    assert {"demo", "docs", "train", "experiment"} <= set(want)


def test_the_demo_options_are_reachable():
    a = build_parser().parse_args(["demo", "--quiet", "--no-kernels", "--no-precision", "--out", "x"])
    assert (a.quiet, a.no_kernels, a.no_precision, a.out) == (True, True, True, "x")
    assert build_parser().parse_args(["docs", "out"]).out_dir == "out"


@pytest.mark.parametrize("text", ["-1", "x", str(2 ** 63)])
def test_seed_arg_refuses(text):
    with pytest.raises(argparse.ArgumentTypeError):
        seed_arg(text)
    assert seed_arg("7") == 7


def test_device_arg_refuses_a_non_device():
    with pytest.raises(argparse.ArgumentTypeError, match="--device"):
        device_arg("gpu0")
    assert device_arg("cpu") == "cpu"
