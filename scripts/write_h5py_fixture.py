#!/usr/bin/env python3
"""Write a gla fixture with h5py and numpy alone, exactly as someone outside glabench
would from the schema (datasets/README.md): variable-length string attributes (h5py's
default), integer attributes of mixed widths, and expected values from a numpy
implementation of the recurrence — a third implementation, independent of both the
C++ reference and the backends.

With --varlen it writes a packed variable-length batch instead (schema version 2): three
sequences of 1, 6 and 4 tokens in one row, /inputs/cu_seqlens of int32 as numpy makes
it, each sequence from its own h0[n] into its own ht[n].

usage: write_h5py_fixture.py [--varlen] OUT.h5
"""
import sys

import h5py
import numpy as np


def gla_forward_backward(q, k, v, g, h0, do, dht, scale):
    B, T, H, K = q.shape
    V = v.shape[-1]
    o = np.zeros((B, T, H, V))
    ht = np.zeros((B, H, K, V))
    grads = {n: np.zeros_like(x) for n, x in (("dq", q), ("dk", k), ("dv", v), ("dg", g), ("dh0", h0))}
    for b in range(B):
        for h in range(H):
            states = [h0[b, h].copy()]
            for t in range(T):
                S = np.exp(g[b, t, h])[:, None] * states[-1] + np.outer(k[b, t, h], v[b, t, h])
                o[b, t, h] = scale * q[b, t, h] @ S
                states.append(S)
            ht[b, h] = states[-1]
            G = dht[b, h].copy()
            for t in reversed(range(T)):
                G += scale * np.outer(q[b, t, h], do[b, t, h])
                grads["dq"][b, t, h] = scale * states[t + 1] @ do[b, t, h]
                grads["dk"][b, t, h] = G @ v[b, t, h]
                grads["dv"][b, t, h] = k[b, t, h] @ G
                grads["dg"][b, t, h] = np.exp(g[b, t, h]) * (G * states[t]).sum(axis=1)
                G = np.exp(g[b, t, h])[:, None] * G
            grads["dh0"][b, h] = G
    return o, ht, grads


def packed_forward_backward(cu_seqlens, q, k, v, g, h0, do, dht, scale):
    """Each sequence [cu_seqlens[n], cu_seqlens[n+1]) of the one row as a batch of its own."""
    o = np.zeros_like(v)
    ht = np.zeros_like(h0)
    grads = {n: np.zeros_like(x) for n, x in (("dq", q), ("dk", k), ("dv", v), ("dg", g), ("dh0", h0))}
    for n in range(len(cu_seqlens) - 1):
        t = slice(cu_seqlens[n], cu_seqlens[n + 1])
        s = slice(n, n + 1)
        o_n, ht_n, grads_n = gla_forward_backward(q[:, t], k[:, t], v[:, t], g[:, t], h0[s], do[:, t], dht[s], scale)
        o[:, t], ht[s] = o_n, ht_n
        for name in ("dq", "dk", "dv", "dg"):
            grads[name][:, t] = grads_n[name]
        grads["dh0"][s] = grads_n["dh0"]
    return o, ht, grads


def main(out_path, varlen=False):
    rng = np.random.default_rng(2024)
    B, T, H, K, V = 1, 11, 2, 5, 3
    cu_seqlens = np.array([0, 1, 7, 11], dtype=np.int32)
    N = len(cu_seqlens) - 1 if varlen else B  # states
    scale = K ** -0.5
    q = rng.standard_normal((B, T, H, K)) * K ** -0.25
    k = rng.standard_normal((B, T, H, K)) * K ** -0.25
    v = rng.standard_normal((B, T, H, V))
    g = -np.logaddexp(0.0, -(rng.standard_normal((B, T, H, K)) + 2.0))  # log sigmoid
    h0 = rng.standard_normal((N, H, K, V))
    do = rng.standard_normal((B, T, H, V))
    dht = rng.standard_normal((N, H, K, V))
    if varlen:
        o, ht, grads = packed_forward_backward(cu_seqlens, q, k, v, g, h0, do, dht, scale)
    else:
        o, ht, grads = gla_forward_backward(q, k, v, g, h0, do, dht, scale)

    with h5py.File(out_path, "w") as f:
        f.attrs["glabench_fixture"] = np.int32(2 if varlen else 1)
        f.attrs["op"] = "gla"  # h5py writes a variable-length string
        f.attrs["B"], f.attrs["T"], f.attrs["H"] = np.int64(B), np.int16(T), np.uint8(H)
        f.attrs["K"], f.attrs["V"] = K, V
        f.attrs["scale"] = scale
        f.attrs["description"] = "written by scripts/write_h5py_fixture.py with h5py and numpy"
        for name, x in (("q", q), ("k", k), ("v", v), ("g", g), ("h0", h0), ("do", do), ("dht", dht)):
            f[f"inputs/{name}"] = x
        if varlen:
            f["inputs/cu_seqlens"] = cu_seqlens  # int32, 1-D, N + 1 offsets from 0 to T
        f["expected/o"], f["expected/ht"] = o, ht
        for name, x in grads.items():
            f[f"expected/{name}"] = x


if __name__ == "__main__":
    args = sys.argv[1:]
    varlen = "--varlen" in args
    paths = [a for a in args if a != "--varlen"]
    if len(paths) != 1:
        sys.exit(__doc__)
    main(paths[0], varlen)
