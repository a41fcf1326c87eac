"""Record a benchmark table in benchmarks/RESULTS.md, replacing only this benchmark's section.

Each script calls ``record(section, markdown_table, notes)``; the section is delimited by HTML comments so that
scripts never overwrite each other's results. Machine, date and versions are written with every section.
The file is rewritten atomically (temporary file, then rename).
"""
from __future__ import annotations

import datetime
import os
import platform
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if os.path.dirname(HERE) not in sys.path:      # the scripts run from anywhere, lrnnkit installed or not
    sys.path.insert(0, os.path.dirname(HERE))
from lrnnkit.fileio import atomic_write_text  # noqa: E402
RESULTS = os.path.join(HERE, "RESULTS.md")


def machine() -> str:
    import numpy
    parts = [platform.node() or "?", platform.machine(), f"{os.cpu_count()} cpus", f"python {platform.python_version()}",
             f"numpy {numpy.__version__}"]
    try:
        import torch
        parts.append(f"torch {torch.__version__}")
        if torch.cuda.is_available():
            parts.append(torch.cuda.get_device_name(0))
    except ImportError:
        pass
    return ", ".join(parts)


def table(headers, rows) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for r in rows:
        out.append("| " + " | ".join(str(x) for x in r) + " |")
    return "\n".join(out)


def record(section: str, body: str, notes: str = "", path: str = RESULTS, measured: str | None = None) -> None:
    """``measured``: where and when the numbers were measured, for a table written here from another machine's
    JSON (default: now, on this machine)."""
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    where = measured or f"{date} on {machine()}"
    block = (f"<!-- BEGIN {section} -->\n## {section}\n\nMeasured {where}.\n\n{body}\n"
             + (f"\n{notes}\n" if notes else "") + f"<!-- END {section} -->")
    text = open(path).read() if os.path.exists(path) else "# Benchmark results\n\nWritten by the scripts in benchmarks/ (each replaces its own section).\n"
    pat = re.compile(rf"<!-- BEGIN {re.escape(section)} -->.*?<!-- END {re.escape(section)} -->", re.S)
    text = pat.sub(lambda m: block, text) if pat.search(text) else text.rstrip() + "\n\n" + block + "\n"
    atomic_write_text(path, text)     # lrnnkit's one atomic writer (keeps the file's mode; mkstemp gave 0600)
    print(body)
