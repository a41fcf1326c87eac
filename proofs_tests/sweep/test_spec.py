"""Sweep specs (lrnnkit.sweep.spec): the grid is the product of the axes in order (tables zip), point keys and seeds
depend on the spec and the point only, every malformed spec is one line and exit 2 before any work, the example
specs are valid."""
from __future__ import annotations

import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lrnnkit.cli import main
from lrnnkit.errors import InputError
from lrnnkit.sweep.spec import parse_spec
from proofs_tests._paths import REPO
from proofs_tests.sweep.test_runner import _write


def test_grid_is_the_product_in_order_and_tables_zip():
    s = parse_spec({"kind": "collapse", "params": {"steps": 5},
                    "grid": {"case": [{"source": "parity", "construction": "parity-sign"},
                                      {"source": "counter:3", "construction": "cyclic-rotation"}],
                             "format": ["bf16", "fp16", "fp32"]}})
    pts = s.points()
    assert s.n_points() == len(pts) == 6
    assert pts[0] == {"steps": 5, "source": "parity", "construction": "parity-sign", "format": "bf16"}
    assert [p["format"] for p in pts[:3]] == ["bf16", "fp16", "fp32"]      # the last key varies fastest
    assert pts[3]["source"] == "counter:3"


grid_values = st.lists(st.integers(0, 50), min_size=1, max_size=4, unique=True)


@given(a=grid_values, b=grid_values, extra=st.integers(51, 99), seed=st.integers(0, 2**31))
def test_point_keys_and_seeds_depend_on_spec_and_point_only(a, b, extra, seed):
    """Extending a grid keeps every old point's key and seed (so a resumed, extended sweep reuses them); points are
    distinct; the base seed changes every seed; the spec hash changes with the grid."""
    s1 = parse_spec({"kind": "collapse", "seed": seed, "grid": {"x": a, "y": b}}, kinds=())
    s2 = parse_spec({"kind": "collapse", "seed": seed, "grid": {"y": b, "x": a + [extra]}}, kinds=())
    k1 = {json.dumps(p, sort_keys=True): (s1.point_key(p), s1.point_seed(p)) for p in s1.points()}
    k2 = {json.dumps(p, sort_keys=True): (s2.point_key(p), s2.point_seed(p)) for p in s2.points()}
    assert len(k1) == s1.n_points() == len(a) * len(b)
    assert all(k2[p] == v for p, v in k1.items())
    assert len({v[0] for v in k2.values()}) == len(k2)
    assert s1.spec_hash != s2.spec_hash
    s3 = parse_spec({"kind": "collapse", "seed": seed + 1, "grid": {"x": a, "y": b}}, kinds=())
    assert all(s3.point_seed(p) != s1.point_seed(p) for p in s1.points()[:1])


@pytest.mark.parametrize("text, needle", [
    ('kind = "collapse"\n', "[grid]"),
    ('[grid]\nsource = ["parity"]\n', "kind"),
    ('kind = "nope"\n[grid]\nx = [1]\n', "unknown kind 'nope'"),
    ('kind = "collapse"\n[grid]\nsource = []\n', "grid.source must be a non-empty list"),
    ('kind = "collapse"\n[grid]\nsource = "parity"\n', "grid.source must be a non-empty list"),
    ('kind = "collapse"\n[grid]\nsource = ["parity", "parity"]\n', "lists a value twice"),
    ('kind = "collapse"\nbogus = 1\n[grid]\nsource = ["parity"]\n', "unknown key(s) bogus"),
    ('kind = "collapse"\n[params]\nsource = "parity"\n[grid]\nsource = ["parity"]\n', "set twice"),
    ('kind = "collapse"\n[grid]\nsource = ["parity"]\n', "needs parameter(s) format"),
    ('kind = "collapse"\n[grid]\nsource = ["parity"]\nformat = ["bf16"]\nfromat = [1]\n',
     "unknown parameter(s) fromat"),
    ('kind = "collapse"\n[grid]\nsource = ["parity"]\nformat = ["bf17"]\n', "bf17"),
    ('kind = "collapse"\n[grid]\nsource = ["parity"]\nformat = ["bf16"]\nsteps = [0]\n', "'steps' must be >= 1"),
    ('kind = "collapse"\nseed = -1\n[grid]\nsource = ["parity"]\n', "'seed' must be a non-negative integer"),
    ('kind = "collapse"\nnum_cpus = 0\n[grid]\nsource = ["parity"]\n', "num_cpus"),
    ('kind = "theorems"\n[grid]\nid = ["000:no-such"]\n', "000:no-such"),
    ('kind = "collapse"\n[grid\n', "not valid TOML"),
    ('kind = "collapse"\nnum_gpus = "auto"\n[grid]\nsource = ["parity"]\n', 'num_gpus = "auto" is for train'),
    ('kind = "train"\nnum_gpus = "half"\n[grid]\ntask = ["parity"]\n', 'or "auto" (train), got \'half\''),
    ('kind = "train"\nnum_gpus = 0.5\ngpu_memory_gb = 80\n[grid]\ntask = ["parity"]\n',
     'gpu_memory_gb is used only with num_gpus = "auto"'),
    ('kind = "train"\nnum_gpus = "auto"\ngpu_memory_gb = 0\n[grid]\ntask = ["parity"]\n', "'gpu_memory_gb' must be"),
    ('kind = "train"\nnum_gpus = "auto"\ngpu_memory_gb = "80"\n[grid]\ntask = ["parity"]\n', "'gpu_memory_gb' must"),
])
def test_bad_specs_are_one_line_exit_2(tmp_path, capsys, text, needle):
    path = _write(tmp_path, text)
    assert main(["sweep", path, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and needle in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_parse_spec_rejects_non_json_values():
    import datetime
    with pytest.raises(InputError, match="not a JSON value"):
        parse_spec({"kind": "collapse", "grid": {"source": [datetime.date(2020, 1, 1)]}})


@pytest.mark.parametrize("name", sorted(os.listdir(os.path.join(REPO, "examples",
                                                                 "sweeps"))))
def test_example_specs_are_valid(name):
    from lrnnkit.sweep.runner import check_spec_file
    spec = check_spec_file(os.path.join(REPO, "examples", "sweeps", name))
    assert spec.n_points() >= 1


def test_auto_gpu_shares_spec():
    """``num_gpus = "auto"`` (train only) with an optional ``gpu_memory_gb``: scheduling keys, not in the hash."""
    base = {"kind": "train", "grid": {"task": ["parity"]}}
    spec = parse_spec({**base, "num_gpus": "auto", "gpu_memory_gb": 79.6})
    assert (spec.num_gpus, spec.gpu_memory_gb) == ("auto", 79.6)
    assert spec.spec_hash == parse_spec(base).spec_hash
    assert spec.to_json()["num_gpus"] == "auto" and parse_spec(base).gpu_memory_gb is None


def test_auto_without_a_gpu_or_gpu_memory_gb_is_one_line(tmp_path, capsys):
    """No CUDA device on the driver and no ``gpu_memory_gb``: the card's size is unknown; refused before any job
    (and before Ray starts)."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("the driver has a GPU: its memory is the card's")
    path = _write(tmp_path, 'kind = "train"\nnum_gpus = "auto"\n[params]\nsteps = 2\n[grid]\ntask = ["parity"]\n')
    assert main(["sweep", path, "--executor", "ray", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and 'num_gpus = "auto" needs gpu_memory_gb' in err
    assert not (tmp_path / "o" / "records.jsonl").exists()
