"""Every input bounded (limits in numbers, checked before the work), no traceback without
``--debug``, safe ``-o``, ``precision collapse`` flags.

Most cases run the CLI in process (``lrnnkit.cli.main``: the same code path as the console script, minus the
interpreter start-up, which costs seconds per case on the CI machine); the listed cases also run as real
subprocesses, a few in the default suite and all of them under ``-m slow``."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from lrnnkit import limits
from lrnnkit.cli import main
from lrnnkit.errors import InputError, SizeLimitError
from proofs_tests._paths import REPO

CLI = [sys.executable, "-m", "lrnnkit"]


def cli(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def parity_model(tmp_path_factory):
    p = tmp_path_factory.mktemp("m") / "parity.json"
    assert main(["compile", "parity", "-o", str(p)]) == 0
    return p


@pytest.fixture(scope="module")
def counter7_model(tmp_path_factory):
    p = tmp_path_factory.mktemp("m") / "c7.json"
    assert main(["compile", "counter:7", "-o", str(p)]) == 0
    return p


def _fsa_file(path, n, k=2):
    path.write_text(json.dumps({"alphabet": [f"s{i}" for i in range(k)],
                                "delta": [[(q + a + 1) % n for a in range(k)] for q in range(n)]}))
    return path


# --------------------------------------------------------------------------- item 3: sizes, checked first
@pytest.mark.parametrize("argv,needle", [
    (["info", "counter:100000"], "100000 states x 1 letters"),
    (["compile", "counter:100000"], "COMPILE_MAX_STATES"),
    (["info", "regex:(a|b)*a(a|b){10}"], "2048 states x 2 letters"),
    (["info", "regex:(a|b)*a(a|b){13}"], "more than 5000 states"),
    (["precision", "cast", "--format", "fp64", "--", "1e999999999"], "decimal exponent beyond +-10000"),
    (["precision", "cast", "--format", "fp64", "--", "cos(2*pi/100000)"], "MAX_CYCLOTOMIC_ORDER"),
    (["info", "regex:" + "a" * 2000], "MAX_REGEX_CHARS"),
])
def test_size_limits_are_stated_in_numbers(capsys, argv, needle):
    rc, out, err = cli(capsys, *argv)
    assert rc == 2 and needle in err and err.count("\n") == 1, err
    assert "lrnnkit.limits" in err or "MAX_" in err


@pytest.mark.parametrize("argv", [["precision", "cast", "--format", "bf16", "--rounding", "stochastic", "--seed"],
                                  ["precision", "collapse", "--format", "bf16", "parity", "--seed"],
                                  ["run", "MODEL", "--random", "3", "--seed"],
                                  ["train", "parity", "--layer", "diagonal", "--seed"]])
def test_every_seed_of_the_cli_is_checked_when_parsed(capsys, parity_model, argv):
    """Found by the CLI fuzz test: ``precision cast`` / ``precision collapse --seed -1`` reached numpy's seeding (an
    internal error). Every ``--seed`` is one argparse type (:func:`lrnnkit.cli._common.seed_arg`): 0..MAX_SEED."""
    argv = [str(parity_model) if x == "MODEL" else x for x in argv]
    for bad, needle in (("-1", "got -1"), (str(2 ** 63), "lrnnkit.limits.MAX_SEED"), ("x", "expected an integer")):
        rc, _, err = cli(capsys, *argv, bad)
        assert rc == 2 and "--seed" in err and needle in err and err.count("\n") == 1, err


def test_10k_state_file_is_refused_by_info_and_compile(capsys, tmp_path):
    f = _fsa_file(tmp_path / "big.json", 10_000)
    for verb in ("info", "compile"):
        rc, _, err = cli(capsys, verb, str(f))
        assert rc == 2 and "10000 states x 2 letters" in err


def test_oversized_file_refused_before_validation(capsys, tmp_path):
    f = tmp_path / "huge.json"
    f.write_text(json.dumps({"alphabet": ["a"], "delta": [[0]] * (limits.MAX_STATES + 1)}))
    rc, _, err = cli(capsys, "info", str(f))
    assert rc == 2 and f"{limits.MAX_STATES + 1} states" in err and "MAX_STATES" in err


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_dev_zero_as_source_and_model(capsys):
    """An endless source is refused before it is opened: a file is meant, /dev/zero is a character device."""
    rc, _, err = cli(capsys, "info", "/dev/zero")
    assert rc == 2 and "'/dev/zero': it is a character device, not a regular file" in err
    rc, _, err = cli(capsys, "verify", "/dev/zero")
    assert rc == 2 and "'/dev/zero': it is a character device, not a regular file" in err


def test_empty_files(capsys, tmp_path):
    e = tmp_path / "empty.json"
    e.write_text("")
    rc, _, err = cli(capsys, "info", str(e))
    assert rc == 2 and "empty" in err
    rc, _, err = cli(capsys, "verify", str(e))
    assert rc == 2 and "empty" in err


def test_check_automaton_on_group_d500_sizes():
    """group:D500 (1000 states x 1000 letters, building it alone takes seconds) against the info limits, on a
    stand-in with its sizes; the real source runs in the slow CLI test."""
    class Stub:
        n_states, n_letters, name = 1000, 1000, "D500"
    with pytest.raises(SizeLimitError, match="1000 states x 1000 letters = 1000000 transitions"):
        limits.check_automaton(Stub(), "info", "group:D500")
    limits.check_automaton(Stub(), "load")   # under the general caps


def test_number_text_limits():
    limits.check_number_text("1e10000")
    limits.check_number_text("-12345.678e-17")
    for bad in ("1e10001", "1e999999999", "1E-999999999999999999", "1" * (limits.MAX_NUMBER_CHARS + 1)):
        with pytest.raises(SizeLimitError):
            limits.check_number_text(bad)


def test_model_exact_value_limits(parity_model, tmp_path, capsys):
    doc = json.loads(parity_model.read_text())
    for value, needle in (("1e999999999", "decimal exponent"), ("1e400", "outside the float64 range")):
        d = json.loads(json.dumps(doc))
        d["layers"][0]["H0_exact"][0] = value
        p = tmp_path / "m.json"
        p.write_text(json.dumps(d))
        rc, _, err = cli(capsys, "verify", str(p))
        assert rc == 2 and needle in err and str(p) in err and "Traceback" not in err


# --------------------------------------------------------------------------- item 5: no traceback without --debug
def test_bad_run_flags(capsys, parity_model):
    rc, _, err = cli(capsys, "run", str(parity_model), "--seed", "-1", "--random", "3")
    assert rc == 2 and "--seed: seed must be >= 0, got -1" in err
    rc, _, err = cli(capsys, "run", str(parity_model), "--random", str(10 ** 30))
    assert rc == 2 and f"--random must be <= {limits.RUN_MAX_LENGTH}" in err and "31 digits" in err
    rc, _, err = cli(capsys, "run", str(parity_model), "--random", "-3")
    assert rc == 2 and "--random must be >= 0" in err


def _factored(d):
    return next(t for t in d["layers"][0]["transitions"] if t.get("factors"))


@pytest.mark.parametrize("mutate,needle", [
    (lambda d: _factored(d)["factors"][0].__setitem__("beta", "abc"), "beta must be a number"),
    (lambda d: _factored(d).__setitem__("factors", 5), "factors must be a list"),
    (lambda d: d["layers"][0].__setitem__("width", "two"), "width must be a positive integer"),
    (lambda d: d["layers"][0]["decoder"].__setitem__("W", "x"), "not a numeric array"),
    (lambda d: d["layers"][0].__setitem__("transitions", [7]), "must be an object"),
    (lambda d: d.__setitem__("readout", {"reads": 3, "sizes": [], "table": [], "n_out": 1}), "parity.json"),
])
def test_wrong_typed_model_fields(capsys, parity_model, tmp_path, mutate, needle):
    d = json.loads(parity_model.read_text())
    mutate(d)
    p = tmp_path / "parity.json"
    p.write_text(json.dumps(d))
    rc, _, err = cli(capsys, "verify", str(p))
    assert rc == 2 and needle in err and str(p) in err, err


def test_deeply_nested_json(capsys, tmp_path):
    p = tmp_path / "deep.json"
    p.write_text("[" * 200_000 + "]" * 200_000)
    for verb in ("verify", "info"):
        rc, _, err = cli(capsys, verb, str(p))
        assert rc == 2 and "nested too deeply" in err


def test_debug_flag_after_the_verb(capsys, parity_model):
    rc, out, _ = cli(capsys, "run", str(parity_model), "--word", "1 1 0", "--debug")
    assert rc == 0 and out.split() == ["1", "0", "0"]
    with pytest.raises(InputError):
        main(["info", "no-such-file.json", "--debug"])


def test_unexpected_errors_print_one_line(capsys, monkeypatch):
    import lrnnkit.cli as C

    def boom(a):
        raise ZeroDivisionError("deep inside")
    monkeypatch.setitem(C.VERBS, "constructions", boom)
    rc, _, err = cli(capsys, "constructions")
    assert rc == 3 and "internal error: ZeroDivisionError: deep inside" in err and "Traceback" not in err


# --------------------------------------------------------------------------- item 6: -o
def test_output_onto_non_regular_files(capsys, tmp_path):
    if os.path.exists("/dev/full"):
        rc, _, err = cli(capsys, "compile", "parity", "-o", "/dev/full")
        assert rc == 2 and "'/dev/full'" in err and "No space left" in err
        assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    rc, _, err = cli(capsys, "compile", "parity", "-o", str(tmp_path))
    assert rc == 2 and "directory" in err
    missing = tmp_path / "no" / "such" / "m.json"
    rc, _, err = cli(capsys, "compile", "parity", "-o", str(missing))
    assert rc == 2 and "m.json" in err and ".tmp-" not in err


def test_output_gets_usual_permissions(capsys, tmp_path):
    old = os.umask(0o022)
    try:
        p = tmp_path / "m.json"
        rc, _, _ = cli(capsys, "compile", "parity", "-o", str(p))
    finally:
        os.umask(old)
    assert rc == 0 and stat.S_IMODE(os.stat(p).st_mode) == 0o644


# --------------------------------------------------------------------------- item 7: precision collapse, regex
def test_collapse_steps_bound_one_letter_alphabets(capsys, counter7_model):
    rc, out, _ = cli(capsys, "precision", "collapse", str(counter7_model), "--format", "bf16", "--length", "1")
    assert rc == 0 and "no wrong output within 1 steps" in out and "no period within 1 steps" in out
    rc, out, _ = cli(capsys, "precision", "collapse", str(counter7_model), "--format", "fp32", "--length", "1", "--json")
    res = json.loads(out)
    assert res["steps"] == 1 and res["exact_for_all_lengths"] is False


def test_collapse_text_says_what_json_says(capsys, counter7_model):
    rc, out, _ = cli(capsys, "precision", "collapse", str(counter7_model), "--format", "fp64", "--json")
    res = json.loads(out)
    rc2, text, _ = cli(capsys, "precision", "collapse", str(counter7_model), "--format", "fp64")
    assert rc == rc2 == 0
    if res["exact_for_all_lengths"] and res["first_wrong_step"] is None:
        assert "no wrong output at any input length" in text and f"period {res['period']}" in text
    else:
        assert str(res["first_wrong_step"] or res["steps"]) in text


@pytest.mark.parametrize("argv,needle", [
    (["precision", "collapse", "M", "--format", "bf16", "--length", "0"], "--length must be >= 1"),
    (["precision", "collapse", "M", "--format", "bf16", "--length", "1000001"], "COLLAPSE_MAX_STEPS"),
    (["verify", "M", "--max-pairs", "-5"], "--max-pairs must be >= 1, got -5"),
    (["compile", "regex:(?!a)a"], "lookaround"),
])
def test_bad_flags_and_empty_regex(capsys, parity_model, argv, needle):
    argv = [str(parity_model) if x == "M" else x for x in argv]
    rc, _, err = cli(capsys, *argv)
    assert rc == 2 and needle in err, err


# --------------------------------------------------------------------------- real subprocesses
def _sub(*argv, timeout=180):
    return subprocess.run(CLI + list(argv), capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_subprocess_dev_zero():
    r = _sub("info", "/dev/zero")
    assert r.returncode == 2 and "not a regular file" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.slow
def test_subprocess_debug_after_verb(parity_model):
    r = _sub("run", str(parity_model), "--seed", "-1", "--random", "3", "--debug")
    assert r.returncode != 0 and "Traceback" in r.stderr            # --debug after the verb is honoured


SLOW_CASES = [
    (["info", "counter:100000"], 2, "INFO_MAX_STATES"),
    (["info", "group:D500"], 2, "1000000 transitions"),
    (["info", "regex:(a|b)*a(a|b){10}"], 2, "2048 states"),
    (["precision", "cast", "--format", "fp64", "--", "1e999999999"], 2, "MAX_DECIMAL_EXPONENT"),
    (["run", "MODEL", "--seed", "-1", "--random", "3"], 2, "--seed"),
    (["run", "MODEL", "--random", str(10 ** 30)], 2, "RUN_MAX_LENGTH"),
    (["compile", "parity", "-o", "/dev/full"], 2, "/dev/full"),
    (["compile", "regex:(?!a)a"], 2, "lookaround"),
]


@pytest.mark.slow
@pytest.mark.parametrize("argv,rc,needle", SLOW_CASES)
def test_subprocess_every_case(parity_model, argv, rc, needle):
    r = _sub(*[str(parity_model) if x == "MODEL" else x for x in argv], timeout=300)
    assert r.returncode == rc and needle in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_docs_limits_page_states_the_true_numbers():
    """docs/limits.rst lists every limit with its number: each ``module.NAME`` row must hold the constant's value,
    and every public limit of lrnnkit.limits must be listed."""
    import importlib
    import re
    from pathlib import Path
    text = (Path(REPO) / "docs" / "limits.rst").read_text()
    rows = re.findall(r"\* - ``(lrnnkit\.[\w.]+)\.([A-Z_]+)``\n\s+- (\d+)", text)
    assert len(rows) >= 20
    for mod, name, value in rows:
        assert getattr(importlib.import_module(mod), name) == int(value), (mod, name)
    listed = {name for mod, name, _ in rows if mod == "lrnnkit.limits"}
    assert {n for n in limits.__all__ if n.isupper()} <= listed


def test_huge_integer_literals(capsys, tmp_path):
    """JSON integers past Python's 4300-digit conversion limit: a one-line error, not an internal error."""
    big = "9" * 5000
    m = tmp_path / "m.json"
    m.write_text('{"format": "lrnnkit.model", "version": 1, "width": ' + big + "}")
    f = tmp_path / "f.json"
    f.write_text('{"alphabet": ["a"], "delta": [[0]], "start": ' + big + "}")
    for verb, p in (("verify", m), ("info", f)):
        rc, _, err = cli(capsys, verb, str(p))
        assert rc == 2 and str(p) in err and "internal error" not in err, err

