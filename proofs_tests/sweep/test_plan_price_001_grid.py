"""benchmarks/price_001_grid.py on a synthetic cost table: a cell's GPU-hours are its runs x the paper's steps x the
row's ms per step (scaled by tokens per step where the spec's batch is not the row's), the wall-clock on G cards is
the packing of the priced runs, more cards never take longer, and a bad option is exit status 2."""
import json
import os
import sys

import pytest

from lrnnkit.learn.experiments import get_experiment
from proofs_tests._paths import REPO

sys.path.insert(0, os.path.join(REPO, "benchmarks"))
sys.path.insert(0, REPO)
import price_001_grid as pg  # noqa: E402


def _cost(tmp_path):
    exps = {}
    for name in pg.SPECS:
        rows = []
        for i, (label, cfg) in enumerate(get_experiment(name).runs("paper")):
            rows.append({"label": label, "ms_per_step": 10.0 + i, "batch": cfg.batch,
                         "train_len": list(cfg.train_len), "paper_steps": cfg.steps})
        exps[name] = {"rows": rows}
    p = tmp_path / "cost.json"
    p.write_text(json.dumps({"device": "test card", "experiments": exps}))
    return p


def test_cells_are_priced_from_their_rows_and_packed(tmp_path):
    cost = json.loads(_cost(tmp_path).read_text())
    doc = pg.price(cost, pg.SPECS, [4, 8], 540.0)
    dp = {c["cell"]: c for c in doc["specs"]["001-deltaproduct"]["cells"]}
    assert len(dp) == 16 and all(c["runs"] == 3 for c in dp.values())
    # A5 n_h=2 is the experiment's 10th configuration (index 9: 19 ms), at the experiment's batch: not scaled
    a5 = dp["A5 DeltaProduct n_h=2 [-1,1]"]
    assert not a5["scaled"] and a5["ms_per_step"] == 19.0 and a5["steps"] == 195_312
    assert a5["gpu_hours"] == round(3 * 195_312 * 19.0 / 3.6e6, 3)
    # S3 runs at batch 2048 against the row's 1024: twice the tokens, twice the ms (index 1: 11 ms)
    s3 = dp["S3 DeltaProduct n_h=2 [-1,1]"]
    assert s3["scaled"] and s3["ms_per_step"] == 22.0 and s3["steps"] == 97_656
    # three runs of one cell alone on 4 or 8 cards run side by side: the wall-clock is one run's
    assert s3["wall_hours_alone"] == {"4": round(97_656 * 22.0 / 3.6e6, 3), "8": round(97_656 * 22.0 / 3.6e6, 3)}
    # a checkpoint holds 12 bytes a parameter: each DeltaNet layer adds the same, so the sizes step evenly
    ly = {c["cell"]: c["checkpoint_mib"] for c in doc["specs"]["001-deltanet-layers"]["cells"]}
    sizes = [ly[f"S3 DeltaNet {L} layer(s) [-1,1]"] for L in range(1, 6)]
    steps = [b - a for a, b in zip(sizes, sizes[1:])]
    assert sizes[0] > 0 and max(steps) - min(steps) <= 0.2 and min(steps) > 0    # 0.2: the 0.1 MiB rounding, twice
    for s in doc["specs"].values():
        t = s["total"]
        assert t["wall_hours"]["8"] <= t["wall_hours"]["4"] <= t["gpu_hours"]
        assert t["gpu_hours"] == pytest.approx(sum(c["gpu_hours"] for c in s["cells"]), abs=1e-2)
        assert t["wall_hours"]["4"] >= t["gpu_hours"] / 4 - 1e-3     # no packing beats the cards' total time
    assert doc["total"]["gpu_hours"] == pytest.approx(
        sum(s["total"]["gpu_hours"] for s in doc["specs"].values()), abs=1e-3)


def test_the_script_prints_the_table_and_writes_json(tmp_path, capsys):
    out = tmp_path / "p.json"
    assert pg.main(["--cost", str(_cost(tmp_path)), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| S3 DeltaNet 5 layer(s) [-1,1] | 3 |" in text and "**both grids**" in text
    assert json.loads(out.read_text())["device"] == "test card"


@pytest.mark.parametrize("argv", [["--gpus", "0"], ["--gpus", "x"], ["--call-seconds", "0"], ["--cost", "/nope"],
                                  ["--cost", "EMPTY"]])
def test_bad_options_are_exit_status_2(tmp_path, argv, capsys):
    if "EMPTY" in argv:      # a cost table without the 001 rows
        (tmp_path / "e.json").write_text(json.dumps({"device": "x", "experiments": {}}))
        argv = ["--cost", str(tmp_path / "e.json")]
    elif "--cost" not in argv:
        argv = argv + ["--cost", str(_cost(tmp_path))]
    assert pg.main(argv) == 2
    assert capsys.readouterr().err.startswith("price_001_grid: ")
