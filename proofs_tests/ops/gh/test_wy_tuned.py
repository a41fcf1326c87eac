"""The kernel settings chosen ahead of time (:mod:`lrnnkit.ops.gh.wy_tuned`, ``lrnnkit/data/gh_tiles.json``):
the shipped table parses; malformed tables are refused naming the entry; a call finds its entry by architecture,
product mode and run widths and runs with it (gradients still right against the naive loop: the entry only moves
tiles, warps and stages); a change of the built-in table since import wins over the entry; no entry leaves the
built-in table in force."""
from __future__ import annotations

import json

import pytest
import torch

from lrnnkit.errors import InputError
from lrnnkit.ops.gh import wy, wy_config, wy_tuned

from .test_wy import DEV, F64, _check


def test_shipped_table_parses():
    entries = wy_tuned.load()
    assert entries == wy_tuned.ENTRIES
    for key, entry in entries.items():
        arch, mode, widths = key.split("/")
        assert mode in wy_tuned.MODES and set(entry) <= set(wy_config.CONFIG) | {wy_tuned.CHUNK}


def doc(entries):
    return json.dumps({"format": 1, "entries": entries})


@pytest.mark.parametrize("text,match", [
    ("{", "not JSON"),
    (json.dumps({"format": 2, "entries": {}}), "format"),
    (doc({"sm90/bf16/128": {}}), "arch/mode/KxV"),
    (doc({"gpu/bf16/128x128": {}}), "arch/mode/KxV"),
    (doc({"sm90/fp8/128x128": {}}), "arch/mode/KxV"),
    (doc({"sm90/bf16/128x128": {"state_fwd": [64]}}), "sm90/bf16/128x128: state_fwd"),
    (doc({"sm90/bf16/128x128": {"state_fwd": [48, 4]}}), "state_fwd"),
    (doc({"sm90/bf16/128x128": {"state_fwd": [64, 4, 9]}}), "state_fwd"),
    (doc({"sm90/bf16/128x128": {"wy_bk": 48}}), "wy_bk"),
    (doc({"sm90/bf16/128x128": {"wy_bk": True}}), "wy_bk"),
    (doc({"sm90/bf16/128x128": {"split": True}}), "unknown kernel setting 'split'"),
    (doc({"sm90/bf16/128x128": [1]}), "object"),
    (doc({"sm90/bf16/32x32": {"chunk": 48}}), "chunk must be one of 16, 32, 64"),
    (doc({"sm90/bf16/32x32": {"t_sub": 2}}), "t_sub must be one of 4, 8, 16"),
    (doc({"sm90/bf16/32x32": {"chunk": True}}), "chunk must be one of"),
    (doc({"sm90/bf16/32x32": {"chunk": [32]}}), "chunk must be one of"),
])
def test_bad_tables_are_refused(text, match):
    with pytest.raises(InputError, match=match):
        wy_tuned.parse(text, "t.json")


def test_good_table_parses_to_tuples():
    got = wy_tuned.parse(doc({"sm90/tf32x3/32x32": {"dqkwy": [32, 4, 2], "dqkwy_bk": 32, "t_warps": 4, "chunk": 32}}))
    assert got == {"sm90/tf32x3/32x32": {"dqkwy": (32, 4, 2), "dqkwy_bk": 32, "t_warps": 4, "chunk": 32}}


def test_an_entry_picks_the_chunk_of_a_call_that_names_none(monkeypatch):
    monkeypatch.setattr(wy_tuned, "arch", lambda device: "sm90")
    monkeypatch.setattr(wy_tuned, "ENTRIES", {wy_tuned.key("sm90", "fp64", 32, 5): {"chunk": 32, "wy_bk": 16}})
    assert wy_config.default_chunk(F64, None, 32, 5, DEV) == 32
    # other widths, no widths, another mode: the built-in rule
    assert wy_config.default_chunk(F64, None, 16, 5, DEV) == 64 and wy_config.default_chunk(F64) == 64
    assert wy_config.default_chunk(torch.float32, None, 32, 5, DEV) == 16
    # the chunk is no kernel-table key: the entry's tiles go into the table, its chunk does not
    cfg = wy_config.config_table(F64, None, 32, 5, DEV)
    assert wy_tuned.CHUNK not in cfg and cfg["wy_bk"] == 16
    seen = []
    init = wy._Ctx.__init__

    def spy(self, q, k, v, g, cu, BT, *a, **kw):
        seen.append(BT)
        init(self, q, k, v, g, cu, BT, *a, **kw)
    monkeypatch.setattr(wy._Ctx, "__init__", spy)
    # a call without chunk_size runs the entry's chunk, gradients right; one that names a chunk runs that one
    _check(37, 2, True, None, F64, BT=None, B=1, H=1, K=32, V=5, seed=4)
    assert seen and set(seen) == {32}
    _check(37, 2, True, None, F64, BT=16, B=1, H=1, K=32, V=5, seed=4)
    assert seen[-1] == 16


def test_a_call_runs_with_its_entry(monkeypatch):
    # the interpreter's device is the CPU, which no entry names: pretend it is an sm90 for the lookup
    monkeypatch.setattr(wy_tuned, "arch", lambda device: "sm90")
    entry = {"state_rec": (16, 4, 1), "state_bwd": (16, 2), "wy_bk": 16, "dqkwg_bk": 16}
    monkeypatch.setattr(wy_tuned, "ENTRIES", {wy_tuned.key("sm90", "fp64", 32, 5): entry})
    q = torch.zeros(1, 3, 1, 32, dtype=F64, device=DEV)
    v = torch.zeros(1, 3, 1, 5, dtype=F64, device=DEV)
    c = wy._Ctx(q, q, v, None, None, 16)
    assert {k: c.cfg[k] for k in entry} == entry
    assert wy_config.CONFIG_WIDE["wy_bk"] == wy_config._BUILT_IN[id(wy_config.CONFIG_WIDE)]["wy_bk"]   # untouched
    # other widths or another mode: the built-in table
    assert wy._Ctx(q[..., :16], q[..., :16], v, None, None, 16).cfg == wy_config.CONFIG_WIDE
    assert wy._Ctx(q.float(), q.float(), v.float(), None, None, 16).cfg == wy_config.config_table(torch.float32)
    # a change of the built-in table since import wins over the entry
    built = wy_config.CONFIG_WIDE["wy_bk"]
    monkeypatch.setitem(wy_config.CONFIG_WIDE, "wy_bk", 64)
    assert wy._Ctx(q, q, v, None, None, 16).cfg["wy_bk"] == 64
    monkeypatch.setitem(wy_config.CONFIG_WIDE, "wy_bk", built)
    assert wy._Ctx(q, q, v, None, None, 16).cfg["wy_bk"] == 16
    # every output and gradient against the naive loop with the entry in force (16-wide key blocks: two of them)
    monkeypatch.setitem(wy_config.CONFIG_WIDE, "split", True)
    monkeypatch.setitem(wy_config.CONFIG_WIDE, "fuse", False)
    _check(11, 2, True, None, F64, BT=16, B=1, H=1, K=32, V=5, seed=3)
