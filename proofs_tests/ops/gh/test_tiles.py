"""The Triton tile helpers of the chunked GH kernels (lrnnkit.ops.gh.tiles), each run inside a one-program
kernel written here: the inverse of a unit lower-triangular tile, blocked (16 x 16 diagonal blocks and a nilpotent
remainder) and row by row, against torch.linalg.inv in float64; the dot with its transposes; the operand rounding.

Tolerances: A strictly lower with entries in [-0.1, 0.1], so (I + A)^{-1} has entries O(1) (its Neumann series
converges fast) and the substitution's rounding stays ~ BT u: float64 1e-12, float32 1e-5 (BT = 32 or 64,
u = 2^-24, with room for the blocked variant's four products)."""
import pytest

torch = pytest.importorskip("torch")

from lrnnkit.ops._triton import INTERPRET, TL_DTYPE, tl, triton  # noqa: E402
from lrnnkit.ops.gh.tiles import _dot, _op, _tinv  # noqa: E402

pytestmark = pytest.mark.triton
DEV = "cpu" if INTERPRET else "cuda"   # Triton interpreter on CPU tensors, else compiled on CUDA


@triton.jit
def _tinv_kernel(a_ptr, t_ptr, BT: tl.constexpr, ACC: tl.constexpr, BLOCKED: tl.constexpr, SUB: tl.constexpr):
    r = tl.arange(0, BT)
    A = tl.load(a_ptr + r[:, None] * BT + r[None, :])
    tl.store(t_ptr + r[:, None] * BT + r[None, :], _tinv(A, BT, ACC, "ieee", BLOCKED, SUB))


@triton.jit
def _dot_kernel(a_ptr, b_ptr, o_ptr, N: tl.constexpr, ACC: tl.constexpr, TA: tl.constexpr, TB: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    b = tl.load(b_ptr + r[:, None] * N + r[None, :])
    tl.store(o_ptr + r[:, None] * N + r[None, :], _dot(a, b, "ieee", ACC, TA, TB))


@triton.jit
def _op_kernel(x_ptr, o_ptr, N: tl.constexpr, DT: tl.constexpr, ACC: tl.constexpr, EMU: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(o_ptr + r, _op(tl.load(x_ptr + r), DT, ACC, EMU).to(ACC))


@pytest.mark.parametrize("dtype,blocked,sub,tol", [(torch.float64, False, 16, 1e-12), (torch.float32, True, 16, 1e-5),
                                                   (torch.float32, True, 8, 1e-5), (torch.float32, True, 4, 1e-5),
                                                   (torch.float32, False, 16, 1e-5)])
@pytest.mark.parametrize("BT", [16, 32, 64])
def test_unit_lower_triangular_inverse(dtype, blocked, sub, tol, BT):
    """Every way of blocking (SUB = 16: 16 x 16 blocks by substitution, then products; SUB = 4 or 8: smaller blocks
    by substitution and one more level of products) gives the inverse."""
    g = torch.Generator().manual_seed(BT)
    A = (torch.rand(BT, BT, generator=g, dtype=torch.float64) * 0.2 - 0.1).tril(-1)
    T = torch.empty(BT, BT, dtype=dtype, device=DEV)
    _tinv_kernel[(1,)](A.to(dtype).to(DEV), T, BT, TL_DTYPE[dtype], blocked, sub)
    T = T.cpu()
    ref = torch.linalg.inv(torch.eye(BT, dtype=torch.float64) + A.to(dtype).double())
    assert torch.allclose(T.double(), ref, atol=tol, rtol=0)
    assert torch.equal(T.triu(1), torch.zeros_like(T)) and torch.equal(T.diagonal(), torch.ones(BT, dtype=dtype))


def test_sub_blocks_change_only_rounding_and_unit_keys_stay_bounded():
    """The T factor of unit keys with beta in [0, 2] (what the kernels invert: entries up to 2, not small): the three
    blockings agree with the float64 inverse to float32 rounding grown by the factor's size, 1e-5 relative to its
    largest entry."""
    BT = 64
    g = torch.Generator().manual_seed(5)
    k = torch.nn.functional.normalize(torch.randn(BT, 32, generator=g, dtype=torch.float64), dim=-1)
    b = 2 * torch.rand(BT, generator=g, dtype=torch.float64)
    A = ((b[:, None] * k) @ k.T).tril(-1)
    ref = torch.linalg.inv(torch.eye(BT, dtype=torch.float64) + A.float().double())
    for sub in (16, 8, 4):
        T = torch.empty(BT, BT, dtype=torch.float32, device=DEV)
        _tinv_kernel[(1,)](A.float().to(DEV), T, BT, tl.float32, True, sub)
        assert float((T.cpu().double() - ref).abs().max() / ref.abs().max()) < 1e-5, sub


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_dot_with_transposes(ta, tb):
    """float64 products of 16 x 16 tiles: sums of 16 products, 1e-12."""
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(16, 16, generator=g, dtype=torch.float64), torch.randn(16, 16, generator=g, dtype=torch.float64)
    o = torch.empty(16, 16, dtype=torch.float64, device=DEV)
    _dot_kernel[(1,)](a.to(DEV), b.to(DEV), o, 16, tl.float64, ta, tb)
    assert torch.allclose(o.cpu(), (a.T if ta else a) @ (b.T if tb else b), atol=1e-12, rtol=0)


@pytest.mark.skipif(not INTERPRET, reason="the emulated operand exists for the interpreter")
def test_operand_is_rounded_to_its_dtype():
    x = torch.randn(64, generator=torch.Generator().manual_seed(4))
    o = torch.empty(64)
    _op_kernel[(1,)](x, o, 64, tl.bfloat16, tl.float32, True)
    # a bf16 value widened back to float32, within one bf16 ulp of x (the CPU interpreter converts by truncation,
    # a GPU to nearest: either errs by less than 2^-7 relative, bf16 having 8 significant bits)
    assert torch.equal(o, o.to(torch.bfloat16).float()) and not torch.equal(o, x)
    assert ((o - x).abs() <= x.abs() * 2 ** -7).all()
