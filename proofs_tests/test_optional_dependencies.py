"""What lrnnkit declares it needs is what it imports: the runtime dependencies of ``pyproject.toml`` are the
third-party libraries lrnnkit's modules import, a library only some paths need is an extra imported lazily, the
extras set lower bounds only (no pins a user's environment must match), and ``make demo`` installs no extra."""
import ast
import os
import re
import sys

import pytest

from lrnnkit.errors import InputError
from ._paths import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: distribution name -> the module it provides, where the two differ
MODULE_OF = {"automata-lib": "automata", "flash-linear-attention": "fla", "sphinx-mathjax-offline": "sphinx_mathjax_offline", "pyyaml": "yaml"}


def _project() -> dict:
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as fh:
        return tomllib.load(fh)["project"]


def _name(req: str) -> str:
    return re.match(r"[A-Za-z0-9_.\-]+", req).group(0).lower()


def _module(req: str) -> str:
    n = _name(req)
    return MODULE_OF.get(n, n.replace("-", "_"))


def _third_party_imports() -> dict:
    """{top-level module: [(file, line, at module level?)]} for every import of a non-stdlib, non-lrnnkit module
    in lrnnkit/ (relative imports are lrnnkit's own)."""
    out: dict = {}
    for d, dirs, files in os.walk(os.path.join(REPO, "lrnnkit")):
        dirs[:] = [x for x in dirs if x != "__pycache__"]
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(d, f)
            tree = ast.parse(open(path, encoding="utf-8").read(), path)
            inner = {id(n) for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                     for n in ast.walk(fn)}
            for n in ast.walk(tree):
                names = []
                if isinstance(n, ast.Import):
                    names = [a.name for a in n.names]
                elif isinstance(n, ast.ImportFrom) and not n.level and n.module:
                    names = [n.module]
                for m in names:
                    top = m.split(".")[0]
                    if top in sys.stdlib_module_names or top in ("lrnnkit", "__future__"):
                        continue
                    out.setdefault(top, []).append((os.path.relpath(path, REPO), n.lineno, id(n) not in inner))
    return out


def test_every_runtime_dependency_is_imported_by_lrnnkit():
    imported = _third_party_imports()
    runtime = {_module(r) for r in _project()["dependencies"]}
    unused = sorted(m for m in runtime if m not in imported)
    assert not unused, f"runtime dependencies lrnnkit never imports: {unused}"
    # the two that were declared without a use, and the one a public module needs
    assert "ml_dtypes" not in runtime and "scipy" not in runtime
    assert "hypothesis" in runtime and "hypothesis" in imported


def test_every_imported_library_is_declared():
    proj = _project()
    runtime = {_module(r) for r in proj["dependencies"]}
    extra = {_module(r) for reqs in proj["optional-dependencies"].values() for r in reqs}
    undeclared = sorted(m for m in _third_party_imports() if m not in runtime | extra)
    assert not undeclared, f"imported by lrnnkit but declared nowhere in pyproject.toml: {undeclared}"


def test_extra_only_libraries_are_imported_lazily():
    """A library in an extra only is imported inside a function (a path that needs it), never at module level: the
    rest of lrnnkit runs without it."""
    proj = _project()
    runtime = {_module(r) for r in proj["dependencies"]}
    bad = [f"{f}:{line} imports {m} at module level" for m, sites in _third_party_imports().items()
           if m not in runtime for f, line, top in sites if top]
    assert not bad, "\n".join(bad)


def test_no_exact_pins_in_dependencies_or_extras():
    proj = _project()
    reqs = list(proj["dependencies"]) + [r for rs in proj["optional-dependencies"].values() for r in rs]
    pinned = [r for r in reqs if "==" in r.split(";")[0]]     # an environment marker may compare with ==
    assert not pinned, f"exact pins a user's environment would have to match: {pinned}"


def _rule(makefile: str, target: str) -> tuple:
    """(prerequisites, recipe lines) of ``target`` in the Makefile text."""
    m = re.search(rf"^{re.escape(target)}:([^\n]*)\n((?:\t[^\n]*\n)*)", makefile, re.M)
    assert m, target
    return m.group(1).split(), [x.strip() for x in m.group(2).splitlines()]


def test_make_demo_installs_no_extras_and_test_docs_get_theirs():
    mk = open(os.path.join(REPO, "Makefile"), encoding="utf-8").read()
    deps, _ = _rule(mk, "demo")
    assert deps == ["$(STAMP)"]
    _, recipe = _rule(mk, "$(STAMP)")
    installs = [x for x in recipe if "pip install" in x and "-e" in x]
    assert installs and all("[" not in x for x in installs), installs     # lrnnkit alone, no extra
    assert all(" -q" not in x for x in recipe if "pip install" in x)      # pip says what it installs
    assert any(x.startswith("@echo") for x in recipe)
    # the suite checks the docs generator (docutils, a Sphinx build of the math): test gets the docs extras too;
    # the benchmarks use Ray and the peer libraries
    for target, extras in (("test", ["test", "docs"]), ("test-slow", ["test", "docs"]), ("docs", ["docs"]),
                           ("bench", ["test", "bench"])):
        deps, _ = _rule(mk, target)
        assert deps == [f"$(VENV)/.extra-{e}-stamp" for e in extras], (target, deps)
    _, recipe = _rule(mk, "$(VENV)/.extra-%-stamp")
    assert any('-e ".[$*]"' in x for x in recipe)
    extras = _project()["optional-dependencies"]
    for extra, needs in (("test", {"pytest", "hypothesis", "scipy", "ml_dtypes"}), ("docs", {"sphinx"})):
        assert needs <= {_module(r) for r in extras[extra]}, extra


def test_a_missing_optional_library_names_its_extra(monkeypatch):
    from lrnnkit.optional import require
    from lrnnkit.theorems.paper_003.theorem_c1 import memory_closed_form
    assert memory_closed_form(1.0, 0.0) == pytest.approx(0.0, abs=1e-3)   # installed here (test extra): runs
    monkeypatch.setitem(sys.modules, "scipy.stats", None)      # import scipy.stats now raises ImportError
    with pytest.raises(InputError, match=r"needs scipy.*pip install 'lrnnkit\[stats\]'"):
        memory_closed_form(1.0, 0.0)
    with pytest.raises(InputError, match=r"lrnnkit\[learn\]"):
        require("no_such_module_xyz", "learn", "a test")
