"""Every signal that ends a run saves what it had (or says why not) and exits with one line and its documented
status: 130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP). A signal during a checkpoint's writes is held until the
checkpoint is whole (no lost save, no orphan tensor file); a serial sweep stopped by SIGTERM says where its
finished points are."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from proofs_tests._paths import REPO
from lrnnkit.errors import Interrupted
from lrnnkit.learn import checkpoint as ck
from lrnnkit.learn.train import TrainConfig, train
from lrnnkit.signals import deferred, stopping

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
TINY = dict(task="parity", layer="diagonal", width=8, heads=2, short_conv=False, steps=6, batch=4, lr=1e-2,
            train_len=(2, 4), test_len=(4,), eval_n=8, log_every=1, checkpoint_every=2)


def test_deferred_holds_a_signal_until_the_block_ends():
    done = []
    with pytest.raises(KeyboardInterrupt):
        with deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            done.append("whole block")
    assert done == ["whole block"]


@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)])
def test_stopping_raises_the_signal_as_interrupted(sig, status):
    with pytest.raises(Interrupted) as e:
        with stopping("saved {signal}"):
            os.kill(os.getpid(), sig)
            time.sleep(1)
    assert e.value.exit_status == status and e.value.message == f"saved {signal.Signals(sig).name}"
    assert signal.getsignal(signal.SIGTERM) is not None    # the previous handlers are back


def test_a_signal_during_the_save_lets_the_checkpoint_finish(tmp_path, monkeypatch):
    """Ctrl-C arrives between the tensor file and the JSON that commits it: the save completes (the JSON names the
    new tensors, no orphan file), then the interrupt is delivered."""
    out = str(tmp_path / "run")
    train(TrainConfig(**TINY), out, stop_at=2, evaluate_at_end=False)
    real = ck.atomic_write_bytes

    def write_then_interrupt(path, data):
        real(path, data)
        if path.endswith(".safetensors"):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
    monkeypatch.setattr(ck, "atomic_write_bytes", write_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        train(TrainConfig(**TINY), out, stop_at=4, evaluate_at_end=False)
    doc = json.loads(open(os.path.join(out, ck.CKPT_JSON)).read())
    tensors = sorted(f for f in os.listdir(out) if f.endswith(".safetensors"))
    assert doc["step"] >= 4 and doc["tensors"] in tensors
    prev = json.loads(open(os.path.join(out, ck.PREV_JSON)).read())["tensors"]
    assert set(tensors) == {doc["tensors"], prev}


_SWEEP = r"""
import sys
from lrnnkit.cli import main
sys.exit(main(["sweep", sys.argv[1], "--out", sys.argv[2]]))
"""


def test_sigterm_to_a_serial_sweep_says_where_the_points_are(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('kind = "certify"\n[grid]\nsource = ["group:S5", "group:A5", "group:S4", "group:D6", "group:Z7"]\n'
                    'replicate = [0, 1, 2, 3, 4, 5, 6, 7]\n')
    p = subprocess.Popen([sys.executable, "-c", _SWEEP, str(spec), str(tmp_path / "o")],
                         env={**os.environ, "PYTHONPATH": REPO}, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    t0 = time.time()
    while not os.path.exists(tmp_path / "o" / "records.jsonl") and time.time() - t0 < 120:
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    rc = p.wait(timeout=120)
    err = p.stderr.read().decode()
    p.stderr.close()
    assert rc == 143, err[-2000:]
    last = err.strip().splitlines()[-1]
    assert last.startswith("lrnnkit: terminated; finished points are kept in") and "records.jsonl" in last
