"""The house (issue 11): imports flow one way, and modules meet at public seams.

The import graph is drawn from the source with ``ast`` (every ``import``/``from ... import`` of an lrnnkit module,
at module level or inside a function: a function-level import is a dependency too, only a later one), one node per
module, relative imports resolved. It must be a DAG (docs/algorithms.rst; data flows SOURCE -> automata ->
constructions -> model -> certify / precision / kernels / docs, and the showcase and the CLI sit on top). Reading
a dunder attribute of an enclosing package (``from . import __path__``) is not counted: the package object exists
before its submodules run, so it is no dependency on the package's contents.

Private names (one leading underscore) cross no package boundary: a module may import ``_x`` only from a module of
its own package or of an enclosing one. The showcase modules (demo, report, docgen) share nothing private at all.
"""
import ast
import os

import networkx as nx
import pytest

import lrnnkit

ROOT = os.path.dirname(os.path.abspath(lrnnkit.__file__))


def _modules(root: str = ROOT) -> dict:
    mods = {}
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith((".", "__pycache__"))]
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(d, f)
                rel = os.path.relpath(path, os.path.dirname(root))[:-3].replace(os.sep, ".")
                mods[rel[: -len(".__init__")] if rel.endswith(".__init__") else rel] = path
    return mods


def _package(mod: str, path: str) -> str:
    return mod if path.endswith("__init__.py") else mod.rsplit(".", 1)[0]


_IMPORTS_CACHE: dict = {}


def _imports(mods: dict) -> list:
    """(importer, target module, imported name or None, line) for every import of an lrnnkit module."""
    key = tuple(sorted(mods.items()))
    if key not in _IMPORTS_CACHE:
        _IMPORTS_CACHE[key] = list(_scan(mods))
    return _IMPORTS_CACHE[key]


def _scan(mods: dict):
    for mod, path in mods.items():
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        pkg = _package(mod, path)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = pkg.split(".")
                    base = parts[: len(parts) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target != "lrnnkit" and not target.startswith("lrnnkit."):
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    if sub in mods:
                        yield mod, sub, None, node.lineno
                    else:
                        t = target
                        while t not in mods and "." in t:
                            t = t.rsplit(".", 1)[0]
                        yield mod, t, alias.name, node.lineno
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "lrnnkit" or alias.name.startswith("lrnnkit."):
                        t = alias.name
                        while t not in mods and "." in t:
                            t = t.rsplit(".", 1)[0]
                        yield mod, t, None, node.lineno


def import_graph(root: str = ROOT) -> nx.DiGraph:
    mods = _modules(root)
    G = nx.DiGraph()
    G.add_nodes_from(mods)
    for mod, target, name, line in _imports(mods):
        if target == mod:
            continue
        if name is not None and name.startswith("__") and name.endswith("__") and mod.startswith(target + "."):
            continue                       # from . import __path__ (see the module docstring)
        G.add_edge(mod, target, line=line)
    return G


def test_the_graph_sees_the_known_edges():
    G = import_graph()
    assert G.has_edge("lrnnkit.constructions.cyclic_rotation", "lrnnkit.constructions.registry")
    assert G.has_edge("lrnnkit.cli", "lrnnkit.showcase.demo")              # a function-level import
    assert G.has_edge("lrnnkit.automata.groups", "lrnnkit.automata.embeddings")
    assert len(G) > 40


def _cycles(G) -> list:
    cycles = []
    for scc in nx.strongly_connected_components(G):
        if len(scc) > 1:
            cyc = nx.find_cycle(G.subgraph(scc))
            cycles.append(" -> ".join(f"{a} (line {G.edges[a, b]['line']})" for a, b in cyc) + f" -> {cyc[0][0]}")
    return cycles


def test_no_import_cycles():
    cycles = _cycles(import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_private_names_cross_no_package_boundary():
    mods = _modules()
    bad = []
    for mod, target, name, line in _imports(mods):
        if name is None or not name.startswith("_") or name.startswith("__"):
            continue
        importer_pkg = _package(mod, mods[mod])
        target_pkg = _package(target, mods[target])
        if not (importer_pkg == target_pkg or importer_pkg.startswith(target_pkg + ".")):
            bad.append(f"{mod}:{line} imports {name} from {target}")
    assert not bad, "\n".join(bad)


def test_showcase_modules_share_nothing_private():
    mods = _modules()
    bad = [f"{m}:{line} imports {name} from {t}" for m, t, name, line in _imports(mods)
           if m.startswith("lrnnkit.showcase") and name and name.startswith("_") and not name.startswith("__")
           and t != m]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("old", ["lrnnkit.demo", "lrnnkit.report", "lrnnkit.docgen"])
def test_the_showcase_is_one_subpackage(old):
    mods = _modules()
    assert old not in mods
    assert old.replace("lrnnkit.", "lrnnkit.showcase.") in mods


def test_a_cycle_is_caught(tmp_path):
    """The check can fail: a circle through a function-level import in a scratch package is reported, and a
    ``from . import __path__`` is not counted."""
    pkg = tmp_path / "lrnnkit"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .a import f\n")
    (pkg / "sub" / "a.py").write_text("from . import __path__\n\ndef f():\n    from .b import g\n    return g\n")
    (pkg / "sub" / "b.py").write_text("from ..sub.a import f as _f\n\ndef g():\n    return 1\n")
    G = import_graph(str(pkg))
    assert G.has_edge("lrnnkit.sub.a", "lrnnkit.sub.b") and G.has_edge("lrnnkit.sub.b", "lrnnkit.sub.a")
    assert not G.has_edge("lrnnkit.sub.a", "lrnnkit.sub")
    assert len(_cycles(G)) == 1


def test_the_repository_stands_on_its_own():
    """No file points to a design document outside the repository: what a user needs is in docs/ (conventions,
    FSA format, model format, CLI contract, algorithms)."""
    repo = os.path.dirname(ROOT)
    needle = "DESIGN" + ".md"
    hits = []
    for top in ("lrnnkit", "proofs_tests", "docs", "benchmarks", "examples"):
        for d, dirs, files in os.walk(os.path.join(repo, top)):
            dirs[:] = [x for x in dirs if not x.startswith((".", "_build", "generated", "__pycache__"))]
            for f in files:
                if f.endswith((".py", ".rst", ".md", ".json", ".toml", ".txt")):
                    path = os.path.join(d, f)
                    with open(path, encoding="utf-8", errors="replace") as fh:
                        for i, line in enumerate(fh, 1):
                            if needle in line:
                                hits.append(f"{os.path.relpath(path, repo)}:{i}")
    for f in ("README.md", "Makefile", "pyproject.toml"):
        path = os.path.join(repo, f)
        if os.path.exists(path) and needle in open(path, encoding="utf-8").read():
            hits.append(f)
    assert not hits, "references to a document outside the repository:\n" + "\n".join(hits)
    for page in ("conventions", "fsa_format", "model_format", "cli", "algorithms"):
        assert os.path.exists(os.path.join(repo, "docs", f"{page}.rst")), page


def test_building_the_cli_parser_imports_no_torch():
    """Every command builds the whole parser first; importing torch there cost ~2 s per call (issue 11)."""
    import subprocess
    import sys
    code = ("import sys, lrnnkit.cli as c; c.build_parser(); "
            "heavy = [m for m in ('torch', 'triton', 'ray', 'aalpy') if m in sys.modules]; "
            "print(','.join(heavy)); sys.exit(1 if heavy else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"building the parser imported {r.stdout.strip()} {r.stderr[-500:]}"
