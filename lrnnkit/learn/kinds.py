"""The trainable LRNN layer kinds and their command-line defaults, in a torch-free module so that the command line
can list them without importing torch (building the parser must stay fast)."""

LAYER_KINDS = ("diagonal", "deltanet", "deltaproduct", "block-diagonal", "bilinear", "fixed-point", "mamba")

# `lrnnkit train` defaults shared by every layer (the command line's help quotes them; TrainConfig's own defaults).
WIDTH, BATCH = 64, 64
TRAIN_LEN, TEST_LEN = (3, 40), (40, 128, 256)
# 000, Fig. 4 caption: the reported accuracy is over 8192 test words of lengths uniform in 40..256, (n, lo, hi) as
# TrainConfig.test_mix takes it: the paper-scale runs of 000's Chomsky tasks (experiments.py) and the protocol's
# quote (protocols.py) both read it from here
TEST_MIX_000 = (8192, 40, 256)

# `lrnnkit train` defaults that depend on the layer (TrainConfig's too: its heads, short_conv, lr and steps left at
# None resolve to these). No layer gets a short convolution by default: with one (fla's
# GatedDeltaProduct has it) a one-layer DeltaProduct n_h = 2 at these sizes stays near the sign of the permutation
# on the S3 word problem (token accuracy 0.3-0.5 after 1000-3000 steps at lr 1e-3 to 1e-2), without it the same
# run extrapolates (001, Fig. 3's S3 panel on a CPU); the diagonal layer with it fits the training lengths and
# generalises worse on parity. The diagonal layer learns parity at every length with lr 1e-2; the GH layers take
# fla's lr 1e-3 (2e-3 loses S3 for some seeds) and eight heads of 8 (four of 16 learn S3 from fewer seeds).
_LR = {"diagonal": 1e-2}
_STEPS = {"diagonal": 500}   # past it the eigenvalues drift off -1 (0.90 at 256 after 1000 steps, 1.0 after 500)
_SHORT_CONV: dict = {}
_HEADS = {"deltanet": 8, "deltaproduct": 8}


def default_lr(layer: str) -> float:
    """The learning rate `lrnnkit train` uses for ``layer`` when --lr is not given."""
    return _LR.get(layer, 1e-3)


def default_short_conv(layer: str) -> bool:
    """Whether `lrnnkit train` puts a short convolution before ``layer`` when neither --short-conv nor
    --no-short-conv is given (off for every layer; module comment)."""
    return _SHORT_CONV.get(layer, False)


def default_heads(layer: str) -> int:
    """The heads per layer `lrnnkit train` uses for ``layer`` when --heads is not given."""
    return _HEADS.get(layer, 4)


def default_steps(layer: str) -> int:
    """The optimizer steps `lrnnkit train` runs for ``layer`` when --steps is not given."""
    return _STEPS.get(layer, 1000)


def train_defaults(layer: str) -> dict:
    """Every `lrnnkit train` default for ``layer`` as :class:`lrnnkit.learn.train.TrainConfig` keywords (what
    `lrnnkit experiment` uses at its tiny scale where a run follows the command line's defaults)."""
    return dict(width=WIDTH, heads=default_heads(layer), batch=BATCH, train_len=TRAIN_LEN, test_len=TEST_LEN,
                lr=default_lr(layer), steps=default_steps(layer), short_conv=default_short_conv(layer))
