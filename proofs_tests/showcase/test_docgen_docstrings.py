"""Docstrings are checked, not guarded: the Sphinx hook of lrnnkit.showcase.docgen reports a docstring that is not
valid RST as a warning naming the object, so ``sphinx -W`` (``make docs``) fails on it; fixed, the build passes.
And every public docstring of lrnnkit is valid RST as napoleon turns it into RST."""
import importlib
import inspect
import os
import subprocess
import sys

import pytest

pytest.importorskip("sphinx")
from lrnnkit.showcase import docgen  # noqa: E402

CONF = ("import sys; sys.path.insert(0, {here!r})\n"
        "extensions = ['sphinx.ext.autodoc', 'sphinx.ext.napoleon']\n"
        "def setup(app):\n"
        "    from lrnnkit.showcase.docgen import setup_sphinx\n"
        "    setup_sphinx(app)\n")


def _build(tmp_path, doc: str):
    (tmp_path / "mod_under_test.py").write_text(
        "from contextlib import contextmanager\n\n\ndef f():\n    " + repr(doc) + "\n")
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    (src / "conf.py").write_text(CONF.format(here=str(tmp_path)))
    (src / "index.rst").write_text("T\n=\n\n.. automodule:: mod_under_test\n   :members:\n")
    return subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-E", "-b", "html", str(src),
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


def test_a_bad_docstring_fails_the_build_and_a_fixed_one_passes(tmp_path):
    r = _build(tmp_path, "At most 2 to the |Q| layers.")
    assert r.returncode != 0 and "docstring of mod_under_test.f is not valid RST" in r.stderr
    assert "undefined substitution |Q|" in r.stderr
    r = _build(tmp_path, "At most :math:`2^{|Q|}` layers of width ``|Q|``.")
    assert r.returncode == 0, r.stderr


def test_every_public_docstring_is_valid_rst():
    from sphinx.ext.napoleon import Config
    from sphinx.ext.napoleon.docstring import GoogleDocstring, NumpyDocstring
    cfg = Config(napoleon_use_ivar=True)
    bad = []
    for name in docgen.public_modules():
        if name.startswith(("lrnnkit.kernels", "lrnnkit.ops", "lrnnkit.layers", "lrnnkit.learn")):
            continue            # torch / triton: covered by the full build (make docs, the slow test)
        m = importlib.import_module(name)
        objs = [(name, m)] + [(f"{name}.{k}", v) for k, v in vars(m).items() if not k.startswith("_")
                              and getattr(v, "__module__", None) == name
                              and (inspect.isfunction(v) or inspect.isclass(v))]
        for on, o in objs:
            d = inspect.getdoc(o)
            if not d:
                continue
            text = str(GoogleDocstring(str(NumpyDocstring(d, cfg)), cfg))
            probs = [p for p in docgen._rst_problems(text, None) if "interpreted text role" not in p]
            if probs:
                bad.append(f"{on}: {probs[0]}")
    assert not bad, "\n".join(bad)
