"""SequenceModel layer kinds: each trains a step, and its values and gradients equal those of
autograd through lrnnkit's sequential kernel references (float64; tolerance 1e-9 relative: the scans
re-associate sums and products, so agreement is to rounding, ~1e-15 per operation over < 100 operations)."""
import pytest
import torch

from lrnnkit.errors import InputError
from lrnnkit.learn.models import LAYER_KINDS, SequenceModel, affine_scan
from lrnnkit.learn.tasks import IGNORE, batch_rng, make_task

KINDS = [("diagonal", {}), ("diagonal", {"eig_range": (0, 1)}), ("deltanet", {}), ("deltanet", {"eig_range": (0, 1)}),
         ("deltaproduct", {"n_h": 2}), ("deltaproduct", {"n_h": 3, "gate": True}), ("block-diagonal", {}),
         ("bilinear", {}), ("deltaproduct", {"n_h": 2, "mlp": True, "layers": 2})]


def _model(layer, backend, kw, seed=0):
    torch.manual_seed(seed)
    return SequenceModel(6, 4, layer=layer, width=16, heads=2, layers=kw.pop("layers", 2), backend=backend,
                         block_size=4, **kw).double()


def _grads(m, x, y):
    m.zero_grad()
    logits = m(x)
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 4), y.reshape(-1))
    loss.backward()
    return logits.detach(), {k: p.grad.clone() for k, p in m.named_parameters() if p.grad is not None}


def _reference_backend(layer):
    return "naive"


def _fast_backends(layer):
    if layer in ("deltanet", "deltaproduct"):
        try:
            import lrnnkit.ops.gh.api  # noqa: F401
            return ["torch"]               # the chunk equations in torch (what runs on the GPU besides Triton)
        except ImportError:
            return []
    return ["scan"]


@pytest.mark.parametrize("layer,kw", KINDS, ids=[f"{l}-{i}" for i, (l, _) in enumerate(KINDS)])
def test_values_and_gradients_match_naive_reference(layer, kw):
    x = torch.randint(0, 6, (3, 21), generator=torch.Generator().manual_seed(1))
    y = torch.randint(0, 4, (3, 21), generator=torch.Generator().manual_seed(2))
    ref = _model(layer, _reference_backend(layer), dict(kw))
    lr, gr = _grads(ref, x, y)
    assert all(torch.isfinite(g).all() for g in gr.values())
    assert len(gr) == len([p for p in ref.parameters()])     # every parameter receives a gradient
    for be in _fast_backends(layer):
        fast = _model(layer, be, dict(kw))
        fast.load_state_dict(ref.state_dict())
        lf, gf = _grads(fast, x, y)
        torch.testing.assert_close(lf, lr, rtol=1e-9, atol=1e-11)
        for k in gr:
            torch.testing.assert_close(gf[k], gr[k], rtol=1e-9, atol=1e-11, msg=lambda m: f"{k}: {m}")


@pytest.mark.parametrize("layer", LAYER_KINDS)
def test_one_training_step_changes_parameters(layer):
    task = make_task("group:S3")
    torch.manual_seed(0)
    m = SequenceModel(task.n_in, task.n_out, layer=layer, n_h=1, width=16, heads=2, block_size=4)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
    x, y = (torch.as_tensor(a) for a in task.sample(4, (5, 9), batch_rng(0, 0)))
    before = {k: v.clone() for k, v in m.state_dict().items()}
    loss = torch.nn.functional.cross_entropy(m(x).reshape(-1, task.n_out), y.reshape(-1), ignore_index=IGNORE)
    loss.backward()
    opt.step()
    assert torch.isfinite(loss)
    changed = [k for k, v in m.state_dict().items() if not torch.equal(v, before[k])]
    assert len(changed) == len(before)


def test_affine_scan_against_loop():
    g = torch.Generator().manual_seed(0)
    a, b = torch.rand(2, 37, 5, generator=g, dtype=torch.float64) * 2 - 1, torch.randn(2, 37, 5, generator=g,
                                                                                       dtype=torch.float64)
    h, out = torch.zeros(2, 5, dtype=torch.float64), []
    for t in range(37):
        h = a[:, t] * h + b[:, t]
        out.append(h)
    torch.testing.assert_close(affine_scan(a, b), torch.stack(out, 1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("eig,lo,hi", [((-1, 1), -1.0, 1.0), ((0, 1), 0.0, 1.0)])
def test_transition_spectra_respect_the_eigenvalue_range(eig, lo, hi):
    """DeltaNet (n_h = 1): A = I - beta k k^T has eigenvalues 1 and 1 - beta, beta in [0, 2] or [0, 1]
    (000, Table 2); the diagonal layer's and Mamba's entries lie in the range. Checked on the returned matrices."""
    x = torch.randint(0, 6, (2, 9), generator=torch.Generator().manual_seed(3))
    for layer in ("deltanet", "diagonal", "mamba"):
        m = _model(layer, "naive", {"eig_range": eig})
        for A in m.transition_matrices(x):
            assert A.shape[:2] == (2, 9) and A.shape[-1] == A.shape[-2]
            ev = torch.linalg.eigvals(A.reshape(-1, A.shape[-1], A.shape[-1]))
            assert ev.imag.abs().max() < 1e-9
            assert ev.real.min() >= lo - 1e-9 and ev.real.max() <= hi + 1e-9


def test_gh_transitions_reproduce_the_state_recurrence():
    """The matrices returned by transition_matrices are the A(x_t) of the layer: propagating the kernel's state
    S_t = A_t S_{t-1} + sum_j beta_j k_j v_j^T (threaded through the factors) matches the naive kernel's output."""
    from lrnnkit.ops.gh.naive import delta_product_naive
    m = _model("deltaproduct", "naive", {"n_h": 2, "layers": 1})
    x = torch.randint(0, 6, (2, 7), generator=torch.Generator().manual_seed(4))
    mix = m.mixers[0]
    u = m.norms[0](m.embed(x))
    q, k, v, beta, _ = mix.gh_inputs(u)
    A = mix.transitions(u)                                   # (B, T, H, K, K)
    _, S_T = delta_product_naive(q, k, v, beta, None, output_final_state=True, validate=False)
    S = torch.zeros_like(S_T)
    for t in range(x.shape[1]):
        Bt = torch.zeros_like(S)
        for j in range(k.shape[2]):                          # B(x_t) with the later factors applied to it
            kj, vj, bj = k[:, t, j], v[:, t, j], beta[:, t, j]
            Bt = Bt - bj[..., None, None] * kj[..., :, None] * torch.einsum("bhk,bhkv->bhv", kj, Bt)[..., None, :]
            Bt = Bt + bj[..., None, None] * kj[..., :, None] * vj[..., None, :]
        S = A[:, t] @ S + Bt
    torch.testing.assert_close(S, S_T, rtol=1e-10, atol=1e-12)


def test_bad_model_arguments():
    with pytest.raises(InputError):
        SequenceModel(3, 2, layer="lstm")
    with pytest.raises(InputError):
        SequenceModel(3, 2, layer="deltanet", n_h=2)
    with pytest.raises(InputError):
        SequenceModel(3, 2, layer="diagonal", eig_range=(-2, 1))
    with pytest.raises(InputError):
        SequenceModel(3, 2, layer="block-diagonal", width=10, block_size=4)
    with pytest.raises(InputError):
        SequenceModel(3, 2, layer="diagonal")(torch.tensor([[0, 3]]))


@pytest.mark.slow
@pytest.mark.triton
@pytest.mark.parametrize("kw", [{"n_h": 2}, {"n_h": 2, "gate": True}])
def test_gh_model_on_triton_chunk_kernel_matches_naive(kw, monkeypatch):
    """The path the GPU runs (``chunk_gh`` Triton WY kernels, here in the interpreter, float64): values and every
    parameter's gradient equal autograd through the sequential reference (~30 s per case on 2 CPU cores)."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    x = torch.randint(0, 6, (3, 21), generator=torch.Generator().manual_seed(1))
    y = torch.randint(0, 4, (3, 21), generator=torch.Generator().manual_seed(2))
    ref = _model("deltaproduct", "naive", dict(kw))
    fast = _model("deltaproduct", "chunk", dict(kw))
    fast.load_state_dict(ref.state_dict())
    lr, gr = _grads(ref, x, y)
    lf, gf = _grads(fast, x, y)
    torch.testing.assert_close(lf, lr, rtol=1e-9, atol=1e-11)
    for k in gr:
        torch.testing.assert_close(gf[k], gr[k], rtol=1e-9, atol=1e-11, msg=lambda m: f"{k}: {m}")
