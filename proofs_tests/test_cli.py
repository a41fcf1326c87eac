"""The command-line contract of docs/cli.rst: verbs, --json keys, exit statuses, one-line errors, atomic writes."""
import json
import os
import subprocess
import sys

import pytest

from lrnnkit.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_info_json_keys(capsys):
    code, out, _ = run(capsys, "info", "group:S4", "--json")
    d = json.loads(out)
    assert code == 0
    for k in ("states", "alphabet", "minimal_states", "monoid_size", "is_group", "aperiodic", "group", "holonomy"):
        assert k in d
    assert d["states"] == 24 and d["monoid_size"] == 24 and d["is_group"] and not d["aperiodic"]
    g = d["group"]
    assert (g["order"], g["abelian"], g["solvable"], g["min_perm_degree"]) == (24, False, True, 4)
    for k in ("order", "abelian", "solvable", "min_perm_degree", "name"):
        assert k in g


def test_info_flipflop_is_aperiodic(capsys):
    code, out, _ = run(capsys, "info", "flipflop", "--json")
    d = json.loads(out)
    assert d["aperiodic"] and not d["is_group"] and d["group"] is None


def test_compile_verify_run_s5(tmp_path, capsys):
    path = tmp_path / "s5.json"
    code, out, _ = run(capsys, "compile", "group:S5", "-o", str(path))
    assert code == 0 and path.exists()
    code, out, _ = run(capsys, "verify", str(path), "--json")
    v = json.loads(out)
    assert code == 0 and v["certified"] is True
    assert v["layers"] == 1 and v["widths"] == [5] and v["max_factors_per_token"] <= 4
    assert v["eigenvalues_in_unit_interval"] is True
    for k in ("method", "reachable_states"):
        assert k in v
    assert v["reachable_states"] == 120
    code, out, _ = run(capsys, "run", str(path), "--random", "7", "--seed", "3", "--json")
    r = json.loads(out)
    assert code == 0 and len(r["word"]) == len(r["outputs"]) == 7
    assert r["backend"] == "reference" and r["dtype"] == "float64"


def test_parity_compiles_to_width_one_and_runs(tmp_path, capsys):
    path = tmp_path / "p.json"
    assert run(capsys, "compile", "parity", "-o", str(path))[0] == 0
    code, out, _ = run(capsys, "verify", str(path), "--json")
    assert json.loads(out)["widths"] == [1]
    code, out, _ = run(capsys, "run", str(path), "--word", "1 1 0 1", "--json")
    assert json.loads(out)["outputs"] == ["1", "0", "0", "1"]


def test_verify_exit_status_is_1_for_a_wrong_model(tmp_path, capsys):
    path = tmp_path / "p.json"
    run(capsys, "compile", "parity", "-o", str(path))
    d = json.loads(path.read_text())
    # swap the decoder labels: a well-formed model that computes the complement
    d["layers"][0]["decoder"]["labels"] = list(reversed(d["layers"][0]["decoder"]["labels"]))
    d["output_labels"] = list(d["output_labels"])
    d["readout"]["table"] = list(reversed(d["readout"]["table"]))
    path.write_text(json.dumps(d))
    code, out, _ = run(capsys, "verify", str(path), "--json")
    v = json.loads(out)
    assert code == 1 and v["certified"] is False and v["counterexample"]


def test_constructions_json(capsys):
    code, out, _ = run(capsys, "constructions", "--json")
    cat = json.loads(out)
    assert code == 0 and cat
    for c in cat:
        for k in ("name", "paper", "statement", "applies_to", "layers", "width", "factors_per_token"):
            assert k in c


@pytest.mark.parametrize("argv, needle", [
    (["info", "nosuch:3"], "nosuch"),
    (["info", "group:Q8"], "Q8"),
    (["info", "counter:0"], "0"),
    (["info", "transformations:[[0,1],[0]]"], "length"),
    (["compile", "group:Z3", "--construction", "no-such-construction"], "no-such-construction"),
    (["verify", "/nonexistent/model.json"], "/nonexistent/model.json"),
    (["bogus-verb"], "bogus-verb"),
])
def test_bad_input_gives_one_line_and_status_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in err


def test_bad_fsa_file_and_nothing_written(tmp_path, capsys):
    src = tmp_path / "bad.json"
    src.write_text('{"format": "lrnnkit.fsa", "version": 1, "alphabet": ["a"], "states": 2, "start": 0, '
                   '"delta": [[1], [5]]}')
    out_model = tmp_path / "m.json"
    code, out, err = run(capsys, "compile", str(src), "-o", str(out_model))
    assert code == 2 and "5" in err and not out_model.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.json"]  # no temporary file left behind


def test_unknown_symbol_in_run(tmp_path, capsys):
    path = tmp_path / "p.json"
    run(capsys, "compile", "parity", "-o", str(path))
    code, out, err = run(capsys, "run", str(path), "--word", "1 x")
    assert code == 2 and "'x'" in err


def test_subprocess_error_has_no_traceback_unless_debug(tmp_path):
    env = dict(os.environ)
    p = subprocess.run([sys.executable, "-m", "lrnnkit", "info", "group:Q8"], capture_output=True, text=True, env=env)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    p = subprocess.run([sys.executable, "-m", "lrnnkit", "--debug", "info", "group:Q8"], capture_output=True,
                       text=True, env=env)
    assert p.returncode != 0 and "Traceback" in p.stderr


def test_construction_options(tmp_path, capsys):
    path = tmp_path / "e.json"
    code, out, err = run(capsys, "compile", "even-pairs", "--construction", "krohn-rhodes", "--option",
                         "split=class", "-o", str(path), "--json")
    assert code == 0 and json.loads(out)["construction"] == "krohn-rhodes"
    assert run(capsys, "verify", str(path))[0] == 0
    code, out, err = run(capsys, "compile", "even-pairs", "--construction", "krohn-rhodes", "--option", "nosuch=1")
    assert code == 2 and "nosuch" in err
    code, out, err = run(capsys, "compile", "parity", "--option", "justtext")
    assert code == 2 and "KEY=VALUE" in err
