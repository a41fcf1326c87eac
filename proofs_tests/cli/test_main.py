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
    assert {m.__name__.rsplit(".", 1)[1] for m in found} == files >= {m.__name__.rsplit(".", 1)[1] for m in MODULES}
    orders = [m.ORDER for m in found]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)     # the order of `lrnnkit --help`
    assert [m for m in found if m in MODULES] == MODULES      # a new verb is one new file: no list to extend


def test_every_verb_runs_its_modules_function():
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    want = {verb: fn for m in verb_modules() for verb, fn in m.VERBS.items()}
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


def test_no_verb_is_listed_by_hand():
    """A new verb is one file (docs/contributing.rst): neither main.py nor the package's __init__ names a verb
    module; the discovery alone finds them."""
    import ast
    folder = os.path.dirname(C.__file__)
    verbs = {m.__name__.rsplit(".", 1)[1] for m in verb_modules()}
    for f in ("main.py", "__init__.py"):
        with open(os.path.join(folder, f), encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        named = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level for a in n.names} | \
                {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level and n.module}
        assert not named & verbs, (f, named & verbs)
