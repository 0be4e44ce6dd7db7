#!/usr/bin/env python3
"""A numpy model of the bf16 gradient walk's dg (backward_bf16_mma_grads.cuh): which
bf16 rounding makes its dg less accurate than fla's chunk_gla (issue 35: 2.8–3.3e-3
rel_l2 under mild gates against fla's 1.75–2.11e-3).

fp64 throughout, the kernel's decomposition of dg (64-token chunks, 16-token sub-chunk
references), with each place the kernel rounds an operand to bf16 switched on or off.
Inputs are drawn as glabench draws them (reference/src/random_inputs.cpp) at T1024
K=V=64, mild gates (log σ(N(2, 1))), rounded to bf16 (h0, dht fp32). The exact model
matches the token-by-token fp64 recurrence to 6e-16. Not modelled: fp32 accumulation
and ex2's error; the WMMA bodies that take strong-gated chunks.

Run here (2026-12-02, 8 heads), dg's rel_l2 against the exact model:
- the kernel, every rounding: 3.03e-3 (the H200 measured 3.03e-3 at B4 T2048, mild);
- dg's own rounding to bf16 alone: 1.65e-3 (the floor); fla's model: 2.01e-3;
- two roundings dominate, k̆ rounded once in dq's blocks m < mt (1.47e-3 alone) and q̄
  rounded once in dk's blocks m > mt (1.58e-3): each pair inside a suffix enters dg once
  through q⊙dq and once through k⊙dk, and these two errors, unlike dA's (rounded alike on
  both sides, 0.73e-3), do not cancel;
- the kernel with both as hi + lo operands (one more product per block: q̄_lo is in
  shared memory already, k̆_lo would split in registers as decayed_fragment does):
  2.12e-3; with only one of them, 2.59 / 2.65e-3.

The kernel takes both as hi + lo since 873c3a0. The H200 then measured dg 2.06e-3 at B4
T2048, mild (reports/2026-12-03-h200-bf16-gradient-residuals/).

Run here (2026-12-05, 4 heads, K = V = 128; strong at K = V = 64, whose K = 128 draws hold
strong features, which this model leaves out), the kernel since 873c3a0 against fla's model:
model 2.34 / 2.22e-3, mild 2.22 / 2.15, fla 2.12 / 2.10, strong 2.06 / 2.03, cliff 1.87 /
1.87. The largest rounding left is dS_n's, rounded once in v·dS_nᵀ (dk_inter, whose errors
the prefix sums of k ⊙ dk_inter carry along the chunk); with dS_n as hi + lo the kernel gets
1.95, 1.81, 1.73, 1.77, 1.83e-3, below fla's in every regime (and dv −19–25 %,
bf16_dv_error_model.py). Not built: the gradient walk holds S_n and dS_n as 32 KB bf16 tiles
and has 6 KB of shared memory left. Taking the prefix sums as the chunk's exact total less a
suffix instead, from t = 32 or 48 on: up to 4× worse (cancellation; K = 64).

Usage: python3 bf16_dg_error_model.py [heads] [regime …]   (default: mild)
"""
import sys

import numpy as np

C, SUB, NS = 64, 16, 4


def rb(x):
    """Round to bf16 (RNE), via fp32."""
    x32 = np.asarray(x, dtype=np.float32)
    b = x32.view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.astype(np.uint32).view(np.float32).astype(np.float64)


def rtf32(x):
    """Round to tf32 (10-bit mantissa), nearest-away as cvt.rna.tf32."""
    x32 = np.asarray(x, dtype=np.float32)
    b = x32.view(np.uint32).astype(np.uint64)
    b = (b + 0x1000) & 0xFFFFE000
    return b.astype(np.uint32).view(np.float32).astype(np.float64)


def ident(x):
    return x


def split(x):
    hi = rb(x)
    return hi, rb(x - hi)


def inputs(seed, T, K, V, gates="mild"):
    """One head's inputs; gates as bench's regimes (harness/src/gate_regime.hpp): model
    log σ(N(0, 1))/16, mild log σ(N(2, 1)), fla log σ(N(0, 1)), strong −exp(N(−0.5, 1)),
    cliff mild with −30 at some tokens and 0 at some features."""
    rng = np.random.default_rng(seed)
    qk = K ** -0.25
    q = rb(rng.standard_normal((T, K)) * qk)
    k = rb(rng.standard_normal((T, K)) * qk)
    v = rb(rng.standard_normal((T, V)))
    x = rng.standard_normal((T, K))
    g = {"model": lambda: -np.logaddexp(0.0, -x) / 16,
         "mild": lambda: -np.logaddexp(0.0, -(x + 2.0)),
         "fla": lambda: -np.logaddexp(0.0, -x),
         "strong": lambda: -np.exp(x - 0.5)}["mild" if gates == "cliff" else gates]()
    if gates == "cliff":  # mild, but −30 at tokens t % 53 = 17 and 0 at features k % 8 = 3
        g[np.arange(T) % 53 == 17, :] = -30.0
        g[:, np.arange(K) % 8 == 3] = 0.0
    g = rb(g)
    h0 = rng.standard_normal((K, V)).astype(np.float32).astype(np.float64)
    do = rb(rng.standard_normal((T, V)))
    dht = rng.standard_normal((K, V)).astype(np.float32).astype(np.float64)
    return q, k, v, g, h0, do, dht


def reference_dg(q, k, v, g, h0, do, dht, s):
    """Token recurrence in fp64: dg_t = e^{g_t} Σ_v S_{t-1} ⊙ dS_t."""
    T, K = q.shape
    S = h0.copy()
    Sprev = np.empty((T,) + h0.shape)
    for t in range(T):
        Sprev[t] = S
        S = np.exp(g[t])[:, None] * S + np.outer(k[t], v[t])
    dS = dht.copy()
    dg = np.empty_like(q)
    for t in range(T - 1, -1, -1):
        dS = dS + s * np.outer(q[t], do[t])  # gradient w.r.t. S_t
        dg[t] = np.exp(g[t]) * np.sum(Sprev[t] * dS, axis=1)
        dS = np.exp(g[t])[:, None] * dS
    return dg


ALL = ("out", "S_op", "dS_op", "dA_off", "kend", "qbar_off", "khat_state", "qtil_dstate",
       "diag_hilo")


def chunked_dg(q, k, v, g, h0, do, dht, s, R=(), diag_single=False, fla=False):
    """The kernel's decomposition; R: the rounding points switched on.

    fla=True models fla's chunk_gla instead: intra off-diagonal products in tf32 (dA and
    k·exp / q·exp), diagonal sub-chunk in fp32 (exact here); S, dS, state walks, output
    as named in R."""
    T, K = q.shape
    V = v.shape[1]
    N = T // C
    r = lambda name: (rb if name in R else ident)
    rS, rdS, rke, rqb = r("S_op"), r("dS_op"), r("kend"), r("qbar_off")
    # dA_off: the same bf16 dA on both sides (as the kernel); dA_off_q / dA_off_k: one side only
    rdA = rdAq = rdAk = ident
    if "dA_off" in R:
        rdAq = rdAk = rb
    if "dA_off_q" in R:
        rdAq = rb
    if "dA_off_k" in R:
        rdAk = rb
    rkh, rqt, rout = r("khat_state"), r("qtil_dstate"), r("out")
    if fla:
        rdAq = rdAk = rke = rqb = (rtf32 if "tf32" in R else ident)
    qc, kc, vc, gc, doc = (x.reshape(N, C, -1) for x in (q, k, v, g, do))
    # sub-chunk references (natural log)
    gs = gc.reshape(N, NS, SUB, K)
    l = np.cumsum(gs, axis=2)                       # inclusive, from sub-chunk start
    Tm = l[:, :, -1]                                # [N, NS, K]
    Gam = np.concatenate([np.zeros((N, 1, K)), np.cumsum(Tm, axis=1)], axis=1)  # Γ_0..Γ_4
    Gend = Gam[:, NS]                               # [N, K]
    G = (Gam[:, :NS, None, :] + l).reshape(N, C, K)  # chunk-level inclusive cumsum
    l = l.reshape(N, C, K)
    sub = np.arange(C) // SUB
    Gam_t = Gam[:, sub]                             # Γ_mt per token [N, C, K]
    T_t = Tm[:, sub]
    # ---- state walk: S_n before chunk n ----
    S = np.empty((N + 1, K, V))
    S[0] = h0
    for n in range(N):
        khat = rkh(kc[n] * np.exp(Gend[n] - G[n]))
        S[n + 1] = np.exp(Gend[n])[:, None] * S[n] + khat.T @ vc[n]
    # ---- dS walk: dS_n gradient of the state after chunk n ----
    dS = np.empty((N, K, V))
    d = dht.copy()
    for n in range(N - 1, -1, -1):
        dS[n] = d
        qt = rqt(s * qc[n] * np.exp(G[n]))
        d = np.exp(Gend[n])[:, None] * d + qt.T @ doc[n]
    Sn = S[:N]
    Y = np.sum(Sn * dS, axis=2)                     # [N, K]
    # ---- gradient walk ----
    dA = s * doc @ vc.transpose(0, 2, 1)             # [N, t, j]
    tt, jj = np.meshgrid(np.arange(C), np.arange(C), indexing="ij")
    mt_t, m_j = tt // SUB, jj // SUB
    lower_off = (m_j < mt_t)                          # blocks strictly before (dq)
    diag_strict = (m_j == mt_t) & (jj < tt)
    qbar = qc * np.exp(l)
    kbar = kc * np.exp(-l)
    kend = kc * np.exp(T_t - l)
    # dq: D at reference Γ_mt
    D = (s * doc @ rS(Sn).transpose(0, 2, 1)) * np.exp(Gam_t)
    # off-diagonal blocks m < mt: dA_m·k̆_m·e^{Γ_mt − Γ_{m+1}}
    dAo = rdAq(np.where(lower_off, dA, 0.0))
    kendr = rke(kend)
    for mt in range(NS):
        rows = slice(SUB * mt, SUB * mt + SUB)
        for m in range(mt):
            cols = slice(SUB * m, SUB * m + SUB)
            D[:, rows] += (dAo[:, rows, cols] @ kendr[:, cols]) * np.exp(Gam[:, mt] - Gam[:, m + 1])[:, None, :]
    def diagonal(a, b):
        """A diagonal block's product: exact (fla: fp32 elementwise), single bf16 operands,
        or the kernel's hi·hi + lo·hi + hi·lo."""
        if fla or "diag_hilo" not in R and not diag_single:
            return a @ b
        if diag_single:
            return rb(a) @ rb(b)
        (ah, al), (bh, bl) = split(a), split(b)
        return ah @ bh + al @ bh + ah @ bl

    D += diagonal(np.where(diag_strict, dA, 0.0), kbar)
    Tg = qbar * D
    # dk: Kr at reference Γ_mt, key rows
    dAt = dA.transpose(0, 2, 1)                      # [N, j, t]
    upper_off = (m_j > mt_t)                          # here rows=keys j (tt), cols=t (jj)
    dAto = rdAk(np.where(upper_off, dAt, 0.0))
    qbr = rqb(qbar)
    Kr = np.zeros((N, C, K))
    for mt in range(NS):
        rows = slice(SUB * mt, SUB * mt + SUB)
        for m in range(mt + 1, NS):
            cols = slice(SUB * m, SUB * m + SUB)
            Kr[:, rows] += (dAto[:, rows, cols] @ qbr[:, cols]) * np.exp(Gam[:, m] - Gam[:, mt])[:, None, :]
    Kr += diagonal(np.where((m_j == mt_t) & (jj > tt), dAt, 0.0), qbar)
    Tg -= kbar * Kr
    Ki = vc @ rdS(dS).transpose(0, 2, 1)             # [N, C, K]
    i0 = np.exp(Gend[:, None, :] - Gam_t - l) * Ki
    Pg = kc * i0
    suffix = np.flip(np.cumsum(np.flip(Tg, 1), 1), 1)
    prefix = np.cumsum(Pg, 1) - Pg
    dg = suffix + prefix + (np.exp(Gend) * Y)[:, None, :]
    return rout(dg.reshape(T, K))


def rel_l2(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


def main():
    T, K, V = 1024, 64, 64
    s = K ** -0.5
    seeds = range(int(sys.argv[1]) if len(sys.argv) > 1 else 4)
    for gates in sys.argv[2:] or ("mild",):
        probs = [inputs(sd, T, K, V, gates) for sd in seeds]
        exact = [chunked_dg(*p, s) for p in probs]
        if gates == "mild":
            for p, e in zip(probs, exact):
                print(f"check decomposition vs recurrence: {rel_l2(e, reference_dg(*p, s)):.2e}")

        def err(**kw):
            num = sum(np.sum((chunked_dg(*p, s, **kw) - e) ** 2) for p, e in zip(probs, exact))
            den = sum(np.sum(e ** 2) for e in exact)
            return np.sqrt(num / den)

        print(f"\n== gates {gates}, T={T} K=V={K}, {len(probs)} heads ==")
        print(f"{'rounding':40s} alone     all-but-this")
        for name in ALL:
            rest = tuple(x for x in ALL if x != name)
            print(f"{name:40s} {err(R=(name,)):.3e}  {err(R=rest):.3e}")
        print(f"{'diag blocks single (no hi+lo)':40s} {err(R=(), diag_single=True):.3e}")
        print(f"{'kernel: all':40s} {err(R=ALL):.3e}")
        print(f"{'kernel: all but out':40s} {err(R=ALL[1:]):.3e}")
        print(f"{'kernel: all + diag single':40s} {err(R=ALL, diag_single=True):.3e}")
        minus = lambda *xs: tuple(x for x in ALL if x not in xs)
        print(f"{'dA rounded on dq side only':40s} {err(R=('dA_off_q',)):.3e}")
        print(f"{'dA rounded on dk side only':40s} {err(R=('dA_off_k',)):.3e}")
        print(f"{'kend + qbar_off':40s} {err(R=('kend','qbar_off')):.3e}")
        print(f"{'kernel - kend - qbar_off (hi+lo both)':40s} {err(R=minus('kend','qbar_off')):.3e}")
        print(f"{'kernel - kend - qbar_off - dA_off':40s} {err(R=minus('kend','qbar_off','dA_off')):.3e}")
        print(f"{'kernel - kend - qbar_off - dS_op':40s} {err(R=minus('kend','qbar_off','dS_op')):.3e}")
        print(f"{'kernel - qbar_off (q_lo already in smem)':40s} {err(R=minus('qbar_off')):.3e}")
        intra = ("dA_off", "kend", "qbar_off")
        print(f"{'intra off-diag only (dA,kend,qbar)':40s} {err(R=intra):.3e}")
        print(f"{'out + intra off-diag':40s} {err(R=('out',) + intra):.3e}")
        print(f"{'out + S,dS ops + state walks':40s} {err(R=('out','S_op','dS_op','khat_state','qtil_dstate')):.3e}")
        fla = ("out", "S_op", "dS_op", "khat_state", "qtil_dstate", "tf32")
        print(f"{'fla model (tf32 intra, bf16 S/dS ops)':40s} {err(R=fla, fla=True):.3e}")
        print(f"{'fla model, no out rounding':40s} {err(R=fla[1:], fla=True):.3e}")


if __name__ == "__main__":
    main()
