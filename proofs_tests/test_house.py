"""The house: imports flow one way, and modules meet at public seams.

The import graph is drawn from the source with ``ast`` (every ``import``/``from ... import`` of an lrnnkit module,
at module level or inside a function: a function-level import is a dependency too, only a later one), one node per
module, relative imports resolved. It must be a DAG (docs/algorithms.rst; data flows SOURCE -> automata ->
constructions -> model -> certify / precision / kernels / docs, and the showcase and the CLI sit on top). Reading
a dunder attribute of an enclosing package (``from . import __path__``) is not counted: the package object exists
before its submodules run, so it is no dependency on the package's contents.

Private names (one leading underscore) cross no package boundary: a module may import ``_x`` only from a module of
its own package or of an enclosing one. The showcase modules (demo, report, docgen) share nothing private at all.

Packages form a DAG too, one node per top-level unit (``lrnnkit.automata``, ``lrnnkit.cli``, ... and ``lrnnkit``
for the root package's ``__init__``), every import counted, and they respect the flow of :data:`LAYERS`. An import
inside a function is kept only where a heavy optional dependency is the reason (:data:`LAZY_TARGETS`); no import of
lrnnkit's own modules is guarded by ``except ImportError``, and no issue number or history word stands anywhere in
the tree (code, tests, benchmarks, docs).
"""
import ast
import os
import re

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


def _parsed(root: str = ROOT):
    """(module, its ast) for every module of the package under ``root``."""
    for mod, path in _modules(root).items():
        with open(path, encoding="utf-8") as fh:
            yield mod, ast.parse(fh.read(), path)


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
    assert G.has_edge("lrnnkit.cli.demo", "lrnnkit.showcase.demo")
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
    """Every command builds the whole parser first; importing torch there would cost seconds per call."""
    import subprocess
    import sys
    code = ("import sys, lrnnkit.cli as c; c.build_parser(); "
            "heavy = [m for m in ('torch', 'triton', 'ray', 'aalpy') if m in sys.modules]; "
            "print(','.join(heavy)); sys.exit(1 if heavy else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"building the parser imported {r.stdout.strip()} {r.stderr[-500:]}"



# --------------------------------------------------------------------------- packages
#: the flow, bottom to top: a unit may import only units of lower layers (docs/algorithms.rst)
LAYERS = [
    {"lrnnkit._version", "lrnnkit.errors", "lrnnkit.cli_format", "lrnnkit.heatmap"},
    {"lrnnkit.fileio", "lrnnkit.signals", "lrnnkit.optional", "lrnnkit.progress", "lrnnkit.run_records"},
    {"lrnnkit.limits"},
    {"lrnnkit.exact"},
    {"lrnnkit.automata"},
    {"lrnnkit.model"},
    {"lrnnkit.executor", "lrnnkit.testing"},
    {"lrnnkit.certify", "lrnnkit.ops", "lrnnkit.strategies"},
    {"lrnnkit.constructions", "lrnnkit.export", "lrnnkit.precision", "lrnnkit.layers"},
    {"lrnnkit.theorems", "lrnnkit.learn", "lrnnkit.kernels"},
    {"lrnnkit.sweep"},
    {"lrnnkit"},
    {"lrnnkit.showcase"},
    {"lrnnkit.cli"},
    {"lrnnkit.parser"},
    {"lrnnkit.__main__"},
]


def _unit(mod: str) -> str:
    return ".".join(mod.split(".")[:2])


def package_graph(root: str = ROOT) -> nx.DiGraph:
    """One node per top-level unit; an edge for every import between two units, function-level ones included."""
    G = nx.DiGraph()
    for a, b, data in import_graph(root).edges(data=True):
        G.add_nodes_from([_unit(a), _unit(b)])
        if _unit(a) != _unit(b) and not G.has_edge(_unit(a), _unit(b)):
            G.add_edge(_unit(a), _unit(b), line=f"{data['line']} of {a}")
    return G


def test_no_package_circles():
    G = package_graph()
    assert {"lrnnkit", "lrnnkit.cli", "lrnnkit.showcase", "lrnnkit.learn"} <= set(G)
    cycles = _cycles(G)
    assert not cycles, "package circles:\n" + "\n".join(cycles)


def test_no_arrow_against_the_flow():
    G = package_graph()
    rank = {u: i for i, layer in enumerate(LAYERS) for u in layer}
    assert set(G) <= set(rank), f"units missing from LAYERS: {sorted(set(G) - set(rank))}"
    bad = [f"{a} -> {b} (line {G.edges[a, b]['line']})" for a, b in G.edges if rank[b] >= rank[a]]
    assert not bad, "imports against the flow:\n" + "\n".join(bad)


def test_a_package_circle_is_caught(tmp_path):
    """The check can fail: two subpackages importing each other (one inside a function) form a package circle."""
    pkg = tmp_path / "lrnnkit"
    for sub in ("a", "b"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "x.py").write_text("from ..b.y import g\n")
    (pkg / "b" / "y.py").write_text("def g():\n    from ..a.z import h\n    return h\n")
    (pkg / "a" / "z.py").write_text("def h():\n    return 1\n")
    assert not _cycles(import_graph(str(pkg)))          # modules: a DAG
    assert len(_cycles(package_graph(str(pkg)))) == 1   # packages: a circle


# --------------------------------------------------------------------------- function-level imports
#: heavy optional dependencies: a module that imports one at module level may be imported inside a function, so
#: that ``import lrnnkit`` and the command line's parser stay free of it
HEAVY = {"torch": "PyTorch: seconds to import, an optional extra for the kernels and learning",
         "triton": "Triton: compiles kernels, needs torch",
         "ray": "Ray: the distributed sweep executor (extra [ray])",
         "aalpy": "AALpy: automaton learning (extra [learn])",
         "automata": "automata-lib: a bridge (extra [interop])",
         "matplotlib": "matplotlib: plots only",
         "sympy": "sympy: a slow import, used by exact checks and groups",
         "networkx": "networkx: about 0.15 s to import, needed only by the holonomy decomposition"}

#: function-level imports of lrnnkit's own modules allowed for a reason other than a heavy dependency
LAZY_TARGETS = {
    ("lrnnkit.automata.io", "lrnnkit.automata.bridges.table"):
        "automata.bridges' package init imports automata.io: at module level the two would load in a circle",
}


def _module_level_heavy(mods: dict) -> dict:
    """{module: heavy dependencies it loads at module level, its own or through the lrnnkit modules (and their
    packages) it imports at module level}."""
    own, edges = {}, {}
    for mod, path in mods.items():
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        own[mod], edges[mod] = set(), set()
        parts = mod.split(".")
        edges[mod] |= {".".join(parts[:i]) for i in range(1, len(parts))} - {mod}
        for node in tree.body:
            for n in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]:
                if isinstance(n, ast.Import):
                    own[mod] |= {a.name.split(".")[0] for a in n.names} & set(HEAVY)
                elif isinstance(n, ast.ImportFrom) and not n.level and n.module:
                    own[mod] |= {n.module.split(".")[0]} & set(HEAVY)
    for mod, target, name, line in _imports(mods):
        if line in _module_level_lines(mods[mod]):
            t = target.split(".")
            edges[mod] |= {".".join(t[:i]) for i in range(1, len(t) + 1)} - {mod}
    G = nx.DiGraph([(a, b) for a, bs in edges.items() for b in bs if b in mods])
    G.add_nodes_from(mods)
    return {m: set().union(own[m], *(own[d] for d in nx.descendants(G, m))) for m in mods}


_LINES_CACHE: dict = {}


def _module_level_lines(path: str) -> set:
    if path not in _LINES_CACHE:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        inner = {n.lineno for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
        _LINES_CACHE[path] = {n.lineno for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))} - inner
    return _LINES_CACHE[path]


def function_level_imports(root: str = ROOT) -> list:
    """(importer, target, line) for every import of an lrnnkit module inside a function."""
    mods = _modules(root)
    return [(m, t, line) for m, t, name, line in _imports(mods)
            if line not in _module_level_lines(mods[m]) and t != m
            and not (name and name.startswith("__") and m.startswith(t + "."))]


def lazy_imports_without_reason(root: str = ROOT) -> list:
    mods = _modules(root)
    heavy = _module_level_heavy(mods)
    return sorted({f"{m}:{line} imports {t} inside a function; {t} loads no heavy dependency "
                   f"({', '.join(sorted(HEAVY))}): import it at module level"
                   for m, t, line in function_level_imports(root) if not heavy[t] and (m, t) not in LAZY_TARGETS})


def test_function_level_imports_only_for_heavy_dependencies():
    bad = lazy_imports_without_reason()
    assert not bad, "\n".join(bad)


def test_the_listed_lazy_imports_exist():
    """An entry of LAZY_TARGETS that no longer applies is removed (the list only shrinks)."""
    found = {(m, t) for m, t, _ in function_level_imports()}
    assert set(LAZY_TARGETS) <= found, sorted(set(LAZY_TARGETS) - found)


def test_the_heavy_reason_is_real():
    """The kernels load torch and triton at module level, the parser none of the heavy dependencies."""
    heavy = _module_level_heavy(_modules())
    assert {"torch", "triton"} <= heavy["lrnnkit.ops.gh.wy"]
    assert "torch" in heavy["lrnnkit.learn.train"]
    assert heavy["lrnnkit.automata.holonomy"] == {"networkx"}
    assert not heavy["lrnnkit.parser"] and not heavy["lrnnkit"] and not heavy["lrnnkit.cli"]


def test_a_light_lazy_import_is_caught(tmp_path):
    pkg = tmp_path / "lrnnkit"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "light.py").write_text("X = 1\n")
    (pkg / "heavy.py").write_text("import torch\n")
    (pkg / "user.py").write_text("def f():\n    from .light import X\n    from .heavy import torch\n    return X\n")
    bad = lazy_imports_without_reason(str(pkg))
    assert len(bad) == 1 and "lrnnkit.light" in bad[0]


# --------------------------------------------------------------------------- no scaffolding
def _guarded_own_imports(root: str = ROOT) -> list:
    """Imports of lrnnkit's own modules inside a ``try`` whose handlers catch ImportError (or a parent of it)."""
    bad = []
    for mod, tree in _parsed(root):
        for t in ast.walk(tree):
            if not isinstance(t, ast.Try):
                continue
            names = set()
            for h in t.handlers:
                for n in ast.walk(h.type) if h.type is not None else []:
                    if isinstance(n, ast.Name):
                        names.add(n.id)
            if not names & {"ImportError", "ModuleNotFoundError"}:
                continue
            for stmt in t.body:
                for n in ast.walk(stmt):
                    own = (isinstance(n, ast.ImportFrom) and (n.level or (n.module or "").split(".")[0] == "lrnnkit")) \
                        or (isinstance(n, ast.Import) and any(a.name.split(".")[0] == "lrnnkit" for a in n.names))
                    if own:
                        bad.append(f"{mod}:{n.lineno}")
    return bad


def test_no_guarded_imports_of_own_modules():
    bad = _guarded_own_imports()
    assert not bad, "imports of lrnnkit's own modules guarded by except ImportError:\n" + "\n".join(bad)


def test_a_guarded_import_is_caught(tmp_path):
    pkg = tmp_path / "lrnnkit"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    try:\n        from . import b\n    except ImportError:\n        b = None\n")
    assert _guarded_own_imports(str(pkg)) == ["lrnnkit.a:3"]


ISSUE_NUMBER = re.compile(r"\b[Ii]ssues? #?\d|\bissue-\d|#\d+\b(?= *\))|\(issue\b")
#: words that tell the project's history rather than what the code does ("the fifth round", "round 3", "the lead's")
HISTORY_WORDS = re.compile(r"\b[Rr]ound \d|\b(?:[Ff]irst|[Ss]econd|[Tt]hird|[Ff]ourth|[Ff]ifth|[Ss]ixth|[Ss]eventh|"
                           r"[Ll]ast|[Pp]revious|[Nn]ext|[Tt]his|[Ee]arlier) round\b|\bthe lead's\b")
#: an upstream project's bug report, cited by its number, is a reference, not one of ours; so is fla 0.6.0's own
#: refusal message, quoted verbatim where a benchmark records it
UPSTREAM = re.compile(r"\bfla (?:issue )?#\d+|results for gated chunk_bwd_dqkwg \(see #\d+\)")
#: every folder and top-level file of the repository that holds code, tests, benchmarks or docs
TREE = ("lrnnkit", "docs", "proofs_tests", "benchmarks", "examples", "README.md", "Makefile", "pyproject.toml")
#: this file states the patterns, with examples of what they catch
SELF = os.path.join("proofs_tests", "test_house.py")


def _issue_numbers(tops=TREE, repo: str = os.path.dirname(ROOT)) -> list:
    hits = []
    for top in tops:
        start = os.path.join(repo, top)
        walk = os.walk(start) if os.path.isdir(start) else [(repo, [], [top])] if os.path.exists(start) else []
        for d, dirs, files in walk:
            dirs[:] = [x for x in dirs if not x.startswith((".", "_build", "generated", "__pycache__"))]
            for f in files:
                if f.endswith((".py", ".rst", ".md", ".txt", ".toml", ".json", ".sh")) or f == "Makefile":
                    path = os.path.join(d, f)
                    if os.path.relpath(path, repo) == SELF:
                        continue
                    with open(path, encoding="utf-8", errors="replace") as fh:
                        for i, line in enumerate(fh, 1):
                            if ISSUE_NUMBER.search(UPSTREAM.sub("", line)) or HISTORY_WORDS.search(line):
                                hits.append(f"{os.path.relpath(path, repo)}:{i}: {line.strip()[:100]}")
    return hits


def test_no_issue_numbers_or_history_words_in_the_tree():
    hits = _issue_numbers()
    assert not hits, ("issue numbers or history words (say what the code does, not which ticket or round asked "
                      "for it):\n" + "\n".join(hits))


def test_an_issue_number_in_a_test_or_benchmark_is_caught(tmp_path):
    (tmp_path / "proofs_tests").mkdir()
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "proofs_tests" / "checks.py").write_text('"""Checks (issue 11, item 2)."""\n')
    (tmp_path / "benchmarks" / "RESULTS.md").write_text(
        "### Kernels, fifth round\nfla issue #640 is upstream\n"
        "RuntimeError: ... produces incorrect results for gated chunk_bwd_dqkwg (see #640). Please upgrade\n"
        "our own bug (see #12)\n")
    (tmp_path / "Makefile").write_text("# see issue 4\n")
    hits = _issue_numbers(repo=str(tmp_path))
    assert sorted(h.split(":")[0] for h in hits) == ["Makefile", "benchmarks/RESULTS.md", "benchmarks/RESULTS.md",
                                                      "proofs_tests/checks.py"]
    assert all(":2:" not in h and ":3:" not in h for h in hits)   # the upstream citation and fla's message: no hits
    assert any(":4:" in h for h in hits)                           # a bare number of ours still is


@pytest.mark.parametrize("text,found", [("see issue 13", True), ("(issue 6)", True), ("Issue 12: x", True),
                                        ("issues 11 and 12", True), ("the issue's anchor", False),
                                        ("tissue 3", False), ("issue", False)])
def test_the_issue_pattern(text, found):
    assert bool(ISSUE_NUMBER.search(text)) == found


@pytest.mark.parametrize("text,found", [("the fifth round", True), ("round 3", True), ("the lead's CLI", True),
                                        ("rounded to nearest", False), ("a round trip", False),
                                        ("round-to-nearest", False), ("rounds each step", False)])
def test_the_history_pattern(text, found):
    assert bool(HISTORY_WORDS.search(text)) == found


def test_the_version_is_written_once():
    """The version lives in ``lrnnkit/_version.py`` (any module may read it without importing the root package);
    the root package and pyproject.toml agree with it."""
    import tomllib

    from lrnnkit._version import __version__
    with open(os.path.join(os.path.dirname(ROOT), "pyproject.toml"), "rb") as fh:
        assert tomllib.load(fh)["project"]["version"] == __version__ == lrnnkit.__version__
    assert not [f"{m}:{line}" for m, t, name, line in _imports(_modules()) if t == "lrnnkit" and name == "__version__"]


#: the most lines a function has unless its docstring says why, in a paragraph starting "Long:"
LONG_FUNCTION = 120


def long_functions(root: str = ROOT) -> list:
    bad = []
    for mod, tree in _parsed(root):
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > LONG_FUNCTION:
                doc = ast.get_docstring(n) or ""
                if not any(par.strip().startswith("Long:") for par in doc.split("\n\n")):
                    bad.append(f"{mod}:{n.lineno} {n.name} ({n.end_lineno - n.lineno + 1} lines)")
    return bad


def test_no_long_function_without_a_reason():
    bad = long_functions()
    assert not bad, f"functions over {LONG_FUNCTION} lines with no 'Long:' reason in the docstring:\n" + "\n".join(bad)


def test_a_long_function_is_caught(tmp_path):
    pkg = tmp_path / "lrnnkit"
    pkg.mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(LONG_FUNCTION))
    (pkg / "__init__.py").write_text(f"def f():\n{body}\n\ndef g():\n    '''Why.\n\n    Long: a reason.'''\n{body}")
    assert long_functions(str(pkg)) == [f"lrnnkit:1 f ({LONG_FUNCTION + 1} lines)"]


# --------------------------------------------------------------------------- one home per kind of code
def argparse_outside_the_cli(root: str = ROOT) -> list:
    """Modules outside ``lrnnkit.cli`` that import argparse or build a parser (``add_argument``, ``add_parser``)."""
    bad = []
    for mod, tree in _parsed(root):
        if mod == "lrnnkit.cli" or mod.startswith("lrnnkit.cli."):
            continue
        for n in ast.walk(tree):
            hit = (isinstance(n, ast.Import) and any(a.name == "argparse" for a in n.names)) \
                or (isinstance(n, ast.ImportFrom) and n.module == "argparse") \
                or (isinstance(n, ast.Attribute) and n.attr in ("add_argument", "add_parser", "add_subparsers"))
            if hit:
                bad.append(f"{mod}:{n.lineno}")
                break
    return bad


def test_argparse_only_in_the_cli():
    bad = argparse_outside_the_cli()
    assert not bad, "command-line code outside lrnnkit/cli/ (one module per verb there):\n" + "\n".join(bad)


def test_argparse_outside_the_cli_is_caught(tmp_path):
    pkg = tmp_path / "lrnnkit"
    (pkg / "cli").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "cli" / "__init__.py").write_text("import argparse\n")
    (pkg / "lib.py").write_text("def add(sub):\n    sub.add_parser('x')\n")
    assert argparse_outside_the_cli(str(pkg)) == ["lrnnkit.lib:2"]


#: the networks assembled from layers, which stay with the learning code (their layers live in lrnnkit.layers)
NETWORKS = {"lrnnkit.learn.models": {"SequenceModel"}, "lrnnkit.learn.init_from_model": {"ConstructionLRNN"},
            "lrnnkit.learn.batched": {"BatchedSequenceModel"}}   # R SequenceModels stacked


def homes_broken(root: str = ROOT, networks: dict = NETWORKS) -> list:
    """Kernels (``@triton.jit`` functions) outside ``lrnnkit.ops``, and ``torch.nn.Module`` classes outside
    ``lrnnkit.layers`` (subclasses of ``nn.Module`` / ``torch.nn.X`` / a layer), save the listed networks."""
    bad = []
    for mod, tree in _parsed(root):
        for n in ast.walk(tree):
            if isinstance(n, ast.FunctionDef) and not (mod == "lrnnkit.ops" or mod.startswith("lrnnkit.ops.")):
                if any("triton.jit" in ast.unparse(d) for d in n.decorator_list):
                    bad.append(f"{mod}:{n.lineno} kernel {n.name} outside lrnnkit/ops/")
            if isinstance(n, ast.ClassDef) and not (mod == "lrnnkit.layers" or mod.startswith("lrnnkit.layers.")):
                bases = [ast.unparse(b) for b in n.bases]
                if any(b in ("nn.Module", "torch.nn.Module") or b.startswith(("nn.", "torch.nn.")) and
                       not b.startswith(("torch.nn.functional", "nn.functional")) for b in bases) \
                        and n.name not in networks.get(mod, ()):
                    bad.append(f"{mod}:{n.lineno} layer {n.name} outside lrnnkit/layers/")
    return bad


def test_kernels_in_ops_and_layers_in_layers():
    bad = homes_broken()
    assert not bad, "one home per kind of code (kernels: lrnnkit/ops/, nn.Module layers: lrnnkit/layers/):\n" + \
        "\n".join(bad)


def test_a_kernel_or_layer_out_of_its_home_is_caught(tmp_path):
    pkg = tmp_path / "lrnnkit"
    (pkg / "ops").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "ops" / "__init__.py").write_text("import triton\n\n@triton.jit\ndef k(x):\n    pass\n")
    (pkg / "learn.py").write_text("import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    pass\n\n"
                                  "class Mixer(torch.nn.Module):\n    pass\n\n@triton.jit\ndef k2(x):\n    pass\n")
    assert sorted(homes_broken(str(pkg), {"lrnnkit.learn": {"Net"}})) == [
        "lrnnkit.learn:11 kernel k2 outside lrnnkit/ops/", "lrnnkit.learn:7 layer Mixer outside lrnnkit/layers/"]
