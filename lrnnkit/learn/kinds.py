"""The trainable LRNN layer kinds and their command-line defaults, in a torch-free module so that the command line
can list them without importing torch (building the parser must stay fast)."""

LAYER_KINDS = ("diagonal", "deltanet", "deltaproduct", "block-diagonal", "bilinear", "fixed-point")

# `lrnnkit train` defaults that depend on the layer. The GH layers follow fla's GatedDeltaProduct (a short
# convolution, lr 1e-3); the diagonal layer learns parity at every length with lr 1e-2 and no convolution (with the
# convolution it fits the training lengths and generalises worse: 0.96 token accuracy at 256 after 300 steps, against
# 1.0 without, benchmarks/RESULTS.md "train defaults").
_LR = {"diagonal": 1e-2}
_STEPS = {"diagonal": 500}   # past it the eigenvalues drift off -1 (0.90 at 256 after 1000 steps, 1.0 after 500)
_SHORT_CONV = {"deltanet": True, "deltaproduct": True}


def default_lr(layer: str) -> float:
    """The learning rate `lrnnkit train` uses for ``layer`` when --lr is not given."""
    return _LR.get(layer, 1e-3)


def default_short_conv(layer: str) -> bool:
    """Whether `lrnnkit train` puts a short convolution before ``layer`` when neither --short-conv nor
    --no-short-conv is given."""
    return _SHORT_CONV.get(layer, False)


def default_steps(layer: str) -> int:
    """The optimizer steps `lrnnkit train` runs for ``layer`` when --steps is not given."""
    return _STEPS.get(layer, 1000)
