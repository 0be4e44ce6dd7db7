#!/usr/bin/env python3
"""Runs scripts/peers/fla_peers.py on the CPU with a stand-in for fla, whose kernels are
Triton and need a GPU: everything of fla_peers.py but fla itself and graph timing (its
inputs of every gate regime, h0 and dht held as fp32, the quick verify, eager timing on the
host, the timed outputs' check, the rows, graph rows skipped) is exercised.

The stand-in kernels compute the gla and rwkv6 recurrences in fp32 with torch's autograd
and, like fla's chunk_gla, refuse a state that is not fp32. With --drift, each call's o
is scaled by 1 + 0.001·(the calls before it): the timed calls' o then differs from the
quick verify's (the first call, unscaled), as a kernel's that is not repeatable would.

usage: fla_stand_in.py [--drift] FLA_PEERS_ARGS...   (fla_peers.py's own arguments)
"""
import os
import sys
import types

import torch

PEERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers")
sys.path.insert(0, PEERS)


DRIFT = {"on": False, "calls": 0}


def recurrence(q, k, v, g, u, scale, initial_state, output_final_state):
    """o [B,T,H,V] and the final state [B,H,K,V], both fp32 (o scaled by the drift)."""
    if initial_state is None or initial_state.dtype != torch.float32:
        raise ValueError("the stand-in, like fla, takes the state in fp32")
    q, k, v, g = (t.float() for t in (q, k, v, g))
    S, out = initial_state, []
    for t in range(q.shape[1]):
        kv = k[:, t, :, :, None] * v[:, t, :, None, :]
        if u is not None:  # rwkv6: the bonus reads the current token before the update
            out.append(scale * torch.einsum("bhk,bhkv->bhv", q[:, t],
                                            S + u.float()[None, :, :, None] * kv))
            S = torch.exp(g[:, t])[..., None] * S + kv
        else:
            S = torch.exp(g[:, t])[..., None] * S + kv
            out.append(scale * torch.einsum("bhk,bhkv->bhv", q[:, t], S))
    o = torch.stack(out, dim=1)
    if DRIFT["on"]:
        o = o * (1 + 1e-3 * DRIFT["calls"])
        DRIFT["calls"] += 1
    return o, (S if output_final_state else None)


def gla_kernel(q, k, v, g=None, gk=None, scale=None, initial_state=None,
               output_final_state=False):
    o, ht = recurrence(q, k, v, g if g is not None else gk, None, scale, initial_state,
                       output_final_state)
    return o.to(q.dtype), ht


def rwkv6_kernel(r, k, v, w, u, scale=None, initial_state=None, output_final_state=False):
    o, ht = recurrence(r, k, v, w, u, scale, initial_state, output_final_state)
    return o.to(r.dtype), ht


def install():
    fla = types.ModuleType("fla")
    fla.__version__ = "stand-in"
    ops, gla, rwkv6 = (types.ModuleType(n) for n in ("fla.ops", "fla.ops.gla", "fla.ops.rwkv6"))
    gla.chunk_gla = gla.fused_recurrent_gla = gla_kernel
    rwkv6.chunk_rwkv6 = rwkv6.fused_recurrent_rwkv6 = rwkv6_kernel
    fla.ops, ops.gla, ops.rwkv6 = ops, gla, rwkv6
    triton = types.ModuleType("triton")
    triton.__version__ = "stand-in"
    sys.modules.update({"fla": fla, "fla.ops": ops, "fla.ops.gla": gla,
                        "fla.ops.rwkv6": rwkv6, "triton": triton})


if __name__ == "__main__":
    if sys.argv[1:2] == ["--drift"]:
        DRIFT["on"] = True
        del sys.argv[1]
    install()
    import bench_policy
    import fla_peers
    fla_peers.Place = lambda device: bench_policy.Place("cpu")  # fla_peers.py asks for cuda
    sys.argv = ["fla_peers.py"] + sys.argv[1:]
    sys.exit(fla_peers.main())
