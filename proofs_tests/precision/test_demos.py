"""The precision demos and the CLI-facing functions of lrnnkit.precision (JSON keys the CLI contract relies on)."""
from __future__ import annotations

import json
import os
from fractions import Fraction

import pytest

from lrnnkit.errors import InputError
from lrnnkit.precision.commands import cli_cast, cli_collapse, cli_impossibility
from lrnnkit.precision.demo_models import counter_rotation, parity_scalar
from lrnnkit.precision.demos import theorem1_demo, theorem2_demo
from lrnnkit.showcase.collapse import collapse_table


def test_cli_cast_keys_and_exact_outputs():
    r = cli_cast(["0.1", "1/3", "-0", "inf", "nan", "1e6", "cos(2*pi/5)"], "fp8-e4m3fn", "nearest-even")
    assert set(r) >= {"inputs", "outputs", "format"}
    assert r["inputs"][0] == "0.1" and r["format"] == "fp8-e4m3fn"
    # 0.1 = 1.6 * 2^-4 -> mantissa 3 bits: 1.625 * 2^-4 = 0.1015625; 1/3 -> 0.34375; 1e6 -> NaN (no inf in fn)
    assert r["outputs"][:6] == ["0.1015625", "0.34375", "-0", "nan", "nan", "nan"]
    assert Fraction(r["outputs"][6]) == Fraction(5, 16)       # cos(2 pi/5) = 0.309.. -> 0.3125
    assert cli_cast(["0.1"], "bf16", "toward-zero")["outputs"] == ["0.099609375"]
    json.dumps(r)
    with pytest.raises(InputError, match="unknown number format"):
        cli_cast(["1"], "fp9", "nearest-even")
    with pytest.raises(InputError, match="not an exact number"):
        cli_cast(["one"], "bf16", "nearest-even")


def test_cli_collapse_keys():
    r = cli_collapse(counter_rotation(5), "fp8-e4m3-ieee", "op", 1000, "nearest-even")
    assert set(r) >= {"first_wrong_step", "format", "policy", "pre_period", "period"}
    assert r["format"] == "fp8-e4m3-ieee" and r["policy"] == "op" and r["exact_for_all_lengths"]
    assert r["first_wrong_step"] == 16
    r = cli_collapse(parity_scalar("-1"), "bf16", "matvec", 200, "nearest-even")
    assert r["first_wrong_step"] is None and not r["exact_for_all_lengths"]
    json.dumps(r)


def test_theorem_demos_small(tmp_path):
    t1 = theorem1_demo(["fp8-e4m3-ieee", "e3m2"], cap=3000)
    assert t1["verdict"] == "holds"
    rows = [r for r in t1["rows"] if r["spectrum"] == "[0, 1]"]
    assert rows and all(r["proof"]["period"] == 1 for r in rows)
    assert all(r["op"]["period"] in (1, None) for r in rows)
    minus = [r for r in t1["rows"] if r["model"].startswith("parity A(1)=-1")]
    assert all(r["parity_first_wrong_step"] is None and r["op"]["period"] == 2 for r in minus)
    t2 = theorem2_demo(["fp8-e4m3-ieee"], cap=3000, moduli=(3,))
    assert t2["verdict"] == "holds"
    real = [r for r in t2["rows"] if r["model"].startswith("real") and r["policy"] != "proof"]
    assert all(r["first_wrong_step"] is not None and r["output_period"] in (1, 2) for r in real)
    json.dumps(t1)
    json.dumps(t2)


def test_cli_impossibility_writes_plots(tmp_path):
    r = cli_impossibility(str(tmp_path), formats=["fp8-e4m3-ieee"], cap=2000)
    assert r["theorem1"]["verdict"] == "holds" and r["theorem2"]["verdict"] == "holds"
    assert r["plots"] and all(os.path.getsize(p) > 1000 for p in r["plots"])


def test_collapse_table_small():
    t = collapse_table(formats=("fp8-e4m3-ieee",), policies=("op",), steps=300, sources=("parity", "group:S3"),
                       rotation_m=range(3, 5), time_budget=60)
    assert t["rows"] and t["rotation_vs_m"]
    for r in t["rows"]:
        assert {"construction", "format", "policy", "variant", "first_wrong_step"} <= set(r)
    json.dumps(t)


def test_cast_model_findings_theorems_fail_under_per_operation_rounding():
    """Finding: 000 Theorems 1 and 2 hold in the proof's cast model but not under per-operation rounding. Checked by
    the simulator (exact period detection) and, independently, by Fraction arithmetic with the exact cast."""
    from lrnnkit.precision.demos import cast_model_findings
    f = cast_model_findings()
    t1, t2 = f["theorem1"], f["theorem2"]
    assert t1["eigenvalues"] == ["1/2", "1"] and t1["state_period"] == 2 and t1["first_wrong_step_all_lengths"] is None
    assert t1["exact_for_all_lengths"] and t1["proof_model_first_wrong_step_within_60"] is not None
    assert t2["all_eigenvalues_real"] and t2["state_period"] % 3 == 0 and t2["first_wrong_step_all_lengths"] is None
    # independent re-computation of the e2m2 trajectory: exact products, exact sums, exact rounding each time
    from lrnnkit.precision.cast import cast_exact
    fl = lambda q: Fraction(cast_exact(q, "e2m2"))  # noqa: E731
    A = [[Fraction(3, 4), Fraction(-1, 4)], [Fraction(-1, 4), Fraction(3, 4)]]
    h = [Fraction(-3), Fraction(0)]
    traj = [h]
    for _ in range(12):
        h = [fl(fl(r[0] * h[0]) + fl(r[1] * h[1])) for r in A]
        traj.append(h)
    assert traj[3] == [Fraction(-3, 2), Fraction(5, 4)] and traj[4] == [Fraction(-5, 4), Fraction(3, 2)]
    assert all(traj[k] == traj[k + 2] for k in range(3, 11)) and traj[3] != traj[4]
