"""Export the six files of the 003 authors' code that ``bench_fixed_point.py --authors`` needs, from a git mirror
of github.com/dr-faustus/fp-rnn, into ``benchmarks/.fp_rnn/`` (ignored by git): their vector-state block
(``models/fp_rnn_block.py``, ``FPRNN``), their matrix-state block (``models/fp_mamba_block.py``, ``FPMamba``: 003's
"Bedouin", Fig. 3; the ``BedouinBlock`` that ``arithmetic_exp/bedouin/bedouin.py`` imports is defined nowhere at
this commit, and their state-tracking runs build ``FPMamba`` through ``models/fp_lm.py``), the mixers, the
fixed-point optimizer and their linear-recurrence ops. Their ``models/ops/selective_scan_interface.py`` (mamba_ssm's
CUDA scan) is not exported: ``bench_fixed_point.py`` substitutes it.

    python benchmarks/export_fp_rnn.py /path/to/fp-rnn.git [--commit 4c28602...] [--dest benchmarks/.fp_rnn]

The repository carries no license file (nor a license field in its pyproject.toml), so its code is not copied into
this repository: the export stays on the machine that made it, and travels to a GPU machine as an ignored path
(``carry: ["benchmarks/.fp_rnn", ".whl"]``; ``.whl`` holds einops, which their block imports). ``COMMIT`` in the
destination records the commit the files come from.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lrnnkit.fileio import atomic_write_bytes, atomic_write_text  # noqa: E402

COMMIT = "4c286022b0198c3a4f6a5924394b7996b5ff77a0"
FILES = ("models/fp_rnn_block.py", "models/fp_mamba_block.py", "models/mixer.py", "models/model_utils.py",
         "models/ops/__init__.py", "models/ops/linrec.py")
DEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".fp_rnn")


def export(git_dir: str, commit: str = COMMIT, dest: str = DEST) -> list:
    """Write FILES at ``commit`` of the mirror ``git_dir`` under ``dest``; return the written paths."""
    out = []
    for rel in FILES:
        r = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{rel}"], capture_output=True)
        if r.returncode != 0:
            why = r.stderr.decode(errors="replace").strip().splitlines() or ["git failed"]
            print(f"export_fp_rnn: cannot read {rel} at {commit} from {git_dir}: {why[-1]}", file=sys.stderr)
            sys.exit(2)
        path = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write_bytes(path, r.stdout)
        out.append(path)
    atomic_write_text(os.path.join(dest, "COMMIT"), f"github.com/dr-faustus/fp-rnn {commit}\n")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("git_dir", help="a git directory (bare or .git) holding github.com/dr-faustus/fp-rnn")
    ap.add_argument("--commit", default=COMMIT)
    ap.add_argument("--dest", default=DEST)
    a = ap.parse_args()
    for p in export(a.git_dir, a.commit, a.dest):
        print(p)


if __name__ == "__main__":
    main()
