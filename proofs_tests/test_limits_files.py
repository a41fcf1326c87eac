"""Every file read bounded and regular, every write atomic and never through a planted link, regex sizes bounded
before the work, presets that no file replaces, and terminal text escaped (docs/limits.rst, "Files, regexes,
exports and sweep jobs").

The command line runs in process (``lrnnkit.cli.main``); the cases that could hang (a FIFO) or that measure memory
(an unreferenced 3 GB tensor) run as subprocesses with a timeout."""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import time

import numpy as np
import pytest

from lrnnkit import limits
from lrnnkit.errors import InputError
from proofs_tests.test_limits import cli as _cli
from proofs_tests.test_limits import parity_model  # noqa: F401  (a fixture)

CLI = [sys.executable, "-m", "lrnnkit"]


def cli(capsys, *argv):
    return _cli(capsys, *[str(x) for x in argv])


@pytest.fixture(scope="module")
def st_model(tmp_path_factory):
    """counter:3 saved with its float arrays in ``c3.safetensors`` beside ``c3.json``."""
    from lrnnkit.automata.sources import load_source
    from lrnnkit.constructions import compile as compile_model
    d = tmp_path_factory.mktemp("st")
    p = d / "c3.json"
    compile_model(load_source("counter:3")).save(p, safetensors=True)
    assert (d / "c3.safetensors").is_file()
    return p


# --------------------------------------------------------------------------- writes never follow a planted link
def test_export_refuses_a_planted_link(capsys, parity_model, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    out = tmp_path / "d"
    out.mkdir()
    (out / "fla_export.json").symlink_to(victim)
    rc, _, err = cli(capsys, "export", parity_model, "--to", "fla", "-o", out)
    assert rc == 2 and "symbolic link" in err and "fla_export.json" in err
    assert victim.read_text() == "precious" and (out / "fla_export.json").is_symlink()


def test_model_output_refuses_a_planted_link(capsys, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / "m.json").symlink_to(victim)
    rc, _, err = cli(capsys, "compile", "parity", "-o", tmp_path / "m.json")
    assert rc == 2 and "symbolic link" in err and victim.read_text() == "precious"


def _spec(tmp_path, text: str) -> str:
    p = tmp_path / "spec.toml"
    p.write_text(text)
    return str(p)


COLLAPSE_SPEC = 'kind = "collapse"\n[params]\nsteps = 50\n[grid]\nsource = ["parity"]\nformat = ["bf16"]\n'


def test_sweep_refuses_a_planted_records_link(capsys, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    out = tmp_path / "o"
    out.mkdir()
    (out / "records.jsonl").symlink_to(victim)
    rc, _, err = cli(capsys, "sweep", _spec(tmp_path, COLLAPSE_SPEC), "--out", out, "--no-plots")
    assert rc == 2 and "symbolic link" in err and "records.jsonl" in err
    assert victim.read_text() == "precious\n"


def test_append_refuses_links_and_fifos(tmp_path):
    from lrnnkit.fileio import open_append
    victim = tmp_path / "victim"
    victim.write_text("x")
    (tmp_path / "l").symlink_to(victim)
    with pytest.raises(InputError, match="symbolic link"):
        open_append(tmp_path / "l")
    os.mkfifo(tmp_path / "p")
    with pytest.raises(InputError, match="FIFO"):
        open_append(tmp_path / "p")
    fd = open_append(tmp_path / "new.jsonl")
    os.write(fd, b"a\n")
    os.close(fd)
    assert (tmp_path / "new.jsonl").read_bytes() == b"a\n" and victim.read_text() == "x"


def test_plots_refuse_a_planted_link(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lrnnkit.fileio import save_figure
    victim = tmp_path / "victim.png"
    victim.write_bytes(b"precious")
    (tmp_path / "plot.png").symlink_to(victim)
    fig = plt.figure()
    with pytest.raises(InputError, match="symbolic link"):
        save_figure(fig, tmp_path / "plot.png")
    save_figure(fig, tmp_path / "ok.png")
    plt.close(fig)
    assert victim.read_bytes() == b"precious" and (tmp_path / "ok.png").read_bytes()[:4] == b"\x89PNG"


# --------------------------------------------------------------------------- reads: regular files only, bounded
@pytest.mark.parametrize("verb", ["info", "verify", "sweep"])
def test_fifo_inputs_refused_at_once(capsys, tmp_path, verb):
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    rc, _, err = cli(capsys, verb, fifo)
    assert rc == 2 and "FIFO" in err and "not a regular file" in err and err.count("\n") == 1
    assert time.monotonic() - t0 < 5


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_dev_zero_as_sweep_spec(capsys):
    rc, _, err = cli(capsys, "sweep", "/dev/zero")
    assert rc == 2 and "character device" in err


def test_oversized_sweep_spec(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_SPEC_BYTES", 100)
    rc, _, err = cli(capsys, "sweep", _spec(tmp_path, COLLAPSE_SPEC + "#" * 200 + "\n"))
    assert rc == 2 and "MAX_SPEC_BYTES" in err


def test_fifo_as_safetensors_beside_a_model(st_model, tmp_path):
    """A FIFO as input: `verify` used to block in open() forever (and Ctrl-C did not stop it)."""
    d = tmp_path / "fifo"
    d.mkdir()
    (d / "c3.json").write_text(st_model.read_text())
    os.mkfifo(d / "c3.safetensors")
    r = subprocess.run(CLI + ["verify", str(d / "c3.json")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "FIFO" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_safetensors_model_round_trip_certifies(capsys, st_model):
    rc, out, _ = cli(capsys, "verify", st_model)
    assert rc == 0 and "CERTIFIED" in out


def _rewrite_safetensors(path, extra: dict, pad_to: int = 0) -> None:
    """Add header entries ``extra`` (name -> (dtype, shape, nbytes)) after the existing tensors; the file is then
    extended (sparsely) to hold them."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    end = len(data)
    for name, (dtype, shape, nbytes) in extra.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [end, end + nbytes]}
        end += nbytes
    hb = json.dumps(header).encode()
    hb += b" " * (-len(hb) % 8)
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(hb)) + hb + data)
        fh.truncate(8 + len(hb) + max(end, pad_to))


def test_unreferenced_huge_tensor_is_never_read(st_model, tmp_path):
    """An unreferenced 3.2 GB tensor (a sparse file: no disk) beside a model: verify certifies the model and its
    peak memory stays far below the tensor's size."""
    d = tmp_path / "huge"
    d.mkdir()
    (d / "c3.json").write_text(st_model.read_text())
    st = d / "c3.safetensors"
    st.write_bytes((st_model.parent / "c3.safetensors").read_bytes())
    big = 400_000_000
    _rewrite_safetensors(st, {"junk": ("F64", [big], 8 * big)})
    assert st.stat().st_size > 3 * 10 ** 9
    code = ("import resource, sys; from lrnnkit.cli import main; rc = main(['verify', sys.argv[1]]); "
            "print('maxrss_kb', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss); sys.exit(rc)")
    r = subprocess.run([sys.executable, "-c", code, str(d / "c3.json")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "CERTIFIED" in r.stdout, r.stderr
    rss_kb = int(r.stdout.split("maxrss_kb")[1].split()[0])
    assert rss_kb < 1_500_000, rss_kb      # the tensor alone would be 3 200 000 kB


def test_referenced_tensors_past_the_limit_refused(capsys, st_model, monkeypatch):
    monkeypatch.setattr(limits, "MAX_ARRAYS_BYTES", 16)
    rc, _, err = cli(capsys, "verify", st_model)
    assert rc == 2 and "MAX_ARRAYS_BYTES" in err


@pytest.mark.parametrize("entry", [
    ("F64", [10], 8 * 11),           # offsets disagree with the shape
    ("Q7", [1], 8),                  # unknown dtype
    ("F64", [-1], 8),
])
def test_bad_safetensors_headers(tmp_path, entry):
    """safetensors' own reader validates the whole header: a damaged entry makes the file unreadable, one line
    naming it, whichever tensor is asked for (the undamaged file reads)."""
    from lrnnkit.fileio import read_safetensors
    p = tmp_path / "a.safetensors"
    from safetensors.numpy import save_file
    save_file({"x": np.arange(3.0)}, str(p))
    assert read_safetensors(p, ["x"], 10 ** 6)["x"].tolist() == [0.0, 1.0, 2.0]
    _rewrite_safetensors(p, {"y": entry})
    for name in ("y", "x"):
        with pytest.raises(InputError, match=f"{p}.*not a valid safetensors file"):
            read_safetensors(p, [name], 10 ** 6)


def test_safetensors_header_past_the_file(tmp_path):
    from lrnnkit.fileio import MAX_SAFETENSORS_HEADER, read_safetensors
    p = tmp_path / "a.safetensors"
    p.write_bytes(struct.pack("<Q", 10 ** 12) + b"{}")
    with pytest.raises(InputError, match="not a valid safetensors file"):
        read_safetensors(p, ["x"], 10)
    with open(p, "wb") as fh:                  # a header one byte past the library's cap (a sparse file)
        fh.write(struct.pack("<Q", MAX_SAFETENSORS_HEADER + 1))
        fh.truncate(8 + MAX_SAFETENSORS_HEADER + 16)
    with pytest.raises(InputError, match="header too large"):
        read_safetensors(p, ["x"], 10)


def test_safetensors_dtype_outside_numpy_refused_by_name(tmp_path):
    import torch
    from safetensors.torch import save_file
    from lrnnkit.fileio import read_safetensors
    p = tmp_path / "b.safetensors"
    save_file({"x": torch.zeros(2, dtype=torch.bfloat16), "y": torch.zeros(2)}, str(p))
    assert read_safetensors(p, ["y"], 100)["y"].tolist() == [0.0, 0.0]
    with pytest.raises(InputError, match="'x' has dtype BF16"):
        read_safetensors(p, ["x"], 100)


# --------------------------------------------------------------------------- regex: counted repetition
@pytest.mark.parametrize("verb,pattern,n", [("info", "(a{300}){300}", 90000), ("compile", "a{999}", 999),
                                           ("info", "((a{999}){999}){999}", 999 ** 3), ("info", "(ab|c){151}", 453)])
def test_counted_repetition_refused_before_the_work(capsys, verb, pattern, n):
    t0 = time.monotonic()
    rc, _, err = cli(capsys, verb, f"regex:{pattern}")
    assert rc == 2 and f"has {n} positions" in err and "MAX_REGEX_SIZE" in err
    assert time.monotonic() - t0 < 1.0


def test_regex_size_counts_positions():
    import interegular

    from lrnnkit.automata.builders import regex_size
    for pat, n in [("a", 1), ("ab", 2), ("a|b", 2), ("[a-z]{3}", 3), ("(ab){2,5}", 10), ("a{4,}", 5), ("a*", 1),
                   ("(?=a)b", 2)]:
        assert regex_size(interegular.parse_pattern(pat)) == n, pat


def test_regex_at_the_limit_still_works(capsys):
    rc, out, _ = cli(capsys, "info", f"regex:a{{{limits.MAX_REGEX_SIZE}}}")
    assert rc == 0 and f"states {limits.MAX_REGEX_SIZE + 2}" in out


# --------------------------------------------------------------------------- presets vs paths
def test_presets_win_over_files_in_the_working_directory(capsys, tmp_path, monkeypatch):
    from lrnnkit.automata import builders
    from lrnnkit.automata.sources import load_source
    monkeypatch.chdir(tmp_path)
    one_state = {"alphabet": ["x"], "delta": [[0]], "start": 0, "accepting": [0]}
    (tmp_path / "flipflop").write_text(json.dumps(one_state))
    (tmp_path / "parity").mkdir()                                  # left by `train parity --out parity`
    assert load_source("flipflop").n_states == builders.flipflop().n_states
    assert load_source("parity").n_states == 2
    assert load_source("./flipflop").n_states == 1                 # a path reads the file
    (tmp_path / "mine").write_text(json.dumps(one_state))
    assert load_source("mine").n_states == 1                       # no preset of that name: the file
    rc, out, _ = cli(capsys, "info", "parity")
    assert rc == 0 and "states 2" in out
    rc, _, err = cli(capsys, "info", "./parity")
    assert rc == 2 and "directory" in err


def test_missing_paths_name_the_file(capsys, tmp_path):
    rc, _, err = cli(capsys, "info", tmp_path / "nope.json")
    assert rc == 2 and "nope.json" in err and "no such file" in err.lower()


# --------------------------------------------------------------------------- terminal text escaped
EVIL = "\x1b[31mred\x1b]0;title\x07\u202e\r\nX"


def _evil_fsa(tmp_path):
    p = tmp_path / "evil.json"
    p.write_text(json.dumps({"name": EVIL, "alphabet": ["a", "\x1b[2J"], "delta": [[1, 0], [0, 1]], "start": 0,
                             "accepting": [1]}))
    return p


def _clean(text: str) -> bool:
    return not any(not ch.isprintable() and ch not in "\n\t" for ch in text)


def test_escape_sequences_never_reach_the_terminal(capsys, tmp_path):
    p = _evil_fsa(tmp_path)
    for argv, shows in ((["compile", p, "--explain"], True), (["info", p], True),
                        (["compile", p, "-o", tmp_path / "m.json"], False),
                        (["run", tmp_path / "m.json", "--word", "\x1b[2J a"], False),
                        (["info", f"regex:{EVIL}"], False), (["verify", tmp_path / "m.json"], False)):
        rc, out, err = cli(capsys, *argv)
        assert rc in (0, 1, 2) and _clean(out) and _clean(err), (argv, out, err)
        assert not shows or "\\x1b" in out + err, argv
    rc, out, err = cli(capsys, "compile", p, "--explain")
    assert "EVIL" not in out and "\\x1b[31mred\\x1b]0;title\\x07\\u202e\\r\\nX" in out


def test_error_lines_stay_one_line(capsys):
    rc, _, err = cli(capsys, "info", "counter:\n\x1b[2Jx")
    assert rc == 2 and err.count("\n") == 1 and _clean(err) and "\\x1b[2J" in err


def test_sweep_summary_escapes_spec_values(capsys, tmp_path):
    spec = ('kind = "collapse"\n[params]\nsteps = 20\n[grid]\nsource = ["parity"]\nformat = ["bf16"]\n'
            'rounding = ["nearest-even"]\nconstruction = ["parity-sign"]\n'
            'options = [{}, {}]\n').replace('options = [{}, {}]\n', '')
    spec = spec.replace('construction = ["parity-sign"]', 'construction = ["parity-sign", "\\u001b[31mx"]')
    rc, out, err = cli(capsys, "sweep", _spec(tmp_path, spec), "--out", tmp_path / "o", "--no-plots")
    assert rc == 1 and _clean(out) and _clean(err) and "\\x1b[31mx" in out


def test_escaped_keeps_printable_text():
    from lrnnkit.cli_format import escaped
    assert escaped("état ✓ a\tb") == "état ✓ a\\tb"
    assert escaped("a\nb", keep="\n") == "a\nb"
    assert escaped("\udcff") == "\\udcff"


# --------------------------------------------------------------------------- numbers: export and sweep jobs
@pytest.mark.parametrize("argv,needle", [
    (["--random", "200000"], None),
    (["--random", str(10 ** 7)], "RUN_MAX_LENGTH"),
    (["--random", "0"], "--random must be >= 1"),
    (["--random", "3", "--seed", "-1"], "--seed: seed must be >= 0"),
    (["--random", "3", "--seed", str(2 ** 64)], "MAX_SEED"),
])
def test_export_numbers_checked(capsys, parity_model, tmp_path, argv, needle):
    rc, _, err = cli(capsys, "export", parity_model, "--to", "fla", "-o", tmp_path / "e", *argv)
    if needle is None:
        assert rc == 0 and (tmp_path / "e" / "tokens.safetensors").is_file()
    else:
        assert rc == 2 and needle in err and not (tmp_path / "e").exists()


def test_export_token_tensor_bound(capsys, parity_model, tmp_path, monkeypatch):
    # parity exports as one layer of one head, K = 1, n_h = 1: a word of 600 letters makes 600 entries
    monkeypatch.setattr(limits, "EXPORT_MAX_TOKEN_VALUES", 599)
    rc, _, err = cli(capsys, "export", parity_model, "--to", "fla", "-o", tmp_path / "e", "--random", "600")
    assert rc == 2 and "EXPORT_MAX_TOKEN_VALUES" in err and "600 entries" in err and not (tmp_path / "e").exists()
    monkeypatch.setattr(limits, "EXPORT_MAX_TOKEN_VALUES", 600)
    rc, _, err = cli(capsys, "export", parity_model, "--to", "fla", "-o", tmp_path / "e", "--random", "600")
    assert rc == 0


@pytest.mark.parametrize("grid,needle", [
    ('source = ["parity"]\nformat = ["bf16"]\nsteps = [300000000]', "COLLAPSE_MAX_STEPS"),
    ('source = ["parity"]\nformat = ["bf16"]\nsteps = [1000000000000]', "COLLAPSE_MAX_STEPS"),
    ('source = ["parity"]\nformat = ["bf16"]\nperiod_cap = [10000000000]', "COLLAPSE_MAX_STEPS"),
    ('source = ["parity"]\nformat = ["bf16"]\nreplicate = [-1]', "'replicate' must be >= 0"),
    ('source = ["counter:5000"]\nformat = ["bf16"]', "COMPILE_MAX_STATES"),
    ('source = ["group:S6xZ2"]\nformat = ["bf16"]', "above the cap of 1000"),
    ('source = ["regex:a{999}"]\nformat = ["bf16"]', "MAX_REGEX_SIZE"),
])
def test_sweep_collapse_jobs_range_checked(capsys, tmp_path, grid, needle):
    t0 = time.monotonic()
    rc, _, err = cli(capsys, "sweep", _spec(tmp_path, f'kind = "collapse"\n[grid]\n{grid}\n'), "--out", tmp_path / "o")
    assert rc == 2 and needle in err and err.count("\n") == 1, err
    assert time.monotonic() - t0 < 10 and not (tmp_path / "o" / "records.jsonl").exists()


@pytest.mark.parametrize("grid,needle", [
    ('source = ["parity"]\nmax_pairs = [1000000000000]', "MAX_PAIRS_LIMIT"),
    ('source = ["parity"]\nfloat_steps = [1000000000000]', "FLOAT_CHECK_MAX_STEPS"),
    ('source = ["counter:100000"]', "COMPILE_MAX_STATES"),
])
def test_sweep_certify_jobs_range_checked(capsys, tmp_path, grid, needle):
    rc, _, err = cli(capsys, "sweep", _spec(tmp_path, f'kind = "certify"\n[grid]\n{grid}\n'), "--out", tmp_path / "o")
    assert rc == 2 and needle in err, err


def test_progress_bars_still_draw_through_the_filter():
    """tqdm draws with carriage returns: stderr's filter keeps them (and escapes everything else)."""
    import io

    from tqdm import tqdm

    from lrnnkit.cli_format import EscapingStream

    class Tty(io.StringIO):
        def isatty(self):
            return True
    raw = Tty()
    stream = EscapingStream(raw, "\n\t\r")
    bar = tqdm(total=3, desc="x\x1b[31m", file=stream, leave=False, mininterval=0)
    for _ in range(3):
        bar.update(1)
    bar.close()
    text = raw.getvalue()
    assert "\r" in text and "\\r" not in text and "\x1b" not in text and "x\\x1b[31m" in text
    assert stream.isatty()


@pytest.mark.parametrize("line,needle", [("num_cpus = 1e9", "SWEEP_MAX_CPUS"), ("num_gpus = 100000", "SWEEP_MAX_CPUS")])
def test_sweep_resources_bounded(capsys, tmp_path, line, needle):
    rc, _, err = cli(capsys, "sweep", _spec(tmp_path, line + "\n" + COLLAPSE_SPEC), "--out", tmp_path / "o")
    assert rc == 2 and needle in err, err
    rc, _, err = cli(capsys, "sweep", _spec(tmp_path, COLLAPSE_SPEC), "--executor", "ray", "--num-cpus", "100000")
    assert rc == 2 and "SWEEP_MAX_CPUS" in err, err


def test_two_sweeps_on_one_output_refused(capsys, tmp_path):
    """While one process holds OUT's lock, a sweep on OUT is refused at once with the holder's pid; when the
    holder dies (kill -9 included) the lock is gone and the sweep runs."""
    out = tmp_path / "o"
    out.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom lrnnkit.fileio import exclusive_lock\n"
                               f"with exclusive_lock({str(out / '.lock')!r}):\n    print('held', flush=True)\n"
                               "    time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        rc, _, err = cli(capsys, "sweep", _spec(tmp_path, COLLAPSE_SPEC), "--out", out, "--no-plots")
        assert rc == 2 and f"pid {holder.pid}" in err and "in use" in err
        assert not (out / "records.jsonl").exists()
    finally:
        holder.kill()
        holder.wait()
    rc, _, err = cli(capsys, "sweep", _spec(tmp_path, COLLAPSE_SPEC), "--out", out, "--no-plots")
    assert rc == 0, err


def test_lock_file_refuses_a_link(tmp_path):
    from lrnnkit.fileio import exclusive_lock
    (tmp_path / "victim").write_text("precious")
    (tmp_path / ".lock").symlink_to(tmp_path / "victim")
    with pytest.raises(InputError, match="symbolic link"):
        with exclusive_lock(tmp_path / ".lock"):
            pass
    assert (tmp_path / "victim").read_text() == "precious"
