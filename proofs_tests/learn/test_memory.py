"""lrnnkit.learn.memory: the live-bytes count of tensor storages (exact on hand-made allocations), and the
measured peak of one training step on CPU against what must be live at its peak (weights, gradients, AdamW's two
moments: 16 bytes per float32 parameter), against a larger batch, and against torch's own memory tracker."""
import pytest
import torch
from torch.nn import functional as F

from lrnnkit.learn.memory import LiveBytes, peak_bytes
from lrnnkit.learn.tasks import IGNORE, batch_rng
from lrnnkit.learn.train import TrainConfig, build

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


def _step(cfg, task, model, opt):
    x, y = task.sample(cfg.batch, max(cfg.train_len), batch_rng(0, 0))
    logits = model(torch.as_tensor(x))
    loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), torch.as_tensor(y).reshape(-1),
                           ignore_index=IGNORE)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()


@pytest.mark.parametrize("kw", [dict(layer="deltanet", layers=2), dict(layer="deltaproduct", n_h=2)])
def test_live_bytes_agrees_with_torchs_memory_tracker(kw):
    """An independent count: torch's ``MemTracker`` (module, parameter, gradient, optimizer and activation
    memory, from torch's own hooks) over one training step. The two agree within 2% (0.1-0.5% on these
    configurations: they differ in a few small temporaries that one of them sees and the other does not)."""
    mem_tracker = pytest.importorskip("torch.distributed._tools.mem_tracker")
    cfg = TrainConfig(**{**TINY, "width": 32, "heads": 2, "batch": 16, "train_len": [2, 16], **kw})
    task, model, opt = build(cfg)
    mt = mem_tracker.MemTracker()
    mt.track_external(model, opt)
    with mt:
        _step(cfg, task, model, opt)
    theirs = sum(v["Total"] for v in mt.get_tracker_snapshot("peak").values())
    task, model, opt = build(cfg)
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    with LiveBytes() as m:
        _step(cfg, task, model, opt)
    assert abs(m.peak + weights - theirs) <= 0.02 * theirs


@pytest.mark.parametrize("task, length", [("parity", (3, 9)), ("group:S5", (16, 16))])
def test_a_fixed_sets_bytes_are_what_the_set_allocates(task, length):
    """``fixed_set_bytes`` (added to ``peak_bytes``) is exactly the bytes a built :class:`FixedSet` holds: its words,
    labels and the two epoch orders; fresh batches hold none."""
    from lrnnkit.learn.dataset import FixedSet
    from lrnnkit.learn.memory import fixed_set_bytes
    from lrnnkit.learn.tasks import make_task
    from lrnnkit.learn.train import TrainConfig
    cfg = TrainConfig(task=task, layer="diagonal", batch=8, train_len=length, train_words=64, steps=1)
    fs = FixedSet(make_task(task), 64, 8, length, [0], "cpu")
    held = fs.x.nbytes + fs.y.nbytes + fs.order.nbytes
    assert fixed_set_bytes(cfg) == held > 0
    import dataclasses
    assert fixed_set_bytes(dataclasses.replace(cfg, train_words=None)) == 0
