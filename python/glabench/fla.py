"""fla's kernels (the fla-core package) as glabench backends:

    glabench --python fla.chunk_gla=glabench.fla:chunk_gla verify ...

chunk_gla, fused_recurrent_gla, chunk_rwkv6 and fused_recurrent_rwkv6, called as fla's
users call them (layout [B,T,H,K], log-space gates, scale, initial_state, and
output_final_state=True). fla requires an fp32 initial_state: the bridge converts h0
(state_dtype), and fla's fp32 final state is rounded into glabench's ht. Their backward is
fla's own, through torch autograd. fp16 is declared because fla offers it; glabench's
verify runs it only where the harness has fp16 fixtures' thresholds."""
from __future__ import annotations

import importlib

from .kernel import kernel

try:
    _version = "fla-core " + importlib.metadata.version("fla-core")
except Exception:  # noqa: BLE001 — not installed: the import below says so when called
    _version = "fla-core (not installed)"

FLA = dict(dtypes=("float32", "bfloat16", "float16"), device="cuda", state_dtype="float32",
           version=_version)


@kernel(op="gla", **FLA)
def chunk_gla(q, k, v, g, *, scale, initial_state, output_final_state):
    from fla.ops.gla import chunk_gla as fla_chunk_gla
    return fla_chunk_gla(q, k, v, g, scale=scale, initial_state=initial_state,
                         output_final_state=output_final_state)


@kernel(op="gla", **FLA)
def fused_recurrent_gla(q, k, v, g, *, scale, initial_state, output_final_state):
    from fla.ops.gla import fused_recurrent_gla as fla_fused_recurrent_gla
    return fla_fused_recurrent_gla(q, k, v, gk=g, scale=scale, initial_state=initial_state,
                                   output_final_state=output_final_state)


@kernel(op="rwkv6", **FLA)
def chunk_rwkv6(r, k, v, w, u, *, scale, initial_state, output_final_state):
    from fla.ops.rwkv6 import chunk_rwkv6 as fla_chunk_rwkv6
    return fla_chunk_rwkv6(r, k, v, w, u, scale=scale, initial_state=initial_state,
                           output_final_state=output_final_state)


@kernel(op="rwkv6", **FLA)
def fused_recurrent_rwkv6(r, k, v, w, u, *, scale, initial_state, output_final_state):
    from fla.ops.rwkv6 import fused_recurrent_rwkv6 as fla_fused_recurrent_rwkv6
    return fla_fused_recurrent_rwkv6(r, k, v, w, u, scale=scale, initial_state=initial_state,
                                     output_final_state=output_final_state)
