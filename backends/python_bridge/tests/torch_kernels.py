"""Pure-PyTorch kernels for the bridge's CPU tests: the three ops written plainly (a
recurrence, a masked softmax), differentiated by torch autograd, packed batches included
(varlen=True: cu_seqlens), and kernels that go wrong on purpose. None is fast; each is
small enough for the committed fixtures."""
import ctypes
import time

import torch

from glabench import kernel

CPU = dict(dtypes=("float64", "float32"), device="cpu")
PACKED = dict(CPU, varlen=True)


def recurrence(q, k, v, g, u, scale, h0):
    B, T, H, K = q.shape
    V = v.shape[-1]
    S = h0 if h0 is not None else q.new_zeros(B, H, K, V)
    out = []
    for t in range(T):
        kv = k[:, t, :, :, None] * v[:, t, :, None, :]
        if u is None:  # gla: the state after token t
            S = torch.exp(g[:, t])[..., None] * S + kv
            out.append(scale * torch.einsum("bhk,bhkv->bhv", q[:, t], S))
        else:  # rwkv6: the state before token t, plus the bonus
            out.append(scale * torch.einsum("bhk,bhkv->bhv", q[:, t], S + u[None, :, :, None] * kv))
            S = torch.exp(g[:, t])[..., None] * S + kv
    return torch.stack(out, dim=1), S


def sequences(q, k, v, g, u, scale, h0, cu_seqlens):
    """The recurrence of each sequence of a packed batch (B 1) on its own, from its own h0
    row: o joined along the tokens, the final states [N,H,K,V]; a plain batch without
    cu_seqlens."""
    if cu_seqlens is None:
        return recurrence(q, k, v, g, u, scale, h0)
    bounds = cu_seqlens.tolist()
    outs, states = [], []
    for n in range(len(bounds) - 1):
        t = slice(bounds[n], bounds[n + 1])
        o, ht = recurrence(q[:, t], k[:, t], v[:, t], g[:, t], u, scale,
                           None if h0 is None else h0[n:n + 1])
        outs.append(o)
        states.append(ht)
    return torch.cat(outs, dim=1), torch.cat(states, dim=0)


@kernel(op="gla", **PACKED)
def gla(q, k, v, g, *, scale, initial_state, output_final_state, cu_seqlens=None):
    return sequences(q, k, v, g, None, scale, initial_state, cu_seqlens)


@kernel(op="rwkv6", **PACKED)
def rwkv6(r, k, v, w, u, *, scale, initial_state, output_final_state, cu_seqlens=None):
    return sequences(r, k, v, w, u, scale, initial_state, cu_seqlens)


@kernel(op="softmax_attn", **PACKED)
def softmax_attn(q, k, v, *, scale, causal, cu_seqlens=None):
    s = scale * torch.einsum("bthd,bshd->bhts", q, k)
    T = q.shape[1]
    hidden = torch.zeros(T, T, dtype=torch.bool)
    if causal:
        hidden |= torch.ones(T, T, dtype=torch.bool).triu(1)
    if cu_seqlens is not None:  # each token attends only within its own sequence
        lengths = (cu_seqlens[1:] - cu_seqlens[:-1]).long()
        ids = torch.repeat_interleave(torch.arange(len(lengths)), lengths)
        hidden |= ids[:, None] != ids[None, :]
    if hidden.any():
        s = s.masked_fill(hidden, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    o = torch.einsum("bhts,bshv->bthv", torch.exp(s - lse[..., None]), v)
    return o, lse


def gla_backward(q, k, v, g, u, h0, o, lse, do, dht, *, scale, causal):
    """gla's gradients by autograd, written as a kernel's own backward would be called."""
    leaves = [t.detach().requires_grad_() for t in (q, k, v, g)]
    if h0 is not None:
        leaves.append(h0.detach().requires_grad_())
    with torch.enable_grad():
        o, ht = recurrence(*leaves[:4], None, scale, leaves[4] if h0 is not None else None)
        outs, cots = [o], [do]
        if dht is not None:
            outs.append(ht)
            cots.append(dht)
        got = torch.autograd.grad(outs, leaves, cots)
    return dict(zip(("dq", "dk", "dv", "dg", "dh0"), got))


@kernel(op="gla", outputs="arguments", backward=gla_backward, **CPU)
def gla_in_place(q, k, v, g, *, scale, initial_state, output_final_state, o, ht):
    """Writes glabench's o and ht itself, and brings its own backward."""
    got_o, got_ht = recurrence(q, k, v, g, None, scale, initial_state)
    o.copy_(got_o)
    ht.copy_(got_ht)


@kernel(op="gla", head_sizes=(8,), **CPU)
def gla_head_8(q, k, v, g, *, scale, initial_state, output_final_state):
    """Declares K = V = 8 only: supports() refuses every other problem."""
    return recurrence(q, k, v, g, None, scale, initial_state)


@kernel(op="gla", **CPU)
def gla_off_by_one(q, k, v, g, *, scale, initial_state, output_final_state):
    """Reads the state before the token, as rwkv6 does: wrong for gla."""
    o, ht = recurrence(q, k, v, g, torch.zeros_like(q[0, 0]), scale, initial_state)
    return o, ht


@kernel(op="gla", **CPU)
def gla_raises(q, k, v, g, *, scale, initial_state, output_final_state):
    raise ValueError("this kernel does not like its inputs")


@kernel(op="gla", **CPU)
def gla_segfaults(q, k, v, g, *, scale, initial_state, output_final_state):
    ctypes.string_at(0)  # reads address 0: the interpreter dies of SIGSEGV


@kernel(op="gla", **CPU)
def gla_hangs(q, k, v, g, *, scale, initial_state, output_final_state):
    while True:
        time.sleep(1)


@kernel(op="gla", **CPU)
def gla_wrong_shape(q, k, v, g, *, scale, initial_state, output_final_state):
    o, ht = recurrence(q, k, v, g, None, scale, initial_state)
    return o.transpose(1, 2), ht


@kernel(op="gla", **CPU)
def gla_wrong_dtype(q, k, v, g, *, scale, initial_state, output_final_state):
    o, ht = recurrence(q, k, v, g, None, scale, initial_state)
    return o.to(torch.float16), ht


@kernel(op="gla", **CPU)
def gla_not_a_pair(q, k, v, g, *, scale, initial_state, output_final_state):
    return recurrence(q, k, v, g, None, scale, initial_state)[0]


@kernel(op="gla", dtypes=("float64", "float32", "bfloat16"), modes=("forward",), device="cpu",
        outputs="arguments")
def empty(q, k, v, g, *, scale, initial_state, output_final_state, o, ht):
    """Does nothing: the bridge's own cost per call (bridge_overhead)."""


@kernel(op="gla", dtypes=("float32", "bfloat16"), modes=("forward",), device="cuda",
        outputs="arguments")
def empty_cuda(q, k, v, g, *, scale, initial_state, output_final_state, o, ht):
    """Does nothing, on the GPU: the bridge's own cost per call, stream handling included."""


@kernel(op="gla", dtypes=("float32", "bfloat16"), device="cpu", state_dtype="float32")
def gla_state_fp32(q, k, v, g, *, scale, initial_state, output_final_state):
    """Declares fp32 states at 16-bit storage (as fla's adapters do)."""
    return recurrence(q, k, v, g, None, scale, initial_state)
