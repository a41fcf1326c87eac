"""One progress mechanism (lrnnkit.progress): a tqdm bar on a terminal, a status line every few seconds
elsewhere, nothing for short work; Ctrl-C passes through."""
import ast
import os
import sys
import time

import pytest

from lrnnkit import progress as P
from ._paths import REPO


def test_off_a_terminal_status_lines_every_interval(capsys):
    p = P.Progress("search", 1000, "pairs", interval=0.05)
    p.update(10)
    assert capsys.readouterr().err == ""          # the first line only after one interval
    p.set_postfix("depth 3")
    time.sleep(0.06)
    p.update(5)
    err = capsys.readouterr().err.splitlines()
    assert err and err[0].startswith("search: 15/1,000 pairs (depth 3), ") and err[0].endswith(" s")
    p.update(985)                                 # the last item: a line whatever the clock says
    assert capsys.readouterr().err.startswith("search: 1,000/1,000 pairs (depth 3)")
    p.close()
    p.update(1)                                   # closed: silent
    assert capsys.readouterr().err == ""


def test_short_work_and_disabled_progress_print_nothing(capsys):
    with P.Progress("quick", 10) as p:
        p.update(9)
    with P.Progress("off", 10, interval=0.0, enabled=False) as p:
        p.update(10)
    assert capsys.readouterr().err == ""


def test_on_a_terminal_a_tqdm_bar(monkeypatch):
    monkeypatch.setattr(P, "_terminal", lambda: True)
    p = P.Progress("bar", 10, delay=100.0)
    try:
        from tqdm import tqdm
        assert isinstance(p._bar, tqdm) and not p._lines
        p.update(3)
        assert p._bar.n == p.n == 3
    finally:
        p.close()


def test_busy_prints_status_lines_off_a_terminal_and_passes_interrupts(capsys):
    with P.busy("holonomy", interval=0.05):
        time.sleep(0.13)
    err = capsys.readouterr().err.splitlines()
    assert len(err) >= 1 and all(line.startswith("holonomy: ") and line.endswith(" s") for line in err)
    with pytest.raises(KeyboardInterrupt):
        with P.busy("x", after=0.0):
            raise KeyboardInterrupt
    with P.busy("x"):
        time.sleep(0.02)
    assert capsys.readouterr().err == ""


def test_tqdm_is_used_through_lrnnkit_progress_only():
    """Every progress display goes through lrnnkit.progress; the other users are the two training loops (one run,
    several runs as one model), which draw their own bar."""
    users = set()
    for d, dirs, files in os.walk(os.path.join(REPO, "lrnnkit")):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(d, f)
                tree = ast.parse(open(path, encoding="utf-8").read())
                for n in ast.walk(tree):
                    mods = ([a.name for a in n.names] if isinstance(n, ast.Import) else
                            [n.module] if isinstance(n, ast.ImportFrom) and n.module else [])
                    if any(m.split(".")[0] == "tqdm" for m in mods):
                        users.add(os.path.relpath(path, REPO))
    assert users == {os.path.join("lrnnkit", "progress.py"), os.path.join("lrnnkit", "learn", "train.py"),
                     os.path.join("lrnnkit", "learn", "batched.py")}, users
