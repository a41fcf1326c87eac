"""lrnnkit.learn.memory: the live-bytes count of tensor storages (exact on hand-made allocations), and the
measured peak of one training step on CPU against what must be live at its peak (weights, gradients, AdamW's two
moments: 16 bytes per float32 parameter) and against a larger batch."""
import torch

from lrnnkit.learn.memory import LiveBytes, peak_bytes
from lrnnkit.learn.train import TrainConfig

TINY = dict(layer="deltanet", width=8, heads=1, batch=4, train_len=[2, 6], test_len=[6], eval_n=8, device="cpu")


def test_live_bytes_counts_each_storage_once_until_it_is_freed():
    with LiveBytes() as m:
        a = torch.zeros(1000)                       # 4000 bytes
        v = a[10:]                                  # a view: no new storage
        b = torch.ones(500, dtype=torch.float64)    # 4000 bytes: peak 8000
        del a, v
        c = torch.zeros(10, dtype=torch.int16)      # a's storage is gone: 4000 + 20
    assert (m.peak, m.now) == (8000, 4020)
    del b, c


def test_one_step_holds_at_least_weights_grads_and_adam_state():
    cfg = TrainConfig(**TINY)
    n = cfg.check_size()
    small = peak_bytes(cfg)
    assert small >= 16 * n                          # float32 weights, gradients, exp_avg, exp_avg_sq
    bigger = peak_bytes(TrainConfig(**{**TINY, "batch": 64, "train_len": [2, 32]}))
    assert bigger > small
