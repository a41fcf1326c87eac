"""Sphinx configuration of the lrnnkit documentation.

Build with ``make docs``: it runs ``lrnnkit docs docs/generated`` (the construction pages, the theorem
registry, the CLI and API references, generated from the code) and then ``sphinx -W --keep-going``. Built-in
extensions (autodoc, napoleon, mathjax) plus sphinx-mathjax-offline, which bundles MathJax, and the built-in
alabaster theme: no network at build time, and none when the pages are read.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

project = "lrnnkit"
author = "the lrnnkit authors"
copyright = "2026, the lrnnkit authors"
try:
    from lrnnkit import __version__ as release
except Exception:  # noqa: BLE001
    release = "0.1.0"
version = release

# the mathematics renders offline: sphinx-mathjax-offline (the docs extra) copies a MathJax 3 build into
# _static/mathjax and points mathjax_path there, so no page loads anything from a CDN
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax", "sphinx-mathjax-offline"]
templates_path = []
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
html_theme = "alabaster"
html_static_path = ["_static"]
html_theme_options = {"description": "linear RNNs and finite automata, made executable",
                      "fixed_sidebar": True, "page_width": "1180px", "sidebar_width": "230px"}
html_title = "lrnnkit"
autodoc_member_order = "bysource"
# ignore-module-all: a package's __all__ re-exports would document an object twice (once per module)
autodoc_default_options = {"members": True, "show-inheritance": False, "ignore-module-all": True}
autodoc_typehints = "none"   # signatures stay readable; the docstrings state the types that matter
# a method without its own docstring shows none, not its base class's: torch.autograd.Function.forward's docstring
# refers to labels of the torch docs (undefined here, so -W failed on the kernels' Function subclasses)
autodoc_inherit_docstrings = False
napoleon_numpy_docstring = True
napoleon_google_docstring = True
napoleon_use_ivar = True     # "Attributes" sections as :ivar: fields (no attribute directives: no duplicate objects)
nitpicky = False
# "more than one target found" for a short cross-reference such as :mod:`.naive` (several subpackages have one):
# Sphinx still links one of them; this is not worth failing the -W build for
suppress_warnings = ["ref.python"]
os.environ.setdefault("TRITON_INTERPRET", "1")   # importing the kernels package for autodoc needs no GPU


def setup(app):
    from lrnnkit.cli.docs import help_pages
    from lrnnkit.showcase.docgen import ensure_generated, setup_sphinx
    ensure_generated(os.path.join(HERE, "generated"), help_pages)
    setup_sphinx(app)
