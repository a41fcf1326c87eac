"""Run pytest with module knobs of lrnnkit.ops.gh.wy set (GPU debugging): _knobs.py KEY=VALUE ... -- pytest args.

KEY: a module attribute (FP32_PRECISION=tf32; of wy_config where it is defined, else of wy), STAGES=n (pipeline
stages of every kernel), NOPAD=1 (no zero padding of 32-wide heads). Example:
    TRITON_INTERPRET=0 python3 benchmarks/_knobs.py NOPAD=1 -- -q -k wide proofs_tests/ops/gh/test_wy.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import pytest  # noqa: E402

from lrnnkit.ops.gh import wy, wy_config  # noqa: E402

i = sys.argv.index("--")
for kv in sys.argv[1:i]:
    k, v = kv.split("=")
    if k == "NOPAD":   # no zero padding of 32-wide heads (wy._padded): shows the width-32 miscompile
        wy._padded = lambda K, V, dtype: (K, V)
    elif k == "STAGES":
        orig = wy._Ctx.__init__

        def init(self, *a, _o=orig, _v=int(v), **kw):
            _o(self, *a, **kw)
            self.cfg = {k_: (x + (_v,) if isinstance(x, tuple) and len(x) == 2 else x) for k_, x in self.cfg.items()}
        wy._Ctx.__init__ = init
    else:   # a module attribute (the settings are wy_config's); a comma makes a tuple
        val = tuple(x for x in v.split(",") if x) if "," in v else {"True": True, "False": False}.get(v, v)
        setattr(wy_config if hasattr(wy_config, k) else wy, k, val)
sys.exit(pytest.main(sys.argv[i + 1:]))
