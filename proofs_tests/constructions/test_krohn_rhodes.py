"""The Krohn-Rhodes compiler (lrnnkit.constructions.krohn_rhodes; paper 000, Theorem 4 and its proof, C.4).

Every compiled model is certified for all input lengths by lrnnkit.certify (exact BFS over reachable pairs), and
the float64 executor is compared with the automaton on random words. The printed proof's wiring (lower layers
read the NEW states of the higher ones) is compiled too and must FAIL on cascades with two or more levels: the
shortest counterexample is recorded below.
"""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lrnnkit.automata import builders
from lrnnkit.automata.fsa import FSA
from lrnnkit.automata.holonomy import holonomy_decomposition
from lrnnkit.certify import certify
from lrnnkit.constructions.krohn_rhodes import (build, build_as_printed, compile_report, reflection_factors,
                                                 reset_factors)
from lrnnkit.model import Model, exact_identity, exact_matmul


def t_n(n):
    gens = [[1, 0] + list(range(2, n)), list(range(1, n)) + [0], [0, 0] + list(range(2, n))]
    return FSA(("a", "b", "c"), np.array(gens).T, 0, name=f"T{n}")


def presets():
    from lrnnkit.automata.groups import group_word_problem
    return [builders.parity(), builders.flipflop(), builders.even_pairs(), builders.counter(5),
            builders.cycle_nav(4), builders.mod_arith(3), group_word_problem("S3"), t_n(3), t_n(4)]


def certified(model, fsa, steps=300):
    cert = certify(model, fsa, float_steps=steps)
    assert cert.certified, (fsa.name, cert.reason, cert.counterexample, cert.expected, cert.got)
    assert cert.float_check["mismatches"] == 0
    assert cert.eigenvalues_in_unit_interval
    return cert


@pytest.mark.parametrize("fsa", presets(), ids=lambda f: f.name)
@pytest.mark.parametrize("split", ["depth", "class"])
def test_presets_certify(fsa, split):
    model = build(fsa, split)
    cert = certified(model, fsa)
    rep = compile_report(fsa, model)
    assert rep["layers"] == len(model.layers) == cert.layers
    assert rep["levels"] == holonomy_decomposition(fsa, levels=split).n_levels


def test_registry_and_provenance():
    from lrnnkit.constructions.registry import compile as kcompile, get
    c = get("krohn-rhodes")
    assert (c.paper, c.statement) == ("000", "Theorem 4")
    fsa = builders.even_pairs()
    model = kcompile(fsa, "krohn-rhodes")
    assert model.provenance["construction"] == "krohn-rhodes"
    assert model.provenance["statement"] == "Theorem 4"
    assert model.provenance["automaton_hash"] == fsa.content_hash()
    certified(model, None)       # the automaton from provenance
    assert get("krohn-rhodes-as-printed").variant_of == "krohn-rhodes"


def test_factors_are_reflections_and_resets():
    """Permutation letters: m - c reflections G(2, e_i - e_j); reset letters: m projections G(1, e_i) (A = 0) and
    B one-hot; the stored A equals the exact product of the factors."""
    model = build(t_n(4))
    for L in model.layers:
        for t in L.transitions:
            P = exact_identity(L.width)
            for f in t.factors:
                assert f.beta_exact in (1, 2)
                nz = [x for x in f.u_exact if x != 0]
                if f.beta_exact == 2:
                    assert sorted(nz) == [-1, 1]
                else:
                    assert nz == [1]
                P = exact_matmul(f.matrix_exact(), P)
            assert P == [[Fraction(x) for x in r] for r in t.A_exact]
            if all(f.beta_exact == 1 for f in t.factors) and t.factors:
                assert len(t.factors) == L.width and all(x == 0 for r in P for x in r)
                if L.name.startswith("level"):
                    assert sorted(t.B_exact) == [0] * (L.width - 1) + [1]
                else:   # chain-state layer: B = the state index
                    assert L.width == 1 and t.B_exact[0] == L.transitions.index(t)
            else:
                # a permutation matrix with (m - cycles) reflections
                perm = [next(i for i in range(L.width) if P[i][j] == 1) for j in range(L.width)]
                seen, cycles = set(), 0
                for s in range(L.width):
                    if s not in seen:
                        cycles += 1
                        x = s
                        while x not in seen:
                            seen.add(x)
                            x = perm[x]
                assert len(t.factors) == L.width - cycles


@given(st.permutations(list(range(6))))
def test_reflection_factors_product(perm):
    fs = reflection_factors(list(perm))
    P = exact_identity(6)
    for f in fs:
        P = exact_matmul(f.matrix_exact(), P)
    assert all(P[perm[q]][q] == 1 for q in range(6))
    assert len(fs) <= 5
    Z = exact_identity(3)
    for f in reset_factors(3):
        Z = exact_matmul(f.matrix_exact(), Z)
    assert all(x == 0 for r in Z for x in r)


def test_printed_wiring_fails_corrected_certifies():
    """000, Appendix C.4 feeds layer i with y^(i-1)_t (the NEW state of the layer above). For even-pairs the
    shortest failing word is "1": at t = 1 the lower level reads the new upper state, not the start state."""
    fsa = builders.even_pairs()
    bad = certify(build_as_printed(fsa), fsa, float_steps=50)
    assert not bad.certified and bad.counterexample == ["1"]
    assert (bad.expected, bad.got) == ("1", "0")
    certified(build(fsa), fsa)
    t3 = t_n(3)
    bad = certify(build_as_printed(t3), t3, float_steps=50)
    assert not bad.certified and len(bad.counterexample) == 1


def test_printed_wiring_equals_corrected_on_one_level():
    """With one level there is nothing above to read: the printed and the corrected wiring coincide."""
    for fsa in (builders.parity(), builders.flipflop(), builders.counter(4)):
        assert certify(build_as_printed(fsa), fsa, float_steps=50).certified


def test_report_against_theorem_bounds_and_group_construction():
    rep = compile_report(builders.counter(5))
    assert rep["levels"] == 1 and rep["level_widths"] == [5]
    assert rep["theorem4"]["level_widths_within_bound"] and rep["theorem4"]["layers_within_bound"]
    g = rep["group_construction"]
    assert g is not None and g["layers"] == 1 and g["width"] <= 5
    rep = compile_report(t_n(4))
    assert rep["group_construction"] is None
    assert rep["level_widths"] == [4, 3, 2]
    assert rep["max_factors_per_token"] == 4


def test_width_can_exceed_the_state_count():
    """A set can have more tiles than the automaton has states: on 4 points, rank-2 maps whose images are all
    6 pairs and no 3-set make the 6 pairs the tiles of X (the top level has 6 > |Q| = 4 points). The report
    says so; the model still certifies."""
    gens = []
    pairs = [(a, b) for a in range(4) for b in range(a + 1, 4)]
    for a, b in pairs:
        gens.append([a, b, b, b])
    fsa = FSA(tuple(f"p{i}" for i in range(len(gens))), np.array(gens).T, 0, name="pairs4")
    model = build(fsa)
    certified(model, fsa)
    rep = compile_report(fsa, model)
    assert rep["level_widths"][0] == 6
    assert not rep["theorem4"]["level_widths_within_bound"]


def test_save_load_roundtrip(tmp_path):
    fsa = builders.mod_arith(3)
    model = build(fsa)
    p = tmp_path / "kr.json"
    model.save(p)
    back = Model.load(p)
    certified(back, fsa, steps=100)


@st.composite
def automata(draw, max_n=8, max_k=3):
    n = draw(st.integers(1, max_n))
    k = draw(st.integers(1, max_k))
    delta = [[draw(st.integers(0, n - 1)) for _ in range(k)] for _ in range(n)]
    start = draw(st.integers(0, n - 1))
    acc = draw(st.sets(st.integers(0, n - 1)))
    return FSA(tuple(f"a{i}" for i in range(k)), delta, start, acc, name="random")


@settings(max_examples=6)
@given(automata(max_n=6))
def test_random_automata_certify(fsa):
    for split in ("depth", "class"):
        certified(build(fsa, split), fsa, steps=200)


def test_random_eight_state_automata_certify():
    rng = np.random.default_rng(3)
    for _ in range(3):
        n, k = 8, 2
        fsa = FSA(("a", "b"), rng.integers(0, n, (n, k)), 0, None, None, None, "rand8")
        certified(build(fsa), fsa, steps=200)


@pytest.mark.slow
@settings(max_examples=60)
@given(automata(max_n=8))
def test_random_automata_certify_deep(fsa):
    for split in ("depth", "class"):
        certified(build(fsa, split), fsa, steps=1000)


@pytest.mark.slow
def test_t5_and_random_ten_state_certify():
    certified(build(t_n(5)), t_n(5))
    rng = np.random.default_rng(11)
    for _ in range(3):
        fsa = FSA(("a", "b", "c"), rng.integers(0, 10, (10, 3)), 0, None, None, None, "rand10")
        certified(build(fsa, "class"), fsa)


def test_one_state_automaton():
    """One state: no holonomy level; the model is one trivial layer and still certifies."""
    fsa = FSA(("a", "b"), [[0, 0]], 0, {0}, name="one")
    model = build(fsa)
    assert model.notes["levels"] == 0 and len(model.layers) == 1
    certified(model, fsa, steps=50)


def test_unknown_option_is_an_input_error():
    from lrnnkit.errors import InputError
    with pytest.raises(InputError):
        build(builders.parity(), levels="depth")
    with pytest.raises(InputError):
        build(builders.parity(), "rows")


# --------------------------------------------------------------------------- refinement into simple factors
def _z6_fold():
    """Z_6 counter with a reset and a fold (4 levels after X's Z_6 level)."""
    return FSA(("inc", "reset", "fold"), [[(q + 1) % 6, 0, min(q, 3)] for q in range(6)], 0, name="z6fold")


@pytest.mark.parametrize("fsa,widths", [
    (builders.counter(6), [2, 3]), (builders.counter(8), [2, 2, 2]), (builders.counter(12), None),
    (builders.cycle_nav(6), [2, 3]), (_z6_fold(), None)], ids=lambda x: getattr(x, "name", str(x)))
def test_refined_compile_certifies_and_lowers_width(fsa, widths):
    """A solvable transitive holonomy group H on k tiles is replaced by one layer per composition factor
    (coset spaces H_{i-1}/H_i) when sum [H_{i-1}:H_i] < k; the model must still certify."""
    plain = build(fsa, "class")
    ref = build(fsa, "class", refine=True)
    certified(ref, fsa)
    assert ref.notes["refined_levels"]
    first = ref.notes["refined_levels"]["1"]
    assert sum(first) < plain.widths[0]
    assert int(np.prod(first)) == holonomy_decomposition(fsa, levels="class").group_order[
        holonomy_decomposition(fsa, levels="class").level_classes[0][0]]
    if widths is not None:
        assert ref.widths == widths


def test_refinement_skipped_when_it_does_not_lower_width():
    """S_4 on 4 tiles (T_4's top level): 2 + 3 + 2 + 2 = 9 > 4, so nothing is refined."""
    m = build(t_n(4), refine=True)
    assert m.notes["refined_levels"] == {} and m.widths == build(t_n(4)).widths


@settings(max_examples=5)
@given(automata(max_n=6))
def test_random_automata_refined_certify(fsa):
    certified(build(fsa, "class", refine=True), fsa, steps=100)


@pytest.mark.slow
@settings(max_examples=40)
@given(automata(max_n=8))
def test_random_automata_refined_certify_deep(fsa):
    for split in ("depth", "class"):
        certified(build(fsa, split, refine=True), fsa, steps=500)


@st.composite
def cyclic_with_extra_maps(draw):
    """A Z_n counter (n composite, so its holonomy group refines) plus one or two arbitrary maps."""
    n = draw(st.sampled_from([4, 6, 8]))
    extra = draw(st.lists(st.lists(st.integers(0, n - 1), min_size=n, max_size=n), min_size=1, max_size=2))
    maps = [[(q + 1) % n for q in range(n)]] + extra
    return FSA(tuple(f"m{i}" for i in range(len(maps))), np.array(maps).T, 0, name="cyclic+maps")


@settings(max_examples=6)
@given(cyclic_with_extra_maps())
def test_refined_compile_with_resets_and_folds(fsa):
    for split in ("class", "depth"):
        certified(build(fsa, split, refine=True), fsa, steps=100)
