#!/usr/bin/env python3
"""A numpy model of the bf16 chunk walk's o (forward_bf16_mma.cuh): what each bf16
rounding of its operands costs o's rel_l2, and so which residuals earn their tensor-core
work.

o = scale·(q̄·S̄_n + A·v) per 64-token chunk on the mild chunks' one reference, the chunk's
end: q̄ = q·2^{G − G[C−1]}, k̂ = k·2^{G[C−1] − G}, A = q̄·k̂ᵀ masked, S̄_n = 2^{G[C−1]} ⊙ S_n
(the sub-chunk references round the same operands), in fp64, each operand rounded to bf16
as the kernel rounds it: q̄ and k̂ once; the diagonal blocks' scores as q̄_hi·k̂_hi +
q̄_lo·k̂_hi + q̄_hi·k̂_lo; the scores A as A_hi + A_lo; S̄_n single (the kernel) or as
S_hi + S_lo; S_n kept in fp32; o rounded once. Inputs as bf16_dg_error_model.py draws
them (h0 fp32). Not modelled: fp32 accumulation order, ex2's error.

Run here (2026-12-04, K = V = 128, 2 heads, T1024), o's rel_l2 × 10³ against the exact
model: the kernel's / with S̄_n as S_hi + S_lo / with A single / without the diagonal
residuals; then the H200's (8657024; before it, S̄_n as hi + lo, a8b4210) and fla
chunk_gla's at B2 T1024 H4 D128 (reports/2026-12-04-h200-bf16-walk-end-reference/):
  model   2.40 / 2.30 / 2.83 / 2.94   H200 2.41 (2.30)   fla 2.55
  mild    1.94 / 1.91 / 2.55 / 2.86   H200 1.94 (1.90)   fla 2.42
  fla     1.71 / 1.70 / 2.40 / 2.84   H200 1.71 (1.70)   fla 2.41
  cliff   2.31 / 1.68 / 2.37 / 2.36   H200 2.29 (1.67)   fla 2.35
S̄_n's residual is worth 0.4–4 % of o's error where the gates decay, and 38 % under the
cliff regime, whose zero-gate features keep their whole past in the state; the kernel
drops it for a sixth of the walk's mma.sync (o stays under fla's). A's and the diagonal's
residuals are worth 2–66 %.

Usage: python3 bf16_o_error_model.py [heads] [T] [gates,...]
"""
import sys

import numpy as np

from bf16_dg_error_model import C, SUB, inputs, rb, split

VARIANTS = {"kernel": (), "S_hilo": ("S_hilo",), "A_single": ("A_single",),
            "no_diag_residuals": ("no_diag",)}


def chunked_o(q, k, v, g, h0, s, R=None):
    """o by the walk's decomposition; R: None for exact, else the variant's switches."""
    T, K = q.shape
    r = (lambda x: x) if R is None else rb
    S, o = h0.copy(), np.empty((T, v.shape[1]))
    for n in range(T // C):
        sl = slice(n * C, (n + 1) * C)
        G = np.cumsum(g[sl], axis=0)
        qt, kt = q[sl] * np.exp(G - G[-1]), k[sl] * np.exp(G[-1] - G)
        S = np.exp(G[-1])[:, None] * S
        if R is None:
            A = qt @ kt.T
        else:
            (qh, ql), (kh_, kl) = split(qt), split(kt)
            A = qh @ kh_.T
            if "no_diag" not in R:
                for j in range(C // SUB):
                    d = slice(SUB * j, SUB * (j + 1))
                    A[d, d] += ql[d] @ kh_[d].T + qh[d] @ kl[d].T
            A = rb(A) if "A_single" in R else sum(split(A))
        A = np.tril(A)
        Sop = S if R is None else (sum(split(S)) if "S_hilo" in R else rb(S))
        o[sl] = r(s * (r(qt) @ Sop + A @ v[sl]))
        S = S + r(kt).T @ v[sl]
        if R is not None:
            S = S.astype(np.float32).astype(np.float64)
    return o


def main():
    heads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    T = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    K = V = 128
    for gates in (sys.argv[3].split(",") if len(sys.argv) > 3 else ("model", "mild", "fla", "cliff")):
        err = {name: [0.0, 0.0] for name in VARIANTS}
        for h in range(heads):
            q, k, v, g, h0, _, _ = inputs(h, T, K, V, gates)
            exact = chunked_o(q, k, v, g, h0, K ** -0.5)
            for name, R in VARIANTS.items():
                d = chunked_o(q, k, v, g, h0, K ** -0.5, R) - exact
                err[name][0] += np.sum(d * d)
                err[name][1] += np.sum(exact * exact)
        print(gates, "  ".join(f"{n} {np.sqrt(a / b):.3e}" for n, (a, b) in err.items()))


if __name__ == "__main__":
    main()
