#!/usr/bin/env python3
"""The scaling table of scripts/gpu_ring_scaling.sh: for each shape and mode, the one-GPU
time, each layout's time across N GPUs, speed-up (one GPU / N GPUs), efficiency
(speed-up / N) and the communication hidden (backend_report, forward and backward).
usage: ring_scaling_summary.py OUT_DIR N"""
import json
import os
import sys


def rows(path):
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        data = json.load(f)
    return {(r["B"], r["T"], r["mode"]): r for r in data.get("benchmarks", [])
            if r.get("status", "ok") == "ok" and r.get("causal", True)}


def hidden(row):
    report = row.get("backend_report") or {}
    parts = [f'{report[call]["comm_hidden_fraction"]:.2f}' for call in ("forward", "backward") if call in report]
    return " / ".join(parts) or "—"


def main(out, n):
    one = rows(os.path.join(out, "one_gpu.json"))
    layouts = {name: rows(os.path.join(out, f"{n}gpu_{name}.json")) for name in ("zigzag", "ring")}
    print(f"| shape | mode | 1 GPU ms | layout | {n} GPUs ms | speed-up | efficiency | hidden comm (fwd / bwd) |")
    print("|---|---|---|---|---|---|---|---|")
    for key in sorted(one):
        b, t, mode = key
        base = one[key]["median_ms"]
        for name, found in layouts.items():
            if key not in found:
                print(f"| B{b} T{t} | {mode} | {base:.3f} | {name} | — | — | — | — |")
                continue
            ms = found[key]["median_ms"]
            speedup = base / ms
            print(f"| B{b} T{t} | {mode} | {base:.3f} | {name} | {ms:.3f} | {speedup:.2f}× | "
                  f"{100 * speedup / n:.0f}% | {hidden(found[key])} |")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]))
