"""Compiled versus learned (lrnnkit.learn.compiled_vs_learned): the compiled side's certified costs, exact, for
parity, S3 and S5 on swaps only; the tasks without a single automaton; the learned side's choice of the smallest
run reaching the target on hand-made results, including the case where none reaches it."""
from __future__ import annotations

import pytest

from lrnnkit.constructions import candidates

from lrnnkit.learn.compiled_vs_learned import (Target, compare, compiled_cost, measured, smallest_reaching,
                                                target_of, task_automaton)


def _cost(task: str) -> dict:
    fsa, why = task_automaton(task)
    assert fsa is not None and why == ""
    c = compiled_cost(fsa)
    return {k: c[k] for k in ("construction", "layers", "widths", "total_width", "factors_per_token", "certified",
                              "states", "letters")}


def test_parity_compiles_to_one_sign_flip():
    """000 Theorem 3, m = 2: one layer of width 1, the letter 1 applies one factor (the sign -1)."""
    assert _cost("parity") == {"construction": "parity-sign", "layers": 1, "widths": [1], "total_width": 1,
                               "factors_per_token": 1, "certified": True, "states": 2, "letters": 2}


def test_s3_compiles_to_three_points_two_factors():
    """000 Theorem 3 for S3 on 3 points: width 3; a 3-cycle is 3 - 1 = 2 reflections."""
    assert _cost("group:S3") == {"construction": "householder-permutation", "layers": 1, "widths": [3],
                                 "total_width": 3, "factors_per_token": 2, "certified": True, "states": 6,
                                 "letters": 6}
    # the certificate's measured cost is the construction's formula (registry, nothing built)
    fsa, _ = task_automaton("group:S3")
    (c, k), *_ = candidates(fsa)
    assert (c.name, list(k.widths), k.factors_per_token) == ("householder-permutation", [3], 2)


def test_s5_swaps_need_one_factor_where_s5_needs_four():
    """000 Section 5.2's swaps only: the identity and the 10 transpositions of S5, each at most one reflection; the
    whole of S5 needs 5 - 1 = 4 (a 5-cycle)."""
    fsa, _ = task_automaton("S5-swaps")
    assert fsa.n_letters == 11 and fsa.n_states == 120
    swaps = _cost("S5-swaps")
    assert (swaps["construction"], swaps["layers"], swaps["total_width"], swaps["factors_per_token"]) == \
        ("householder-permutation", 1, 5, 1)
    assert _cost("group:S5")["factors_per_token"] == 4


@pytest.mark.parametrize("task, why", [("mod-arith-br:5", "brackets"), ("S5-4tok", "4 tokens per letter"),
                                       ("copy:26", "copying")])
def test_tasks_without_a_single_automaton(task, why):
    fsa, reason = task_automaton(task)
    assert fsa is None and reason.startswith("no single automaton") and why in reason


def test_sum_and_mod_arith_are_the_tasks_automata():
    fsa, _ = task_automaton("sum:5")
    assert (fsa.n_states, fsa.n_letters) == (5, 5)
    assert fsa.run(fsa.encode("3 4 4")) == (3 + 4 + 4) % 5
    fsa, _ = task_automaton("mod-arith-nb:5")
    assert fsa.content_hash() == task_automaton("mod-arith:5")[0].content_hash()


def _run(width, layers, steps, token, *, n_h=1, params=None, final=None, scaled=None, task="group:S3"):
    r = {"task": task, "steps": steps, "config": {"task": task, "layer": "deltaproduct", "width": width,
                                                 "layers": layers, "heads": 4, "head_dim": None, "n_h": n_h},
         "test_accuracy": {"16": 1.0, "64": token}}
    if params is not None:
        r["parameters"] = params
    if final is not None:
        r["final_accuracy"] = {"16": 1.0, "64": final}
    if scaled is not None:
        r["scaled_accuracy"] = {"16": scaled[0], "64": scaled[1]}
    return r


TOKEN = Target("token_at_longest", 0.9)


def test_smallest_reaching_run_is_chosen():
    runs = {"big": _run(128, 2, 100, 0.99, params=5000),
            "small, fails": _run(32, 1, 100, 0.89, params=100),     # below the threshold: never chosen
            "small": _run(64, 1, 500, 0.91, params=900),
            "small, more factors": _run(64, 1, 50, 0.95, n_h=2, params=800),
            "small, fewer steps": _run(64, 1, 400, 0.90, params=950)}   # 0.90 reaches (>=)
    got = smallest_reaching(runs, TOKEN)
    f = got["reached"]
    assert (f["label"], f["width"], f["layers"], f["n_h"], f["steps"], f["parameters"], f["head_dim"]) == \
        ("small, fewer steps", 64, 1, 1, 400, 950, 16)
    assert f["value"] == 0.90
    assert got["best"]["label"] == "big"


def test_none_reaches_the_target():
    runs = {"a": _run(64, 1, 100, 0.5), "b": _run(32, 1, 100, 0.899), "failed": "OutOfMemoryError"}
    got = smallest_reaching(runs, TOKEN)
    assert got["reached"] is None
    assert got["best"]["label"] == "b" and got["best"]["value"] == 0.899
    assert smallest_reaching({}, TOKEN) == {"reached": None, "best": None}


def test_the_metric_is_the_experiments_own():
    r = _run(64, 1, 100, 0.99, final=0.5, scaled=(1.0, 0.6))
    assert measured(r, "token_at_longest") == 0.99
    assert measured(r, "final_at_longest") == 0.5
    assert measured(r, "scaled_mean") == pytest.approx(0.8, abs=1e-12)   # (1.0 + 0.6) / 2 in binary floats
    assert target_of("000-s5").metric == "final_at_longest"
    assert target_of("000-parity").metric == "scaled_mean"
    assert target_of("001-deltaproduct").metric == "token_at_longest"
    # a run reaching token accuracy but not the final accuracy does not reach 000-s5's target
    assert smallest_reaching({"x": r}, target_of("000-s5"))["reached"] is None
    assert smallest_reaching({"x": _run(64, 1, 100, 0.5)}, target_of("000-s5")) == {"reached": None, "best": None}


def test_compare_groups_by_task_and_compiles_each_automaton_once():
    calls = []

    def fake_compiled(fsa):
        calls.append(fsa.name)
        return {"construction": "x"}

    records = [{"name": "E", "scale": "small", "runs": {"s3 big": _run(128, 1, 10, 0.95),
                                                        "s3 small": _run(32, 1, 10, 0.2)},
                "superseded": {"s3 small (call 2)": _run(32, 1, 99, 0.97)}},
               {"name": "E", "scale": "tiny", "runs": {"s3 small": _run(16, 1, 5, 0.1)}},
               {"name": "other", "scale": "small", "runs": {"z": _run(8, 1, 1, 1.0)}}]
    rows = compare({"E": ["group:S3", "mod-arith-br:5"], "F": ["group:S3"]}, records, compiled=fake_compiled)
    assert [(r["experiment"], r["task"], r["runs"]) for r in rows] == \
        [("E", "group:S3", 4), ("E", "mod-arith-br:5", 0), ("F", "group:S3", 0)]
    assert len(calls) == 1                                  # S3 compiled once, brackets not at all
    assert rows[0]["reached"]["label"] == "s3 small (call 2)" and rows[0]["reached"]["scale"] == "small"
    assert rows[1]["compiled"] is None and "brackets" in rows[1]["no_automaton"]
    assert rows[2]["reached"] is None and rows[2]["best"] is None


def test_scaled_mean_reads_the_test_mixture_where_a_run_has_one():
    """000 Table 3 scores one mixture of lengths 40..256: a run with ``test_mix`` is read there, not at the mean of
    its per-length table (which here says 0.8, the mixture 0.25); a run without one keeps the per-length mean."""
    per_length = {"scaled_accuracy": {"40": 1.0, "256": 0.6}}
    assert measured(per_length, "scaled_mean") == pytest.approx(0.8, abs=1e-12)
    with_mix = {**per_length, "test_mix": {"words": 8192, "lengths": [40, 256], "scaled_accuracy": 0.25}}
    assert measured(with_mix, "scaled_mean") == 0.25
