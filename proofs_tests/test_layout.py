"""The layout of the test suite: it mirrors the package, so that a module's tests are found by its name.

The rule. The tests of ``lrnnkit/<package>/<module>.py`` live in ``proofs_tests/<package>/test_<module>.py``;
top-level modules stay at the top (``lrnnkit/certify.py`` -> ``proofs_tests/test_certify.py``) and nested packages nest
(``lrnnkit/kernels/gh/wy.py`` -> ``proofs_tests/kernels/gh/test_wy.py``). The name after ``test_`` is

* a module of the folder's package, alone or followed by an aspect (``test_cli_fuzz.py``,
  ``automata/test_holonomy_gap.py``: the holonomy decomposition against GAP, ``learn/test_train_resume.py``);
* a subpackage, tested as one unit (``automata/test_bridges.py``, ``theorems/test_paper_000.py``), alone or with
  an aspect; but where the rest of the name names one of the subpackage's modules, the file goes into the
  subpackage's own folder (``test_kernels_short_conv.py`` -> ``kernels/test_short_conv.py``);
* or the common prefix of a family of modules (``constructions/test_bilinear.py``: ``bilinear_abelian``,
  ``bilinear_onehot``, ``bilinear_random_parity``).

A test that spans modules sits beside the module it mainly exercises and says in its name what it checks
(``test_certify_tampered.py``: verify refuses tampered models). Checks of the repository as a whole are listed in
:data:`REPOSITORY_WIDE`. Every folder is a package (an ``__init__.py``): two files of one name in two folders
(``constructions/test_fixed_point.py``, ``kernels/test_fixed_point.py``) are then two modules, and the shared
helpers are imported by their full name (``proofs_tests._models``, ``proofs_tests._kill``, ``proofs_tests._paths``).

Coverage: every module of lrnnkit is imported by name (``import lrnnkit.a.b``, ``from lrnnkit.a.b import x``,
``from lrnnkit.a import b``) by at least one test file; a package counts as imported when one of its modules is.
The exceptions, each with its reason, are :data:`UNTESTED`.
"""
import ast
import os
import re

import pytest

import lrnnkit
from proofs_tests._paths import REPO, TESTS

PACKAGE = os.path.dirname(os.path.abspath(lrnnkit.__file__))

#: test files that mirror no single module: checks of the repository as a whole
REPOSITORY_WIDE = {
    "test_house.py": "the import graph of all of lrnnkit (layers, cycles, private names, lazy imports)",
    "test_layout.py": "this file: the layout of proofs_tests/ and which modules the tests import",
}

#: modules that no test imports by name, each with the reason
UNTESTED = {
    "lrnnkit.__main__": "importing it runs the command line; `python -m lrnnkit` runs as a subprocess in "
                        "test_cli.py and test_limits.py",
}

#: folders of proofs_tests/ that hold no tests
NOT_TESTS = {"data", "__pycache__"}


# --------------------------------------------------------------------------- the package and the tests
def package_tree(root: str = PACKAGE) -> dict:
    """{dotted package: (its modules, its subpackages)}, names without the package prefix."""
    tree = {}
    base = os.path.dirname(root)
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if os.path.exists(os.path.join(d, x, "__init__.py")))
        pkg = os.path.relpath(d, base).replace(os.sep, ".")
        mods = {f[:-3] for f in files if f.endswith(".py") and f != "__init__.py"}
        tree[pkg] = (mods, set(dirs))
    return tree


def find_test_files(tests: str = TESTS) -> list:
    """Paths of the test files, relative to ``tests``, with ``/`` separators."""
    out = []
    for d, dirs, files in os.walk(tests):
        dirs[:] = sorted(x for x in dirs if x not in NOT_TESTS and not x.startswith("."))
        for f in files:
            if f.startswith("test_") and f.endswith(".py"):
                out.append(os.path.relpath(os.path.join(d, f), tests).replace(os.sep, "/"))
    return sorted(out)


def _match(stem: str, names: set) -> str | None:
    """The longest name that ``stem`` is, or starts with followed by ``_``."""
    hits = [n for n in names if stem == n or stem.startswith(n + "_")]
    return max(hits, key=len) if hits else None


def _names(pkg: str, stem: str, tree: dict) -> bool:
    """``stem`` names a module or subpackage of ``pkg``, alone or with an aspect, or a family of its modules."""
    mods, subs = tree[pkg]
    return _match(stem, mods | subs) is not None or any(m.startswith(stem + "_") for m in mods)


def _below(pkg: str, stem: str, tree: dict) -> str | None:
    """The one package strictly below ``pkg`` whose modules ``stem`` names (None if none or several)."""
    hits = [p for p in tree if p.startswith(pkg + ".") and _names(p, stem, tree)]
    return hits[0] if len(hits) == 1 else None


def _folder(pkg: str) -> str:
    return "/".join(pkg.split(".")[1:])


def _resolve(pkg: str, stem: str, tree: dict) -> tuple:
    """Where ``test_<stem>.py`` belongs, starting from ``pkg``: ("ok", folder), ("move", folder, stem) or
    ("unknown", folder, stem) -- folder relative to proofs_tests/ ("" for the top).

    ``<subpackage>_<rest>`` moves into the subpackage's folder when ``rest`` names something there (or, unique,
    further down); otherwise it is an aspect of the subpackage as one unit and stays. A stem that names nothing
    here moves to the one package further down whose module it names."""
    mods, subs = tree[pkg]
    name = _match(stem, mods | subs)
    if name in subs and stem != name:
        sub, rest = f"{pkg}.{name}", stem[len(name) + 1:]
        inner = _resolve(sub, rest, tree)
        if inner[0] == "ok":
            return ("move", inner[1], rest)
        if inner[0] == "move":
            return inner
        return ("ok", _folder(pkg))
    if _names(pkg, stem, tree):
        return ("ok", _folder(pkg))
    deeper = _below(pkg, stem, tree)
    if deeper is not None:
        return ("move", _folder(deeper), stem)
    return ("unknown", _folder(pkg), stem)


def _join(folder: str, name: str) -> str:
    return f"proofs_tests/{folder}/{name}" if folder else f"proofs_tests/{name}"


def misplaced(files: list, tree: dict) -> list:
    """One line per test file that breaks the rule, saying where it goes."""
    bad = []
    for rel in files:
        parts = rel.split("/")
        folder, fname = "/".join(parts[:-1]), parts[-1]
        if not folder and fname in REPOSITORY_WIDE:
            continue
        pkg = ".".join(["lrnnkit"] + parts[:-1])
        if pkg not in tree:
            bad.append(f"proofs_tests/{rel}: proofs_tests/{folder}/ mirrors no package of lrnnkit "
                       f"(lrnnkit/{folder}/ does not exist)")
            continue
        where = _resolve(pkg, fname[len("test_"):-len(".py")], tree)
        if where[0] == "move":
            dest = _join(where[1], f"test_{where[2]}.py")
            bad.append(f"proofs_tests/{rel}: move it to {dest} (git mv proofs_tests/{rel} {dest})")
        elif where[0] == "unknown":
            inner = ".".join(["lrnnkit"] + [p for p in where[1].split("/") if p])
            mods, subs = tree[inner]
            bad.append(f"proofs_tests/{rel}: {where[2]!r} names no module of {inner}; put it in "
                       f"{_join(where[1], '')} as test_<module>[_<what it checks>].py after the module it mainly "
                       f"exercises ({', '.join(sorted(mods | subs))})")
    return bad


def test_every_test_file_mirrors_a_module():
    bad = misplaced(find_test_files(), package_tree())
    assert not bad, "test files outside the layout (proofs_tests/test_layout.py, module docstring):\n" + \
        "\n".join(bad)


def test_every_test_folder_is_a_package():
    missing = []
    for d, dirs, files in os.walk(TESTS):
        dirs[:] = [x for x in dirs if x not in NOT_TESTS and not x.startswith(".")]
        if "__init__.py" not in files:
            missing.append(os.path.relpath(d, REPO))
    assert not missing, "folders of proofs_tests/ without __init__.py (add one):\n" + "\n".join(missing)


def test_the_exceptions_exist():
    """An entry of REPOSITORY_WIDE or UNTESTED that no longer applies is removed."""
    assert all(os.path.exists(os.path.join(TESTS, f)) for f in REPOSITORY_WIDE)
    tree = package_tree()
    for mod in UNTESTED:
        pkg, name = mod.rsplit(".", 1)
        assert name in tree[pkg][0], mod
    assert set(UNTESTED).isdisjoint(imported_modules())


def _fake(tmp_path, modules: list, tests: list):
    for m in modules:
        p = tmp_path / "lrnnkit" / m
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("")
        for parent in p.relative_to(tmp_path).parents:
            if parent.name:
                (tmp_path / parent / "__init__.py").touch()
    return package_tree(str(tmp_path / "lrnnkit")), tests


@pytest.mark.parametrize("test,verdict", [
    ("test_cli.py", None),
    ("test_cli_fuzz.py", None),
    ("automata/test_io.py", None),
    ("automata/test_holonomy_gap.py", None),
    ("automata/test_bridges.py", None),
    ("automata/bridges/test_dot.py", None),
    ("kernels/test_gh.py", None),
    ("kernels/gh/test_wy_wide.py", None),
    ("constructions/test_bilinear.py", None),
    ("test_automata_io.py", "move it to proofs_tests/automata/test_io.py"),
    ("test_automata_holonomy_gap.py", "move it to proofs_tests/automata/test_holonomy_gap.py"),
    ("test_kernels_gh_wy.py", "move it to proofs_tests/kernels/gh/test_wy.py"),
    ("kernels/test_gh_wy.py", "move it to proofs_tests/kernels/gh/test_wy.py"),
    ("test_kernels_wy.py", "move it to proofs_tests/kernels/gh/test_wy.py"),
    ("kernels/test_wy.py", "move it to proofs_tests/kernels/gh/test_wy.py"),
    ("test_wy_wide.py", "move it to proofs_tests/kernels/gh/test_wy_wide.py"),
    ("automata/test_bridges_dot.py", "move it to proofs_tests/automata/bridges/test_dot.py"),
    ("automata/test_bridges_round_trips.py", None),
    ("test_automata_core.py", None),
    ("automata/test_core.py", "'core' names no module of lrnnkit.automata; put it in proofs_tests/automata/"),
    ("trust/test_io.py", "proofs_tests/trust/ mirrors no package of lrnnkit"),
])
def test_the_rule_says_where_a_file_goes(tmp_path, test, verdict):
    """The check can fail, and its message names the place: a file named test_<package>_<module>.py at the top
    goes to proofs_tests/<package>/test_<module>.py."""
    tree, files = _fake(tmp_path, ["cli.py", "cli_format.py", "automata/io.py", "automata/holonomy.py",
                                   "automata/bridges/dot.py", "kernels/gh/wy.py", "kernels/layers.py",
                                   "constructions/bilinear_onehot.py", "constructions/bilinear_abelian.py"], [test])
    bad = misplaced(files, tree)
    if verdict is None:
        assert bad == []
    else:
        assert len(bad) == 1 and verdict in bad[0], bad


# --------------------------------------------------------------------------- every module imported by a test
def _imports_of(path: str, modules: set) -> set:
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    found = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for n in names:
            if n in modules:
                parts = n.split(".")
                found |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    return found


def lrnnkit_modules(root: str = PACKAGE) -> set:
    return {f"{pkg}.{m}" for pkg, (mods, _) in package_tree(root).items() for m in mods} | set(package_tree(root))


def imported_modules(tests: str = TESTS, root: str = PACKAGE) -> set:
    """The lrnnkit modules (and, with each, its enclosing packages) that the files under ``tests`` import."""
    modules = lrnnkit_modules(root)
    found = set()
    for d, dirs, files in os.walk(tests):
        dirs[:] = [x for x in dirs if x not in NOT_TESTS and not x.startswith(".")]
        for f in files:
            if f.endswith(".py"):
                found |= _imports_of(os.path.join(d, f), modules)
    return found


def test_every_module_is_imported_by_a_test():
    missing = sorted(lrnnkit_modules() - imported_modules() - set(UNTESTED))
    assert not missing, ("modules that no test imports (add a test of what the module does to the file the "
                         "layout names, e.g. lrnnkit/a/b.py -> proofs_tests/a/test_b.py):\n" + "\n".join(missing))


def test_an_untested_module_is_caught(tmp_path):
    _fake(tmp_path, ["a/b.py", "a/c.py"], [])
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_b.py").write_text("from lrnnkit.a.b import f\nimport lrnnkit.a\n")
    found = imported_modules(str(tests), str(tmp_path / "lrnnkit"))
    assert found == {"lrnnkit", "lrnnkit.a", "lrnnkit.a.b"}
    assert lrnnkit_modules(str(tmp_path / "lrnnkit")) - found == {"lrnnkit.a.c"}


# --------------------------------------------------------------------------- citations of test files
def _defines(path: str, name: str) -> bool:
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    return any(isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name for n in tree.body)


def test_the_statements_name_tests_that_exist():
    """Every pytest node id in the theorem registry (``tests`` of each statement) names a file and a test in it."""
    from lrnnkit.theorems import all_statements
    bad, n = [], 0
    for s in all_statements():
        for node in s.tests:
            n += 1
            path, _, name = node.partition("::")
            name = name.split("::")[0].split("[")[0]
            full = os.path.join(REPO, path)
            if not path.startswith("proofs_tests/") or not os.path.exists(full) or not _defines(full, name):
                bad.append(f"{s.id}: {node}")
    assert n > 20
    assert not bad, "test node ids that name no test:\n" + "\n".join(bad)


CITED = re.compile(r"(?<![\w/.])((?:proofs_tests/)?(?:[a-z_0-9]+/)*test_[A-Za-z0-9_]+\.py)\b")


def cited_test_files(top: str = REPO) -> list:
    """(file:line, cited path) for every test file named in the docs, the code, the benchmarks and the tests."""
    out = []
    roots = [os.path.join(top, x) for x in ("lrnnkit", "docs", "benchmarks", "examples", "proofs_tests")]
    single = [os.path.join(top, x) for x in ("README.md", "Makefile", "pyproject.toml", os.path.join(".ci", "run"))]
    paths = [p for p in single if os.path.exists(p)]
    for r in roots:
        for d, dirs, files in os.walk(r):
            dirs[:] = [x for x in dirs if not x.startswith((".", "_build", "generated", "__pycache__"))]
            paths += [os.path.join(d, f) for f in files if f.endswith((".py", ".rst", ".md", ".json", ".sh", ".txt"))]
    for p in paths:
        if os.path.abspath(p) == os.path.abspath(__file__):
            continue                        # the examples of the rule above are made up
        with open(p, encoding="utf-8", errors="replace") as fh:
            for i, line in enumerate(fh, 1):
                for m in CITED.finditer(line):
                    out.append((f"{os.path.relpath(p, top)}:{i}", m.group(1)))
    return out


def _exists(citing: str, cited: str) -> bool:
    """A citation is a path from the repository (proofs_tests/...), from proofs_tests/, or from the citing file's
    folder; a bare file name may also be a file of benchmarks/ (the benchmarks' own tests)."""
    here = os.path.dirname(os.path.join(REPO, citing.rsplit(":", 1)[0]))
    return any(os.path.exists(os.path.join(base, cited)) for base in (REPO, TESTS, here))


def test_cited_test_files_exist():
    cites = cited_test_files()
    assert len(cites) > 20
    assert ("docs/limits.rst:6", "proofs_tests/test_limits.py") in cites
    assert not _exists("docs/limits.rst:6", "proofs_tests/test_trust_limits.py")   # a stale citation is caught
    bad = [f"{where}: {cited}" for where, cited in cites if not _exists(where, cited)]
    assert not bad, "citations of test files that do not exist (the layout: proofs_tests/test_layout.py):\n" + \
        "\n".join(bad)
