"""Block-diagonal input-dependent LRNN layers (paper 002): ``h_t = blockdiag(A_t^1 .. A_t^m) h_{t-1} + b_t``."""
