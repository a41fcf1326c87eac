"""Ctrl-C during the demo stops the run: exit status 130, report and summary marked incomplete.

The interrupt is delivered for real (SIGINT to this process) from inside a step, and that step then raises a
SystemError -- what a C extension did when the interrupt reached it, and what the demo used to swallow."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from lrnnkit.showcase import demo as D

_CASES = [c for c in D.DEFAULT_CASES if c.key in ("parity", "flipflop")]


def _interrupting_certify(model, fsa):
    os.kill(os.getpid(), signal.SIGINT)
    raise SystemError("error return without exception set")


def test_interrupt_stops_demo_and_marks_report_incomplete(tmp_path, monkeypatch):
    monkeypatch.setattr(D, "_certify", _interrupting_certify)
    s = D.run_demo(tmp_path, progress=False, cases=_CASES, kernels=False, precision=False)
    assert s["exit_status"] == 130 and s["status"] == "interrupted" and s["incomplete"] is True
    names = [st["name"] for st in s["steps"]]
    # stopped at the first certify: nothing after it ran (no trace, no second automaton, no plots)
    assert names == ["compile parity", "interrupted"]
    assert "incomplete" in s["steps"][-1]["reason"]
    on_disk = json.loads((tmp_path / "summary.json").read_text())
    assert on_disk["incomplete"] is True and on_disk["exit_status"] == 130
    html = (tmp_path / "report.html").read_text()
    assert "interrupted" in html and "incomplete" in html
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler   # the handler is restored


def test_cli_demo_interrupt_exits_130(tmp_path):
    code = ("import sys, os, signal\n"
            "from lrnnkit import cli\nfrom lrnnkit.showcase import demo as D\n"
            "D.DEFAULT_CASES[:] = [c for c in D.DEFAULT_CASES if c.key == 'parity']\n"
            "def cert(m, f):\n"
            "    os.kill(os.getpid(), signal.SIGINT)\n"
            "    raise SystemError('error return without exception set')\n"
            "D._certify = cert\n"
            f"sys.exit(cli.main(['demo', '--out', {str(tmp_path / 'out')!r}]))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 130, r.stderr
    assert "Traceback" not in r.stderr
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["incomplete"] is True
