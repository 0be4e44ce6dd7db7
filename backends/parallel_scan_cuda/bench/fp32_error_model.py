#!/usr/bin/env python3
"""A numpy model of the fp32 forward's rounding, to see where o's error comes from
before changing the kernel (reports/2026-11-22-h200-parallel_scan_cuda-accuracy/).

One head, T=1024, K=V=128, inputs as glabench draws them, rounded to fp32. The model
rounds like the kernel: the decay a = exp(g) in fp32 (or fp64 rounded once), the state
update S = fma(a, S, round(k v)), o accumulated per lane in 2 interleaved FMA chains of
8 rows, then a butterfly over the 8 lanes; fma(a, b, c) is modelled as one rounding of
the exact fp64 value. It printed, on 2026-11-22:

  decays in fp32                             1.24e-7   (kernel on the H200: 1.41e-7, __expf)
  decays from fp64                           1.01e-7   (kernel on the H200: 1.04e-7)
  ... with 4 or 8 chains instead of 2        9.85e-8, 1.03e-7
  ... without the q·scale prescale           1.01e-7
  ... with S = fma(k, v, round(a S))         1.12e-7
  ... o exact from the fp32 state            5.9e-8
  ... that o rounded to fp32                 6.4e-8

So with exact decays, about 6e-8 comes from the state and the output rounding, and the
fp32 sum over K adds the rest; only an extended-precision sum (fp64 accumulation:
measured 7.1e-8, but 1.5× the forward time) removes it.
"""
import numpy as np

T, K, V, L = 1024, 128, 128, 16
f32, f64 = np.float32, np.float64
rng = np.random.default_rng(7)
q = (rng.standard_normal((T, K)) * K**-0.25).astype(f32)
k = (rng.standard_normal((T, K)) * K**-0.25).astype(f32)
v = rng.standard_normal((T, V)).astype(f32)
g = (-np.log1p(np.exp(-(rng.standard_normal((T, K)) + 2)))).astype(f32)
S0 = rng.standard_normal((K, V)).astype(f32)
scale = K**-0.5


def fma(a, b, c):
    return (a.astype(f64) * b.astype(f64) + c.astype(f64)).astype(f32)


def reference():
    S, o = S0.astype(f64), np.empty((T, V))
    for t in range(T):
        S = np.exp(g[t].astype(f64))[:, None] * S + np.outer(k[t], v[t]).astype(f64)
        o[t] = scale * (q[t].astype(f64) @ S)
    return o


def model(exp64=True, chains=2, prescale=True, akv=True, exact_o=False, round_o=False):
    S, o = S0.copy(), np.empty((T, V))
    qs = (q * f32(scale)).astype(f32) if prescale else q
    lanes = K // L
    for t in range(T):
        a = np.exp(g[t].astype(f64)).astype(f32) if exp64 else np.exp(g[t])
        if akv:
            S = fma(np.broadcast_to(a[:, None], S.shape), S, (k[t][:, None] * v[t]).astype(f32))
        else:
            aS = (a[:, None] * S).astype(f32)
            S = fma(np.broadcast_to(k[t][:, None], S.shape), np.broadcast_to(v[t], S.shape), aS)
        if exact_o:
            o[t] = scale * (q[t].astype(f64) @ S.astype(f64))
            if round_o:
                o[t] = o[t].astype(f32)
            continue
        Sl = S.reshape(lanes, L, V)
        ql = np.broadcast_to(qs[t][:, None], S.shape).reshape(lanes, L, V)
        acc = np.zeros((lanes, chains, V), dtype=f32)
        for e in range(L):
            acc[:, e % chains] = fma(ql[:, e], Sl[:, e], acc[:, e % chains])
        part = acc[:, 0]
        for c in range(1, chains):
            part = (part + acc[:, c]).astype(f32)
        off = lanes // 2
        while off:
            part = (part + part[np.arange(lanes) ^ off]).astype(f32)
            off //= 2
        o[t] = part[0] if prescale else (f32(scale) * part[0]).astype(f32)
    return o


def main():
    r = reference()
    rel = lambda x: np.linalg.norm(x - r) / np.linalg.norm(r)
    for name, kw in [("decays in fp32", dict(exp64=False)),
                     ("decays from fp64", dict()),
                     ("... 4 chains", dict(chains=4)),
                     ("... 8 chains", dict(chains=8)),
                     ("... no q prescale", dict(prescale=False)),
                     ("... S = fma(k, v, round(a S))", dict(akv=False)),
                     ("... o exact from the fp32 state", dict(exact_o=True)),
                     ("... that o rounded to fp32", dict(exact_o=True, round_o=True))]:
        print(f"{name:<40} {rel(model(**kw)):.3g}")


if __name__ == "__main__":
    main()
