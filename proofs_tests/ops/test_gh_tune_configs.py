"""The parts of benchmarks/tune_gh_configs.py that need no GPU: the candidate settings (clamped to the widths the
kernels run at, duplicates dropped, the setting a compiled test marks miscompiled left out, pipeline stages only in
the second pass), the output comparison a candidate must pass, and the table text it writes (one the package's
reader accepts, entries unchanged)."""
from __future__ import annotations

import math

import torch

from benchmarks import tune_gh_configs as tune
from lrnnkit.ops.gh import wy_tuned
from lrnnkit.ops.gh.wy_config import CONFIG, CONFIG_F32, _settings


def test_candidates_wide_heads():
    got = tune.candidates(CONFIG, "state_fwd", True, 128, 128, "bf16")
    assert got[0] == CONFIG["state_fwd"] and set(got) == {(64, 4), (32, 4), (128, 4), (64, 8)}
    assert (32, 4) not in tune.candidates(CONFIG, "state_bwd", True, 128, 128, "bf16")   # the known miscompile
    assert (32, 4) in tune.candidates(CONFIG_F32, "state_bwd", False, 128, 128, "tf32x3")
    assert tune.candidates(CONFIG, "dqkwy_bk", True, 128, 128, "bf16") == [128, 32, 64]
    assert tune.candidates(CONFIG, "t_warps", True, 128, 128, "bf16") == [2, 4, 8]


def test_candidates_narrow_heads_are_distinct_as_run():
    for key in ("state_fwd", "dqkwy"):
        got = tune.candidates(CONFIG, key, True, 32, 32, "bf16")
        run = [_settings({key: o}, key, True, 32) for o in got]
        assert len(set(run)) == len(run) and all(r[0] == 32 for r in run)
    assert tune.candidates(CONFIG, "dqkwy_bk", True, 32, 32, "bf16") == [128]   # every key block runs as 32


def test_candidates_second_round_changes_only_stages():
    assert tune.candidates(CONFIG, "state_fwd", True, 128, 128, "bf16", winner=(64, 4)) == [(64, 4, 3)]
    assert tune.candidates(CONFIG, "dqkwy", True, 128, 128, "bf16", winner=(64, 8, 3)) == [(64, 8, 2)]
    assert tune.candidates(CONFIG_F32, "dqkwg", False, 128, 128, "tf32x3", winner=(32, 4, 2)) == [(32, 4, 1)]


def test_err_is_relative_to_the_largest_entry_and_refuses_non_finite():
    ref = {"o": torch.tensor([4.0, -2.0])}
    assert tune.err({"o": torch.tensor([4.0, -1.0])}, ref) == 0.25
    assert tune.err({"o": torch.tensor([4.0, float("nan")])}, ref) == math.inf
    assert tune.err(ref, ref) == 0.0


def test_table_text_round_trips():
    doc = {"source": "x", "entries": {"sm90/bf16/128x128": {"state_fwd": [64, 4, 3], "wy_bk": 32},
                                      "sm90/tf32/32x32": {"t_warps": 8}}}
    assert wy_tuned.parse(tune.table_text(doc)) == {
        "sm90/bf16/128x128": {"state_fwd": (64, 4, 3), "wy_bk": 32}, "sm90/tf32/32x32": {"t_warps": 8}}
    assert wy_tuned.parse(tune.table_text(dict(doc, entries={}))) == {}
