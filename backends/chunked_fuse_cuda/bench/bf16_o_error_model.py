#!/usr/bin/env python3
"""A numpy model of the bf16 chunk walk's o (forward_bf16_mma.cuh): what each bf16
rounding of its operands costs o's rel_l2, and so which residuals earn their tensor-core
work.

o = scale·(q̃·S_n + A·v) per 64-token chunk, with q̃ = q·2^{G}, A = q̃·k̃ᵀ masked and
k̃ = k·2^{−G} on one reference for the chunk (the mild chunks' scheme; the sub-chunk
references round the same operands), in fp64, each operand rounded to bf16 as the kernel
rounds it: q̃, k̃ and k̂ once; the diagonal blocks' scores as q̃_hi·k̃_hi + q̃_lo·k̃_hi +
q̃_hi·k̃_lo; the scores A as A_hi + A_lo; S_n single (the kernel) or as S_hi + S_lo; S_n kept
in fp32; o rounded once. Inputs as bf16_dg_error_model.py draws them (h0 fp32). Not
modelled: fp32 accumulation order, ex2's error.

Run here (2026-12-04, K = V = 128, 2 heads), o's rel_l2 against the exact model
(the kernel's / with S_n as S_hi + S_lo / with A single / without the diagonal
residuals), T1024:
  model   2.40 / 2.31 / 2.84 / 2.93e-3
  mild    1.94 / 1.91 / 2.54 / 2.88e-3
  fla     1.71 / 1.70 / 2.40 / 2.80e-3
fla chunk_gla's o on the H200 at B2 T1024 H4 D128: 2.55 / 2.42 / 2.41e-3
(reports/2026-12-03-h200-bf16-gradient-residuals/). S_n's residual is worth 0.4–3.9 %
of o's error and a sixth of the walk's mma.sync; A's and the diagonal's are worth
18–64 %.

Usage: python3 bf16_o_error_model.py [heads] [T]
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
        qt, kt, kh = q[sl] * np.exp(G), k[sl] * np.exp(-G), k[sl] * np.exp(G[-1] - G)
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
        S = np.exp(G[-1])[:, None] * S + r(kh).T @ v[sl]
        if R is not None:
            S = S.astype(np.float32).astype(np.float64)
    return o


def main():
    heads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    T = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    K = V = 128
    for gates in ("model", "mild", "fla"):
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
