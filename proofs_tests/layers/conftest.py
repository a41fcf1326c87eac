"""Fixtures shared by the layers' tests."""
import pytest

torch = pytest.importorskip("torch")


class HostRead(RuntimeError):
    """A tensor's value was read on the host while :func:`no_host_reads` was active."""


@pytest.fixture
def no_host_reads(monkeypatch):
    """Every Python-level way of reading a tensor's value on the host raises :class:`HostRead` while the fixture is
    active; the fixture's value is that exception class (``pytest.raises(no_host_reads)``)."""
    def refuse(name):
        def f(self, *a, **k):
            raise HostRead(f"Tensor.{name} read the device")
        return f
    for name in ("tolist", "item", "__bool__", "__int__", "__float__", "__index__", "numpy", "cpu", "__array__"):
        monkeypatch.setattr(torch.Tensor, name, refuse(name))
    return HostRead
