"""lrnnkit's DeltaProductLayer swapped into an fla 0.6.0 model (``lrnnkit.layers.fla_swap.swap_in``) against the
same model with fla's own GatedDeltaProduct, in ONE process on one GPU (about 5 minutes, fla's autotuning included).

Model: ``fla.models.GatedDeltaProductForCausalLM`` from a small config (hidden 256, 2 layers, vocab 1000, 4 heads
x 64, expand_v 2, n_h = 2, negative eigenvalues, forget gate, short convolutions, fla's fused norms and MLP),
bfloat16. The swapped copy holds the same weights (a deep copy of the original, then ``swap_in``).

Sections (each one independent; an exception is recorded in the JSON and the table, never a stop):
  logits    B = 4, T = 512: logits of fla's model and of the swapped one against a float64 reference (the same
            weights; embedding -> [RMSNorm -> mixer -> + -> RMSNorm -> SwiGLU MLP -> +] x 2 -> RMSNorm -> head,
            written here in torch, the mixer lrnnkit's sequential loop ``mode="naive"`` -- the definition the
            layer's tests check against fla's conventions): max |error|, relative Frobenius error, argmax
            agreement with the reference.
  generate  greedy ``model.generate()`` (fla's Cache) of 64 tokens after 8 prompts of 128: rows identical to fla's;
            per diverging row the first divergence, the float64 reference's top-1 / top-2 margin there and each
            model's logit error there. A divergence is "rounding" when the margin is below twice the larger of the
            two bf16 errors (the reference is too close to call for bf16 arithmetic).
  cache     one cache, two layers: fla's model prefills a prompt (B = 4, 100 tokens) and the swapped model
            decodes 16 tokens from fla's cache, and the reverse; each against the model that wrote the cache
            continuing itself (relative error of the step logits; the entries are the same, so only bf16 rounding
            differs).
  decode    prompt 2048, 256 new tokens, batch 1 and 64: prefill time (one forward with use_cache), decode tokens/s
            (256 single-token forwards through fla's Cache, greedy argmax on the device, no host read, no mask),
            median of 3 after a warm-up run.
  train     the gated model (use_forget_gate=True, fla's layer default) trains: fla's model for one step (fla 0.6.0
            refuses its gated backward on Hopper with triton < 3.7.1; the refusal is printed), the swapped model for
            300 AdamW steps (``--train-steps``) (bf16 autocast, clip 1.0) on the S3 word problem (tokens: elements of S3; label at every
            position: the running product; batch 128, length 64): first step, steady ms/step, steps/s, held-out
            token accuracy at length 64 and 128.

On the device machine (fla 0.6.0, einops and transformers 5.6.2 with its dependencies carried as wheels in .whl/;
transformers 5.6.2 because later releases pass the cache to fla's models as ``cache=``, which fla 0.6.0 ignores):
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
    python3 benchmarks/bench_fla_model_swap.py --out $OUT
``--smoke``: tiny sizes on the CPU (fla's Triton modules replaced by torch, fla's layer cannot run there: its
sections record the error), to check this script.
"""
from __future__ import annotations

import argparse
import copy
import itertools
import json
import math
import os
import statistics
import sys
import time
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

FULL = dict(hidden=256, layers=2, vocab=1000, heads=4, head_dim=64, logits_bt=(4, 512), gen=(8, 128, 64),
            decode=((1, 2048, 256), (64, 2048, 256)), reps=3, train_steps=300, train_bt=(128, 64))
SMOKE = dict(hidden=32, layers=2, vocab=50, heads=2, head_dim=8, logits_bt=(2, 24), gen=(2, 8, 6),
             decode=((1, 16, 4), (3, 16, 4)), reps=1, train_steps=6, train_bt=(8, 12))


def _sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _first_line(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[:300]


# ------------------------------------------------------------------------------------------------ the models
def build(S, smoke: bool, gate: bool = True, seed: int = 0):
    from fla.models import GatedDeltaProductConfig, GatedDeltaProductForCausalLM
    cfg = GatedDeltaProductConfig(hidden_size=S["hidden"], num_hidden_layers=S["layers"], vocab_size=S["vocab"],
                                  num_heads=S["heads"], head_dim=S["head_dim"], expand_v=2, num_householder=2,
                                  allow_neg_eigval=True, use_forget_gate=gate, use_short_conv=True,
                                  fuse_norm=not smoke, fuse_swiglu=not smoke, fuse_cross_entropy=False,
                                  eos_token_id=None, pad_token_id=0, bos_token_id=None)
    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return GatedDeltaProductForCausalLM(cfg)


def swapped(model, mode=None):
    from lrnnkit.layers.fla_swap import swap_in
    ours = copy.deepcopy(model)
    n = swap_in(ours, **({} if mode is None else {"mode": mode}))
    assert n == len(model.model.layers), n
    return ours


def _rms(x, norm):
    w = norm.weight.double()
    eps = norm.eps if getattr(norm, "eps", None) is not None else 1e-6
    y = x * torch.rsqrt(x.square().mean(-1, keepdim=True) + eps) * w
    b = getattr(norm, "bias", None)
    return y if b is None else y + b.double()


def reference_logits(model, ids):
    """float64 logits of ``model``'s weights (module text): fla's block in torch, the mixer lrnnkit's naive loop."""
    from lrnnkit.layers.delta_product import DeltaProductLayer
    from lrnnkit.layers.fla_swap import layer_keywords
    with torch.no_grad():
        h = model.model.embeddings.weight.double()[ids]
        for blk in model.model.layers:
            mix = DeltaProductLayer(**{**layer_keywords(blk.attn), "mode": "naive"})
            mix.load_state_dict({k: v.double() for k, v in blk.attn.state_dict().items()})
            mix = mix.double().to(ids.device)
            h = h + mix(_rms(h, blk.attn_norm))[0]
            x = _rms(h, blk.mlp_norm)
            m = blk.mlp
            gate, up = F.linear(x, m.gate_proj.weight.double()), F.linear(x, m.up_proj.weight.double())
            h = h + F.linear(F.silu(gate) * up, m.down_proj.weight.double())
        return F.linear(_rms(h, model.model.norm), model.lm_head.weight.double())


def _errs(got, ref):
    got = got.double()
    return dict(max_abs=float((got - ref).abs().max()), rel_fro=float((got - ref).norm() / ref.norm()),
                argmax_agree=float((got.argmax(-1) == ref.argmax(-1)).double().mean()))


# ------------------------------------------------------------------------------------------------ sections
def part_logits(S, fla_m, ours_m, dev, res):
    B, T = S["logits_bt"]
    ids = torch.randint(1, S["vocab"], (B, T), generator=torch.Generator().manual_seed(1)).to(dev)
    ref = reference_logits(fla_m, ids)
    out = {}
    for name, m in (("ours", ours_m), ("fla", fla_m)):
        try:
            with torch.no_grad():
                out[name] = _errs(m(ids, use_cache=False).logits, ref)
        except Exception as e:    # recorded, not fatal
            out[name] = {"error": _first_line(e)}
    out["ref_max_abs"] = float(ref.abs().max())
    res["logits"] = out


def part_generate(S, fla_m, ours_m, dev, res):
    B, P, N = S["gen"]
    ids = torch.randint(1, S["vocab"], (B, P), generator=torch.Generator().manual_seed(2)).to(dev)
    gens = {}
    for name, m in (("ours", ours_m), ("fla", fla_m)):
        try:
            g = m.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=N, min_new_tokens=N,
                           do_sample=False, return_dict_in_generate=True, output_scores=True)
            gens[name] = (g.sequences, torch.stack(g.scores, 1))            # (B, P+N), (B, N, vocab)
        except Exception as e:
            gens[name] = _first_line(e)
    out = {k: v for k, v in gens.items() if isinstance(v, str)}
    if len(out) == 0:
        (so, lo), (sf, lf) = gens["ours"], gens["fla"]
        rows = []
        for b in range(B):
            diff = (so[b, P:] != sf[b, P:]).nonzero()
            if len(diff) == 0:
                continue
            d = int(diff[0])
            ref = reference_logits(fla_m, sf[b:b + 1, :P + d])[0, -1]      # the common prefix
            top = ref.topk(2).values
            e_o = float((lo[b, d].double() - ref).abs().max())
            e_f = float((lf[b, d].double() - ref).abs().max())
            margin = float(top[0] - top[1])
            rows.append(dict(row=b, first_divergence=d, ref_margin=margin, err_ours=e_o, err_fla=e_f,
                             rounding=margin < 2 * max(e_o, e_f)))
        out.update(rows_identical=B - len(rows), rows=B, new_tokens=N, divergences=rows)
    res["generate"] = out


def _continue(m, cache, toks):
    """Logits of the tokens fed one at a time from ``cache`` (B, T, vocab)."""
    out = []
    with torch.no_grad():
        for t in range(toks.shape[1]):
            out.append(m(toks[:, t:t + 1], past_key_values=cache, use_cache=True).logits[:, -1])
    return torch.stack(out, 1).double()


def part_cache(S, fla_m, ours_m, dev, res):
    from fla.models.utils import Cache
    B, P, N = 4, min(100, S["gen"][1]), 16
    ids = torch.randint(1, S["vocab"], (B, P + N), generator=torch.Generator().manual_seed(9)).to(dev)
    out = {}
    for writer, reader, wn, rn in ((fla_m, ours_m, "fla", "ours"), (ours_m, fla_m, "ours", "fla")):
        key = f"{wn}_prefill_{rn}_steps"
        try:
            cache = Cache()
            with torch.no_grad():
                writer(ids[:, :P], past_key_values=cache, use_cache=True)
            twin = copy.deepcopy(cache)
            same = _continue(writer, twin, ids[:, P:])
            cross = _continue(reader, cache, ids[:, P:])
            out[key] = dict(rel_fro=float((cross - same).norm() / same.norm()),
                            max_abs=float((cross - same).abs().max()))
        except Exception as e:
            out[key] = {"error": _first_line(e)}
    res["cache"] = out


def _decode_once(m, prompt, steps):
    from fla.models.utils import Cache
    with torch.no_grad():
        _sync()
        t0 = time.perf_counter()
        cache = Cache()
        out = m(prompt, past_key_values=cache, use_cache=True, logits_to_keep=1)
        nxt = out.logits[:, -1].argmax(-1, keepdim=True)
        _sync()
        t1 = time.perf_counter()
        for _ in range(steps):
            out = m(nxt, past_key_values=cache, use_cache=True, logits_to_keep=1)
            nxt = out.logits[:, -1].argmax(-1, keepdim=True)
        _sync()
        t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def part_decode(S, fla_m, ours_m, dev, res):
    out = {}
    for B, P, N in S["decode"]:
        prompt = torch.randint(1, S["vocab"], (B, P), generator=torch.Generator().manual_seed(3)).to(dev)
        for name, m in (("ours", ours_m), ("fla", fla_m)):
            key = f"{name}_b{B}"
            try:
                _decode_once(m, prompt, min(N, 8))                            # warm-up (fla: autotuning)
                runs = [_decode_once(m, prompt, N) for _ in range(S["reps"])]
                pre = statistics.median(r[0] for r in runs)
                dec = statistics.median(r[1] for r in runs)
                out[key] = dict(batch=B, prompt=P, new=N, prefill_s=pre, decode_s=dec, tokens_per_s=B * N / dec)
            except Exception as e:
                out[key] = {"error": _first_line(e)}
    res["decode"] = out


def s3_table():
    perms = list(itertools.permutations(range(3)))
    idx = {p: i for i, p in enumerate(perms)}
    # apply a first, then b: (a then b)(i) = b[a[i]]
    return torch.tensor([[idx[tuple(b[a[i]] for i in range(3))] for b in perms] for a in perms]), idx[(0, 1, 2)]


def s3_batch(tab, start, B, T, gen, dev):
    toks = torch.randint(0, 6, (B, T), generator=gen)
    lab = torch.empty_like(toks)
    s = torch.full((B,), start, dtype=torch.long)
    for t in range(T):
        s = tab[s, toks[:, t]]
        lab[:, t] = s
    return toks.to(dev), lab.to(dev)


def _train_step(m, opt, toks, lab, autocast):
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
        logits = m(toks, use_cache=False).logits[..., :6]
        loss = F.cross_entropy(logits.float().reshape(-1, 6), lab.reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    opt.step()
    return loss


def part_train(S, smoke, dev, res, save_to=None):
    out = {}
    tab, start = s3_table()
    B, T = S["train_bt"]
    autocast = dev == "cuda"
    import triton
    out["triton"] = triton.__version__
    # the swapped gated model
    try:
        om = swapped(build(S, smoke, gate=True, seed=5), mode="torch" if smoke else None).to(dev)
        om.train()
        opt = torch.optim.AdamW(om.parameters(), lr=1e-3, weight_decay=0.01)
        gen = torch.Generator().manual_seed(7)
        times, losses = [], []
        for step in range(S["train_steps"]):
            toks, lab = s3_batch(tab, start, B, T, gen, dev)
            _sync()
            t0 = time.perf_counter()
            loss = _train_step(om, opt, toks, lab, autocast)
            _sync()
            times.append(time.perf_counter() - t0)
            if step % 25 == 0 or step == S["train_steps"] - 1:
                losses.append((step, float(loss.detach())))
                print(f"ours step {step}: loss {losses[-1][1]:.3f}, {1e3 * times[-1]:.1f} ms", flush=True)
        om.eval()
        acc = {}
        with torch.no_grad():
            for L in (T, 2 * T):
                toks, lab = s3_batch(tab, start, 256 if not smoke else 8, L, torch.Generator().manual_seed(8), dev)
                with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
                    pred = om(toks, use_cache=False).logits[..., :6].argmax(-1)
                acc[str(L)] = float((pred == lab).double().mean())
        steady = statistics.median(times[5:]) if len(times) > 6 else statistics.median(times)
        out["ours"] = dict(steps=S["train_steps"], first_step_s=times[0], steady_ms=1e3 * steady,
                           steps_per_s=1 / steady, total_s=sum(times), losses=losses, accuracy=acc)
    except Exception as e:
        out["ours"] = {"error": _first_line(e)}
        traceback.print_exc()
    res["train"] = out
    if save_to:
        save(save_to, res)   # ours is on record before fla's attempt (which may autotune for minutes)
    # fla's own gated model: one step (its refusal, if any, is the result)
    try:
        fm = build(S, smoke, gate=True, seed=5).to(dev)
        fm.train()
        opt = torch.optim.AdamW(fm.parameters(), lr=1e-3, weight_decay=0.01)
        toks, lab = s3_batch(tab, start, B, T, torch.Generator().manual_seed(6), dev)
        loss = _train_step(fm, opt, toks, lab, autocast)
        _sync()
        out["fla"] = {"trained_one_step": True, "loss": float(loss)}
        print(f"fla's gated model trained one step (loss {float(loss):.3f})", flush=True)
    except Exception as e:
        out["fla"] = {"refused": _first_line(e)}
        print(f"fla's gated model refuses to train here: {_first_line(e)}", flush=True)


# ------------------------------------------------------------------------------------------------ report
def _fmt(x, spec=".3g"):
    return format(x, spec) if isinstance(x, (int, float)) else str(x)


def table(res) -> str:
    lines = ["| what | lrnnkit (swapped) | fla | note |", "|---|---|---|---|"]
    lg = res.get("logits", {})
    for key, label in (("max_abs", "logits max abs err vs f64"), ("rel_fro", "logits rel err vs f64"),
                       ("argmax_agree", "argmax agreement vs f64")):
        lines.append(f"| {label} | {_fmt(lg.get('ours', {}).get(key, lg.get('ours', {}).get('error')))} | "
                     f"{_fmt(lg.get('fla', {}).get(key, lg.get('fla', {}).get('error')))} | "
                     f"max abs f64 logit {_fmt(lg.get('ref_max_abs'))} |")
    g = res.get("generate", {})
    if "rows" in g:
        div = g["divergences"]
        note = "; ".join(f"row {d['row']}: token {d['first_divergence']}, margin {d['ref_margin']:.3g}, err "
                         f"{d['err_ours']:.3g}/{d['err_fla']:.3g} ({'rounding' if d['rounding'] else 'NOT rounding'})"
                         for d in div) or "all tokens equal"
        lines.append(f"| greedy generate: rows equal to fla's | {g['rows_identical']}/{g['rows']} | - | {note} |")
    else:
        lines.append(f"| greedy generate | {g.get('ours', '?')} | {g.get('fla', '?')} | |")
    for key, c in res.get("cache", {}).items():
        lines.append(f"| {key.replace('_', ' ')}: step logits vs the writer continuing | "
                     f"{_fmt(c.get('rel_fro', c.get('error')))} rel | | max abs {_fmt(c.get('max_abs'))} |")
    dec = res.get("decode", {})
    for B in sorted({v.get("batch") for v in dec.values() if "batch" in v} or {1, 64}):
        o, f = dec.get(f"ours_b{B}", {}), dec.get(f"fla_b{B}", {})
        lines.append(f"| decode tokens/s, batch {B} | {_fmt(o.get('tokens_per_s', o.get('error')), '.0f')} | "
                     f"{_fmt(f.get('tokens_per_s', f.get('error')), '.0f')} | prompt {o.get('prompt', f.get('prompt'))},"
                     f" {o.get('new', f.get('new'))} new |")
        lines.append(f"| prefill s, batch {B} | {_fmt(o.get('prefill_s', o.get('error')), '.4f')} | "
                     f"{_fmt(f.get('prefill_s', f.get('error')), '.4f')} | |")
    tr = res.get("train", {})
    o, f = tr.get("ours", {}), tr.get("fla", {})
    fla_txt = f.get("refused", "trained" if f.get("trained_one_step") else f.get("error", "?"))
    if "steady_ms" in o:
        lines.append(f"| gated training, S3 | {o['steps']} steps, {o['steady_ms']:.2f} ms/step ({o['steps_per_s']:.0f}/s),"
                     f" first step {o['first_step_s']:.1f} s, acc {o['accuracy']} | {fla_txt} | triton "
                     f"{tr.get('triton')} |")
    else:
        lines.append(f"| gated training, S3 | {o.get('error', '?')} | {fla_txt} | triton {tr.get('triton')} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT") or os.path.join(HERE, "results", "fla_model_swap"))
    ap.add_argument("--smoke", action="store_true", help="tiny sizes on the CPU, to check the script")
    ap.add_argument("--parts", default="logits,generate,cache,decode,train")
    ap.add_argument("--train-steps", type=int, default=None,
                    help=f"AdamW steps of the swapped gated model in the train part (default {FULL['train_steps']})")
    a = ap.parse_args(argv)
    S = dict(SMOKE if a.smoke else FULL)
    if a.train_steps is not None:
        if a.train_steps < 1:
            print(f"bench_fla_model_swap: --train-steps must be at least 1, got {a.train_steps}", file=sys.stderr)
            return 2
        S["train_steps"] = a.train_steps
    dev = "cuda" if torch.cuda.is_available() and not a.smoke else "cpu"
    if a.smoke:   # fla's MLP calls a Triton swiglu (GPU only): its formula in torch
        import fla.modules.mlp as mlp
        mlp.swiglu = lambda gate, up: F.silu(gate) * up
    t_all = time.perf_counter()
    res = {"config": {k: v for k, v in S.items()}, "device": torch.cuda.get_device_name(0) if dev == "cuda" else "cpu",
           "torch": torch.__version__}
    import transformers
    res["transformers"] = transformers.__version__
    dt = torch.bfloat16 if dev == "cuda" else torch.float32
    fla_m = build(S, a.smoke).to(dev, dt).eval()
    ours_m = swapped(fla_m, mode="torch" if a.smoke else None).eval()
    parts = a.parts.split(",")
    for name, fn in (("logits", lambda: part_logits(S, fla_m, ours_m, dev, res)),
                     ("generate", lambda: part_generate(S, fla_m, ours_m, dev, res)),
                     ("cache", lambda: part_cache(S, fla_m, ours_m, dev, res)),
                     ("decode", lambda: part_decode(S, fla_m, ours_m, dev, res)),
                     ("train", lambda: part_train(S, a.smoke, dev, res, a.out))):
        if name in parts:
            t0 = time.perf_counter()
            try:
                fn()
            except Exception as e:
                res[name] = {"error": _first_line(e)}
                traceback.print_exc()
            res.setdefault("seconds", {})[name] = time.perf_counter() - t0
            print(f"[{name}] {time.perf_counter() - t0:.1f} s", flush=True)
            save(a.out, res)   # after every section: a run stopped by its time limit keeps what finished
    res["seconds_total"] = time.perf_counter() - t_all
    save(a.out, res)
    print(table(res))


def save(out: str, res: dict) -> None:
    """``res`` as JSON at ``out``/bench_fla_model_swap.json (temporary file, then rename)."""
    os.makedirs(out, exist_ok=True)
    from lrnnkit.fileio import atomic_write_text
    atomic_write_text(os.path.join(out, "bench_fla_model_swap.json"),
                      json.dumps(res, indent=1, default=lambda x: x if not isinstance(x, float) or math.isfinite(x)
                                 else str(x)))


if __name__ == "__main__":
    sys.exit(main())
