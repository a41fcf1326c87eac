"""The packing model of ``lrnnkit sweep --dry-run`` (lrnnkit.sweep.plan.pack): no card ever holds more than its
whole, a task waits only while no card can hold it, the makespan of equal whole-card runs is the ceiling of tasks
over cards; the dry run writes nothing, skips done points and prints one card and wave per point; the 001 paper
specs are the protocol's runs (lrnnkit.learn.protocols.follow), one per GPU."""
import json
import math
import os
from dataclasses import asdict
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from lrnnkit.errors import InputError
from lrnnkit.learn.protocols import follow
from lrnnkit.learn.train import TrainConfig
from lrnnkit.cli import build_parser
from lrnnkit.cli.sweep import run
from lrnnkit.sweep.plan import pack
from lrnnkit.sweep.runner import run_sweep
from lrnnkit.sweep.spec import load_spec
from proofs_tests._paths import REPO

SHARES = st.sampled_from([0.0, 1 / 16, 0.25, 0.5, 0.75, 1.0, 2.0])


@given(st.lists(SHARES, max_size=30), st.integers(2, 8),
       st.lists(st.integers(1, 50), min_size=30, max_size=30))
def test_no_card_overfills_and_no_task_waits_while_a_card_could_hold_it(shares, gpus, secs):
    secs = secs[:len(shares)]
    plan = pack(shares, gpus, secs)
    pl = plan["placements"]
    events = sorted({p["start"] for p in pl} | {p["end"] for p in pl})
    for t in events:   # the load of each card at every instant where it can change (exact sums of the shares)
        load = [Fraction(0)] * gpus
        for p in pl:
            if p["start"] <= t < p["end"]:
                for g in p["gpus"]:
                    load[g] += Fraction(p["share"]) if p["share"] <= 1 else 1
        assert all(x <= 1 for x in load), (t, load)
        for p in pl:           # a task still waiting at t could not have started: no card set holds it
            if p["start"] > t and p["share"] > 0:
                s = Fraction(p["share"])
                fits = any(1 - x >= s for x in load) if s <= 1 else sum(x == 0 for x in load) >= s
                assert not fits, (t, p, load)
    assert plan["makespan"] == max((p["end"] for p in pl), default=0.0)
    assert plan["gpu_seconds"] == pytest.approx(sum(s * d for s, d in zip(shares, secs)), rel=1e-12)


@given(st.integers(0, 40), st.integers(1, 8))
def test_equal_whole_card_runs_take_the_ceiling_of_runs_over_cards_waves(n, gpus):
    plan = pack([1.0] * n, gpus)
    assert plan["makespan"] == math.ceil(n / gpus)
    assert [p["gpus"] for p in plan["placements"]] == [[i % gpus] for i in range(n)]


def test_a_task_no_card_set_holds_is_refused():
    with pytest.raises(InputError, match="task 1 asks num_gpus = 1.5"):
        pack([1.0, 1.5], 4)
    with pytest.raises(InputError, match="task 0 asks num_gpus = 8"):
        pack([8], 4)
    with pytest.raises(InputError, match="--gpus must be a positive integer"):
        pack([1.0], 0)


def _dry(tmp_path, spec, *extra):
    return build_parser().parse_args(["sweep", spec, "--out", str(tmp_path / "o"), "--dry-run", *extra])


def test_the_dry_run_prints_a_card_and_wave_per_point_and_writes_nothing(tmp_path, capsys):
    spec = os.path.join(REPO, "examples", "sweeps", "paper_001_deltanet_layers.toml")
    assert run(_dry(tmp_path, spec, "--gpus", "4,8", "--json")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert not (tmp_path / "o").exists()
    # DeltaNet with 5..1 layers and the one-layer DeltaProduct control, three seeds each
    assert doc["to_run"] == doc["total"] == 18 and doc["plans"]["4"]["waves"] == 5 and doc["plans"]["8"]["waves"] == 3
    assert [r["layers"] for r in doc["points"]] == [L for L in (5, 4, 3, 2, 1, 1) for _ in range(3)]
    assert [r["8 GPUs"]["gpus"] for r in doc["points"]] == [[i % 8] for i in range(18)]
    assert run(_dry(tmp_path, spec, "--gpus", "4")) == 0
    out = capsys.readouterr().out
    assert "18 points, 0 done" in out and "on 4 GPU(s): 5 wave(s)" in out


def test_the_dry_run_skips_points_done_in_the_store(tmp_path, capsys):
    p = tmp_path / "s.toml"
    p.write_text('kind = "collapse"\nnum_gpus = 0.5\n[params]\nsteps = 10\n[grid]\nsource = ["parity", "counter:3", '
                 '"counter:4"]\nformat = ["bf16"]\n')
    spec = load_spec(str(p))
    spec.grid = {"source": ["parity"], "format": ["bf16"]}
    run_sweep(spec, str(tmp_path / "o"), plots=False)        # one point done in the store
    assert run(_dry(tmp_path, str(p), "--gpus", "1", "--json")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["done"] == 1 and doc["to_run"] == 2
    assert [r["source"] for r in doc["points"]] == ["counter:3", "counter:4"]
    assert doc["plans"]["1"]["waves"] == 1      # two halves of one card start together


@pytest.mark.parametrize("bad", ["0", "4,x", "-1"])
def test_bad_gpu_counts_are_one_input_error(tmp_path, bad):
    spec = os.path.join(REPO, "examples", "sweeps", "paper_001_deltanet_layers.toml")
    with pytest.raises(InputError, match="--gpus"):
        run(_dry(tmp_path, spec, "--gpus", bad))


def test_gpus_without_dry_run_is_refused(tmp_path):
    spec = os.path.join(REPO, "examples", "sweeps", "paper_001_deltanet_layers.toml")
    args = build_parser().parse_args(["sweep", spec, "--gpus", "4"])
    with pytest.raises(InputError, match="--gpus 4 plans a --dry-run"):
        run(args)


@pytest.mark.parametrize("name,file", [("001-deltaproduct", "paper_001_deltaproduct.toml"),
                                       ("001-deltanet-layers", "paper_001_deltanet_layers.toml")])
def test_the_001_specs_are_the_protocols_runs_one_per_gpu(name, file):
    spec = load_spec(os.path.join(REPO, "examples", "sweeps", file))
    assert spec.num_gpus == 1.0

    def key(cfg):
        return json.dumps({k: v for k, v in asdict(cfg).items() if k != "device"}, sort_keys=True)
    ours = sorted(key(TrainConfig(**p)) for p in spec.points())
    want = sorted(key(c) for _, c in follow(name, seeds_when_silent=3))
    assert ours == want
