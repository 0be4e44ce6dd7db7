#!/usr/bin/env python3
"""A numpy model of the fp32 forward's rounding: where o's error comes from, and what
would bring o's rel_l2 under 1e-7 (issue 4's target; fla's fused_recurrent: 1.1e-7).

It models the kernel that runs at the accuracy shape B2 T1024 H4 D128 in fp32: narrow
geometry, width 2, 16-token chunks, strips of 16 over 8 lanes. One head, T=1024,
K=V=128, inputs drawn as glabench draws them (q, k ~ N(0, K^-1/2), v, h0 ~ N(0, 1),
g = log σ(N(2, 1))), rounded to fp32. Like the kernel, the model:
- takes b as a running fp32 sum over the chunk;
- computes e^{±b} as ex2.approx(b · log2 e);
- stages q̃ = (scale·q)·e^{b} and k̃ = k·e^{−b}, each rounded;
- updates U = fma(k̃, v, U) per token;
- forms o from 2 interleaved FMA chains of 8 per lane, then a butterfly over the lanes;
- ends each chunk with S = U·e^{b_last}.
fma(a, b, c) is one rounding of the exact value. ex2.approx's own error is modelled as a
relative error with standard deviation 2^-25, the value that reproduces the H200's
1.48e-7. The reference is the fp64 recurrence on the same fp32 inputs.
(The earlier version of this model, for the step-by-step kernels, formed k·v in fp32 in
its reference; that put about 2.5e-8 of its own error into every figure.)

Printed on 2026-11-22 (2 s):

  the kernel as it is                         1.48e-07   (H200: 1.48e-07)
  exact b, ex2.approx's own error kept        1.17e-07   (H200, fp64 gate sums: 1.19e-07)
  exact factors (fp64, rounded once)          1.07e-07
  ... + the lane butterfly in fp64            1e-07
  ... + 4 FMA chains instead of 2             9.75e-08
  exact factors, U in fp64                    9.56e-08
  exact factors, o's sum over K exact         8.02e-08   (o rounded to fp32, as stored)
  exact factors, U in fp64, o's sum exact     6.32e-08

So even with exact factors, fp32 arithmetic leaves about 1.0e-7. That is U's rounding,
q̃'s and k̃'s rounding, o's rounding to fp32, and the fp32 sum over K. The target needs
the state or the sum over K in extended precision, in the per-element loop. On the
H200 the fp64 forward kernels take 0.96 ms at B4 T2048 H16 D128 at best (the wide
geometry; sweeps/fp64_target.txt in
../../../reports/2026-11-22-h200-parallel_scan_cuda/files.tar.xz), against 0.41 ms for
fp32 and a target of 0.6.

Measured since: the fp32 forward with an fp64 state (launch.cu's precise mode,
PARALLEL_SCAN_CUDA_FP32_STATE=64) gives o rel_l2 2.53e-8 at this shape on the H200 and
takes 0.720 ms at B4 T2048 H16 D128
(../../../reports/2026-11-22-h200-parallel_scan_cuda-precise-fp32/).
"""
import numpy as np

T, K, V, L, TC = 1024, 128, 128, 16, 16
EX2_ERROR = 2.0**-25
f32, f64 = np.float32, np.float64
rng = np.random.default_rng(7)
q = (rng.standard_normal((T, K)) * K**-0.25).astype(f32)
k = (rng.standard_normal((T, K)) * K**-0.25).astype(f32)
v = rng.standard_normal((T, V)).astype(f32)
g = (-np.log1p(np.exp(-(rng.standard_normal((T, K)) + 2)))).astype(f32)
S0 = rng.standard_normal((K, V)).astype(f32)
scale = K**-0.5
noise = np.random.default_rng(11)


def r32(x):
    return np.asarray(x, dtype=f64).astype(f32)


def fma(a, b, c):
    return r32(np.asarray(a, f64) * np.asarray(b, f64) + np.asarray(c, f64))


def ex2_approx(y):  # y: the fp64 value of the instruction's fp32 argument
    e = np.exp2(np.asarray(y, f64))
    return r32(e * (1 + noise.uniform(-1, 1, np.shape(e)) * EX2_ERROR * np.sqrt(3)))


def reference():
    S, o = S0.astype(f64), np.empty((T, V))
    for t in range(T):
        S = np.exp(g[t].astype(f64))[:, None] * S + np.outer(k[t].astype(f64), v[t].astype(f64))
        o[t] = scale * (q[t].astype(f64) @ S)
    return o


def factors(gates, how):
    """e^{b}, e^{-b} for a chunk's gates [TC, K]: as the kernel does ("kernel"), with b
    exact but ex2.approx's error ("exact_b"), or exact and rounded once ("exact")."""
    if how == "kernel":
        b, acc = np.empty_like(gates), np.zeros(K, f32)
        for t in range(len(gates)):
            acc = r32(acc.astype(f64) + gates[t]); b[t] = acc
        log2e = f32(1.44269504088896341)
        return ex2_approx(r32(b * f64(log2e))), ex2_approx(r32(-b * f64(log2e)))
    b = np.cumsum(gates.astype(f64), axis=0)
    if how == "exact_b":
        return ex2_approx(b / np.log(2)), ex2_approx(-b / np.log(2))
    return r32(np.exp(b)), r32(np.exp(-b))


def model(how="kernel", chains=2, tree64=False, state64=False, exact_sum=False):
    S = S0.astype(f64) if state64 else S0.copy()
    o = np.empty((T, V))
    qs = r32(q * f64(f32(scale)))
    lanes = K // L
    for c0 in range(0, T, TC):
        E, Ei = factors(g[c0:c0 + TC], how)
        for tt in range(TC):
            t = c0 + tt
            qq, kk = r32(qs[t].astype(f64) * E[tt]), r32(k[t].astype(f64) * Ei[tt])
            if state64:
                S = S + np.outer(kk.astype(f64), v[t].astype(f64))
            else:
                S = fma(kk[:, None], v[t][None, :], S)
            if exact_sum:
                o[t] = r32(qq.astype(f64) @ S.astype(f64))
                continue
            Sl, ql = S.reshape(lanes, L, V), np.broadcast_to(qq[:, None], (K, V)).reshape(lanes, L, V)
            acc = np.zeros((lanes, chains, V), dtype=f32)
            for e in range(L):
                acc[:, e % chains] = fma(ql[:, e], Sl[:, e], acc[:, e % chains])
            parts = [acc[:, c] for c in range(chains)]
            while len(parts) > 1:
                parts = [r32(parts[i].astype(f64) + parts[i + 1]) for i in range(0, len(parts), 2)]
            part = parts[0]
            if tree64:
                o[t] = r32(part.astype(f64).sum(axis=0))
                continue
            off = lanes // 2
            while off:
                part = r32(part.astype(f64) + part[np.arange(lanes) ^ off]); off //= 2
            o[t] = part[0]
        S = S * E[TC - 1].astype(f64)[:, None] if state64 else r32(S.astype(f64) * E[TC - 1][:, None])
    return o


def main():
    r = reference()
    rel = lambda x: np.linalg.norm(x - r) / np.linalg.norm(r)
    for name, kw in [("the kernel as it is", dict()),
                     ("exact b, ex2.approx's own error kept", dict(how="exact_b")),
                     ("exact factors (fp64, rounded once)", dict(how="exact")),
                     ("... + the lane butterfly in fp64", dict(how="exact", tree64=True)),
                     ("... + 4 FMA chains instead of 2", dict(how="exact", tree64=True, chains=4)),
                     ("exact factors, U in fp64", dict(how="exact", state64=True)),
                     ("exact factors, o's sum over K exact", dict(how="exact", exact_sum=True)),
                     ("exact factors, U in fp64, o's sum exact",
                      dict(how="exact", state64=True, exact_sum=True))]:
        print(f"{name:<43} {rel(model(**kw)):.3g}", flush=True)


if __name__ == "__main__":
    main()
