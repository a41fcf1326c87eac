"""The documentation generated from the code (lrnnkit.showcase.docgen) and the Sphinx build with -W.

Quick: the RST helpers never produce markup that docutils warns about (property test), the docstring guard
recognizes invalid docstrings, and docgen writes one page per construction of the catalogue. Slow (deep profile):
the whole site builds with ``sphinx -W`` into a temp dir and every construction has an HTML page.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lrnnkit.cli.docs import help_pages
from lrnnkit.showcase import docgen
from proofs_tests._paths import REPO

ROOT = REPO


def _docutils_messages(rst: str) -> list:
    """System messages (level >= WARNING) of plain docutils on ``rst`` (math is a standard docutils role)."""
    from docutils.core import publish_doctree
    from docutils import nodes
    doc = publish_doctree(rst, settings_overrides={"report_level": 2, "halt_level": 5,
                                                  "warning_stream": io.StringIO()})
    return [n.astext() for n in doc.findall(nodes.system_message) if n["level"] >= 2]


_NASTY = st.text(alphabet=st.sampled_from(list("ab01 _*`|\\$[]<>-+#.:()^{}=\n")), max_size=40)


@given(_NASTY)
def test_rst_text_is_always_valid_rst(text):
    out = docgen.rst_text(text)
    assert "\n" not in out
    assert _docutils_messages(out + "\n") == [], (text, out)


@given(st.lists(st.lists(_NASTY, min_size=2, max_size=2), min_size=1, max_size=3))
def test_list_table_cells_are_valid_rst(rows):
    rst = docgen._list_table(["a", "b"], [[docgen.rst_text(x) for x in r] for r in rows])
    assert _docutils_messages(rst) == [], rst


def test_rst_text_keeps_math_and_escapes_markup():
    assert docgen.rst_text("eigenvalue $1 - \\beta$ of *G*") == \
        "eigenvalue \\ :math:`1 - \\beta`\\  of \\*G\\*"
    assert docgen.rst_text("- not a list") == "\\- not a list"
    assert docgen.rst_text("|Q| states") == "\\|Q\\| states"


def test_slug_is_file_safe_and_distinguishes_variants():
    assert docgen.slug("krohn-rhodes") == "krohn-rhodes"
    assert docgen.slug("Krohn Rhodes (as printed)") == "krohn-rhodes-as-printed"
    assert docgen.slug("///") == "construction"


def test_docstring_guard_flags_invalid_rst():
    assert docgen._rst_problems("A plain docstring with ``code`` and *emphasis*.", None) == []
    assert docgen._rst_problems("Parameters\n----------\nx : int\n    a value", None) != []  # raw section title
    assert any("substitution" in p for p in docgen._rst_problems("at most 2 to the |Q| images", None))
    assert docgen._rst_problems("unbalanced *emphasis", None) != []


def test_prepare_refuses_foreign_folders(tmp_path):
    (tmp_path / "precious.txt").write_text("keep me")
    from lrnnkit.errors import InputError
    with pytest.raises(InputError, match="refusing to overwrite"):
        docgen.generate(tmp_path)
    assert (tmp_path / "precious.txt").read_text() == "keep me"


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("docs") / "generated"
    res = docgen.generate(out, cli_help=help_pages)
    return out, res


def test_every_construction_gets_a_page(generated):
    from lrnnkit.constructions import catalogue
    out, res = generated
    names = [c.name for c in catalogue()]
    assert names, "the catalogue is empty"
    index = (out / "constructions" / "index.rst").read_text()
    for name in names:
        page = out / "constructions" / f"{docgen.slug(name)}.rst"
        assert page.is_file(), name
        text = page.read_text()
        assert text.split("\n")[2] == name           # the title (after the label line and a blank line)
        assert f"   {docgen.slug(name)}\n" in index   # in the toctree
    assert [r["name"] for r in res["constructions"]] == names
    on_disk = json.loads((out / "docgen.json").read_text())
    assert on_disk["ok"] == res["ok"]


def test_generated_pages_report_certificates(generated):
    """A construction page with an instance shows its certificate; non-variant constructions must be certified
    there (otherwise docgen reports an error and exits non-zero)."""
    from lrnnkit.constructions import catalogue
    out, res = generated
    by_name = {r["name"]: r for r in res["constructions"]}
    for c in catalogue():
        r = by_name[c.name]
        if r["status"] == "no-instance":
            continue
        text = (out / "constructions" / f"{docgen.slug(c.name)}.rst").read_text()
        assert "certified for every length" in text, c.name
        if not c.variant_of and r["status"] == "ok":
            assert r["certified"] is True, c.name
        if r["status"] == "float-only":        # no exact weights: the page shows the float64 check instead
            assert "float64 check" in text and "mismatches" in text, c.name
            assert any(c.name in w for w in res["warnings"]), c.name
    assert res["ok"] == (not res["errors"])
    assert res["ok"], res["errors"]


def test_generated_cli_and_theorem_pages(generated):
    out, res = generated
    cli = (out / "cli.rst").read_text()
    for verb in ("info", "compile", "verify", "run", "constructions", "theorems", "precision", "demo"):
        assert f"lrnnkit {verb}\n" in cli, verb
    th = (out / "theorems.rst").read_text()
    from lrnnkit.theorems import all_statements
    for s in all_statements():
        assert f"lrnnkit theorems --check {s.id}" in th
    api = (out / "api.rst").read_text()
    for mod in ("lrnnkit.model", "lrnnkit.certify", "lrnnkit.showcase.demo", "lrnnkit.showcase.docgen"):
        assert f".. automodule:: {mod}\n" in api


@pytest.mark.slow
def test_sphinx_builds_with_warnings_as_errors(tmp_path):
    """Copy the hand-written sources, generate the pages, build with -W; every construction has an HTML page."""
    src = tmp_path / "docs"
    shutil.copytree(os.path.join(ROOT, "docs"), src,
                    ignore=shutil.ignore_patterns("_build", "generated"))
    shutil.copytree(os.path.join(ROOT, "examples"), tmp_path / "examples")   # literalinclude ../examples/...
    res = docgen.generate(src / "generated", cli_help=help_pages)
    assert res["ok"], res["errors"]
    html = tmp_path / "html"
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                        "-d", str(tmp_path / "doctrees"), str(src), str(html)],
                       capture_output=True, text=True, timeout=900,
                       env={**os.environ, "TRITON_INTERPRET": "1"})
    assert r.returncode == 0, r.stderr[-4000:]
    from lrnnkit.constructions import catalogue
    for c in catalogue():
        page = html / "generated" / "constructions" / f"{docgen.slug(c.name)}.html"
        assert page.is_file(), c.name
        assert c.name in page.read_text()
    for p in ("index", "getting_started", "concepts", "generated/theorems", "generated/cli", "generated/api"):
        assert (html / f"{p}.html").is_file(), p
    _assert_offline_math(html)


def _assert_offline_math(html) -> None:
    """Every page that loads MathJax loads the bundled copy, and nothing at all from the network."""
    import re
    pages = list(html.rglob("*.html"))
    loading = [p for p in pages if "mathjax" in p.read_text().lower()]
    assert loading, "no page loads MathJax"
    for p in pages:
        srcs = re.findall(r'<script[^>]*src="([^"]+)"', p.read_text())
        assert not [x for x in srcs if "://" in x or x.startswith("//")], (p, srcs)
    assert (html / "_static" / "mathjax" / "tex-chtml.js").is_file()


def test_math_renders_offline(tmp_path):
    """A one-page project with the math extensions of docs/conf.py: the page loads the bundled MathJax (with its
    fonts) from _static, no CDN."""
    conf = open(os.path.join(ROOT, "docs", "conf.py"), encoding="utf-8").read()
    assert '"sphinx-mathjax-offline"' in conf
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinx.ext.mathjax", "sphinx-mathjax-offline"]\n')
    (src / "index.rst").write_text("Math\n====\n\n:math:`A(x) = I - \\beta v v^T`\n")
    html = tmp_path / "html"
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(src), str(html)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "_static/mathjax/tex-chtml.js" in (html / "index.html").read_text()
    assert list((html / "_static" / "mathjax").rglob("*.woff"))
    _assert_offline_math(html)


def test_every_construction_page_has_its_plots(generated):
    """A failing plot is only a docgen warning, so a broken plot helper would pass unnoticed (it once did: a
    renamed function left every eigenvalue plot out); every page with an instance must show both plots."""
    out, res = generated
    plot_failures = [w for r in res["constructions"] for w in r.get("warnings", []) if "plot failed" in w]
    assert not plot_failures, plot_failures
    for r in res["constructions"]:
        if r["status"] == "no-instance":
            continue
        text = (out / "constructions" / f"{docgen.slug(r['name'])}.rst").read_text()
        assert "-eigenvalues.png" in text, r["name"]
