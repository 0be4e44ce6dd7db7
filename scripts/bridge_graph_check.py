#!/usr/bin/env python3
"""The bridge's cost in graph mode: fla's chunk_gla timed directly in a CUDA graph, beside
glabench's graph row of the same call through the Python bridge.

The direct timing makes the bridge's call (fla's chunk_gla on [B,T,H,K] inputs of the
dtype, fp32 h0, output_final_state=True; fwdbwd adds torch.autograd.grad of q, k, v, g, h0
with do and dht), captures it with torch.cuda.graph, and replays it under the bench's
policy: an L2-sized memset before each sample, CUDA events around one replay, 10 warm-up
replays, then samples until cv ≤ 0.5 % with ≥ 10 of them, or 300, or 2 s. It does so twice:
the call alone ("direct"), and the call plus the copies of o and ht (fwdbwd: and the
gradients) into preallocated tensors ("direct_with_copies"), which is what the bridge adds
inside the graph. With --bench, the ratio of glabench's graph row to each.

usage: bridge_graph_check.py --shape B,T,H,K,V [--dtype bf16] [--gates mild] [--modes fwd,fwdbwd]
                             [--bench results.json] [--backend fla.chunk_gla] --out FILE
"""
import argparse
import json
import statistics
import sys
import time

import torch

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def gates(regime, x):
    if regime == "mild":
        return torch.nn.functional.logsigmoid(x + 2)
    if regime == "fla":
        return torch.nn.functional.logsigmoid(x)
    if regime == "strong":
        return -torch.exp(x - 0.5)
    if regime == "model":
        return torch.nn.functional.logsigmoid(x) / 16
    raise SystemExit(f"bridge_graph_check.py: gate regime {regime} is not mild, fla, strong or model")


def time_graph(graph):
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(max(l2, 1 << 20), dtype=torch.uint8, device="cuda")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(10):
        graph.replay()
    samples, t0 = [], time.monotonic()
    while True:
        flush.zero_()
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
        n = len(samples)
        if n >= 10:
            cv = statistics.pstdev(samples) / statistics.fmean(samples)
            if cv <= 0.005 or n >= 300 or time.monotonic() - t0 > 2:
                break
    return {"median_ms": statistics.median(samples), "samples": len(samples)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", required=True)
    ap.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    ap.add_argument("--gates", default="mild")
    ap.add_argument("--modes", default="fwd,fwdbwd")
    ap.add_argument("--bench")
    ap.add_argument("--backend", default="fla.chunk_gla")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    from fla.ops.gla import chunk_gla

    B, T, H, K, V = (int(s) for s in args.shape.split(","))
    dt = DTYPES[args.dtype]
    torch.manual_seed(20261127)
    n = lambda *s, std=1.0: (torch.randn(*s, device="cuda") * std)  # noqa: E731
    q, k = n(B, T, H, K, std=K ** -0.25).to(dt), n(B, T, H, K, std=K ** -0.25).to(dt)
    v, g = n(B, T, H, V).to(dt), gates(args.gates, n(B, T, H, K)).to(dt)
    h0, do, dht = n(B, H, K, V).to(dt), n(B, T, H, V).to(dt), n(B, H, K, V).to(dt)
    o_out, ht_out = torch.empty_like(v), torch.empty_like(h0)
    grads_out = [torch.empty_like(t) for t in (q, k, v, g, h0)]
    scale = K ** -0.5
    results = {"shape": args.shape, "dtype": args.dtype, "gates": args.gates,
               "device": torch.cuda.get_device_name(0), "torch": torch.__version__}
    import fla
    results["fla"] = getattr(fla, "__version__", "unknown")

    def call(mode, copies):
        if mode == "fwd":
            with torch.no_grad():
                o, ht = chunk_gla(q, k, v, g, scale=scale, initial_state=h0.float(),
                                  output_final_state=True)
                if copies:
                    o_out.copy_(o)
                    ht_out.copy_(ht)
            return
        leaves = [t.detach().requires_grad_() for t in (q, k, v, g, h0)]
        with torch.enable_grad():
            o, ht = chunk_gla(*leaves[:4], scale=scale, initial_state=leaves[4].float(),
                              output_final_state=True)
        if copies:
            with torch.no_grad():
                o_out.copy_(o)
                ht_out.copy_(ht)
        got = torch.autograd.grad([o, ht], leaves, [do, dht.float()])
        if copies:
            with torch.no_grad():
                for dst, src in zip(grads_out, got):
                    dst.copy_(src)

    for mode in args.modes.split(","):
        for copies in (False, True):
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):  # Triton compiles and autotunes here
                    call(mode, copies)
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                call(mode, copies)
            key = f"{mode}/{'direct_with_copies' if copies else 'direct'}"
            results[key] = time_graph(graph)
            del graph

    if args.bench:
        doc = json.load(open(args.bench))
        rows = doc.get("benchmarks") or doc.get("results") or []
        for mode in args.modes.split(","):
            match = [r for r in rows if r.get("backend") == args.backend and
                     r.get("mode") == mode and r.get("timing") == "graph" and
                     r.get("dtype") == args.dtype and r.get("gates", "mild") == args.gates and
                     r.get("status") == "ok" and
                     [r.get(x) for x in "BTHKV"] == [B, T, H, K, V]]
            if not match:
                results[f"{mode}/bridge"] = None
                continue
            bridge = match[0]["median_ms"]
            results[f"{mode}/bridge"] = {"median_ms": bridge, "row": match[0].get("name")}
            for key in ("direct", "direct_with_copies"):
                results[f"{mode}/bridge_over_{key}"] = bridge / results[f"{mode}/{key}"]["median_ms"]
    json.dump(results, open(args.out, "w"), indent=1)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    sys.exit(main())
