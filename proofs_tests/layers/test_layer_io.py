"""The forward contract of the trainable layers (lrnnkit.layers.layer_io, fla's layer contract): a padded batch
with ``attention_mask`` is packed to the kept tokens with their sequence boundaries and put back with zeros at the
padding; bad inputs are refused in one line."""
import pytest

torch = pytest.importorskip("torch")

from lrnnkit.errors import InputError  # noqa: E402
from lrnnkit.layers.layer_io import pack  # noqa: E402


def test_mask_packs_the_kept_tokens_and_puts_them_back():
    x = torch.arange(3 * 4 * 2, dtype=torch.float32).reshape(3, 4, 2)
    mask = torch.tensor([[1, 1, 1, 0], [0, 0, 0, 0], [0, 1, 1, 1]])
    packed, cu, put_back = pack("L", x, 2, mask, None, False, {})
    keep = [(b, t) for b in range(3) for t in range(4) if mask[b, t]]
    assert packed.shape == (1, len(keep), 2)
    assert all(torch.equal(packed[0, i], x[b, t]) for i, (b, t) in enumerate(keep))
    assert cu.tolist() == [0, 3, 6] and cu.dtype == torch.int32          # the empty row has no sequence
    back = put_back(packed * 10)
    assert torch.equal(back, x * 10 * mask[..., None])


def test_without_a_mask_nothing_moves():
    x = torch.randn(1, 5, 3)
    cu = torch.tensor([0, 2, 5])
    packed, cu2, put_back = pack("L", x, 3, None, None, False, {"cu_seqlens": cu})
    assert packed is x and cu2 is cu and put_back(x) is x


@pytest.mark.parametrize("x,mask,kw,needle", [
    (torch.randn(2, 3), None, {}, "shape (B, T, 4)"),
    (torch.zeros(1, 2, 4, dtype=torch.int64), None, {}, "floating point"),
    (torch.randn(1, 2, 4), torch.ones(2, 2), {}, "attention_mask must be a 0/1 matrix"),
    (torch.randn(1, 2, 4), torch.tensor([[1, 2]]), {}, "only 0 (padding) and 1"),
    (torch.randn(1, 2, 4), torch.ones(1, 2), {"cu_seqlens": torch.tensor([0, 2])}, "not both"),
    (torch.randn(2, 2, 4), None, {"cu_seqlens": torch.tensor([0, 2])}, "B = 1"),
    (torch.randn(1, 4, 4), None, {"cu_seqlens": torch.tensor([0, 3, 2, 4])}, "must rise from 0 to T = 4"),
])
def test_bad_inputs_are_refused(x, mask, kw, needle):
    with pytest.raises(InputError) as e:
        pack("L", x, 4, mask, None, False, kw)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_incremental_decoding_is_refused():
    with pytest.raises(InputError, match="past_key_values"):
        pack("L", torch.randn(1, 2, 4), 4, None, object(), False, {})
