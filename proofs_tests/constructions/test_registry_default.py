"""The default construction is the cheapest applicable one.

Cost (lrnnkit.constructions.registry, module docstring): GH layers before non-GH layers, then total width, then
factors per token, then layers, then priority. The cost formulas (``Construction.cost``, evaluated without building)
must equal what the built model measures, and the chosen construction must be no more expensive than ANY applicable
construction, krohn-rhodes (costed only by building it) included.
"""
import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lrnnkit import certify, compile, load_source
from lrnnkit.automata.fsa import FSA
from lrnnkit.constructions import candidates, choose, get, model_cost

SMALL = ["parity", "counter:4", "group:Z1", "group:Z5", "group:D4", "group:D8", "group:S3", "group:S4",
         "group:Z2xZ2", "group:Z2xZ3", "cycle-nav:4", "flipflop", "even-pairs"]


def test_d8_gets_two_width_two_layers_with_one_factor():
    fsa = load_source("group:D8")
    model = compile(fsa)
    assert model.provenance["construction"] == "dihedral-deltanet"
    cost = model_cost(model)
    assert cost.widths == (2, 2) and cost.factors_per_token == 1 and cost.gh
    # the previous default (width 8, 7 factors per token) is still there, ranked behind
    names = [c.name for c, _ in candidates(fsa)]
    assert names.index("dihedral-deltanet") < names.index("householder-permutation")


def test_known_choices():
    expect = {"parity": "parity-sign", "group:Z5": "cyclic-rotation", "group:S4": "rotation-3d",
              "group:S5": "householder-permutation", "flipflop": "krohn-rhodes", "even-pairs": "krohn-rhodes"}
    for src, name in expect.items():
        assert choose(load_source(src)).name == name, src


def test_formulas_equal_the_built_models_and_the_choice_is_minimal():
    for src in SMALL:
        fsa = load_source(src)
        cands = candidates(fsa, build_all=True)
        assert cands and all(k is not None for _, k in cands), src
        for c, k in cands:
            measured = model_cost(c.build(fsa))
            assert measured.key() == k.key(), (src, c.name, k, measured)
        keys = [k.key() for _, k in cands]
        assert keys == sorted(keys), src
        chosen = choose(fsa)
        best = min(k.key() for _, k in cands)
        assert dict((c.name, k.key()) for c, k in cands)[chosen.name] == best, src


def test_krohn_rhodes_is_not_built_when_a_formula_construction_applies(monkeypatch):
    kr = get("krohn-rhodes")

    def boom(*a, **k):
        raise AssertionError("krohn-rhodes was built although a GH construction with a cost formula applies")
    monkeypatch.setattr(kr, "build", boom)
    assert choose(load_source("group:S5")).name == "householder-permutation"
    assert dict((c.name, k) for c, k in candidates(load_source("group:S5")))["krohn-rhodes"] is None


def test_variants_as_printed_are_never_chosen():
    for src in ("group:D4", "flipflop"):
        assert all(c.variant_of is None for c, _ in candidates(load_source(src), build_all=True))


@st.composite
def small_automata(draw):
    n = draw(st.integers(1, 4))
    k = draw(st.integers(1, 3))
    delta = np.array(draw(st.lists(st.lists(st.integers(0, n - 1), min_size=k, max_size=k), min_size=n, max_size=n)))
    labels = tuple(str(x) for x in draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    return FSA(tuple(f"a{i}" for i in range(k)), delta, 0, None, labels, None, "random")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_automata())
def test_random_automata_choice_is_cheapest_and_certified(fsa):
    cands = candidates(fsa, build_all=True)
    chosen = choose(fsa)
    best = min(k.key() for _, k in cands)
    assert dict((c.name, k.key()) for c, k in cands)[chosen.name] == best
    model = compile(fsa)
    assert model.provenance["construction"] == chosen.name
    assert certify(model, fsa, float_steps=0).certified


def test_cli_explain_marks_the_chosen_one(tmp_path, capsys):
    from lrnnkit.cli import main
    assert main(["compile", "group:D8", "--explain"]) == 0
    out = capsys.readouterr().out
    marked = [line for line in out.splitlines() if line.startswith("*")]
    assert len(marked) == 1 and "dihedral-deltanet" in marked[0]
    assert "householder-permutation" in out and "krohn-rhodes" in out
    path = tmp_path / "d8.json"
    assert main(["compile", "group:D8", "--explain", "--json", "-o", str(path)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["chosen"] == "dihedral-deltanet" and [c["name"] for c in d["candidates"] if c["chosen"]] == [d["chosen"]]
    costs = [c["cost"] for c in d["candidates"] if c["cost"]]
    assert costs[0] == {"layers": 2, "widths": [2, 2], "total_width": 4, "factors_per_token": 1, "gh": True,
                        "source": "formula"}
    assert json.loads(path.read_text())["provenance"]["construction"] == "dihedral-deltanet"


def test_cli_explain_subprocess_exit_status():
    r = subprocess.run([sys.executable, "-m", "lrnnkit", "compile", "parity", "--explain", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and json.loads(r.stdout)["chosen"] == "parity-sign"


def test_a_construction_past_a_size_limit_is_skipped_and_the_limit_reported_when_none_is_left(monkeypatch):
    from lrnnkit.errors import SizeLimitError

    def too_large(*a, **k):
        raise SizeLimitError("too large (limit 1)")
    monkeypatch.setattr(get("dihedral-deltanet"), "cost", too_large)
    assert choose(load_source("group:D4")).name == "householder-permutation"
    for name in ("bilinear-onehot", "block-diagonal-normalized"):
        monkeypatch.setattr(get(name), "cost", too_large)
    monkeypatch.setattr(get("krohn-rhodes"), "build", too_large)
    with pytest.raises(SizeLimitError, match="limit 1"):
        choose(load_source("flipflop"))


@pytest.mark.parametrize("name,src", [("cyclic-rotation", "group:Z4"), ("parity-affine", "parity"),
                                      ("deltaproduct-symmetric", "group:S3"), ("bilinear-onehot", "flipflop")])
def test_register_stamps_the_provenance(name, src):
    """A registered build records its construction, paper, statement and automaton (the constructions write none
    themselves); the module's own function, called directly, records nothing."""
    from lrnnkit.constructions.registry import provenance
    c, fsa = get(name), load_source(src)
    model = c.build(fsa)
    assert model.provenance == provenance(c, fsa)
    assert (model.provenance["construction"], model.provenance["paper"]) == (c.name, c.paper)
    assert model.provenance["automaton_hash"] == fsa.content_hash()
    assert c.build.__wrapped__(fsa).provenance == {}
