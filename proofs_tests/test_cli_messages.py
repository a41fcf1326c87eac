"""Messages that help: a limit override that is negative, not a number or no limit is refused (the default stays,
one warning line), a limit error names the variable that lifts it, a regex that cannot be parsed says what is wrong
and where (not an empty detail or "Can't multiply an FSM by -1"), and a pipe given as a file says how to pass it."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from proofs_tests._paths import REPO
from lrnnkit import limits
from lrnnkit.automata.builders import from_regex
from lrnnkit.cli import main
from lrnnkit.errors import InputError, SizeLimitError


@pytest.mark.parametrize("value", ["-1", "abc", "1e9", "", "9" * 40])
def test_a_bad_limit_override_is_refused_and_the_default_stays(monkeypatch, value):
    before = limits.MAX_STATES
    said = limits._env_override({"LRNNKIT_LIMIT_MAX_STATES": value})
    assert limits.MAX_STATES == before and len(said) == 1 and "ignored" in said[0] and "MAX_STATES stays" in said[0]
    assert limits._env_override({"LRNNKIT_LIMIT_NOT_A_LIMIT": "5"})[0].endswith("has no limit 'NOT_A_LIMIT'")
    monkeypatch.setattr(limits, "MAX_STATES", before)
    assert limits._env_override({"LRNNKIT_LIMIT_MAX_STATES": str(before + 1)}) == []
    assert limits.MAX_STATES == before + 1


def test_bad_override_in_a_real_process_is_one_warning_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "lrnnkit", "info", "parity"], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": REPO, "LRNNKIT_LIMIT_MAX_FILE_BYTES": "-1"}, timeout=120)
    assert r.returncode == 0 and r.stderr.count("LRNNKIT_LIMIT_MAX_FILE_BYTES='-1' ignored") == 1, r.stderr


def test_limit_errors_name_the_variable_that_lifts_them(capsys):
    assert main(["info", "counter:100000"]) == 2
    assert "LRNNKIT_LIMIT_INFO_MAX_STATES=N lifts it" in capsys.readouterr().err
    e = SizeLimitError("x is too large (lrnnkit.fileio.MAX_SAFETENSORS_HEADER)")
    assert str(e) == "x is too large (lrnnkit.fileio.MAX_SAFETENSORS_HEADER)"     # not a limits override


@pytest.mark.parametrize("pattern, said", [("a{2,1}", "min repeat greater than max repeat at position 2"),
                                           ("(", "missing ), unterminated subpattern at position 0"),
                                           ("*a", "nothing to repeat at position 0"),
                                           ("(?P<x>a)(?P=x)", "not supported by lrnnkit's regex dialect")])
def test_regex_parse_errors_say_what_is_wrong(pattern, said):
    with pytest.raises(InputError) as e:
        from_regex(pattern)
    assert said in str(e.value) and "FSM" not in str(e.value) and not str(e.value).endswith(": ")


def test_a_pipe_given_as_a_file_says_how_to_pass_it(tmp_path):
    f = tmp_path / "a.json"
    f.write_text('{"alphabet": ["a"], "delta": [[0]]}')
    cmd = [sys.executable, "-m", "lrnnkit", "info", "/dev/stdin"]
    env = {**os.environ, "PYTHONPATH": REPO}
    with open(f) as fh:
        assert subprocess.run(cmd, stdin=fh, capture_output=True, env=env, timeout=120).returncode == 0
    r = subprocess.run(cmd, input=f.read_text(), capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2 and "redirect it with `< FILE`" in r.stderr


def test_after_double_dash_every_word_is_a_value(capsys):
    """``precision cast --format fp64 -- --1``: ``--1`` after ``--`` is a value (it was taken as an option, and the
    command said that no value was given)."""
    from lrnnkit.precision.commands import cast_argv
    assert cast_argv(["precision", "cast", "--format", "fp64", "--", "--1", "-2"]) == \
        ["precision", "cast", "--format=fp64", "--", "--1", "-2"]
    assert main(["precision", "cast", "--format", "fp64", "--", "--1"]) == 0
    assert capsys.readouterr().out.strip().startswith("--1 -> ")
