#!/usr/bin/env python3
"""Times the public kernels people use today ("peers") beside glabench's backends.

fla (flash-linear-attention, the fla-core package): chunk_gla, fused_recurrent_gla,
chunk_rwkv6, fused_recurrent_rwkv6. Each is timed under `glabench bench`'s policy and
written as rows of glabench's results schema, as backend `fla.<kernel>` with
"peer": true, so `glabench compare` and `glabench report` read them as ordinary rows.

The policy, as harness/src/bench_device.cpp and stopping_criterion.cpp apply it:
- inputs from the bench's distribution: q, k ~ N(0, K^-1/2), v ~ N(0, 1),
  g (rwkv6: w) = log σ(x), x ~ N(2, 1), u ~ N(0, 0.25), h0, do, dht ~ N(0, 1), rounded
  to the dtype once (h0 and dht then held as fp32, fla's state type); scale = K^-1/2;
  h0 given and ht returned;
- one untimed call (Triton compiles and autotunes there), then 3 warm-up calls;
- per sample: a memset of an L2-sized buffer, then the call between two CUDA events
  on the current stream (fwdbwd: the forward and autograd's backward with do and dht);
- stop at a cv (stddev / mean) ≤ 0.5 % with ≥ 10 samples, else at 500 samples, else
  after 1 s with ≥ 5;
- a quick verify of o against an fp64 recurrence on the same rounded inputs, over the
  first --verify-tokens tokens (o is causal, so its prefix needs only those tokens), at
  glabench's thresholds (fp32 1e-5, bf16 1e-2). A peer above the threshold keeps its
  time; its check says passed: false.

usage: fla_peers.py --out FILE [--kernels fla.chunk_gla,...] [--shapes B,T,H,K,V ...]
                    [--dtypes bf16,fp32] [--modes fwd,fwdbwd]
"""
import argparse
import datetime
import json
import math
import os
import sys
import time

import torch

THRESHOLD = {"fp32": 1e-5, "bf16": 1e-2}
DTYPE = {"fp32": torch.float32, "bf16": torch.bfloat16}
BYTES = {"fp32": 4, "bf16": 2}


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


def make_inputs(op, B, T, H, K, V, seed):
    """fp64 inputs of the bench's distribution (see the module docstring)."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    n = lambda *shape, std=1.0: torch.randn(*shape, generator=gen, device="cuda",
                                            dtype=torch.float64) * std
    x = {"q": n(B, T, H, K, std=K ** -0.25), "k": n(B, T, H, K, std=K ** -0.25),
         "v": n(B, T, H, V), "g": torch.nn.functional.logsigmoid(n(B, T, H, K) + 2.0),
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


def essential_cost(op, B, T, H, K, V, dtype_bytes, backward):
    """Bytes and flops as glabench's op_cost.cpp counts them (h0 given)."""
    BTH = B * T * H
    qk, v, state = BTH * K, BTH * V, B * H * K * V
    fwd_in, fwd_out = 2 * qk + v + qk + state, v + state
    bwd_in, bwd_out = 2 * qk + 2 * v + qk + state + state, 2 * qk + v + qk + state
    if op == "rwkv6":
        fwd_in += H * K
        bwd_in += H * K
        bwd_out += H * K
    elements = fwd_in + fwd_out + (bwd_in + bwd_out if backward else 0)
    return elements * dtype_bytes, BTH * K * V * (14.0 if backward else 5.0)


def summarize(samples):
    xs = sorted(samples)
    q = lambda p: xs[int(math.floor(p * (len(xs) - 1)))] + (p * (len(xs) - 1) - math.floor(
        p * (len(xs) - 1))) * (xs[min(int(math.floor(p * (len(xs) - 1))) + 1, len(xs) - 1)] -
                               xs[int(math.floor(p * (len(xs) - 1)))])
    mean = sum(xs) / len(xs)
    sd = math.sqrt(sum((s - mean) ** 2 for s in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return {"median_ms": q(0.5), "p20_ms": q(0.2), "p80_ms": q(0.8), "mean_ms": mean,
            "min_ms": xs[0], "max_ms": xs[-1], "stddev_ms": sd, "cv": sd / mean if mean else 0.0}


def measure_copy_gbps():
    """Device-to-device copy bandwidth as glabench's peak: 1 GiB, median of 10, read+write."""
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(11):
        start.record()
        dst.copy_(src)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    del src, dst
    return 2 * (1 << 30) / (sorted(times[1:])[5] * 1e-3) / 1e9


def time_call(call, flush):
    """Samples in ms under the bench's stopping rule; (samples, noise target met)."""
    call()  # Triton compiles and autotunes here
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples, began, fill = [], time.perf_counter(), 0
    while True:
        fill = (fill + 1) % 256
        flush.fill_(fill)
        start.record()
        call()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
        n, elapsed = len(samples), time.perf_counter() - began
        cv = summarize(samples)["cv"] if n >= 2 else float("inf")
        if n >= 10 and cv <= 0.005:
            return samples, True
        if n >= 500 or (elapsed >= 1.0 and n >= 5):
            return samples, False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--kernels", default="fla.chunk_gla,fla.fused_recurrent_gla,"
                                          "fla.chunk_rwkv6,fla.fused_recurrent_rwkv6")
    ap.add_argument("--shapes", nargs="+", default=["4,1024,4,100,100", "4,2048,16,128,128",
                                                      "2,16384,16,128,128"])
    ap.add_argument("--dtypes", default="bf16,fp32")
    ap.add_argument("--modes", default="fwd,fwdbwd")
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--verify-tokens", type=int, default=512)
    args = ap.parse_args()

    import fla
    import triton
    props = torch.cuda.get_device_properties(0)
    flush = torch.empty(max(getattr(props, "L2_cache_size", 1 << 20), 1 << 20),
                        dtype=torch.uint8, device="cuda")
    context = {"glabench_results": "bench", "schema_version": 1, "peers": True,
               "device": torch.cuda.get_device_name(0), "sm_count": props.multi_processor_count,
               "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "fla_version": getattr(fla, "__version__", "unknown"),
               "torch_version": torch.__version__, "triton_version": triton.__version__,
               "cuda_runtime_version": torch.version.cuda, "backend_environment": {},
               "bench_options": {"hot": False, "warmup": 3, "min_reps": 10, "max_reps": 500,
                                 "noise_target": 0.005, "time_cap_s": 1.0, "seed": args.seed,
                                 "verify_tokens": args.verify_tokens}}
    copy_gbps = measure_copy_gbps()
    context["peaks"] = {"cuda": {"copy_gbps": copy_gbps, "gemm_tflops": {},
                                 "notes": "copy: torch device-to-device copy of 1 GiB, median of "
                                          "10, read+write bytes; no GEMM peak measured"}}
    rows = []

    def write():  # after every row, by one rename: a run cut short keeps what it timed
        with open(args.out + ".tmp", "w") as f:
            json.dump({"context": context, "benchmarks": rows}, f, indent=1)
        os.replace(args.out + ".tmp", args.out)

    for kernel in args.kernels.split(","):
        op, fn = peer_fn(kernel)
        for si, shape in enumerate(args.shapes):
            B, T, H, K, V = (int(s) for s in shape.split(","))
            base = make_inputs(op, B, T, H, K, V, args.seed + si)
            scale = K ** -0.5
            tokens = min(T, args.verify_tokens)
            for dname in args.dtypes.split(","):
                rounded = {n: t.to(DTYPE[dname]) for n, t in base.items()}
                # fla keeps states in fp32 (chunk_gla requires it): h0 and dht carry the
                # dtype's rounded values, as glabench's do, held as fp32.
                for n in ("h0", "dht"):
                    rounded[n] = rounded[n].float()
                ref = reference_o(op, rounded, scale, tokens)
                for mode in args.modes.split(","):
                    backward = mode == "fwdbwd"
                    x = {n: t.clone().requires_grad_(backward and n not in ("do", "dht"))
                         for n, t in rounded.items()}
                    x["scale"] = scale
                    if backward:
                        def call():
                            o, ht = fn(x)
                            torch.autograd.backward([o, ht], [x["do"], x["dht"]])
                    else:
                        def call():
                            with torch.no_grad():
                                fn(x)
                    with torch.no_grad():
                        o, _ = fn(x)
                    err = (torch.linalg.vector_norm(o[:, :tokens].double() - ref) /
                           torch.linalg.vector_norm(ref)).item()
                    samples, met = time_call(call, flush)
                    stats = summarize(samples)
                    nbytes, flops = essential_cost(op, B, T, H, K, V, BYTES[dname], backward)
                    name = f"{kernel}/{op}/{dname}/{mode}/B{B}_T{T}_H{H}_K{K}_V{V}"
                    row = {"name": name, "run_name": name, "run_type": "iteration",
                           "backend": kernel, "peer": True, "op": op, "dtype": dname,
                           "mode": mode, "B": B, "T": T, "H": H, "K": K, "V": V, "hot": False,
                           "status": "ok", "ran_on": "cuda", "samples_ms": samples,
                           "iterations": len(samples), "repetitions": len(samples),
                           "repetition_index": 0, "threads": 1, "time_unit": "ms",
                           "real_time": stats["median_ms"], "cpu_time": stats["median_ms"],
                           "noise_target_met": met, "bytes": nbytes, "flops": flops,
                           "gbps": nbytes / stats["median_ms"] / 1e6,
                           "tflops": flops / stats["median_ms"] / 1e9,
                           "bandwidth_fraction": nbytes / stats["median_ms"] / 1e6 / copy_gbps,
                           "flop_fraction": None,
                           "message": "" if err <= THRESHOLD[dname] else
                           f"o rel_l2 {err:.3g} over glabench's {dname} threshold",
                           "checks": [{"tensor": "o", "rel_l2": err, "max_abs": None,
                                       "threshold": THRESHOLD[dname],
                                       "passed": err <= THRESHOLD[dname]}]}
                    row.update(stats)
                    rows.append(row)
                    write()
                    print(f"{name:60s} {stats['median_ms']:9.4f} ms  cv {stats['cv']:.4f}  "
                          f"n {len(samples):3d}  o rel_l2 {err:.2e}", flush=True)
                    del x
                    torch.cuda.empty_cache()
    write()


if __name__ == "__main__":
    sys.exit(main())
