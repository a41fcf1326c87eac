"""The inputs of the GH-product layer (lrnnkit.ops.gh.inputs): canonical shapes (fla's ``[B, T, H, ...]`` with
the ``n_h`` Householder steps of paper 001's DeltaProduct on axis 2), explicit key normalisation, and one-line
refusals of every input that breaks the contract (unit keys, ``beta in [0, 2]``, ``g <= 0``, shapes, dtypes)."""
import pytest

torch = pytest.importorskip("torch")

from lrnnkit.errors import InputError  # noqa: E402
from lrnnkit.ops.gh.inputs import prepare  # noqa: E402

B, T, H, K, V = 2, 5, 3, 4, 6


def _inputs(n_h=None, seed=0):
    g = torch.Generator().manual_seed(seed)
    extra = () if n_h is None else (n_h,)
    q = torch.randn(B, T, H, K, generator=g, dtype=torch.float64)
    k = torch.nn.functional.normalize(torch.randn(B, T, *extra, H, K, generator=g, dtype=torch.float64), dim=-1)
    v = torch.randn(B, T, *extra, H, V, generator=g, dtype=torch.float64)
    beta = torch.rand(B, T, *extra, H, generator=g, dtype=torch.float64) * 2
    return q, k, v, beta


def test_deltanet_shapes_become_one_householder_step():
    q, k, v, beta = _inputs()
    x = prepare(q, k, v, beta)
    assert x.n_h == 1 and x.k.shape == (B, T, 1, H, K) and x.v.shape == (B, T, 1, H, V)
    assert x.beta.shape == (B, T, 1, H) and x.dims == (B, T, H, K, V)
    assert torch.equal(x.k[:, :, 0], k) and x.g is None and x.h0 is None


def test_deltaproduct_shapes_keep_their_steps():
    q, k, v, beta = _inputs(n_h=3)
    g = -torch.rand(B, T, H, dtype=torch.float64)
    h0 = torch.randn(B, H, K, V, dtype=torch.float64)
    x = prepare(q, k, v, beta, g, h0)
    assert x.n_h == 3 and x.k is k and x.g is g and x.h0 is h0


def test_normalize_is_explicit():
    q, k, v, beta = _inputs()
    with pytest.raises(InputError, match="k"):
        prepare(q, 3 * k, v, beta)
    x = prepare(q, 3 * k, v, beta, normalize=True)
    assert torch.allclose(x.k[:, :, 0], k, atol=1e-15, rtol=0)       # float64 division by an O(1) norm


@pytest.mark.parametrize("change,needle", [
    (lambda q, k, v, b: (q[..., None], k, v, b), "q: expected shape"),
    (lambda q, k, v, b: (q, k[:, :, :, :2], v, b), "k"),
    (lambda q, k, v, b: (q, k, v, b[:, :3]), "beta"),
    (lambda q, k, v, b: (q, k, v, b + 2.5), "beta"),
    (lambda q, k, v, b: (q, k.float(), v, b), "k"),
    (lambda q, k, v, b: (q, k, v.tolist(), b), "v: expected a torch.Tensor"),
])
def test_bad_inputs_are_refused_in_one_line(change, needle):
    with pytest.raises(InputError) as e:
        prepare(*change(*_inputs()))
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_a_positive_gate_is_refused_and_validation_can_be_skipped():
    q, k, v, beta = _inputs()
    g = torch.full((B, T, H), 0.5, dtype=torch.float64)
    with pytest.raises(InputError, match="g"):
        prepare(q, k, v, beta, g)
    assert prepare(q, 2 * k, v, beta + 5, g, validate=False).g is g      # the caller's promise: no checks
