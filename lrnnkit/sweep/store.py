"""The record store of a sweep: one JSON line per finished grid point, appended as each point finishes.

Layout of the output directory::

    OUT/records.jsonl     one record per line, appended (O_APPEND, one write, fsync) as points finish
    OUT/spec.json         the spec and its hash (atomic write)
    OUT/summary.json      the sweep's --json output (atomic write, at the end)
    OUT/summary.txt       the summary table
    OUT/collapse_heatmap.png   (collapse sweeps) construction x format -> first wrong step
    OUT/.lock             held (flock) by the sweep writing here: a second sweep on OUT is refused at once
    OUT/runs/<point_key>/ a train point's run directory: its checkpoints (lrnnkit.learn.checkpoint)

A record is flat: the point's parameters as given in the spec, the job's result keys, and ``status`` (``ok`` or
``failed``), ``error`` (failed points: ``Type: message``), ``seed``, ``point_key``, ``spec_hash``, plus ``meta``
(seconds, executor, attempt info: the only key that may differ between executors or reruns).

Resume: a point whose ``point_key`` has an ``ok`` record is done and never recomputed; a failed point is tried
again by the next run (its new record supersedes the old one: the last record of a key wins). A line cut short by
a crash (no trailing newline, not valid JSON) is ignored: at most the point being written is lost, and recomputed.
A train point cut short resumes from the last checkpoint in its run directory (:func:`RecordStore.run_dir`).

Portable: nothing in ``OUT`` names its own location (run directories are found from the point's key, checkpoints
name their tensor files by plain file name, ``summary.json`` gives paths relative to ``OUT``), so the directory can
be copied to another place or machine and the sweep resumed there.
"""
from __future__ import annotations

import json
import os
import re

from ..errors import MESSAGE_CHARS, InputError
from ..fileio import atomic_write_text
from ..fileio import open_append, open_regular

__all__ = ["RecordStore", "RECORDS_FILE", "RUNS_DIR"]

RECORDS_FILE = "records.jsonl"
RUNS_DIR = "runs"                 # OUT/runs/<point_key>: the run directories of resumable jobs
MAX_RECORD_BYTES = 16 * 2 ** 20     # one record line (a job's result keys; lrnnkit writes far less)


class RecordStore:
    """Append-only JSON-lines store in ``out_dir`` (created if missing)."""

    def __init__(self, out_dir: str):
        self.out_dir = os.fspath(out_dir)
        if os.path.exists(self.out_dir) and not os.path.isdir(self.out_dir):
            raise InputError(f"--out {self.out_dir!r} exists and is not a directory")
        try:
            os.makedirs(self.out_dir, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create output directory {self.out_dir!r}: {exc.strerror or exc}") from None
        self.path = os.path.join(self.out_dir, RECORDS_FILE)

    def load(self) -> dict:
        """``point_key -> record`` (the last record of each key), skipping lines cut short by a crash and lines
        longer than MAX_RECORD_BYTES (not written by lrnnkit)."""
        out: dict = {}
        if not os.path.lexists(self.path):
            return out
        if os.path.islink(self.path):
            raise InputError(f"cannot read {self.path!r}: it is a symbolic link (the record store is written only "
                             "by lrnnkit; remove the link)")
        with open_regular(self.path, "sweep records") as fh:
            while True:
                raw = fh.readline(MAX_RECORD_BYTES + 1)
                if not raw:
                    break
                if not raw.endswith(b"\n"):
                    if len(raw) > MAX_RECORD_BYTES:          # skip the rest of an over-long line
                        while raw and not raw.endswith(b"\n"):
                            raw = fh.readline(MAX_RECORD_BYTES + 1)
                    continue                  # a write interrupted mid-line: not a record
                try:
                    rec = json.loads(raw)
                except (ValueError, RecursionError):
                    continue
                if isinstance(rec, dict) and isinstance(rec.get("point_key"), str):
                    out[rec["point_key"]] = rec
        return out

    def done_keys(self) -> set:
        return {k for k, r in self.load().items() if r.get("status") == "ok"}

    def append(self, record: dict) -> None:
        """Append one record durably: a single ``write`` of the whole line to an ``O_APPEND`` descriptor, then
        ``fsync`` (a symbolic link or non-regular file planted as ``records.jsonl`` is refused); a partial line
        left by a crash is repaired (terminated) before the next append."""
        line = (json.dumps(record, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n").encode()
        fd = open_append(self.path)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line   # end the torn line so that it stays unparseable on its own
            view = memoryview(line)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
        except OSError as exc:
            raise InputError(f"cannot write {self.path!r}: {exc.strerror or exc}") from None
        finally:
            os.close(fd)

    def run_dir(self, point_key: str) -> str:
        """The run directory of a point (``OUT/runs/<point_key>``; created by the job that writes it): the same
        name wherever the store is, so a copied store resumes its points' runs."""
        if not (isinstance(point_key, str) and re.fullmatch(r"[0-9a-f]{1,64}", point_key)):
            raise InputError(f"bad point key {point_key!r} (hex digits expected)"[:MESSAGE_CHARS])
        return os.path.join(self.out_dir, RUNS_DIR, point_key)

    def write_text(self, name: str, text: str) -> str:
        path = os.path.join(self.out_dir, name)
        atomic_write_text(path, text)
        return path
