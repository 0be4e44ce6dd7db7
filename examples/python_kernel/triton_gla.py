"""A small GLA kernel in Triton, as a kernel author would bring it to glabench.

One program per (batch·head, block of value features) walks the tokens with the K×BV
state in registers: S = diag(exp(g_t)) S + k_tᵀ v_t, o_t = scale · q_t S. It writes
glabench's o and ht in place (outputs="arguments": no copy), forward only. With
TRITON_INTERPRET=1 Triton runs it on the CPU, and it declares itself a CPU kernel."""
import os

import torch
import triton
import triton.language as tl

from glabench import kernel

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def gla_recurrent_forward(q, k, v, g, h0, o, ht, scale, T, H: tl.constexpr, K: tl.constexpr,
                          V: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
                          HAS_H0: tl.constexpr):
    i_v, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    ok = tl.arange(0, BK)
    ov = i_v * BV + tl.arange(0, BV)
    mk, mv = ok < K, ov < V
    state_at = i_bh.to(tl.int64) * K * V + ok[:, None] * V + ov[None, :]
    S = tl.zeros([BK, BV], dtype=tl.float32)
    if HAS_H0:
        S += tl.load(h0 + state_at, mask=mk[:, None] & mv[None, :], other=0.0).to(tl.float32)
    for t in range(T):
        row = (i_b.to(tl.int64) * T + t) * H + i_h
        qt = tl.load(q + row * K + ok, mask=mk, other=0.0).to(tl.float32)
        kt = tl.load(k + row * K + ok, mask=mk, other=0.0).to(tl.float32)
        gt = tl.load(g + row * K + ok, mask=mk, other=0.0).to(tl.float32)
        vt = tl.load(v + row * V + ov, mask=mv, other=0.0).to(tl.float32)
        S = S * tl.exp(gt)[:, None] + kt[:, None] * vt[None, :]
        ot = tl.sum(S * qt[:, None], axis=0) * scale
        tl.store(o + row * V + ov, ot.to(o.dtype.element_ty), mask=mv)
    tl.store(ht + state_at, S.to(ht.dtype.element_ty), mask=mk[:, None] & mv[None, :])


@kernel(op="gla", dtypes=("float32",) if INTERPRETED else ("float32", "bfloat16", "float16"),
        modes=("forward",), head_sizes=tuple(range(1, 257)),
        device="cpu" if INTERPRETED else "cuda", outputs="arguments")
def gla(q, k, v, g, *, scale, initial_state, output_final_state, o, ht):
    B, T, H, K = q.shape
    V = v.shape[-1]
    BK = triton.next_power_of_2(K)
    BV = min(triton.next_power_of_2(V), 32 if BK <= 64 else 16)
    grid = (triton.cdiv(V, BV), B * H)
    h0 = initial_state if initial_state is not None else o  # unread when HAS_H0 is False
    final = ht if ht is not None else torch.empty(B, H, K, V, dtype=o.dtype, device=o.device)
    gla_recurrent_forward[grid](q, k, v, g, h0, o, final, scale, T, H=H, K=K, V=V, BK=BK, BV=BV,
                                HAS_H0=initial_state is not None)
