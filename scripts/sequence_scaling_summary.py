#!/usr/bin/env python3
"""The tables of scripts/gpu_sequence_scaling.sh: strong scaling (one GPU against N, and
fla's chunk_gla on one GPU where it ran), weak scaling (B1 T(131072·W) on W GPUs against
T131072 on one), each rank's phases from the eager rows' backend_report (contribution,
exchange, carried walk, the exposed part of the exchange and the share hidden), and the
longest run. Graph-timed rows (device time) unless said.
usage: sequence_scaling_summary.py OUT_DIR N"""
import json
import os
import sys


def rows(out, name):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return json.load(f).get("benchmarks", [])


def pick(found, backend="chunked_fuse_cuda", timing="graph"):
    return {(r["T"], r["mode"], r.get("gates", "")): r for r in found
            if r["backend"] == backend and r.get("timing") == timing and r.get("status") == "ok"}


def status_of(found):
    return {(r["backend"], r["T"], r["mode"], r.get("gates", ""), r.get("timing")):
            (r.get("status"), r.get("message", "")) for r in found}


def strong(out, n):
    one_rows = rows(out, "strong_1gpu")
    one, fla = pick(one_rows), pick(one_rows, "fla.chunk_gla")
    many = pick(rows(out, f"strong_{n}gpu"))
    print(f"## Strong scaling, graph\n\n| T | gates | mode | 1 GPU ms | {n} GPUs ms | speed-up | "
          f"efficiency | fla chunk_gla 1 GPU ms | ours ÷ fla (1 GPU) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for key in sorted(set(one) | set(many)):
        t, mode, gates = key
        a, b = one.get(key), many.get(key)
        f = fla.get(key)
        cells = [f"{a['median_ms']:.3f}" if a else "—", f"{b['median_ms']:.3f}" if b else "—"]
        if a and b:
            s = a["median_ms"] / b["median_ms"]
            cells += [f"{s:.2f}×", f"{100 * s / n:.1f} %"]
        else:
            cells += ["—", "—"]
        cells += [f"{f['median_ms']:.3f}" if f else "—",
                  f"{a['median_ms'] / f['median_ms']:.2f}" if a and f else "—"]
        print(f"| {t} | {gates} | {mode} | " + " | ".join(cells) + " |")
    for (backend, t, mode, gates, timing), (st, msg) in sorted(status_of(one_rows).items()):
        if st != "ok":
            print(f"\n{backend} T{t} {mode} {gates} {timing}: {st}: {msg}")


def weak(out, n):
    base = pick(rows(out, "weak_1gpu"))
    print(f"\n## Weak scaling, graph: T(131072·W) on W GPUs against T131072 on one\n")
    print("| W | T | gates | mode | 1 GPU ms (T131072) | W GPUs ms | efficiency |")
    print("|---:|---:|---|---|---:|---:|---:|")
    w = 2
    while w <= n:
        name = f"weak_{w}gpu" if w < n else f"strong_{n}gpu"
        found = pick(rows(out, name))
        for (t, mode, gates), r in sorted(found.items()):
            if t != 131072 * w:
                continue
            b = base.get((131072, mode, gates))
            eff = f"{100 * b['median_ms'] / r['median_ms']:.1f} %" if b else "—"
            print(f"| {w} | {t} | {gates} | {mode} | "
                  f"{b['median_ms']:.3f} | {r['median_ms']:.3f} | {eff} |" if b else
                  f"| {w} | {t} | {gates} | {mode} | — | {r['median_ms']:.3f} | — |")
        w *= 2


def phases(out, n):
    eager = pick(rows(out, f"strong_{n}gpu"), timing="eager")
    print(f"\n## Each rank's phases, eager, {n} GPUs (ms; fwdbwd: its backward call's; exposed: "
          "the time the rank's stream waited for an exchange)\n")
    print("| T | gates | mode | call ms | rank | contribution | exchange | carried walk | "
          "exchange ÷ call | exposed | hidden |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (t, mode, gates), r in sorted(eager.items()):
        rep = r.get("backend_report") or {}
        # Reports before head groups (exposed_ms) exposed the whole exchange.
        exposed = rep.get("exposed_ms", rep.get("exchange_ms", []))
        hidden = rep.get("hidden_fraction", [0.0] * len(exposed))
        for i, (c, x, w, e, h) in enumerate(zip(rep.get("contribution_ms", []), rep.get("exchange_ms", []),
                                                rep.get("carried_ms", []), exposed, hidden)):
            print(f"| {t} | {gates} | {mode} | {r['median_ms']:.3f} | {i} | {c:.4f} | {x:.4f} | "
                  f"{w:.4f} | {100 * x / r['median_ms']:.2f} % | {e:.4f} | {100 * h:.0f} % |")


def longest(out, n):
    found = rows(out, f"longest_{n}gpu")
    if not found:
        return
    print(f"\n## Longest, {n} GPUs\n")
    for r in found:
        ms = f"{r['median_ms']:.2f} ms" if r.get("status") == "ok" else r.get("message", "")
        print(f"- B{r['B']} T{r['T']} {r['mode']} {r.get('gates', '')}: {r.get('status')}, {ms}")


def main(out, n):
    strong(out, n)
    weak(out, n)
    phases(out, n)
    longest(out, n)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]))
