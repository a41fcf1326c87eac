"""What tests of lrnnkit, and of code built on it, draw from: :mod:`.strategies` (hypothesis strategies for
transformations, automata and words) and :mod:`.examples` (small hand-built models for the kernel tests and
benchmarks)."""
