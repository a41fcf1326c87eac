"""The depth rule of the holonomy decomposition: SgpDec >= 0.9.8's direct depth (``"sgpdec"``, the
default) and SgpDec <= 0.9.7's heights (``"sgpdec-0.9.7"``), on the library, ``lrnnkit info`` and the
Krohn-Rhodes compiler (paper 000, Theorem 4 via Theorem 5).

Oracles: SgpDec 1.2.0's own output on its test semigroup BECKS (tst/holonomy.tst), a hand derivation on a
4-point example, the brute-force definitions in automata/holonomy/test_decomposition.py (check_definitions
computes both rules from the subduction order over an independently enumerated S^1), and GAP
(automata/test_holonomy_gap.py).
"""
import json

import numpy as np
import pytest

from lrnnkit.automata.holonomy.checks import check_all
from lrnnkit.automata.holonomy.decomposition import DEPTH_RULES, holonomy_decomposition, holonomy_summary, members
from lrnnkit.cli import main
from lrnnkit.errors import InputError

# SgpDec's tst/holonomy.tst, "BECKS" (0-based image lists)
BECKS = [[0, 1, 2, 0, 0, 0], [3, 3, 3, 4, 3, 5], [3, 3, 3, 4, 5, 3], [3, 3, 3, 3, 4, 4], [3, 3, 3, 0, 1, 2],
         [1, 2, 0, 3, 3, 3]]
BECKS_SOURCE = "transformations:" + json.dumps(BECKS).replace(" ", "")
# (tiles, holonomy group order) per component, per level
BECKS_SGPDEC_1_2_0 = [[(2, 1)], [(3, 6), (4, 3)], [(3, 3), (2, 2)], [(2, 2)], [(2, 1)]]
BECKS_SGPDEC_0_9_7 = [[(2, 1)], [(4, 3)], [(3, 6), (2, 2)], [(3, 3), (2, 2)], [(2, 1)]]
# the smallest example found (4 points, 2 letters) where the rules differ; hand-derived below
LOOSE = [[3, 0, 1, 3], [0, 3, 2, 0]]


def levels(summary):
    return [[(c["points"], c["group_order"]) for c in lev] for lev in summary["levels"]]


@pytest.mark.parametrize("rule,want", [("sgpdec", BECKS_SGPDEC_1_2_0), ("sgpdec-0.9.7", BECKS_SGPDEC_0_9_7)])
def test_becks_matches_sgpdec(rule, want):
    """SgpDec 1.2.0 (direct depth) and SgpDec <= 0.9.7 (heights) on BECKS, component order included; both
    decompositions pass every check."""
    hd = holonomy_decomposition(BECKS, depth_rule=rule)
    assert levels(hd.summary()) == want
    assert hd.depth_rule == rule
    for name, r in check_all(hd).items():
        assert r.ok, (rule, name, r.counterexample)


def test_default_rule_is_sgpdec_current():
    assert DEPTH_RULES == ("sgpdec", "sgpdec-0.9.7")
    assert levels(holonomy_decomposition(BECKS).summary()) == BECKS_SGPDEC_1_2_0
    assert holonomy_summary(BECKS)["depth_rule"] == "sgpdec"
    assert levels(holonomy_summary(BECKS, depth_rule="sgpdec-0.9.7")) == BECKS_SGPDEC_0_9_7


def test_loose_class_is_pushed_up():
    """a = [3,0,1,3], b = [0,3,2,0] on X = {0,1,2,3}. Images: X.a = {0,1,3}, X.b = {0,2,3}, {0,2,3}.b = {0,2},
    {0,2}.a = {1,3}, {1,3}.a = {0,3}, {0,3}.a = {3}, {0,3}.b = {0}; no two of them are equivalent. The longest
    chain X > {0,2,3} > {0,2} > {1,3} > {0,3} > singletons gives 5 levels. {0,1,3} lies just below X, and its
    tiles are {1,3} and {0,3}: its height is 1 + height({1,3}) = 3, so SgpDec <= 0.9.7 puts it at depth
    5 - 3 + 1 = 3 (next to {0,2}), while the direct depth (1 + longest path from X) is 2 (next to {0,2,3})."""
    new = holonomy_decomposition(LOOSE)
    old = holonomy_decomposition(LOOSE, depth_rule="sgpdec-0.9.7")

    def by_level(hd):
        return [sorted(members(hd.sets[hd.rep[c]]) for c in cl) for cl in hd.level_classes]
    assert by_level(new) == [[[0, 1, 2, 3]], [[0, 1, 3], [0, 2, 3]], [[0, 2]], [[1, 3]], [[0, 3]]]
    assert by_level(old) == [[[0, 1, 2, 3]], [[0, 2, 3]], [[0, 1, 3], [0, 2]], [[1, 3]], [[0, 3]]]
    assert new.height == old.height and new.n_levels == old.n_levels == 5
    for hd in (new, old):
        for name, r in check_all(hd).items():
            assert r.ok, (hd.depth_rule, name, r.counterexample)


def test_rules_agree_on_level_count_and_group_orders():
    """Both rules place the same classes (same tiles, same groups) on the same number of levels; only the
    level a class sits on may differ."""
    rng = np.random.default_rng(15)
    for _ in range(30):
        n = int(rng.integers(2, 7))
        gens = [rng.integers(0, n, n).tolist() for _ in range(int(rng.integers(1, 4)))]
        a = holonomy_decomposition(gens)
        b = holonomy_decomposition(gens, depth_rule="sgpdec-0.9.7")
        assert a.n_levels == b.n_levels
        assert sorted(sum(levels(a.summary()), [])) == sorted(sum(levels(b.summary()), []))
        for hd in (a, b):   # depth strictly increases from a set to its tiles
            for c, tl in hd.tiles.items():
                assert all(hd.depth[hd.cls[hd.index[T]]] > hd.depth[c] for T in tl)


def test_bad_rule():
    with pytest.raises(InputError, match="depth_rule"):
        holonomy_decomposition(BECKS, depth_rule="sgpdec-1.0")
    from lrnnkit.constructions.krohn_rhodes import build
    from lrnnkit.automata.sources import load_source
    with pytest.raises(InputError, match="depth_rule"):
        build(load_source("flipflop"), depth_rule="heights")


# --------------------------------------------------------------------------- CLI
def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_info_depth_rule(capsys):
    code, out, _ = run(capsys, "info", BECKS_SOURCE, "--json")
    h = json.loads(out)["holonomy"]
    assert code == 0 and h["depth_rule"] == "sgpdec" and levels(h) == BECKS_SGPDEC_1_2_0
    code, out, _ = run(capsys, "info", BECKS_SOURCE, "--json", "--depth-rule", "sgpdec-0.9.7")
    h = json.loads(out)["holonomy"]
    assert code == 0 and h["depth_rule"] == "sgpdec-0.9.7" and levels(h) == BECKS_SGPDEC_0_9_7
    code, out, _ = run(capsys, "info", BECKS_SOURCE, "--depth-rule", "sgpdec-0.9.7")
    assert code == 0 and "depth rule sgpdec-0.9.7" in out
    code, out, err = run(capsys, "info", BECKS_SOURCE, "--depth-rule", "heights")
    assert code == 2 and "heights" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("rule", DEPTH_RULES)
def test_compile_option_depth_rule_certifies(tmp_path, capsys, rule):
    """compile --option depth_rule=RULE: the model is built on that rule's levels and certified (verify)."""
    path = tmp_path / "becks.json"
    code, out, err = run(capsys, "compile", BECKS_SOURCE, "--construction", "krohn-rhodes", "--option",
                         f"depth_rule={rule}", "-o", str(path), "--json")
    assert code == 0, err
    model = json.loads(path.read_text())
    assert model["notes"]["depth_rule"] == rule
    assert levels(model["notes"]["holonomy"]) == (BECKS_SGPDEC_1_2_0 if rule == "sgpdec" else BECKS_SGPDEC_0_9_7)
    assert run(capsys, "verify", str(path))[0] == 0
    code, out, err = run(capsys, "compile", BECKS_SOURCE, "--construction", "krohn-rhodes", "--option",
                         "depth_rule=sgpdec-0.9")
    assert code == 2 and "depth_rule" in err


def test_old_rule_compiles_and_certifies_presets_and_random():
    """The compiler certifies under the old rule too (the default rule is covered by test_holonomy_compile)."""
    from lrnnkit.automata.fsa import FSA
    from lrnnkit.automata.sources import load_source
    from lrnnkit.certify import certify
    from lrnnkit.constructions.krohn_rhodes import build
    fsas = [load_source(s) for s in ("parity", "flipflop", "even-pairs", "counter:4", "mod-arith:3", "cycle-nav:4",
                                     "transformations:" + json.dumps(LOOSE).replace(" ", ""))]
    rng = np.random.default_rng(1515)
    fsas += [FSA(("a", "b"), rng.integers(0, 5, (5, 2)), 0, name=f"rand5-{i}") for i in range(4)]
    for fsa in fsas:
        for split in ("depth", "class"):
            cert = certify(build(fsa, split, depth_rule="sgpdec-0.9.7"), fsa, float_steps=200)
            assert cert.certified, (fsa.name, split, cert.reason)

