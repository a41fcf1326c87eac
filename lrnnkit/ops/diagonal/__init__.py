"""Diagonal LRNN layers ``h_t = a_t * h_{t-1} + b_t`` with eigenvalues ``a_t in [-1, 1]`` (paper 000, Table 2)."""
