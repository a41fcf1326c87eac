"""Every ``--device`` (train, experiment, extract) and every device a library call takes is checked as text and,
for CUDA, against what torch has, before torch sees it: an unknown name or a missing GPU is one line, exit 2, never
torch's RuntimeError or "Torch not compiled with CUDA enabled" assertion as an internal error."""
from __future__ import annotations

import pytest
import torch

from lrnnkit.cli import main
from lrnnkit.errors import InputError
from lrnnkit.learn.device import check_device, require_device
from lrnnkit.learn.extract import extract_checkpoint


@pytest.mark.parametrize("argv", [
    ["experiment", "001-deltaproduct", "--device", "{d}"],
    ["extract", "{ckpt}", "--device", "{d}"],
    ["train", "parity", "--layer", "diagonal", "--steps", "1", "--device", "{d}"],
])
@pytest.mark.parametrize("d", ["gpu", "cuda:x", "CPU", "", "cuda:99999", "cuda:123"])
def test_bad_or_missing_devices_are_one_line_exit_2(tmp_path, capsys, argv, d):
    if d == "cuda:123" and torch.cuda.is_available() and torch.cuda.device_count() > 123:
        pytest.skip("a machine with 124 GPUs")
    ckpt = tmp_path / "ckpt.json"
    ckpt.write_text('{"format": "lrnnkit.train-checkpoint"}')
    rc = main([x.format(d=d, ckpt=ckpt) for x in argv])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "internal error" not in err, err
    assert "cpu, cuda or cuda:N" in err or "requested but" in err


def test_library_calls_check_the_device(tmp_path):
    with pytest.raises(InputError, match="must be cpu, cuda or cuda:N"):
        extract_checkpoint(str(tmp_path), device="tpu")
    for ok in ("cpu", "cuda", "cuda:0", "cuda:12"):
        assert check_device(ok) == ok
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="CUDA is not available"):
            require_device("cuda")

