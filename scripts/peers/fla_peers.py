#!/usr/bin/env python3
"""Times the public kernels people use today ("peers") beside glabench's backends.

fla (flash-linear-attention, the fla-core package): chunk_gla, fused_recurrent_gla,
chunk_rwkv6, fused_recurrent_rwkv6. Each is timed under `glabench bench`'s policy and
written as rows of glabench's results schema, as backend `fla.<kernel>` with
"peer": true, so `glabench compare` and `glabench report` read them as ordinary rows.

The policy, as harness/src/bench_device.cpp and stopping_criterion.cpp apply it (the
gate regimes, timing loops, flush, stop rule, timed-output check, cost, row names and
rows are bench_policy.py's, shared with sdpa_peers.py):
- inputs from the bench's distribution: q, k ~ N(0, K^-1/2), v ~ N(0, 1), g (rwkv6: w)
  from each gate regime of --gates (model, mild, fla, strong, cliff; default mild:
  log σ(x), x ~ N(2, 1)), u ~ N(0, 0.25), h0, do, dht ~ N(0, 1), rounded to the dtype
  once (h0 and dht then held as fp32, fla's state type); scale = K^-1/2; h0 given and
  ht returned. Every regime draws the same q, k, v, u, h0, do, dht;
- one untimed call (Triton compiles and autotunes there), then 3 warm-up calls;
- per sample: a memset of an L2-sized buffer, then, between two CUDA events on the
  current stream, the call (--timing eager; fwdbwd: the forward and autograd's backward
  with do and dht) or a replay of it captured in a CUDA graph (--timing graph; fwdbwd:
  the forward and torch.autograd.grad of q, k, v, g, h0 (rwkv6: and u) with do and dht);
- stop at a cv (stddev / mean) ≤ 0.5 % with ≥ 10 samples, else at 500 samples, else
  after 1 s with ≥ 5;
- a quick verify of o against an fp64 recurrence on the same rounded inputs, over the
  first --verify-tokens tokens (o is causal, so its prefix needs only those tokens), at
  glabench's thresholds (fp32 1e-5, bf16 1e-2). A peer above the threshold keeps its
  time; its check says passed: false;
- o of the last timed call against the verify's: equal bit for bit, or within the
  threshold, else the row fails. A call that cannot be captured gives a skipped row.
Rows are named as glabench names them, ending in /gates-<regime>, then /graph for graph
timing, and record "gates", "timing", "timed_outputs_identical" and
"timed_outputs_rel_l2", as glabench's rows do.

usage: fla_peers.py --out FILE [--kernels fla.chunk_gla,...] [--shapes B,T,H,K,V ...]
                    [--dtypes bf16,fp32] [--modes fwd,fwdbwd] [--gates REGIME ...]
                    [--timing eager|graph ...] [--seed N] [--verify-tokens N]
  --gates and --timing may be repeated or take a comma-separated list; --gates all is
  model, mild, fla, strong, cliff.
"""
import argparse
import dataclasses
import sys

import torch

from bench_policy import (DEFAULT_GATES, DTYPE, GATE_REGIMES, TIMINGS, Config, Place,
                          ResultsFile, add_timing_option, check, describe, gates, measure_peaks,
                          names_option, normals, rel_l2, results_context)


def peer_fn(name):
    """(op, call(inputs) -> (o, ht)) of a peer kernel."""
    if name == "fla.chunk_gla":
        from fla.ops.gla import chunk_gla
        return "gla", lambda x: chunk_gla(x["q"], x["k"], x["v"], x["g"], scale=x["scale"],
                                          initial_state=x["h0"], output_final_state=True)
    if name == "fla.fused_recurrent_gla":
        from fla.ops.gla import fused_recurrent_gla
        return "gla", lambda x: fused_recurrent_gla(x["q"], x["k"], x["v"], gk=x["g"],
                                                    scale=x["scale"], initial_state=x["h0"],
                                                    output_final_state=True)
    if name == "fla.chunk_rwkv6":
        from fla.ops.rwkv6 import chunk_rwkv6
        return "rwkv6", lambda x: chunk_rwkv6(x["q"], x["k"], x["v"], x["g"], x["u"],
                                              scale=x["scale"], initial_state=x["h0"],
                                              output_final_state=True)
    if name == "fla.fused_recurrent_rwkv6":
        from fla.ops.rwkv6 import fused_recurrent_rwkv6
        return "rwkv6", lambda x: fused_recurrent_rwkv6(x["q"], x["k"], x["v"], x["g"], x["u"],
                                                        scale=x["scale"], initial_state=x["h0"],
                                                        output_final_state=True)
    raise SystemExit(f"fla_peers.py: unknown kernel '{name}'")


def make_inputs(op, B, T, H, K, V, seed, place, regime):
    """fp64 inputs of the bench's distribution, g from the gate regime (see the module
    docstring); the same seed draws the same q, k, v, h0, do, dht, u in every regime."""
    n = normals(place, seed)
    x = {"q": n(B, T, H, K, std=K ** -0.25), "k": n(B, T, H, K, std=K ** -0.25),
         "v": n(B, T, H, V), "g": gates(regime, n(B, T, H, K)),
         "h0": n(B, H, K, V), "do": n(B, T, H, V), "dht": n(B, H, K, V)}
    if op == "rwkv6":
        x["u"] = n(H, K, std=0.5)
    return x


def reference_o(op, x, scale, tokens):
    """o of the first `tokens` tokens by the fp64 recurrence (inputs already rounded)."""
    q, k, v, g = (x[n][:, :tokens].double() for n in ("q", "k", "v", "g"))
    S = x["h0"].double().clone()  # [B,H,K,V]
    out = []
    for t in range(q.shape[1]):
        kv = k[:, t, :, :, None] * v[:, t, :, None, :]
        if op == "rwkv6":
            read = S + x["u"].double()[None, :, :, None] * kv
            out.append(scale * torch.einsum("bhk,bhkv->bhv", q[:, t], read))
            S = torch.exp(g[:, t])[..., None] * S + kv
        else:
            S = torch.exp(g[:, t])[..., None] * S + kv
            out.append(scale * torch.einsum("bhk,bhkv->bhv", q[:, t], S))
    return torch.stack(out, dim=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--kernels", default="fla.chunk_gla,fla.fused_recurrent_gla,"
                                          "fla.chunk_rwkv6,fla.fused_recurrent_rwkv6")
    ap.add_argument("--shapes", nargs="+", default=["4,1024,4,100,100", "4,2048,16,128,128",
                                                      "2,16384,16,128,128"])
    ap.add_argument("--dtypes", default="bf16,fp32")
    ap.add_argument("--modes", default="fwd,fwdbwd")
    ap.add_argument("--gates", action="append",
                    help=f"gate regimes, repeated or comma-separated: {', '.join(GATE_REGIMES)} "
                         f"or all (default: {DEFAULT_GATES})")
    add_timing_option(ap)
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--verify-tokens", type=int, default=512)
    args = ap.parse_args()
    regimes = names_option(ap, args.gates, "--gates", "gate regime", GATE_REGIMES,
                           DEFAULT_GATES, everything=True)
    timings = names_option(ap, args.timing, "--timing", "timing", TIMINGS, "eager")

    import fla
    import triton
    place = Place("cuda")
    context = results_context(place, args.seed, args.verify_tokens,
                              {"fla_version": getattr(fla, "__version__", "unknown"),
                               "torch_version": torch.__version__,
                               "triton_version": triton.__version__},
                              {"gates": regimes, "timing": timings})
    results = ResultsFile(args.out, context, measure_peaks(place))

    for kernel in args.kernels.split(","):
        op, fn = peer_fn(kernel)
        for si, shape in enumerate(args.shapes):
            B, T, H, K, V = (int(s) for s in shape.split(","))
            scale = K ** -0.5
            tokens = min(T, args.verify_tokens)
            for regime in regimes:
                base = make_inputs(op, B, T, H, K, V, args.seed + si, place, regime)
                for dname in args.dtypes.split(","):
                    rounded = {n: t.to(DTYPE[dname]) for n, t in base.items()}
                    # fla keeps states in fp32 (chunk_gla requires it): h0 and dht carry the
                    # dtype's rounded values, as glabench's do, held as fp32.
                    for n in ("h0", "dht"):
                        rounded[n] = rounded[n].float()
                    ref = reference_o(op, rounded, scale, tokens)
                    for mode in args.modes.split(","):
                        config = Config(kernel, op, dname, mode, (B, T, H, K, V), gates=regime)
                        x = {n: t.clone().requires_grad_(config.backward and n not in ("do", "dht"))
                             for n, t in rounded.items()}
                        x["scale"] = scale
                        with torch.no_grad():
                            o, _ = fn(x)
                        checks = [check("o", rel_l2(o[:, :tokens], ref), dname)]
                        leaves = [t for n, t in x.items() if n not in ("do", "dht", "scale")]
                        cotangents = (x["do"], x["dht"]) if config.backward else None
                        for timing in timings:
                            row = results.add_measured(
                                place, dataclasses.replace(config, timing=timing),
                                lambda: fn(x), o, checks, leaves, cotangents)
                            print(describe(row), flush=True)
                        del x, o
                        place.empty_cache()
    results.write()


if __name__ == "__main__":
    sys.exit(main())
