#!/usr/bin/env python3
"""A numpy model of the bf16 gradient walk's dv (backward_bf16_mma_grads.cuh): which bf16
rounding keeps its dv above fla's at long sequences (H200, 2026-12-03, B2 T16384 H16
D128: 2.48e-3 rel_l2 against fla's 2.20e-3 under model gates, +5 % mild; at B4 T2048
equal; reports/2026-12-03-h200-one-call-beside-fla/).

dv = k̂·dS_n + scale·Aᵀ·do per 64-token chunk, in fp64, with each place the kernel
rounds an operand to bf16 switched on or off: dv's own rounding (out), the dS walk's
q̃ (qtil), k̂ (hi + lo in the kernel, or single), dS_n (single in the kernel, or hi + lo)
and the scores Aᵀ off the diagonal sub-chunk blocks (single in the kernel, or hi + lo;
the diagonal blocks are hi + lo). Inputs as bf16_dg_error_model.py draws them. Not
modelled: fp32 accumulation, ex2's error, the scores' operands' own roundings.

Run here (2026-12-03, K = V = 128, 2 heads), dv's rel_l2 against the exact model
(floor: dv's own rounding, 1.64–1.66e-3), at T1024 / T4096:
- model gates: the kernel 2.25 / 2.19e-3; with dS_n as hi + lo 1.82 / 1.94e-3; with Aᵀ's
  off-diagonal blocks as hi + lo 2.16 / 2.03e-3;
- mild gates: the kernel 2.13 / 1.96e-3; dS_n as hi + lo 1.70 / 1.75e-3;
- dS_n rounded once is the largest single term (1.35 / 1.02e-3 alone, model gates); Aᵀ's
  off-diagonal blocks rounded once grow with T (0.61 / 0.82e-3 alone).
The lead: k̂·dS_n with dS_n as hi + lo (a third product, k̂_hi·dS_lo).

Usage: python3 bf16_dv_error_model.py [heads]
"""
import sys

import numpy as np

from bf16_dg_error_model import C, SUB, inputs, rb, split

KERNEL = ("out", "qtil", "khat_hilo", "dS_single", "A_off_single")


def chunked_dv(q, k, v, g, h0, do, dht, s, R=()):
    """dv by the kernel's decomposition; R: the rounding points switched on."""
    T, K = q.shape
    N = T // C
    qc, kc, gc, doc = (x.reshape(N, C, -1) for x in (q, k, g, do))
    G = np.cumsum(gc, axis=1)  # inclusive, from the chunk's start
    Gend = G[:, -1]
    # dS_n: the gradient of the state after chunk n, by the dS walk
    dS = np.empty((N, K, do.shape[1]))
    d = dht.copy()
    for n in range(N - 1, -1, -1):
        dS[n] = d
        qt = s * qc[n] * np.exp(G[n])
        d = np.exp(Gend[n])[:, None] * d + (rb(qt) if "qtil" in R else qt).T @ doc[n]
    khat = kc * np.exp(Gend[:, None, :] - G)
    kh = split(khat) if "khat_hilo" in R else (rb(khat),) if "khat_single" in R else (khat,)
    if "dS_hilo" in R:
        dh, dl = split(dS)
        inter = sum(x @ dh for x in kh) + kh[0] @ dl
    else:
        inter = sum(x @ (rb(dS) if "dS_single" in R else dS) for x in kh)
    decay = np.exp(np.minimum(G[:, :, None, :] - G[:, None, :, :], 0.0))  # [n, t, j, k]
    A = s * np.einsum("ntk,njk,ntjk->ntj", qc, kc, decay) * np.tril(np.ones((C, C)))
    diag = (np.arange(C)[:, None] // SUB) == (np.arange(C)[None, :] // SUB)
    if "A_off_single" in R:
        A = np.where(diag, A, rb(A))
    dv = inter + A.transpose(0, 2, 1) @ doc
    return (rb(dv) if "out" in R else dv).reshape(T, -1)


def main():
    K = V = 128
    s = K ** -0.5
    heads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    swap = lambda a, b: tuple(b if x == a else x for x in KERNEL)
    for gates in ("model", "mild"):
        for T in (1024, 4096):
            probs = [inputs(sd, T, K, V, gates) for sd in range(heads)]
            exact = [chunked_dv(*p, s) for p in probs]

            def err(R):
                num = sum(np.sum((chunked_dv(*p, s, R=R) - e) ** 2) for p, e in zip(probs, exact))
                return np.sqrt(num / sum(np.sum(e ** 2) for e in exact))

            print(f"== gates {gates}, T={T} K=V={K}, {heads} heads ==")
            for name, R in [("dv's own rounding (the floor)", ("out",)),
                            ("the kernel", KERNEL),
                            ("the kernel, dS_n hi + lo", swap("dS_single", "dS_hilo")),
                            ("the kernel, Aᵀ off-diagonal hi + lo",
                             tuple(x for x in KERNEL if x != "A_off_single")),
                            ("dS_n single alone", ("dS_single",)),
                            ("Aᵀ off-diagonal single alone", ("A_off_single",))]:
                print(f"  {name:40s} {err(R):.3e}", flush=True)


if __name__ == "__main__":
    main()
