#!/usr/bin/env python3
"""Numerically verify spec.md (beside this script) against transformers' ModernBERT.

Run with /root/.cache/encc/venv-modern/bin/python check_spec.py

The NumPy reference below (spec_*) is written only from spec.md: it reads
config.json and model.safetensors from disk, never the torch module.

Comparisons (all inputs right-padded, attention_mask given, outputs compared on
non-padding positions only -- padding positions are implementation-defined):
  * transformers float64, attn eager and sdpa, "patched": transformers' two
    internal float32 round-trips (RoPE cos/sin + q/k cast to float32, eager
    softmax in float32) replaced by float64 versions -> expect ~1e-14.
  * transformers float64 "as shipped" -> differs at ~1e-7 because of those
    float32 casts (and eager+float64+padding can produce NaN, see report).
  * transformers float32 sdpa (how people actually run it) -> ~1e-6.
"""
import contextlib
import json
import math
import os
import shutil
import sys
import warnings

import numpy as np
import torch
from safetensors.numpy import load_file

import transformers
import transformers.models.modernbert.modeling_modernbert as mm
from transformers import (
    ModernBertConfig,
    ModernBertForSequenceClassification,
    ModernBertModel,
)

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
OUT = os.environ.get("ENCC_MODERNBERT_OUT", "/tmp/modernbert")

# --------------------------------------------------------------------------
# NumPy reference implementation, written from spec.md only
# --------------------------------------------------------------------------
_erf = np.frompyfunc(math.erf, 1, 1)


def act_fn(name, x):
    if name == "gelu":  # exact erf GELU
        return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))
    if name in ("gelu_pytorch_tanh", "gelu_new", "gelu_fast"):
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    if name in ("silu", "swish"):
        return x / (1.0 + np.exp(-x))
    if name == "relu":
        return np.maximum(x, 0.0)
    if name == "tanh":
        return np.tanh(x)
    raise ValueError(name)


def spec_config(cfg):
    """Resolve the derived hyper-parameters from a config.json dict (spec §1)."""
    L = cfg["num_hidden_layers"]
    if cfg.get("layer_types") is not None:
        is_global = [t == "full_attention" for t in cfg["layer_types"]]
    else:
        n = cfg.get("global_attn_every_n_layers", 3)
        is_global = [i % n == 0 for i in range(L)]
    rp = cfg.get("rope_parameters") or {}
    theta_g = (rp.get("full_attention") or {}).get("rope_theta", cfg.get("global_rope_theta", 160000.0))
    theta_l = (rp.get("sliding_attention") or {}).get("rope_theta", cfg.get("local_rope_theta", 10000.0))
    return dict(
        H=cfg["hidden_size"], nh=cfg["num_attention_heads"], I=cfg["intermediate_size"], L=L,
        eps=cfg.get("norm_eps", 1e-5), is_global=is_global, theta_g=theta_g, theta_l=theta_l,
        half_window=cfg.get("local_attention", 128) // 2,
        act=cfg.get("hidden_activation", "gelu"),
        cls_act=cfg.get("classifier_activation", "gelu"),
        pooling=cfg.get("classifier_pooling", "cls"),
    )


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)  # biased variance
    y = (x - mu) / np.sqrt(var + eps) * w
    return y + b if b is not None else y


def linear(x, W, b):
    y = x @ W.T
    return y + b if b is not None else y


def rope_cos_sin(S, hd, theta):
    inv_freq = 1.0 / theta ** (np.arange(0, hd, 2, dtype=np.float64) / hd)  # (hd/2,)
    ang = np.arange(S, dtype=np.float64)[:, None] * inv_freq[None, :]  # (S, hd/2)
    ang = np.concatenate([ang, ang], axis=-1)  # (S, hd): [f0..f_{hd/2-1}, f0..f_{hd/2-1}]
    return np.cos(ang), np.sin(ang)


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def spec_encoder(W, cfg, input_ids, attention_mask, prefix=""):
    """ModernBertModel.last_hidden_state; padding rows are returned as 0."""
    c = spec_config(cfg)
    H, nh, eps = c["H"], c["nh"], c["eps"]
    hd = H // nh
    B, S = input_ids.shape
    g = lambda name: W.get(prefix + name)  # noqa: E731
    m = attention_mask.astype(bool)

    x = g("embeddings.tok_embeddings.weight")[input_ids]  # (B,S,H)
    x = layer_norm(x, g("embeddings.norm.weight"), g("embeddings.norm.bias"), eps)

    i = np.arange(S)[:, None]
    j = np.arange(S)[None, :]
    band = np.abs(i - j) <= c["half_window"]  # (S,S)
    for li in range(c["L"]):
        p = f"layers.{li}."
        glob = c["is_global"][li]
        allowed = m[:, None, :].repeat(S, 1)  # (B,S_q,S_k): key j is a real token
        if not glob:
            allowed = allowed & band[None]
        cos, sin = rope_cos_sin(S, hd, c["theta_g"] if glob else c["theta_l"])

        # attention sub-block (layer 0: attn_norm is identity, no weights)
        h = x if li == 0 else layer_norm(x, g(p + "attn_norm.weight"), g(p + "attn_norm.bias"), eps)
        qkv = linear(h, g(p + "attn.Wqkv.weight"), g(p + "attn.Wqkv.bias"))  # (B,S,3H)
        qkv = qkv.reshape(B, S, 3, nh, hd)
        q, k, v = (qkv[:, :, t].transpose(0, 2, 1, 3) for t in range(3))  # (B,nh,S,hd)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        sc = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd)  # (B,nh,S,S)
        sc = np.where(allowed[:, None], sc, -np.inf)
        mx = sc.max(-1, keepdims=True)
        mx = np.where(np.isfinite(mx), mx, 0.0)
        e = np.exp(sc - mx)
        den = e.sum(-1, keepdims=True)
        P = np.where(den > 0, e / np.where(den > 0, den, 1.0), 0.0)  # fully masked row -> 0
        o = (P @ v).transpose(0, 2, 1, 3).reshape(B, S, H)  # head h -> cols [h*hd,(h+1)*hd)
        x = x + linear(o, g(p + "attn.Wo.weight"), g(p + "attn.Wo.bias"))

        # MLP sub-block (GeGLU)
        h = layer_norm(x, g(p + "mlp_norm.weight"), g(p + "mlp_norm.bias"), eps)
        u = linear(h, g(p + "mlp.Wi.weight"), g(p + "mlp.Wi.bias"))  # (B,S,2I)
        a, gate = u[..., : c["I"]], u[..., c["I"]:]
        x = x + linear(act_fn(c["act"], a) * gate, g(p + "mlp.Wo.weight"), g(p + "mlp.Wo.bias"))

    x = layer_norm(x, g("final_norm.weight"), g("final_norm.bias"), eps)
    return np.where(m[..., None], x, 0.0)


def spec_seqcls(W, cfg, input_ids, attention_mask):
    c = spec_config(cfg)
    hs = spec_encoder(W, cfg, input_ids, attention_mask, prefix="model.")
    m = attention_mask.astype(np.float64)
    if c["pooling"] == "cls":
        pooled = hs[:, 0]  # position 0, NOT the first non-pad token
    else:
        pooled = (hs * m[..., None]).sum(1) / m.sum(1, keepdims=True)
    h = act_fn(c["cls_act"], linear(pooled, W["head.dense.weight"], W.get("head.dense.bias")))
    h = layer_norm(h, W["head.norm.weight"], W.get("head.norm.bias"), c["eps"])
    return linear(h, W["classifier.weight"], W["classifier.bias"])


# --------------------------------------------------------------------------
# float64 patches of transformers' internal float32 round-trips
# --------------------------------------------------------------------------
def _rope_fwd64(self, x, position_ids, layer_type):
    base = self.config.rope_parameters[layer_type]["rope_theta"]
    d = self.config.hidden_size // self.config.num_attention_heads
    inv = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float64, device=x.device) / d))
    f = position_ids[..., None].to(torch.float64) * inv
    emb = torch.cat((f, f), dim=-1)
    return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


def _apply_rope64(q, k, cos, sin, unsqueeze_dim=1):
    cos, sin = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
    return q * cos + mm.rotate_half(q) * sin, k * cos + mm.rotate_half(k) * sin


def _eager64(module, query, key, value, attention_mask, scaling, dropout=0.0, **kw):
    w = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        w = w + attention_mask
    w = torch.softmax(w, dim=-1)
    return torch.matmul(w, value).transpose(1, 2).contiguous(), w


@contextlib.contextmanager
def float64_patches(on=True):
    saved = (mm.ModernBertRotaryEmbedding.forward, mm.apply_rotary_pos_emb, mm.eager_attention_forward)
    if on:
        mm.ModernBertRotaryEmbedding.forward = _rope_fwd64
        mm.apply_rotary_pos_emb = _apply_rope64
        mm.eager_attention_forward = _eager64
    try:
        yield
    finally:
        (mm.ModernBertRotaryEmbedding.forward, mm.apply_rotary_pos_emb, mm.eager_attention_forward) = saved


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def randomize_(model, seed):
    """Replace every parameter by O(1)-ish random values so that every term matters."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=gen, dtype=torch.float64))
            elif name.endswith("bias"):
                p.copy_(0.3 * torch.randn(p.shape, generator=gen, dtype=torch.float64))
            else:
                fan_in = p.shape[-1]
                p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * (1.5 / math.sqrt(fan_in)))


def make_inputs(cfg, lens, S=None, left=False, seed=1):
    rng = np.random.default_rng(seed)
    S = S or max(lens)
    ids = np.full((len(lens), S), cfg.pad_token_id, dtype=np.int64)
    am = np.zeros((len(lens), S), dtype=np.int64)
    for b, n in enumerate(lens):
        seq = rng.integers(3, cfg.vocab_size, size=n)
        seq[0], seq[-1] = cfg.cls_token_id, cfg.sep_token_id
        sl = slice(S - n, S) if left else slice(0, n)
        ids[b, sl] = seq
        am[b, sl] = 1
    return ids, am


def maxdiff_valid(a, b, am):
    a, b = np.asarray(a), np.asarray(b)
    sel = am.astype(bool)
    d = np.abs(a[sel] - b[sel])
    return float(np.nanmax(d)) if not np.isnan(d).all() else float("nan"), bool(np.isnan(a[sel]).any())


def load_dir(d):
    with open(os.path.join(d, "config.json")) as f:
        cfg = json.load(f)
    W = {k: v.astype(np.float64) for k, v in load_file(os.path.join(d, "model.safetensors")).items()}
    return cfg, W


RESULTS = []


def report(name, val, nan=False, tol=None):
    ok = "" if tol is None else ("  OK" if (val <= tol and not nan) else "  FAIL")
    line = f"{name:<72s} max|diff| = {val:.3e}{'  (NaN in HF output)' if nan else ''}{ok}"
    print(line)
    RESULTS.append((name, val, nan, tol))


# --------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------
def base_config(**kw):
    d = dict(vocab_size=100, hidden_size=48, intermediate_size=40, num_hidden_layers=4,
             num_attention_heads=3, global_attn_every_n_layers=3, local_attention=8,
             max_position_embeddings=64, pad_token_id=0, cls_token_id=1, sep_token_id=2,
             bos_token_id=1, eos_token_id=2)
    d.update(kw)
    return ModernBertConfig(**d)


def check_encoder(tag, cfg_obj, seed):
    torch.manual_seed(seed)
    d = f"{OUT}/tiny" if tag == "A" else f"{OUT}/tiny_{tag}"
    shutil.rmtree(d, ignore_errors=True)
    model = ModernBertModel(cfg_obj).double()
    randomize_(model, seed)
    model.save_pretrained(d)
    cfg, W = load_dir(d)
    print(f"\n== encoder variant {tag}: layer_types={cfg['layer_types']} local_attention={cfg['local_attention']}"
          f" biases(norm,attn,mlp)=({cfg['norm_bias']},{cfg['attention_bias']},{cfg['mlp_bias']})")
    print("   safetensors keys:", ", ".join(f"{k}{list(v.shape)}" for k, v in sorted(W.items()) if not k.startswith("layers.") or k.startswith(("layers.0.", "layers.1."))))

    ids, am = make_inputs(cfg_obj, [20, 13], seed=seed + 1)
    ref = spec_encoder(W, cfg, ids, am)
    ti, ta = torch.from_numpy(ids), torch.from_numpy(am)

    for impl in ("eager", "sdpa"):
        m = ModernBertModel.from_pretrained(d, attn_implementation=impl, dtype=torch.float64).eval()
        for patched in (True, False):
            with float64_patches(patched), torch.no_grad():
                out = m(input_ids=ti, attention_mask=ta).last_hidden_state.numpy()
            v, nan = maxdiff_valid(out, ref, am)
            if nan:
                rows = [int(np.isnan(out[b][am[b].astype(bool)]).any(-1).sum()) for b in range(len(am))]
                print(f"   NOTE: {impl} as-shipped float64 output has NaN in valid positions: NaN rows per sequence {rows}"
                      f" of {am.sum(1).tolist()} (fully-masked pad query rows -> float32 softmax of -inf -> NaN -> 0*NaN)")
            report(f"[{tag}] ModernBertModel f64 {impl:5s} {'patched-f64' if patched else 'as-shipped '} vs spec", v, nan,
                   1e-11 if patched else None)
        if impl == "sdpa":
            m32 = ModernBertModel.from_pretrained(d, attn_implementation=impl, dtype=torch.float32).eval()
            with torch.no_grad():
                out = m32(input_ids=ti, attention_mask=ta).last_hidden_state.numpy()
            v, nan = maxdiff_valid(out.astype(np.float64), ref, am)
            report(f"[{tag}] ModernBertModel f32 sdpa  as-shipped  vs spec(f64)", v, nan)

    # right padding does not change the valid rows: run sequence 2 alone
    m = ModernBertModel.from_pretrained(d, attn_implementation="sdpa", dtype=torch.float64).eval()
    with float64_patches(True), torch.no_grad():
        alone = m(input_ids=ti[1:2, :13]).last_hidden_state.numpy()  # no attention_mask at all
    v = float(np.abs(alone[0] - ref[1, :13]).max())
    report(f"[{tag}] seq2 alone (no mask, len 13) vs padded batch row (spec)", v, False, 1e-11)

    # left padding: positions are NOT shifted; token t of a left-padded row gets position index t
    lids, lam = make_inputs(cfg_obj, [20, 13], seed=seed + 1, left=True)
    lref = spec_encoder(W, cfg, lids, lam)
    with float64_patches(True), torch.no_grad():
        lout = m(input_ids=torch.from_numpy(lids), attention_mask=torch.from_numpy(lam)).last_hidden_state.numpy()
    v, nan = maxdiff_valid(lout, lref, lam)
    report(f"[{tag}] left-padded batch (positions = absolute column index) vs spec", v, nan, 1e-11)
    shift = float(np.abs(lout[1, 7:] - alone[0]).max())
    print(f"   (left-padded row vs same sequence run unpadded: max|diff| {shift:.3e} -> RoPE is shift-invariant,"
          f" left padding only matters through float rounding and for cls pooling)")

    # padding rows: what does HF return there?
    with float64_patches(True), torch.no_grad():
        e = ModernBertModel.from_pretrained(d, attn_implementation="eager", dtype=torch.float64).eval()
        out_e = e(input_ids=ti, attention_mask=ta).last_hidden_state.numpy()
        out_s = m(input_ids=ti, attention_mask=ta).last_hidden_state.numpy()
    pad = ~am.astype(bool)
    print(f"   padding rows: |eager|max={np.abs(out_e[pad]).max():.3g}, |sdpa|max={np.abs(out_s[pad]).max():.3g}, "
          f"eager-vs-sdpa on pad rows max|diff|={np.abs(out_e[pad] - out_s[pad]).max():.3g} (garbage, not zero)")
    return d


def check_seqcls(tag, base_kw, num_labels, pooling, seed):
    cfg_obj = base_config(num_labels=num_labels, classifier_pooling=pooling, **base_kw)
    torch.manual_seed(seed)
    d = f"{OUT}/tiny_cls_{tag}_{num_labels}_{pooling}"
    shutil.rmtree(d, ignore_errors=True)
    model = ModernBertForSequenceClassification(cfg_obj).double()
    randomize_(model, seed)
    model.save_pretrained(d)
    cfg, W = load_dir(d)
    if num_labels == 3 and pooling == "mean":
        print(f"   [{tag}] SeqCls keys outside model.layers:",
              ", ".join(f"{k}{list(v.shape)}" for k, v in sorted(W.items()) if not k.startswith("model.layers.")))
    ids, am = make_inputs(cfg_obj, [20, 13], seed=seed + 1)
    ref = spec_seqcls(W, cfg, ids, am)
    ti, ta = torch.from_numpy(ids), torch.from_numpy(am)
    for impl in ("eager", "sdpa"):
        m = ModernBertForSequenceClassification.from_pretrained(d, attn_implementation=impl, dtype=torch.float64).eval()
        with float64_patches(True), torch.no_grad():
            logits = m(input_ids=ti, attention_mask=ta).logits.numpy()
        v = float(np.abs(logits - ref).max())
        report(f"[{tag}] SeqCls labels={num_labels} pooling={pooling:4s} f64 {impl:5s} patched-f64 vs spec", v,
               bool(np.isnan(logits).any()), 1e-11)
    m32 = ModernBertForSequenceClassification.from_pretrained(d, attn_implementation="sdpa", dtype=torch.float32).eval()
    with torch.no_grad():
        logits = m32(input_ids=ti, attention_mask=ta).logits.numpy().astype(np.float64)
    report(f"[{tag}] SeqCls labels={num_labels} pooling={pooling:4s} f32 sdpa  as-shipped  vs spec", float(np.abs(logits - ref).max()))


def main():
    print(f"torch {torch.__version__}  transformers {transformers.__version__}  numpy {np.__version__}")
    torch.set_num_threads(2)
    # Variant A: the brief's tiny model, ModernBERT defaults (no biases anywhere, gelu)
    A = dict()
    check_encoder("A", base_config(**A), seed=0)
    # Variant B: every optional bias on, different window/period/thetas/eps, odd local_attention
    B = dict(num_hidden_layers=5, global_attn_every_n_layers=2, local_attention=11,
             norm_bias=True, attention_bias=True, mlp_bias=True, classifier_bias=True,
             global_rope_theta=80000.0, local_rope_theta=5000.0, norm_eps=1e-6,
             classifier_activation="silu")
    check_encoder("B", base_config(**B), seed=10)
    print()
    for tag, kw in (("A", A), ("B", B)):
        for nl in (1, 3):
            for pool in ("cls", "mean"):
                check_seqcls(tag, kw, nl, pool, seed=100 + nl)

    fails = [r for r in RESULTS if r[3] is not None and (r[2] or r[1] > r[3])]
    strict = [r[1] for r in RESULTS if r[3] is not None]
    print(f"\nmax |diff| over all strict (patched float64) checks: {max(strict):.3e}")
    print(f"{len(strict) - len(fails)} passed, {len(fails)} failed")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
