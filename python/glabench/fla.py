"""fla's kernels (the fla-core package) as glabench backends:

    glabench --python fla.chunk_gla=glabench.fla:chunk_gla verify ...

chunk_gla, fused_recurrent_gla, chunk_rwkv6 and fused_recurrent_rwkv6, called as fla's
users call them (layout [B,T,H,K], log-space gates, scale, initial_state, and
output_final_state=True), packed batches too (B 1 and cu_seqlens, the int32 offsets
glabench gives, as fla takes them). fla keeps its states in fp32: state_dtype="float32"
has glabench hand over h0 and dht, and take ht and dh0, in fp32 at bf16 and fp16 (ABI
1.5's fp32 states), so nothing is converted. Their backward is fla's own, through torch
autograd. fp16 is declared because fla offers it; glabench's
verify runs it only where the harness has fp16 fixtures' thresholds.

GLABENCH_FLA_AUTOTUNE=one gives each of fla's autotuned Triton kernels one configuration
instead of its list (the one with the fewest pipeline stages, then the smallest tiles, then
the warp count nearest 4), so a kernel compiles once per head size and dtype instead of
48 times. It is for verification over many fixture shapes, which fla's autotuning makes an
hour's work: a configuration changes tiling and summation order, not what is computed.
Never time with it; unset (or "on"), fla autotunes as its users run it."""
from __future__ import annotations

import importlib
import os

from .kernel import kernel

try:
    _version = "fla-core " + importlib.metadata.version("fla-core")
except Exception:  # noqa: BLE001 — not installed: the import below says so when called
    _version = "fla-core (not installed)"

def _smallest_config(configs):
    """The configuration that needs least: fewest stages, smallest tiles, warps nearest 4."""
    def need(c):
        tiles = 1
        for v in c.kwargs.values():
            if isinstance(v, int) and not isinstance(v, bool):
                tiles *= max(v, 1)
        return (c.num_stages, tiles, abs(c.num_warps - 4))
    return min(configs, key=need)


def _autotune_one_config():
    """GLABENCH_FLA_AUTOTUNE=one: every Triton autotuner (fla's own subclass included) runs
    the smallest of the configurations left after its own pruning, without benchmarking."""
    from triton.runtime.autotuner import Autotuner
    if getattr(Autotuner, "_glabench_one_config", False):
        return
    prune = Autotuner.prune_configs

    def prune_to_one(self, kwargs):
        configs = prune(self, kwargs)
        return [_smallest_config(configs)] if len(configs) > 1 else configs

    Autotuner.prune_configs = prune_to_one
    Autotuner._glabench_one_config = True


_AUTOTUNE = os.environ.get("GLABENCH_FLA_AUTOTUNE", "on")
if _AUTOTUNE == "one":
    _autotune_one_config()
elif _AUTOTUNE != "on":
    raise ValueError(f"GLABENCH_FLA_AUTOTUNE={_AUTOTUNE!r}: expected 'on' or 'one'")

if _AUTOTUNE == "one":
    _version += ", one autotune configuration per kernel"

FLA = dict(dtypes=("float32", "bfloat16", "float16"), device="cuda", state_dtype="float32",
           varlen=True, version=_version)


@kernel(op="gla", **FLA)
def chunk_gla(q, k, v, g, *, scale, initial_state, output_final_state, cu_seqlens=None):
    from fla.ops.gla import chunk_gla as fla_chunk_gla
    return fla_chunk_gla(q, k, v, g, scale=scale, initial_state=initial_state,
                         output_final_state=output_final_state, cu_seqlens=cu_seqlens)


@kernel(op="gla", **FLA)
def fused_recurrent_gla(q, k, v, g, *, scale, initial_state, output_final_state,
                        cu_seqlens=None):
    from fla.ops.gla import fused_recurrent_gla as fla_fused_recurrent_gla
    return fla_fused_recurrent_gla(q, k, v, gk=g, scale=scale, initial_state=initial_state,
                                   output_final_state=output_final_state, cu_seqlens=cu_seqlens)


@kernel(op="rwkv6", **FLA)
def chunk_rwkv6(r, k, v, w, u, *, scale, initial_state, output_final_state, cu_seqlens=None):
    from fla.ops.rwkv6 import chunk_rwkv6 as fla_chunk_rwkv6
    return fla_chunk_rwkv6(r, k, v, w, u, scale=scale, initial_state=initial_state,
                           output_final_state=output_final_state, cu_seqlens=cu_seqlens)


@kernel(op="rwkv6", **FLA)
def fused_recurrent_rwkv6(r, k, v, w, u, *, scale, initial_state, output_final_state,
                          cu_seqlens=None):
    from fla.ops.rwkv6 import fused_recurrent_rwkv6 as fla_fused_recurrent_rwkv6
    return fla_fused_recurrent_rwkv6(r, k, v, w, u, scale=scale, initial_state=initial_state,
                                     output_final_state=output_final_state,
                                     cu_seqlens=cu_seqlens)
