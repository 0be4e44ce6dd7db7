#!/usr/bin/env python3
"""A markdown table of our backends' medians beside the peers' from glabench bench results
of one device call: per (op, mask, gates, timing, dtype, mode, shape), each backend's
median in ms and its ratio to each peer (ours / peer: below 1 is faster than the peer).
softmax_attn's mask (bench --mask, a row's "causal"; absent in older files: causal),
gla's and rwkv6's gate regime (bench --gates, "gates"; absent in older files: mild) and
graph timing (bench --timing graph, "timing"; absent in older files: eager) are shown in
the op cell, and a row is only ever paired with a peer's row of the same mask, regime
and timing.

Where a backend has rows in two or more gate regimes of one (op, timing, dtype, mode, shape),
a second table gives its spread: its fastest and slowest regime, slowest ÷ fastest, and
for each of ours its worst ratio to each peer over the regimes both ran (the figures to
quote beside the best case).

With --accuracy, a third table sets each of ours' quick-verify rel_l2 (bench's check
against fp64 before timing, per output and gradient) beside each peer's on the same key,
bold where ours is more than 0.5 % larger (closer than that is the rounding's noise):
the accuracy claim, regime by regime.

After the tables, a note for each peer whose recorded version (context.backend_builds, the
Python bridge's version string) says its ratios are not its best: one autotune
configuration per kernel (GLABENCH_FLA_AUTOTUNE=one, for verification), or, for fla or
another Triton library, Triton's autotuning not kept per shape (autotune_scope.py off),
which may time it with tiles chosen at another shape; and an fla peer whose file records
no version (older files), for which that is not known.

usage: peer_table.py RESULTS.json... [--peers NAME,...] [--label FILE=NAME ...] [--accuracy]
  One file may hold ours and the peers (glabench --python fla.chunk_gla=glabench.fla:chunk_gla
  bench --backend chunked_fuse_cuda --backend fla.chunk_gla ...), or several files may.
  --peers names the peers' backends (comma-separated or repeated; shell-style patterns;
  default 'fla.*,torch.sdpa*', and rows of older files marked "peer": true); every other
  backend is ours. --label names the rows of one file (e.g. bench_seed.json=seed mode)
  when two files hold the same backend.
"""
import argparse
import fnmatch
import json
import os
import sys

DEFAULT_PEERS = "fla.*,torch.sdpa*"


def cell(text):
    """A markdown table cell of `text`: a '|' escaped and line breaks made spaces, so that
    no name a results file holds can end a cell or a row, or forge one."""
    return " ".join(str(text).replace("\\", "\\\\").replace("|", "\\|").split())


def spread_table(regime_ours, regime_peers, peer_names):
    """The second table: each backend's fastest and slowest gate regime per group, and each
    of ours' worst ratio to each peer over the regimes both ran."""
    rows = []
    for group in sorted(set(regime_ours) | set(regime_peers)):
        op, dtype, mode, shape = group
        theirs = regime_peers.get(group, {})
        for side in (regime_ours, regime_peers):
            for name, by_gates in sorted(side.get(group, {}).items()):
                if len(by_gates) < 2:
                    continue
                fast = min(by_gates, key=by_gates.get)
                slow = max(by_gates, key=by_gates.get)
                cells = []
                for p in peer_names:
                    common = [g for g in by_gates if g in theirs.get(p, {})]
                    if side is regime_peers or not common:
                        cells.append("–")
                        continue
                    worst = max(common, key=lambda g: by_gates[g] / theirs[p][g])
                    cells.append(f"{by_gates[worst] / theirs[p][worst]:.3f} ({cell(worst)})")
                rows.append([cell(op), cell(dtype), cell(mode), " ".join(map(str, shape)),
                             cell(name), str(len(by_gates)), f"{by_gates[fast]:.4g} ({cell(fast)})",
                             f"{by_gates[slow]:.4g} ({cell(slow)})",
                             f"{by_gates[slow] / by_gates[fast]:.3f}"] + cells)
    if not rows:
        return
    print()
    print("| " + " | ".join(["op", "dtype", "mode", "B T H K V", "backend", "regimes", "fastest ms",
                             "slowest ms", "slowest ÷ fastest"] +
                            [f"worst ÷ {cell(p)}" for p in peer_names]) + " |")
    print("|" + "---|" * (9 + len(peer_names)))
    for r in rows:
        print("| " + " | ".join(r) + " |")


TENSORS = ["o", "lse", "ht", "dq", "dk", "dv", "dg", "du", "dh0"]
WORSE_BY = 1.005  # ours' rel_l2 ÷ the peer's above which the accuracy table marks it


def accuracy_table(checks_ours, checks_peers, peer_names):
    """The third table: per key, each of ours' rel_l2 per tensor beside each peer's (bold
    where ours is more than WORSE_BY of it larger)."""
    rows, tensors = [], set()
    for key in sorted(checks_ours):
        for name, mine in sorted(checks_ours[key].items()):
            for p in peer_names:
                theirs = checks_peers.get(key, {}).get(p)
                if theirs:
                    rows.append((key, name, p, mine, theirs))
                    tensors |= set(mine) & set(theirs)
    if not rows:
        return
    order = [t for t in TENSORS if t in tensors] + sorted(tensors - set(TENSORS))
    print()
    print("| " + " | ".join(["op", "dtype", "mode", "B T H K V", "backend", "peer"] +
                            [f"{cell(t)} rel_l2 (peer)" for t in order]) + " |")
    print("|" + "---|" * (6 + len(order)))
    for (op, dtype, mode, shape), name, p, mine, theirs in rows:
        cells = []
        for t in order:
            if t in mine and t in theirs:
                text = f"{mine[t]:.3g} ({theirs[t]:.3g})"
                cells.append(f"**{text}**" if mine[t] > WORSE_BY * theirs[t] else text)
            else:
                cells.append("–")
        print("| " + " | ".join([cell(op), cell(dtype), cell(mode), " ".join(map(str, shape)),
                                 cell(name), cell(p)] + cells) + " |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--peers", action="append", default=[],
                    help=f"peer backends, comma-separated, patterns allowed (default {DEFAULT_PEERS})")
    ap.add_argument("--label", action="append", default=[])
    ap.add_argument("--accuracy", action="store_true",
                    help="a table of quick-verify rel_l2, ours beside each peer's")
    args = ap.parse_args()
    labels = dict(l.split("=", 1) for l in args.label)
    patterns = [p for arg in args.peers or [DEFAULT_PEERS] for p in arg.split(",") if p]

    def is_peer(r):
        named = any(fnmatch.fnmatchcase(r["backend"], p) for p in patterns)
        return named or (not args.peers and bool(r.get("peer")))

    ours, peers, versions = {}, {}, {}
    regime_ours, regime_peers = {}, {}  # (op, dtype, mode, shape) → backend → gates → ms
    checks_ours, checks_peers = {}, {}  # key → backend → tensor → rel_l2
    for path in args.files:
        label = labels.get(os.path.basename(path))
        doc = json.load(open(path))
        builds = (doc.get("context") or {}).get("backend_builds") or {}
        for r in doc["benchmarks"]:
            if r.get("status") != "ok":
                continue
            op = r["op"]
            if op == "softmax_attn" or not r.get("causal", True):
                op += " causal" if r.get("causal", True) else " full"
            gates = r.get("gates", "mild") if op in ("gla", "rwkv6") else None
            timing = " " + r["timing"] if r.get("timing", "eager") != "eager" else ""
            shape = (r["B"], r["T"], r["H"], r["K"], r["V"])
            key = (op + (" gates-" + gates if gates else "") + timing, r["dtype"], r["mode"], shape)
            name = r["backend"] + (f" ({label})" if label else "")
            (peers if is_peer(r) else ours).setdefault(key, {})[name] = r["median_ms"]
            rel = {c["tensor"]: c["rel_l2"] for c in r.get("checks") or []
                   if isinstance(c, dict) and isinstance(c.get("tensor"), str) and
                   isinstance(c.get("rel_l2"), (int, float))}
            if rel:
                (checks_peers if is_peer(r) else checks_ours).setdefault(key, {})[name] = rel
            if gates:
                group = (op + timing, r["dtype"], r["mode"], shape)
                side = regime_peers if is_peer(r) else regime_ours
                side.setdefault(group, {}).setdefault(name, {})[gates] = r["median_ms"]
            build = builds.get(r["backend"])  # this file's record of the backend
            version = build.get("version") if isinstance(build, dict) else None
            versions.setdefault(name, set()).add(version if isinstance(version, str) else None)
    peer_names = sorted({n for v in peers.values() for n in v})
    if not peer_names:
        print(f"peer_table.py: no timed rows of a peer ({','.join(patterns)})", file=sys.stderr)
    print("| " + " | ".join(["op", "dtype", "mode", "B T H K V", "backend", "ms"] +
                             [f"÷ {cell(p)}" for p in peer_names]) + " |")
    print("|" + "---|" * (6 + len(peer_names)))
    for key in sorted(ours):
        op, dtype, mode, shape = key
        for name, ms in sorted(ours[key].items()):
            cells = []
            for p in peer_names:
                pm = peers.get(key, {}).get(p)
                cells.append(f"{ms / pm:.3f} ({pm:.4g})" if pm else "–")
            print("| " + " | ".join([cell(op), cell(dtype), cell(mode), " ".join(map(str, shape)),
                                     cell(name), f"{ms:.4g}"] + cells) + " |")
    spread_table(regime_ours, regime_peers, peer_names)
    if args.accuracy:
        accuracy_table(checks_ours, checks_peers, peer_names)
    notes = []
    for p in peer_names:
        for version in sorted(versions.get(p, ()), key=str):
            if version is None:
                if p.startswith("fla."):
                    notes.append(f"{cell(p)}: its file records no version, so not whether its "
                                 "Triton autotuning was kept per shape (a glabench before 5d6d1f5).")
            elif "one autotune configuration" in version:
                notes.append(f"{cell(p)} ran with one autotune configuration per kernel "
                             "(GLABENCH_FLA_AUTOTUNE=one): not its speed; do not quote its ratios.")
            elif (("fla-core" in version or "triton" in version.lower()) and
                  "Triton autotuning kept per shape" not in version):
                notes.append(f"{cell(p)}'s Triton autotuning was not kept per shape: its "
                             "configurations may have been chosen at another shape.")
    if notes:
        print()
        for n in notes:
            print(f"> **note:** {n}")


if __name__ == "__main__":
    main()
