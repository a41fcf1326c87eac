"""Probe one chunk_gh configuration on the GPU (run with CUDA_LAUNCH_BLOCKING=1, one process per case).
argv: fused key bv nw K V dtype nh gate T stages prec"""
import sys, traceback, torch, torch.nn.functional as F
sys.path.insert(0, '.')
from lrnnkit.kernels.gh import wy
from lrnnkit.kernels.gh.api import chunk_gh
fused, key, bv, nw, K, V, dts, nh, gate, T, stages, prec = sys.argv[1:13]
wy.FUSED = fused == "1"
wy.FP32_PRECISION = prec
if key != "none":
    wy.CONFIG[key] = (int(bv), int(nw)); wy.CONFIG_WIDE[key] = (int(bv), int(nw))
K, V, nh, T, stages = int(K), int(V), int(nh), int(T), int(stages)
dt = getattr(torch, dts)
if stages:
    orig = wy._Ctx.__init__
    def init(self, *a, **k):
        orig(self, *a, **k); self.stages = stages
    wy._Ctx.__init__ = init
g = torch.Generator().manual_seed(0)
B, H = 1, 2
q = torch.randn(B, T, H, K, generator=g, dtype=torch.float64)
k = F.normalize(torch.randn(B, T, nh, H, K, generator=g, dtype=torch.float64), dim=-1)
v = torch.randn(B, T, nh, H, V, generator=g, dtype=torch.float64)
b = 2 * torch.rand(B, T, nh, H, generator=g, dtype=torch.float64)
gg = -0.3 * torch.rand(B, T, H, generator=g, dtype=torch.float64) if gate == "1" else None
do = torch.randn(B, T, H, V, generator=g, dtype=torch.float64)
def run(dev, dtype, backend):
    xs = [x.detach().clone().to(dev).to(dtype).requires_grad_(True) for x in (q, k, v, b)]
    xs.append(None if gg is None else gg.detach().clone().to(dev).requires_grad_(True))
    o = chunk_gh(*xs, nh, scale=0.1, backend=backend)[0]
    o.backward(do.to(dev).to(o.dtype))
    return [o.detach().double().cpu()] + [x.grad.double().cpu() for x in xs if x is not None]
tag = " ".join(sys.argv[1:13])
try:
    ref = run("cpu", torch.float64, "torch")
    got = run("cuda", dt, "chunk")
    torch.cuda.synchronize()
    print(f"[{tag}] ok, rel err " + " ".join(f"{float((a - r).norm() / r.norm()):.1e}" for a, r in zip(got, ref)))
except Exception as exc:
    tb = [ln.strip() for ln in traceback.format_exc().splitlines() if "wy.py" in ln or "_kernel[" in ln]
    print(f"[{tag}] FAILED {repr(exc)[:60]} at {' | '.join(tb[-3:])[:300]}")
