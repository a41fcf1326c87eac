"""Bilinear LRNN layers (paper 004): ``h_t = W(x_t) h_{t-1} + b_t`` with ``W(x) = sum_i x_i W_i``."""
