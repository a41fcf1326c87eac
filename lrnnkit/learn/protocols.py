"""The papers' training protocols as printed, and how an experiment's runs differ from them.

For each experiment of :mod:`lrnnkit.learn.experiments` a :class:`Protocol` records what its paper prints about
training -- model, steps, batch, lengths, optimizer, learning rate (and sweep), weight decay, schedule, clipping,
seeds, which number is reported and the metric -- each value a :class:`Quote` with the place it is printed
(``000, App. E.1.1``). A value the paper does not print is ``None`` with a note saying so; a value derived from
printed ones (steps from epochs x examples / batch) says how in its note.

:func:`differences` compares the runs of an experiment (by default its ``--scale paper`` configurations) with the
protocol and lists every difference in words. Runs of one configuration that differ only in ``seed`` and ``lr``
form one group: the group's seeds and learning rates are what the paper's seed count and learning-rate sweep are
compared with, so an experiment expanded to the paper's seeds x learning rates (:func:`follow`) has none of these
differences left. Each difference has a kind:

* ``config``: a :class:`~lrnnkit.learn.train.TrainConfig` field (or the runs' seeds and learning rates) can follow
  the paper; :func:`follow` makes them follow;
* ``trainer``: the paper's setting is not expressible in lrnnkit's training loop (a fixed training set run for
  epochs where lrnnkit draws fresh batches every step, a linear decay, early stopping, a task lrnnkit lacks);
* ``judge``: how the experiment's judge reduces and scores the runs (one run per configuration; its metric, read
  from the judge itself by :func:`judged_metric`).

An experiment whose runs have a ``config`` or ``trainer`` difference does not run the paper's protocol: a verdict
from it narrows the paper's statement to what was run, and one run of a configuration is never evidence against a
paper that reports several seeds.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

from ..errors import InputError

__all__ = ["Quote", "Protocol", "Difference", "PROTOCOLS", "get_protocol", "differences", "follow",
           "judged_metric", "runs_multiplier", "protocols_rst", "FIELDS"]


@dataclass(frozen=True)
class Quote:
    """A setting as the paper prints it: ``value`` (``None``: the paper does not say), ``where`` (paper and
    section, table or figure), ``note`` (an ambiguity, or how a derived value follows from printed ones).
    ``expressible=False``: no lrnnkit setting can follow it (a difference of kind ``trainer``)."""

    value: object
    where: str
    note: str = ""
    expressible: bool = True


# the fields of a protocol, in the order the tables list them, with their words
FIELDS = {
    "task": "task", "layers": "layers", "width": "width", "heads": "heads", "head_dim": "head dimension",
    "short_conv": "short convolution", "mlp": "MLP", "steps": "steps", "batch": "batch",
    "train_len": "training lengths", "test_len": "test lengths", "eval_n": "test words per length",
    "test_words": "test words", "data": "training data", "optimizer": "optimizer", "lr": "learning rate",
    "lr_sweep": "learning-rate sweep", "weight_decay": "weight decay", "schedule": "schedule",
    "warmup": "warm-up", "min_lr": "minimum learning rate", "clip": "gradient clipping", "early_stop": "early stop",
    "seeds": "seeds", "reported": "reported", "metric": "metric",
}

# what lrnnkit's loop and judges do where no TrainConfig field says (learn/train.py, experiments.best_per_config)
OURS_DATA = "fresh batches every step"
OURS_TEST_WORDS = "eval_n words of each test length"
OURS_REPORTED = "one run per configuration"
OURS_EARLY_STOP = "none"

# the metric a judge reads, from the first key of its "measured" table
_METRIC_KEYS = (("scaled_accuracy", "scaled accuracy"), ("final_accuracy", "final-position accuracy"),
                ("token_accuracy", "token accuracy"), ("character_accuracy", "token accuracy"),
                ("iterations", "fixed-point iterations"))


@dataclass(frozen=True)
class Protocol:
    """One experiment's protocol: ``fields`` for every configuration, ``per_config`` overrides by configuration
    label, ``notes`` on what the experiment's grid of configurations leaves out of the paper's."""

    experiment: str
    fields: dict
    per_config: dict = field(default_factory=dict)
    notes: tuple = ()

    def quote(self, name: str, label: str | None = None) -> Quote | None:
        over = self.per_config.get(label, {}) if label is not None else {}
        return over.get(name, self.fields.get(name))


@dataclass(frozen=True)
class Difference:
    """``field`` differs in the runs of configuration ``label``: ``ours`` against the paper's ``quote``."""

    label: str
    field: str
    ours: object
    quote: Quote
    kind: str           # config | trainer | judge

    @property
    def text(self) -> str:
        return f"{FIELDS[self.field]}: {_fmt(self.field, self.ours)}, paper: {_fmt(self.field, self.quote.value)} " \
               f"({self.quote.where})"


def _fmt(name: str, v) -> str:
    if name == "seeds" and isinstance(v, int):
        return f"{v}"
    if name == "lr_sweep":
        if isinstance(v, int):
            return f"{v} values (not printed)"
        return "{" + ", ".join(f"{x:g}" for x in v) + "}" if v else "no sweep"
    if name in ("train_len", "test_len") and isinstance(v, tuple):
        lo, hi = v
        return f"{hi}" if lo == hi else (f"up to {hi}" if lo is None else f"{lo}..{hi}")
    if name == "clip" and v == 0:
        return "none"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _q(value, where: str, note: str = "", expressible: bool = True) -> Quote:
    return Quote(value, where, note, expressible)


# ------------------------------------------------------------------------------------------------ 000
_E11 = "000, App. E.1.1"
_SILENT = "not printed"


def _chomsky(layers: int, clip: float, clip_where: str) -> dict:
    return {
        "layers": _q(layers, _E11, "'2 blocks' for parity; 'increase the number of layers to 3' for modular "
                                  "arithmetic"),
        "width": _q(128, _E11, "'We set the embedding and heads' dimensions to 128'"),
        "heads": _q(4, _E11, "'4 heads for the xLSTM and DeltaNet models' (Mamba: no heads)"),
        "head_dim": _q(None, _E11, "ambiguous: 'heads' dimensions to 128' with 4 heads and an embedding of 128"),
        "short_conv": _q(True, _E11, "'For Mamba and DeltaNet, we also enable the 1-D depthwise-separable "
                                    "convolution layer with kernel size equal to 4'"),
        "mlp": _q(None, _E11, _SILENT),
        "steps": _q(100_000, _E11, "'We train on every task for 100k steps in total'"),
        "batch": _q(1024, _E11),
        "train_len": _q((3, 40), _E11, "'sequence lengths ranging from 3 to 40'"),
        "test_len": _q((40, 256), _E11, "'evaluated on lengths from 40 to 256'"),
        "eval_n": _q(None, "000, Fig. 4 caption", "8192 test words in all, lengths uniform in 40..256"),
        "test_words": _q("8192 words of lengths uniform in 40..256", "000, Fig. 4 caption", expressible=False),
        "data": _q(OURS_DATA, _E11, "'At each training step, we make sure to generate a valid random sample'"),
        "optimizer": _q("AdamW", _E11),
        "lr": _q(None, _E11, "chosen by the sweep"),
        "lr_sweep": _q((1e-2, 1e-3, 5e-4, 1e-4), _E11, "the text says '3 different learning rates' and lists four"),
        "weight_decay": _q(0.1, _E11),
        "schedule": _q("cosine", _E11),
        "warmup": _q(0.1, _E11, "'after 10% warm-up steps'"),
        "min_lr": _q(1e-6, _E11),
        "clip": _q(clip, clip_where, "the paragraph says 'without gradient clipping' and, for modular arithmetic, "
                                    "'a gradient clipping norm of 1.0 for Transformer, Mamba, and DeltaNet'"),
        "seeds": _q(3, _E11, "3 seeds per learning rate"),
        "reported": _q("best of 3 seeds at the learning rate of best median", "000, Table 3 and App. E.1.1",
                      "Table 3: 'best of 3 runs'; the learning rate: 'We pick the best based on the median of the "
                      "3 seeds'; Table 5 reports the median"),
        "metric": _q("scaled accuracy", "000, Table 3"),
    }


_E21 = "000, App. E.2.1"


def _state_000(steps_note: str) -> dict:
    return {
        "width": _q(128, _E21, "'an embedding dimension of 128'"),
        "heads": _q(4, _E21, "'4 heads for DeltaNet'"),
        "head_dim": _q(None, _E21, _SILENT),
        "short_conv": _q(False, _E21, "'In the case of DeltaNet, we do not use the 1-D convolutions for these "
                                     "experiments'"),
        "mlp": _q(None, _E21, "'Other parameters are kept as default'"),
        "steps": _q(312_500, "000, Fig. 2 caption and App. E.2.1", steps_note),
        "batch": _q(512, _E21),
        "train_len": _q((32, 32), "000, Fig. 2 caption", "'32 except for the third plot from the left where it "
                                                        "is 64'"),
        "test_len": _q((None, 500), _E21, "'40K examples of length 500 for testing', the curve read at each length"),
        "eval_n": _q(40_000, _E21),
        "test_words": _q("40K words of length 500, accuracy read at every prefix length", _E21,
                        expressible=False),
        "data": _q("a fixed set of 1.6M training words, 100 epochs", "000, App. E.2.1 and Fig. 2 caption",
                  "'we always sample 1.6M examples for training'", expressible=False),
        "optimizer": _q("AdamW", _E21),
        "lr": _q(1e-4, _E21),
        "lr_sweep": _q((), _E21, "one learning rate"),
        "weight_decay": _q(0.01, _E21),
        "schedule": _q(None, _E21, _SILENT),
        "warmup": _q(None, _E21, _SILENT),
        "min_lr": _q(None, _E21, _SILENT),
        "clip": _q(1.0, _E21),
        "seeds": _q(3, _E21, "'We run 3 seeds for each method'"),
        "reported": _q("best of 3 seeds", "000, Fig. 2 caption", "Fig. 5 shows all seeds"),
        "metric": _q("sequence accuracy", "000, Fig. 2 caption", "the paper does not define sequence accuracy"),
    }


_S5_STEPS = "derived: 100 epochs (Fig. 2 caption) x 1.6M training words / batch 512"
_P000_S5 = Protocol("000-s5", {**_state_000(_S5_STEPS)}, per_config={
    "S5 swaps only, DeltaNet [-1,1] 1L": {"layers": _q(1, "000, Section 5.2", "'DeltaNet [-1, 1] with even one "
                                                                             "layer'")},
    "S5 swaps only, DeltaNet [0,1] 1L": {"layers": _q(5, "000, Section 5.2", "'DeltaNet [0, 1] with 5 layers "
                                                                            "generalizes just slightly beyond'")},
    "S5 standard, DeltaNet [-1,1] 1L": {"layers": _q(None, "000, Section 5.2", "the depths are in Fig. 2's "
                                                                              "labels, lost in the extraction")},
    "S5 4 tokens/transition, DeltaNet [-1,1] 1L": {
        "layers": _q(5, "000, Section 5.2", "'DeltaNet [-1, 1] with 5 layers manages to extrapolate very well'"),
        "train_len": _q((64, 64), "000, Fig. 2 caption", "'the third plot from the left where it is 64': the 4-token "
                                                        "setup, third in the text's order of the setups"),
        "test_len": _q((None, 500), _E21, "lengths in tokens: 'around length 200, which corresponds to 50 group "
                                         "elements'")}},
    notes=("Fig. 2 also has S5 with permutations of up to 3 elements and other depths; the experiment runs four of "
           "its configurations.",))

_P000_Z60 = Protocol("000-z60", {
    **{k: replace(v, where=v.where + " (E.2 state tracking; E.2.2 gives no settings of its own)")
       for k, v in _state_000("").items()
       if k in ("width", "heads", "short_conv", "batch", "optimizer", "lr", "lr_sweep", "weight_decay", "clip")},
    "layers": _q(None, "000, Fig. 6", "the depths are in Fig. 6's labels, lost in the extraction"),
    "steps": _q(None, "000, App. E.2.2", "not printed for Z60 (S5: 100 epochs of 1.6M words)"),
    "train_len": _q((32, 32), "000, Fig. 6 caption", "'left 32, right 64' (64: 2 tokens per transition)"),
    "test_len": _q(None, "000, Fig. 6", _SILENT),
    "data": _q(None, "000, App. E.2.2", _SILENT),
    "seeds": _q(1, "000, Fig. 6 caption", "'(1 seed)'"),
    "reported": _q(OURS_REPORTED, "000, Fig. 6 caption"),
    "metric": _q("sequence accuracy", "000, Fig. 6 caption", "the paper does not define sequence accuracy"),
}, notes=("Fig. 6 also trains Z60 with 2 tokens per transition (training length 64); the experiment runs the "
          "1-token panel.",))

# ------------------------------------------------------------------------------------------------ 001
_C1 = "001, App. C.1"
_STEPS_001 = "derived: 100 epochs x 2,000,000 training words / batch {b} (whole batches)"


def _p001(layers_note: str) -> dict:
    return {
        "layers": _q(1, _C1, "'All models used a single-layer DeltaProduct architecture'" + layers_note),
        "width": _q(None, _C1, "not printed; 12 heads x head dimension 32 = 384"),
        "heads": _q(12, _C1, "'12 attention heads (more heads made the results more reliable)'"),
        "head_dim": _q(32, _C1),
        "short_conv": _q(None, _C1, _SILENT),
        "mlp": _q(None, _C1, _SILENT),
        "steps": _q(100 * 2_000_000 // 1024, _C1, _STEPS_001.format(b=1024)),
        "batch": _q(1024, _C1, "'a batch size of 1024, except for the S3 models which required a batch size of "
                              "2048'"),
        "train_len": _q((128, 128), _C1, "'training datapoints at sequence length 128'; no curriculum"),
        "test_len": _q((None, 512), _C1, "'500,000 test datapoints at sequence length 512'"),
        "eval_n": _q(500_000, _C1),
        "test_words": _q(None, "001, Fig. 3", "whether the curve is read at prefixes of the 512-long words or on "
                                             "words of each length is not printed"),
        "data": _q("a fixed set of 2,000,000 training words, 100 epochs", _C1, expressible=False),
        "optimizer": _q("AdamW", _C1, "betas (0.9, 0.999), eps 1e-8 (torch's defaults, as lrnnkit's)"),
        "lr": _q(1e-3, _C1),
        "lr_sweep": _q((), _C1, "one learning rate"),
        "weight_decay": _q(1e-6, _C1),
        "schedule": _q("cosine", _C1, "'with cosine annealing'"),
        "warmup": _q(None, _C1, _SILENT),
        "min_lr": _q(None, _C1, _SILENT),
        "clip": _q(None, _C1, _SILENT),
        "seeds": _q(None, _C1, "not printed"),
        "reported": _q(None, "001, Fig. 3", "one curve per configuration; over how many seeds not printed"),
        "metric": _q(None, "001, Fig. 3", "'Accuracy': token or sequence accuracy not printed"),
    }


_S3_001 = {"batch": _q(2048, _C1, "'except for the S3 models which required a batch size of 2048'"),
           "steps": _q(100 * 2_000_000 // 2048, _C1, _STEPS_001.format(b=2048))}
_P001_DP = Protocol("001-deltaproduct", _p001(""),
                    per_config={f"S3 DeltaProduct n_h={n} [-1,1]": _S3_001 for n in (1, 2, 3, 4)})
_P001_L = Protocol("001-deltanet-layers", {
    **_p001("; Fig. 3 (bottom) varies the number of layers l of DeltaNet"),
    "heads": _q(12, _C1, "written for the single-layer models; the layer models' heads are not printed apart")},
    per_config={f"S3 DeltaNet {L} layer(s) [-1,1]": {**_S3_001, "layers": _q(L, "001, Fig. 3 (bottom)")}
                for L in (1, 2, 3, 4, 5)},
    notes=("Fig. 3 (bottom) runs the layer counts on S3, S4, A5 and S5 ('DeltaNet cannot learn S4 and S5 even with "
           "5 layers'); the experiment runs S3.",))

# ------------------------------------------------------------------------------------------------ 002
_S44 = "002, Section 4.4"
_T2 = "002, Table 2 caption"
_P002 = Protocol("002-block-diagonal", {
    "layers": _q(1, _S44, "'ModArith uses 3 layers while the others take 1 layer'"),
    "width": _q(64, _S44, "(b, h) = (8, 8): 8 blocks of size 8"),
    "heads": _q(None, _S44, "no heads: h = 8 blocks"),
    "steps": _q(40_000, _T2, "'the best testing accuracy over 40,000 gradient updates'"),
    "batch": _q(None, "002, Section 4", _SILENT),
    "train_len": _q((40, 40), "002, Table 1 and Section 4.2", "'trained on sequences of length L_tr'"),
    "test_len": _q((500, 500), "002, Table 1", "L_ex"),
    "eval_n": _q(None, "002, Section 4", _SILENT),
    "data": _q(None, "002, Section 4", _SILENT),
    "optimizer": _q(None, "002, Section 4", _SILENT),
    "lr": _q(None, "002, Section 4", _SILENT),
    "lr_sweep": _q(None, "002, Section 4", _SILENT),
    "weight_decay": _q(None, "002, Section 4", _SILENT),
    "schedule": _q(None, "002, Section 4", _SILENT),
    "clip": _q(None, "002, Section 4", _SILENT),
    "seeds": _q(5, _T2, "'an average of five random trials'"),
    "reported": _q("mean of 5 seeds, each the best test accuracy over training", _T2),
    "metric": _q(None, "002, Table 2", "'testing accuracy': one output per word (Section 4.1) suggests the last "
                                      "position; not printed"),
}, per_config={"ModArith(5)": {"layers": _q(3, _S44),
                               "train_len": _q((39, 39), "002, Table 1", "odd lengths"),
                               "test_len": _q((499, 499), "002, Table 1")}})

# ------------------------------------------------------------------------------------------------ 003
_E2 = "003, App. E.2"


def _p003_state() -> dict:
    return {
        "layers": _q(1, "003, Section 3", "'one layer (1L) for Bedouin'; 'two layers (2L) for the diagonal linear "
                                         "RNN baselines'"),
        "width": _q(None, _E2, "not printed ('the implementation and the hyperparameters provided by Merrill et al.')"),
        "heads": _q(None, _E2, _SILENT),
        "short_conv": _q(None, _E2, _SILENT),
        "steps": _q(50_000, _E2, "derived: 5 epochs x 1.28M training words (1.6M split 4 to 1) / batch 128"),
        "batch": _q(128, _E2),
        "train_len": _q((16, 16), _E2, "'We train the model for sequence length 16'"),
        "test_len": _q((2, 50), _E2, "'evaluate for sequence length 2 through 50'"),
        "eval_n": _q(None, _E2, "the 1-in-5 split of the 1.6M words; per length not printed"),
        "data": _q("a fixed set of 1.28M training words, 5 epochs", _E2, expressible=False),
        "optimizer": _q("AdamW", _E2),
        "lr": _q(1e-4, _E2),
        "lr_sweep": _q((), _E2, "one learning rate"),
        "weight_decay": _q(0.01, _E2),
        "schedule": _q(None, _E2, _SILENT),
        "warmup": _q(None, _E2, _SILENT),
        "clip": _q(1.0, _E2),
        "seeds": _q(3, _E2, "'3 different random seeds'"),
        "reported": _q(None, "003, Fig. 3", "one curve per model; mean, best or all seeds not printed"),
        "metric": _q(None, "003, Fig. 3", "the axis label is lost in the extraction"),
    }


def _p003_copy() -> dict:
    return {
        "layers": _q(1, "003, Section 3", "'one layer (1L) for Bedouin'"),
        "width": _q(None, _E2, _SILENT),
        "heads": _q(None, _E2, _SILENT),
        "steps": _q(10_000, _E2, "'10000 iterations'"),
        "batch": _q(128, _E2),
        "train_len": _q((5, 50), _E2, "'copy sequence length in the range 5 to 50'"),
        "test_len": _q((5, 100), _E2, "'evaluate for the range 5 to 100'; the claim is at 2x (100)"),
        "data": _q(OURS_DATA, _E2, "'The data is sampled randomly at the start of the training/evaluation': read "
                                  "as fresh batches"),
        "optimizer": _q("AdamW", _E2),
        "lr": _q(1e-5, _E2),
        "lr_sweep": _q((), _E2, "one learning rate"),
        "weight_decay": _q(0.1, _E2),
        "schedule": _q("linear decay", _E2, "'linear learning rate decay after a 300 iterations warmup'",
                      expressible=False),
        "warmup": _q(0.03, _E2, "300 of 10,000 iterations"),
        "clip": _q(1.0, _E2),
        "seeds": _q(3, _E2),
        "reported": _q("mean of 3 seeds", "003, Table 2", "'0.94 +- 0.03': mean and spread, over the 3 seeds of "
                                                          "App. E.2 presumably"),
        "metric": _q("token accuracy", "003, Fig. 2b", "'character accuracy of copying at 2x'"),
    }


_P003_STATE = Protocol("003-state-tracking", _p003_state(), per_config={
    f"{g} Mamba-like diagonal [0,1] 2L": {"layers": _q(2, "003, Section 3")} for g in ("A5", "S5")},
    notes=("Fig. 3 caps the fixed-point iterations at 16 in training (Section 3); lrnnkit's layer does the same.",))
_P003_COPY = Protocol("003-copy", _p003_copy(), per_config={
    "copy Mamba-like diagonal [0,1] 2L": {"layers": _q(2, "003, Section 3")}})
_P003_MOD = Protocol("003-modarith-brackets", {
    "layers": _q(2, "003, App. E.1", "'a 2-layer model with r = 4 reflections'"),
    "width": _q(None, _E2, _SILENT),
    "heads": _q(None, _E2, _SILENT),
    "steps": _q(100_000, _E2),
    "batch": _q(256, _E2),
    "train_len": _q((3, 40), _E2),
    "test_len": _q((40, 256), _E2),
    "data": _q(OURS_DATA, _E2, "'randomly sampled at the start of training/evaluation': read as fresh batches"),
    "optimizer": _q(None, _E2, "not printed for this task"),
    "lr": _q(1e-3, _E2),
    "lr_sweep": _q((), _E2, "one learning rate"),
    "weight_decay": _q(0.1, _E2),
    "schedule": _q("cosine", _E2),
    "warmup": _q(0.1, _E2, "10,000 of 100,000 iterations"),
    "min_lr": _q(1e-6, _E2, "'decayed ... by a factor of 0.001' of 1e-3"),
    "clip": _q(0.0, _E2, "'no gradient clipping'"),
    "seeds": _q(None, _E2, "not printed for this task"),
    "reported": _q(None, "003, Table 1", _SILENT),
    "metric": _q("scaled accuracy", "003, App. E.1 and Table 1"),
}, per_config={"DeltaNet [-1,1] 2L": {
    "layers": _q(None, "003, Table 1", "Table 1 labels it 2L; its number (0.200) is 000's, whose App. E.1.1 trains 3 "
                                      "layers for modular arithmetic"),
    "reported": _q("best of 3 seeds at the learning rate of best median", "000, Table 3 (003, Table 1 adopts it)")}})
_P003_IT = Protocol("003-iterations", {
    **_p003_state(), "train_len": _q((16, 16), "003, Fig. 1 caption", "Fig. 1 varies the iteration cap l_max at "
                                                                       "training length 16, not the training length"),
    "reported": _q(None, "003, Figs. 1, 4, 6", _SILENT),
    "metric": _q("fixed-point iterations", "003, Figs. 4 and 6")},
    per_config={"copy fixed-point r=2": {**_p003_copy(), "reported": _q("median iterations at test time",
                                                                       "003, Fig. 4 caption"),
                                         "metric": _q("fixed-point iterations", "003, Fig. 4")}})

# ------------------------------------------------------------------------------------------------ 004
_B2 = "004, App. B.2"
_P000_PARITY_FIELDS = _chomsky(2, 0.0, _E11)
_P004 = Protocol("004-bilinear", {
    "layers": _q(1, "004, Section 3", "'a single recurrent cell followed by a linear classification head'"),
    "width": _q(256, "004, Section 3", "'A consistent hidden and input dimensionality of 256'"),
    "heads": _q(None, "004, Section 3", "full, factored and block-diagonal bilinear models; block counts are in "
                                       "Table 1, lost in the extraction"),
    "short_conv": _q(False, "004, Section 3", "a recurrent cell and a linear head"),
    "steps": _q(100_000, _B2),
    "batch": _q(64, _B2),
    "train_len": _q((2, 10), _B2),
    "test_len": _q((500, 500), _B2, "'evaluated on inputs of length 500'"),
    "data": _q(OURS_DATA, _B2, "'randomly sampled at each training step'"),
    "optimizer": _q("Adam", _B2),
    "lr": _q(None, _B2, "chosen by the sweep"),
    "lr_sweep": _q(3, _B2, "'three learning rates': their values are lost in the extraction"),
    "weight_decay": _q(0.0, _B2, "'without learning rate scheduling, weight decay, or dropout'"),
    "schedule": _q("constant", _B2),
    "warmup": _q(0.0, _B2),
    "clip": _q(None, _B2, _SILENT),
    "early_stop": _q("when the validation loss falls below a threshold", _B2, "the threshold is lost in the "
                                                                              "extraction", expressible=False),
    "seeds": _q(None, _B2, "not printed for Table 1 (Section 3.4: 'best across 3 seeds and 2 learning rate')"),
    "reported": _q("best over learning rates", "004, Section 3.1", "'picked the best performing model'"),
    "metric": _q("scaled accuracy", "004, Section 3.1"),
}, per_config={
    "bilinear, modular arithmetic (precedence) M=5": {
        "task": _q("modular arithmetic applied left to right (no precedence)", "004, Section 3 (Tasks)",
                  "'the result of these operations, applied sequentially'; the modulus is lost in the extraction",
                  expressible=False)},
    **{f"diagonal {r}, parity": {**_P000_PARITY_FIELDS,
                                 "reported": _q("best of 3 seeds", "000, Fig. 1 caption", "'(3 seeds)'"),
                                 "early_stop": _q(None, _E11, "no early stop printed"),
                                 "layers": _q(None, "000, Fig. 1", "the diagonal models of Fig. 1; depth not printed "
                                                                  "apart from App. E.1.1's 2 blocks")}
       for r in ("[0,1]", "[-1,1]")}},
    notes=("The diagonal parity configurations are 000's (Fig. 1), run beside 004's models.",))

PROTOCOLS = {p.experiment: p for p in [
    Protocol("000-parity", _chomsky(2, 0.0, _E11)),
    Protocol("000-modarith", _chomsky(3, 1.0, _E11)),
    Protocol("000-modarith-brackets", _chomsky(3, 1.0, _E11)),
    _P000_S5, _P000_Z60, _P001_DP, _P001_L, _P002, _P004, _P003_STATE, _P003_COPY, _P003_MOD, _P003_IT]}


def get_protocol(name: str) -> Protocol:
    if name not in PROTOCOLS:
        raise InputError(f"no protocol for experiment {name!r} (known: {', '.join(PROTOCOLS)})")
    return PROTOCOLS[name]


# ------------------------------------------------------------------------------------------------ comparison
def _groups(runs) -> list:
    """``[(label, [configs])]``: runs of one configuration (equal but for seed and lr, first label kept)."""
    import json
    out: dict = {}
    for label, cfg in runs:
        key = json.dumps({k: v for k, v in cfg.to_json().items() if k not in ("seed", "lr", "min_lr")},
                         sort_keys=True, default=str)
        out.setdefault(key, (label, []))[1].append(cfg)
    return list(out.values())


def _schedule(cfg) -> str:
    return "constant" if cfg.warmup == 0 and cfg.min_lr == cfg.lr else "cosine"


def _ours(name: str, cfgs: list):
    """What the runs of one configuration do for protocol field ``name`` (learn/train.py's loop)."""
    c = cfgs[0]
    if name == "head_dim":
        return c.head_dim if c.head_dim is not None else c.width // c.heads
    if name == "train_len":
        return tuple(c.train_len)
    if name == "test_len":
        return (min(c.test_len), max(c.test_len))
    if name == "optimizer":
        return "AdamW" if c.weight_decay > 0 else "Adam"
    if name == "schedule":
        return _schedule(c)
    if name == "lr":
        return c.lr
    if name == "lr_sweep":
        return tuple(sorted({x.lr for x in cfgs}, reverse=True))
    if name == "seeds":
        return len({x.seed for x in cfgs})
    return {"data": OURS_DATA, "test_words": OURS_TEST_WORDS, "reported": OURS_REPORTED,
            "early_stop": OURS_EARLY_STOP}.get(name, getattr(c, name, None))


def _same(name: str, ours, paper, cfgs) -> bool:
    if name == "test_len":
        lo, hi = paper
        return ours[1] == hi and (lo is None or ours[0] <= lo)
    if name == "lr_sweep":
        if isinstance(paper, int):
            return len(ours) >= paper
        return not paper and len(ours) == 1 or set(ours) == set(paper)
    if name == "lr":
        return all(x.lr == paper for x in cfgs)
    if name == "min_lr":
        return all(x.min_lr == paper for x in cfgs)
    if name == "warmup" and paper == 0.0:
        return all(x.warmup == 0 for x in cfgs)
    if name == "optimizer" and paper == "AdamW":
        return True     # lrnnkit's loop is AdamW; with weight decay 0 it is Adam, a weight-decay difference
    if name == "schedule":
        return all(_schedule(x) == paper for x in cfgs)
    if name == "eval_n" and paper is not None:
        return ours >= paper
    return ours == paper


def _kind(name: str, quote: Quote) -> str:
    if not quote.expressible or name in ("data", "test_words", "early_stop"):
        return "trainer"
    if name in ("reported", "metric"):
        return "judge"
    return "config"


@functools.lru_cache(maxsize=None)
def judged_metric(name: str) -> str:
    """The metric the experiment's judge scores, read from the judge: it is given one made-up result per
    configuration (every accuracy 0.5, every iteration count 1, at the configuration's test lengths) and the first
    key of its ``measured`` table names the metric (``_METRIC_KEYS``); ``"unknown"`` if none matches."""
    from .experiments import get_experiment
    exp = get_experiment(name)
    res = {}
    for label, cfg in exp.runs("paper"):
        by_len = {str(L): 0.5 for L in cfg.test_len}
        res[label] = {"test_accuracy": dict(by_len), "final_accuracy": dict(by_len), "scaled_accuracy": by_len,
                      "fixed_point_iterations": {k: 1 for k in by_len}, "steps": cfg.steps}
    key = next(iter(exp.judge(res)["measured"]))
    return next((m for k, m in _METRIC_KEYS if k in key), "unknown")


def differences(name: str, runs=None) -> list:
    """Every :class:`Difference` between ``runs`` (``[(label, TrainConfig)]``; default: the experiment's
    ``--scale paper`` runs) and the paper's protocol, per configuration in run order, then field order. Fields the
    paper does not print (``None``) are no difference (:func:`silent` lists them)."""
    from .experiments import get_experiment
    prot = get_protocol(name)
    runs = get_experiment(name).runs("paper") if runs is None else runs
    metric = judged_metric(name)
    out = []
    for label, cfgs in _groups(runs):
        for f in FIELDS:
            q = prot.quote(f, label)
            if q is None or q.value is None:
                continue
            if f == "task":
                ours = cfgs[0].task
                same = ours == q.value
            elif f == "metric":
                ours, same = metric, metric == q.value
            else:
                ours = _ours(f, cfgs)
                same = _same(f, ours, q.value, cfgs)
            if not same:
                out.append(Difference(label, f, ours, q, _kind(f, q)))
    return out


def silent(name: str, label: str) -> list:
    """The fields the paper does not print for configuration ``label``, as ``[(field, Quote)]``."""
    prot = get_protocol(name)
    return [(f, prot.quote(f, label)) for f in FIELDS
            if prot.quote(f, label) is not None and prot.quote(f, label).value is None]


def follow(name: str, runs=None, seeds_when_silent: int = 1) -> list:
    """``runs`` (default: the experiment's paper runs) changed to follow the protocol wherever a TrainConfig field
    can: every ``config`` difference set to the paper's value, each configuration expanded to the paper's seeds
    (0..n-1; ``seeds_when_silent`` where the paper prints no count) x learning-rate sweep (a sweep whose values
    were not printed keeps the configuration's one rate: that difference stays). Labels are kept, so several runs
    share a label."""
    from .experiments import get_experiment
    prot = get_protocol(name)
    runs = get_experiment(name).runs("paper") if runs is None else runs
    out = []
    for label, cfgs in _groups(runs):
        q = lambda f: prot.quote(f, label)      # noqa: E731 - a local shorthand
        base = cfgs[0]
        kw = {}
        for f in ("layers", "width", "heads", "short_conv", "mlp", "steps", "batch", "weight_decay", "warmup",
                  "min_lr", "clip"):
            if q(f) is not None and q(f).value is not None and q(f).expressible:
                kw[f] = q(f).value
        if q("head_dim") is not None and q("head_dim").value is not None:
            kw["head_dim"] = q("head_dim").value
            if q("width") is None or q("width").value is None:
                kw["width"] = kw.get("heads", base.heads) * q("head_dim").value
        if q("train_len") is not None and q("train_len").value is not None:
            kw["train_len"] = q("train_len").value
        if q("test_len") is not None and q("test_len").value is not None:
            lo, hi = q("test_len").value
            keep = [x for x in base.test_len if x < hi and (lo is None or x >= lo)]
            kw["test_len"] = tuple(sorted(set(keep + [hi] + ([lo] if lo is not None else []))))
        if q("eval_n") is not None and q("eval_n").value is not None:
            kw["eval_n"] = max(base.eval_n, q("eval_n").value)
        if q("optimizer") is not None and q("optimizer").value == "Adam":
            kw["weight_decay"] = 0.0
        sweep = q("lr_sweep").value if q("lr_sweep") is not None else None
        lrs = list(sweep) if isinstance(sweep, tuple) and sweep else \
            [q("lr").value if q("lr") is not None and q("lr").value is not None else base.lr]
        constant = q("schedule") is not None and q("schedule").value == "constant"
        seeds = q("seeds").value if q("seeds") is not None and q("seeds").value is not None else seeds_when_silent
        for lr in lrs:
            for s in range(seeds):
                extra = {"min_lr": lr, "warmup": 0.0} if constant else {}
                out.append((label, replace(base, **{**kw, "lr": lr, "seed": s, **extra})))
    return out


def runs_multiplier(name: str) -> dict:
    """``{"configurations", "runs_now", "runs_protocol"}``: how many training runs the experiment's paper scale
    makes now and how many :func:`follow` makes (seeds x learning rates per configuration)."""
    from .experiments import get_experiment
    now = get_experiment(name).runs("paper")
    return {"configurations": len(_groups(now)), "runs_now": len(now), "runs_protocol": len(follow(name))}


# ------------------------------------------------------------------------------------------------ docs
def _rst_row(cells) -> str:
    return "   * - " + "\n     - ".join(c.replace("\n", " ") or " " for c in cells)


def protocols_rst() -> str:
    """The docs section (docs/learning.rst, "The papers' protocols"): per experiment the protocol's fields and
    the differences of its ``--scale paper`` runs, generated from :data:`PROTOCOLS` and :func:`differences`."""
    from .experiments import get_experiment
    lines = []
    for name, prot in PROTOCOLS.items():
        exp = get_experiment(name)
        m = runs_multiplier(name)
        lines += [name, "~" * len(name), "",
                  f"{exp.paper}, {exp.figure_or_table}. Runs at ``--scale paper``: {m['runs_now']}; following the "
                  f"protocol's seeds x learning rates: {m['runs_protocol']}.", "",
                  ".. list-table::", "   :header-rows: 1", "   :widths: 18 30 52", "",
                  _rst_row(["setting", "paper", "where, and note"])]
        for f, words in FIELDS.items():
            q = prot.fields.get(f)
            if q is None:
                continue
            val = "not printed" if q.value is None else _fmt(f, q.value)
            lines.append(_rst_row([words, val, q.where + (f": {q.note}" if q.note else "")]))
        for label, over in prot.per_config.items():
            for f, q in over.items():
                if prot.fields.get(f) == q:
                    continue
                val = "not printed" if q.value is None else _fmt(f, q.value)
                lines.append(_rst_row([f"{FIELDS[f]} ({label})", val, q.where + (f": {q.note}" if q.note else "")]))
        lines.append("")
        diffs = differences(name)
        if not diffs:
            lines += ["No differences.", ""]
        else:
            lines += ["Differences of the ``--scale paper`` runs (kind in brackets):", ""]
            by_text: dict = {}
            for d in diffs:
                by_text.setdefault((d.kind, d.text), []).append(d.label)
            n = len(_groups(exp.runs("paper")))
            for (kind, text), labels in by_text.items():
                who = "every configuration" if len(labels) == n else ", ".join(labels)
                lines.append(f"* [{kind}] {text} -- {who}")
            lines.append("")
        for note in prot.notes:
            lines += [f"Note: {note}", ""]
    return "\n".join(lines).rstrip() + "\n"

