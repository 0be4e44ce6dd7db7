#!/usr/bin/env python3
"""A markdown table of our backends' medians beside the peers' from results files of one
device call: per (op, mask, gates, timing, dtype, mode, shape), each backend's median in
ms and its ratio to each peer (ours / peer: below 1 is faster than the peer).
softmax_attn's mask (bench --mask, a row's "causal"; absent in older files: causal),
gla's and rwkv6's gate regime (bench --gates, "gates"; absent in older files: mild) and
graph timing (bench --timing graph, "timing"; absent in older files: eager) are shown in
the op cell, and a row is only ever paired with a peer's row of the same mask, regime
and timing.

usage: peer_table.py RESULTS.json... [--label FILE=NAME ...]
  Rows with "peer": true are peers; the others are ours. --label names the rows of one
  file (e.g. bench_seed.json=seed mode) when two files hold the same backend.
"""
import argparse
import json
import os


def cell(text):
    """A markdown table cell of `text`: a '|' escaped and line breaks made spaces, so that
    no name a results file holds can end a cell or a row, or forge one."""
    return " ".join(str(text).replace("\\", "\\\\").replace("|", "\\|").split())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--label", action="append", default=[])
    args = ap.parse_args()
    labels = dict(l.split("=", 1) for l in args.label)
    ours, peers = {}, {}
    for path in args.files:
        label = labels.get(os.path.basename(path))
        for r in json.load(open(path))["benchmarks"]:
            if r.get("status") != "ok":
                continue
            op = r["op"]
            if op == "softmax_attn" or not r.get("causal", True):
                op += " causal" if r.get("causal", True) else " full"
            if op in ("gla", "rwkv6"):
                op += " gates-" + r.get("gates", "mild")
            if r.get("timing", "eager") != "eager":
                op += " " + r["timing"]
            key = (op, r["dtype"], r["mode"], (r["B"], r["T"], r["H"], r["K"], r["V"]))
            name = r["backend"] + (f" ({label})" if label else "")
            (peers if r.get("peer") else ours).setdefault(key, {})[name] = r["median_ms"]
    peer_names = sorted({n for v in peers.values() for n in v})
    print("| op | dtype | mode | B T H K V | backend | ms | " +
          " | ".join(f"÷ {cell(p)}" for p in peer_names) + " |")
    print("|" + "---|" * (6 + len(peer_names)))
    for key in sorted(ours):
        op, dtype, mode, shape = key
        for name, ms in sorted(ours[key].items()):
            cells = []
            for p in peer_names:
                pm = peers.get(key, {}).get(p)
                cells.append(f"{ms / pm:.3f} ({pm:.4g})" if pm else "–")
            print(f"| {cell(op)} | {cell(dtype)} | {cell(mode)} | {' '.join(map(str, shape))} | "
                  f"{cell(name)} | {ms:.4g} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
