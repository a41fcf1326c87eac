"""Cross-checks against GAP (an independent system): transition monoid sizes and aperiodicity of random automata,
and order / abelian / solvable / minimal faithful permutation degree / isomorphism type of groups.

GAP runs as ``gap -q -b`` with one script on stdin per test (GAP starts slowly, so cases are batched). Skipped
when GAP is not installed (see conftest.py).
"""
import shutil
import subprocess

import numpy as np
import pytest

from lrnnkit.automata.finite_group import FiniteGroup
from lrnnkit.automata.fsa import FSA
from lrnnkit.automata.groups import group_structure
from lrnnkit.automata.info import describe
from lrnnkit.automata.monoid import closure, transition_monoid
from lrnnkit.automata.sources import load_source

pytestmark = pytest.mark.gap


def run_gap(script: str, timeout: int = 600) -> list[str]:
    gap = shutil.which("gap")
    if gap is None:
        pytest.skip("GAP not installed")
    res = subprocess.run([gap, "-q", "-b"], input=script + "\nQUIT;\n", capture_output=True, text=True,
                         timeout=timeout)
    lines = [ln.strip() for ln in res.stdout.splitlines() if ln.strip()]
    assert not any(ln.startswith("Error") for ln in lines + res.stderr.splitlines()), res.stdout + res.stderr
    return lines


def gap_transformation(img) -> str:
    return "Transformation([" + ",".join(str(int(v) + 1) for v in img) + "])"


def gap_permutation(img) -> str:
    return "PermList([" + ",".join(str(int(v) + 1) for v in img) + "])"


def random_automata(seed=0, count=25, max_size=3000):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        n = int(rng.integers(2, 8))
        k = int(rng.integers(1, 4))
        gens = rng.integers(0, n, size=(k, n))
        # bias towards permutations sometimes, so that groups and mixed monoids both occur
        for i in range(k):
            if rng.random() < 0.4:
                gens[i] = rng.permutation(n)
        M = closure(gens.tolist(), n, cap=10 ** 6)
        if M.size <= max_size:        # keep GAP's share of the run short
            out.append((gens.tolist(), M))
    return out


def test_monoid_sizes_and_aperiodicity_agree_with_gap():
    cases = random_automata()
    structured = [
        [[1, 2, 3, 0], [1, 0, 2, 3], [0, 0, 2, 3]],            # T_4: 256
        [[1, 2, 3, 4, 0], [1, 0, 2, 3, 4]],                    # S_5: 120
        [[0, 0], [1, 1], [0, 1]],                              # flip-flop
        [[1, 2, 3, 4, 5, 6, 0], [0, 0, 2, 3, 4, 5, 6]],        # 7 states
    ]
    cases += [(g, closure(g, len(g[0]))) for g in structured]
    lines = []
    for i, (gens, M) in enumerate(cases):
        gs = ",".join(gap_transformation(g) for g in gens)
        lines.append(f"S := Monoid({gs});; Print({i}, \" \", Size(S), \" \", "
                     f"ForAll(GreensHClasses(S), h -> Size(h) = 1), \"\\n\");")
    out = run_gap("\n".join(lines))
    assert len(out) == len(cases)
    for ln in out:
        i, size, aperiodic = ln.split()
        gens, M = cases[int(i)]
        assert M.size == int(size), (gens, M.size, size)
        assert M.is_aperiodic == (aperiodic == "true"), gens


GROUPS = ["Z60", "A4xZ5", "D6", "S3xZ2", "S5", "A5", "S4", "Z2xZ2xZ3", "D4xZ3", "S3", "A4", "Z1", "D5"]

_GAP_NAME = {"Z": "CyclicGroup(IsPermGroup, {})", "S": "SymmetricGroup({})", "A": "AlternatingGroup({})"}


def gap_group_from_name(name: str) -> str:
    """GAP's own construction of our catalogue name (D<m> is GAP's DihedralGroup(2m))."""
    parts = []
    for f in name.split("x"):
        if f == "Q8":
            parts.append("QuaternionGroup(IsPermGroup, 8)")
        elif f[0] == "D":
            parts.append(f"DihedralGroup(IsPermGroup, {2 * int(f[1:])})")
        else:
            parts.append(_GAP_NAME[f[0]].format(int(f[1:])))
    return parts[0] if len(parts) == 1 else "DirectProduct(" + ", ".join(parts) + ")"


def test_group_structure_agrees_with_gap():
    rows, expected = [], []
    for i, name in enumerate(GROUPS):
        f = load_source(f"group:{name}")
        s = group_structure(f)
        G = FiniteGroup.from_monoid(transition_monoid(f))
        # the regular action of the word problem, by a small generating set (GAP is quicker with few generators)
        gens = ",".join(gap_permutation(G.perms[g]) for g in G.small_generating_set())
        mine = gap_group_from_name(s["name"])
        rows.append(f"G := Group(() {',' if gens else ''}{gens});; H := {mine};; "
                    f"Print({i}, \" \", Size(G), \" \", IsAbelian(G), \" \", IsSolvable(G), \" \", "
                    f"MinimalFaithfulPermutationDegree(G), \" \", IdGroup(G) = IdGroup(H), \"\\n\");")
        expected.append(s)
    out = run_gap("\n".join(rows))
    assert len(out) == len(GROUPS)
    for ln in out:
        i, size, ab, solv, deg, same = ln.split()
        s = expected[int(i)]
        assert s["order"] == int(size), GROUPS[int(i)]
        assert s["abelian"] == (ab == "true")
        assert s["solvable"] == (solv == "true")
        assert s["min_perm_degree"] == int(deg), (GROUPS[int(i)], s, deg)
        assert same == "true", (GROUPS[int(i)], s["name"])


def _random_group_cases(rng, count: int, n_below: int, max_order: int) -> list:
    """``count`` (generators, lrnnkit's group_structure) of permutation automata on 2..n_below-1 points with one
    or two random generators, groups of order at most ``max_order``."""
    cases = []
    while len(cases) < count:
        n = int(rng.integers(2, n_below))
        gens = [rng.permutation(n).tolist() for _ in range(int(rng.integers(1, 3)))]
        f = FSA(tuple(f"a{i}" for i in range(len(gens))), np.array(gens).T)
        if transition_monoid(f).size <= max_order:
            cases.append((gens, group_structure(f)))
    return cases


def _gap_group_facts(cases, props, timeout=None) -> list:
    """For each case ``(generators, group_structure)``: ``(case, GAP's Size, the GAP properties ``props`` (e.g.
    "IsAbelian") as printed, and whether GAP's IdGroup equals that of the group our structure names ("true" when
    it names none))``."""
    rows = []
    for i, (gens, s) in enumerate(cases):
        gs = ",".join(gap_permutation(g) for g in gens)
        check = f"IdGroup(G) = IdGroup({gap_group_from_name(s['name'])})" if s["name"] else "true"
        shown = "".join(f"{p}(G), \" \", " for p in props)
        rows.append(f"G := Group((), {gs});; Print({i}, \" \", Size(G), \" \", {shown}{check}, \"\\n\");")
    out = run_gap("\n".join(rows), **({} if timeout is None else {"timeout": timeout}))
    assert len(out) == len(cases)
    facts = []
    for ln in out:
        i, size, *vals, same = ln.split()
        facts.append((cases[int(i)], int(size), vals, same))
    return facts


def test_random_group_automata_agree_with_gap():
    cases = _random_group_cases(np.random.default_rng(7), 15, 8, 720)
    props = ["IsAbelian", "IsSolvable", "MinimalFaithfulPermutationDegree"]
    for (gens, s), size, (ab, solv, deg), same in _gap_group_facts(cases, props):
        assert (s["order"], s["abelian"], s["solvable"], s["min_perm_degree"]) == \
            (size, ab == "true", solv == "true", int(deg)), gens
        assert same == "true", (gens, s["name"])


def test_info_monoid_size_of_presets_agrees_with_gap():
    sources = ["flipflop", "even-pairs", "mod-arith:3", "regex:(ab)*c", "counter:6"]
    rows, infos = [], []
    for i, src in enumerate(sources):
        f = load_source(src)
        d = describe(f)
        infos.append(d)
        gs = ",".join(gap_transformation(t) for t in f.transformations())
        rows.append(f"S := Monoid({gs});; Print({i}, \" \", Size(S), \"\\n\");")
    out = run_gap("\n".join(rows))
    for ln in out:
        i, size = ln.split()
        assert infos[int(i)]["monoid_size"] == int(size), sources[int(i)]


@pytest.mark.slow
def test_many_random_automata_agree_with_gap_deep():
    """Deep profile: 150 random automata (2-7 states, 1-3 letters) with monoids up to 20000 elements."""
    cases = random_automata(seed=1, count=150, max_size=20000)
    lines = []
    for i, (gens, M) in enumerate(cases):
        gs = ",".join(gap_transformation(g) for g in gens)
        ap = "ForAll(GreensHClasses(S), h -> Size(h) = 1)" if M.size <= 3000 else "\"skip\""
        lines.append(f"S := Monoid({gs});; Print({i}, \" \", Size(S), \" \", {ap}, \"\\n\");")
    out = run_gap("\n".join(lines), timeout=1800)
    assert len(out) == len(cases)
    for ln in out:
        i, size, aperiodic = ln.split()
        gens, M = cases[int(i)]
        assert M.size == int(size), gens
        if aperiodic != "skip":
            assert M.is_aperiodic == (aperiodic == "true"), gens


@pytest.mark.slow
def test_many_random_groups_agree_with_gap_deep():
    cases = _random_group_cases(np.random.default_rng(11), 60, 9, 1000)
    for (gens, s), size, (deg,), same in _gap_group_facts(cases, ["MinimalFaithfulPermutationDegree"], timeout=1800):
        assert (s["order"], s["min_perm_degree"]) == (size, int(deg)), gens
        assert same == "true", (gens, s["name"])
