#!/usr/bin/env python3
"""Plots for `glabench report`: reads glabench bench results JSON files (already
validated by glabench) and draws, into --out:

  time_vs_t.png      median time against T, log-log, one panel per op and mode: a line
                     per backend, dtype and (B, H, K, V) that has several T; drawn only
                     where some backend has (a lone T would be an isolated dot)
  time_by_shape.png  median time per shape as grouped bars, one panel per op and mode:
                     every shape where some backend has a single T at its (B, H, K, V)
                     (a one-shape run, the fla shape set), with every backend timed there
  speedup.png        speed-up of each backend over --baseline, per configuration
  peak_fraction.png  achieved fraction of the measured copy bandwidth and GEMM rate
  accuracy.png       worst rel_l2 of the quick verify per backend and dtype, a marker per
                     op (filled fwd, hollow fwdbwd), with the pass threshold

and plots.json, which names each plot drawn or says why it was not (no data), and
what it holds ("content": the lines, bar groups or points drawn).
"""
import argparse
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

EXACT_FLOOR = 1e-17  # where rel_l2 = 0 is drawn on the log axis
MARKERS = {"fp64": "s", "fp32": "o", "bf16": "^", "fp16": "v"}
STYLES = {"fp64": ":", "fp32": "-", "bf16": "--", "fp16": "-."}
HATCHES = {"fp64": "..", "fp32": "", "bf16": "//", "fp16": "xx"}
OP_MARKERS = {"gla": "o", "rwkv6": "s", "softmax_attn": "^"}
DTYPE_ORDER = {"fp64": 0, "fp32": 1, "fp16": 2, "bf16": 3}


def load_rows(paths):
    """Every row of every file; a configuration in several files is kept once (the
    first file's), so overlapping shape sets draw no duplicate points."""
    rows, seen = [], set()
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        device = data["context"].get("device", "?")
        for r in data["benchmarks"]:
            if r["name"] in seen:
                continue
            seen.add(r["name"])
            r = dict(r)
            r["device"] = device
            # A backend given several devices (--devices) is another series than the
            # same backend on one: its rows are named /xN and drawn as "backend ×N".
            if len(r.get("devices", [0])) > 1:
                r["backend"] = f"{r['backend']} ×{len(r['devices'])}"
            # softmax_attn without the causal mask (bench --mask full; "causal" absent in
            # older files: causal) is another configuration: its rows are named /full and
            # drawn as op "softmax_attn full", so no series, bar group or speed-up pairs it
            # with a causal row.
            if not r.get("causal", True):
                r["op"] = f"{r['op']} full"
            rows.append(r)
    return rows


def op_marker(op):
    """The op's marker; "softmax_attn full" has softmax_attn's."""
    return OP_MARKERS.get(op.split()[0], "D")


def shape_label(r, with_t=True):
    t = f" T{r['T']}" if with_t else ""
    d = f"D{r['K']}" if r["K"] == r["V"] else f"K{r['K']} V{r['V']}"
    return f"B{r['B']}{t} H{r['H']} {d}"


def config_label(r):
    return f"{r['op']} {r['dtype']} {r['mode']} · {shape_label(r)}"


def work_order(r):
    """Backend, op, dtype, mode, then problem size: a stable, readable row order."""
    return (r["backend"], r["op"], r["dtype"], r["mode"],
            r["B"] * r["T"] * r["H"] * r["K"] * r["V"], r["T"])


def colors_for(backends):
    cmap = plt.get_cmap("tab10")
    return {b: cmap(i % 10) for i, b in enumerate(sorted(backends))}


def t_series(ok):
    """The timed rows by (op, mode, backend, dtype, B, H, K, V), each series sorted by T."""
    series = {}
    for r in ok:
        key = (r["op"], r["mode"], r["backend"], r["dtype"], r["B"], r["H"], r["K"], r["V"])
        series.setdefault(key, []).append(r)
    for pts in series.values():
        pts.sort(key=lambda r: r["T"])
    return series


def panel_grid(n, width, height):
    ncols = min(2, n)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, axes.flat


def plot_time_vs_t(rows, out):
    ok = [r for r in rows if r["status"] == "ok"]
    if not ok:
        return None, "no timed configuration", {}
    lines = {k: pts for k, pts in t_series(ok).items() if len({r["T"] for r in pts}) >= 2}
    if not lines:
        return None, ("no backend has several T at one B, H, K, V: the times are drawn per "
                      "shape in time_by_shape.png"), {}
    panels = sorted({k[:2] for k in lines})
    colors = colors_for({k[2] for k in lines})
    fig, axes = panel_grid(len(panels), 8, 5.5)
    content = {}
    for ax, (op, mode) in zip(axes, panels):
        labelled, annotated = set(), set()
        drawn = []
        for (_, _, backend, dtype, *shape), pts in sorted(
                (k, p) for k, p in lines.items() if k[:2] == (op, mode)):
            name = f"{backend} {dtype}"
            ax.plot([r["T"] for r in pts], [r["median_ms"] for r in pts],
                    linestyle=STYLES.get(dtype, "-"), marker=MARKERS.get(dtype, "o"),
                    color=colors[backend], label=None if name in labelled else name)
            labelled.add(name)
            drawn.append({"backend": backend, "dtype": dtype,
                          "shape": shape_label(pts[0], with_t=False),
                          "T": [r["T"] for r in pts]})
            last = pts[-1]
            if (backend, *shape, last["T"]) in annotated:
                continue  # one label per backend and shape, not per dtype
            annotated.add((backend, *shape, last["T"]))
            # Labels at the same T are stacked so that close points stay legible.
            stack = sum(1 for a in annotated if a[-1] == last["T"]) - 1
            ax.annotate(shape_label(last, with_t=False), (last["T"], last["median_ms"]),
                        textcoords="offset points", xytext=(4, 2 - 9 * (stack % 3)),
                        fontsize=7, color=colors[backend])
        content[f"{op} {mode}"] = drawn
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("T (tokens)")
        ax.set_ylabel("median time per call (ms)")
        ax.set_title(f"{op} {mode}: time against T")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "time_vs_t.png"), dpi=120, bbox_inches="tight")
    plt.close(fig)
    return "time_vs_t.png", "", {"lines": content}


def plot_time_by_shape(rows, out):
    """Grouped bars: for each shape where some backend has one T at its (B, H, K, V), the
    median of every backend and dtype timed at that shape."""
    ok = [r for r in rows if r["status"] == "ok"]
    if not ok:
        return None, "no timed configuration", {}
    lone = {(r["op"], r["mode"], r["B"], r["T"], r["H"], r["K"], r["V"])
            for pts in t_series(ok).values() if len({r["T"] for r in pts}) < 2 for r in pts}
    if not lone:
        return None, ("every backend has several T at each B, H, K, V: the times are drawn "
                      "against T in time_vs_t.png"), {}
    groups = {}
    for r in ok:
        key = (r["op"], r["mode"], r["B"], r["T"], r["H"], r["K"], r["V"])
        if key in lone:
            groups.setdefault(key[:2], {}).setdefault(key[2:], []).append(r)
    panels = sorted(groups)
    colors = colors_for({r["backend"] for p in groups.values() for g in p.values() for r in g})
    widths = [sum(len(g) for g in groups[p].values()) * 0.32 + len(groups[p]) * 0.5 + 2.5
              for p in panels]
    if max(widths) <= 8:  # narrow panels (few shapes) side by side, two a row
        fig, axes = panel_grid(len(panels), 7.5, 4.8)
    else:
        fig, axes = plt.subplots(len(panels), 1, figsize=(max(widths), 4.8 * len(panels)),
                                 squeeze=False)
        axes = axes[:, 0]
    content = {}
    for ax, panel in zip(axes, panels):
        shapes = sorted(groups[panel], key=lambda s: (s[0] * s[1] * s[2] * s[3] * s[4], s))
        x, ticks, labelled, drawn = 0.0, [], set(), []
        values = []
        for shape in shapes:
            bars = sorted(groups[panel][shape],
                          key=lambda r: (r["backend"], DTYPE_ORDER.get(r["dtype"], 9)))
            start = x
            for r in bars:
                name = f"{r['backend']} {r['dtype']}"
                ax.bar(x, r["median_ms"], width=0.9, color=colors[r["backend"]],
                       hatch=HATCHES.get(r["dtype"], ""), edgecolor="white", linewidth=0.5,
                       label=None if name in labelled else name)
                labelled.add(name)
                ms = r["median_ms"]
                ax.text(x, ms, f" {ms:.3g}", ha="center", va="bottom", rotation=90, fontsize=7)
                values.append(ms)
                x += 1
            ticks.append(((start + x - 1) / 2, shape_label(bars[0])))
            drawn.append({"shape": shape_label(bars[0]),
                          "bars": [f"{r['backend']} {r['dtype']}" for r in bars]})
            x += 0.8  # the gap between shapes
        content[" ".join(panel)] = drawn
        ax.set_xticks([t for t, _ in ticks], [label.replace(" H", "\nH", 1) for _, label in ticks],
                      fontsize=8)
        # At least six bar widths across, so that one or two bars are not slabs.
        pad = max(0.0, (6 - (x - 0.2)) / 2)
        ax.set_xlim(-0.8 - pad, x - 1.0 + pad)
        if max(values) / min(values) > 30:
            ax.set_yscale("log")
            ax.set_ylim(min(values) / 2, max(values) * 4)
        else:
            ax.set_ylim(0, max(values) * 1.35)
        ax.set_ylabel("median time per call (ms)")
        ax.set_title(f"{panel[0]} {panel[1]}: time per shape")
        ax.grid(True, axis="y", which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(os.path.join(out, "time_by_shape.png"), dpi=120, bbox_inches="tight")
    plt.close(fig)
    return "time_by_shape.png", "", {"groups": content}


def plot_speedup(rows, out, baseline):
    ok = [r for r in rows if r["status"] == "ok"]
    base = {}
    for r in ok:
        if r["backend"] == baseline:
            base[(r["op"], r["dtype"], r["mode"], r["B"], r["T"], r["H"], r["K"], r["V"])] = r
    bars = []
    for r in ok:
        key = (r["op"], r["dtype"], r["mode"], r["B"], r["T"], r["H"], r["K"], r["V"])
        if r["backend"] != baseline and key in base:
            bars.append((config_label(r), r["backend"], base[key]["median_ms"] / r["median_ms"]))
    if not bars:
        return None, f"no configuration was timed for both {baseline} and another backend"
    bars.sort(key=lambda b: (b[1], b[0]))
    colors = colors_for({b for _, b, _ in bars})
    fig, ax = plt.subplots(figsize=(10, 1.0 + 0.38 * len(bars)))
    labels = [f"{b}: {c}" for c, b, _ in bars]
    values = [s for _, _, s in bars]
    ax.barh(range(len(bars)), values, color=[colors[b] for _, b, _ in bars])
    ax.set_yticks(range(len(bars)), labels, fontsize=8)
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    for i, v in enumerate(values):
        ax.text(v, i, f" {v:,.0f}×" if v >= 100 else f" {v:.3g}×", va="center", fontsize=8)
    ax.set_xlabel(f"speed-up over {baseline} (its time / this time, log scale)")
    ax.set_title(f"Speed-up over {baseline}")
    ax.invert_yaxis()
    ax.set_xlim(min(values + [1.0]) / 1.5, max(values + [1.0]) * 4)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "speedup.png"), dpi=120, bbox_inches="tight")
    plt.close(fig)
    return "speedup.png", "", {"bars": [f"{b}: {c}: {v:.3g}" for c, b, v in bars]}


def plot_peak_fraction(rows, out):
    panels = [(field, title) for field, title in
              (("bandwidth_fraction", "of measured copy bandwidth"),
               ("flop_fraction", "of measured cuBLAS GEMM rate"))
              if any(r["status"] == "ok" and r.get(field) is not None for r in rows)]
    ok = [r for r in rows if r["status"] == "ok" and
          any(r.get(field) is not None for field, _ in panels)]
    if not ok:
        return None, "no timed configuration has a measured peak to compare with"
    ok.sort(key=work_order)
    colors = colors_for({r["backend"] for r in ok})
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels) + 3, 1.2 + 0.34 * len(ok)),
                             sharey=True, squeeze=False)
    # CPU backends' fractions are of the host's peaks, GPU backends' of the GPU's.
    labels = [f"{r['backend']}: {config_label(r)}" + (" [of host peak]" if r.get("ran_on") == "host" else "")
              for r in ok]
    for ax, (field, title) in zip(axes[0], panels):
        values = [100 * (r.get(field) or 0) for r in ok]
        ax.barh(range(len(ok)), values, color=[colors[r["backend"]] for r in ok])
        for i, (v, r) in enumerate(zip(values, ok)):
            text = f" {v:.3g}%" if r.get(field) is not None else " n/a"
            ax.text(v, i, text, va="center", fontsize=7)
        ax.set_xlabel(f"% {title}")
        ax.set_title(f"Achieved % {title}")
        ax.set_xlim(0, max(values + [1]) * 1.3)
    axes[0][0].set_yticks(range(len(ok)), labels, fontsize=7)
    axes[0][0].invert_yaxis()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "peak_fraction.png"), dpi=120, bbox_inches="tight")
    plt.close(fig)
    return "peak_fraction.png", ""


def plot_accuracy(rows, out):
    pts, thresholds = {}, {}
    for r in rows:
        values = [c["rel_l2"] for c in r.get("checks", []) if c["rel_l2"] is not None]
        if not values:
            continue
        pts.setdefault((r["backend"], r["dtype"]), []).append(
            (max(max(values), EXACT_FLOOR), r["op"], r["mode"]))
        thresholds[r["dtype"]] = r["checks"][0]["threshold"]
    if not pts:
        return None, "no configuration was verified", {}
    keys = sorted(pts, key=lambda k: (k[0], DTYPE_ORDER.get(k[1], 9)))
    ops = sorted({op for p in pts.values() for _, op, _ in p})
    colors = colors_for({b for b, _ in keys})
    # Within a (backend, dtype) slot, one column per op and mode: fwd filled, fwdbwd hollow.
    columns = [(op, mode) for op in ops for mode in ("fwd", "fwdbwd")]
    offset = {c: -0.3 + (i + 0.5) * 0.6 / len(columns) for i, c in enumerate(columns)}
    fig, ax = plt.subplots(figsize=(max(7, 1.6 * len(keys)), 5.5))
    content = {}
    for i, key in enumerate(keys):
        for value, op, mode in pts[key]:
            color = colors[key[0]]
            ax.scatter(i + offset.get((op, mode), 0), value, marker=op_marker(op), s=34,
                       facecolors=color if mode == "fwd" else "none", edgecolors=color,
                       linewidths=1.2)
            content.setdefault(f"{key[0]} {key[1]}", []).append(f"{op} {mode}")
        ax.hlines(thresholds[key[1]], i - 0.38, i + 0.38, color="red", linewidth=1)
    for op in ops:
        ax.scatter([], [], color="gray", marker=op_marker(op), label=op)
    ax.scatter([], [], facecolors="gray", edgecolors="gray", marker="o",
               label="filled: fwd (worst of o, ht, lse)")
    ax.scatter([], [], facecolors="none", edgecolors="gray", marker="o",
               label="hollow: fwdbwd (backends: and the gradients)")
    ax.hlines([], 0, 0, color="red", label="pass threshold for the dtype")
    ax.set_xticks(range(len(keys)), [f"{b}\n{d}" for b, d in keys], fontsize=8)
    ax.set_yscale("log")
    if any(v <= EXACT_FLOOR for p in pts.values() for v, _, _ in p):
        ax.axhline(EXACT_FLOOR, color="gray", linewidth=0.6, linestyle=":")
        ax.text(len(keys) - 0.5, EXACT_FLOOR, "exact (rel_l2 = 0) ", ha="right", va="bottom",
                fontsize=7, color="gray")
    ax.set_xlim(-0.6, len(keys) - 0.4)
    ax.set_ylabel("rel_l2 against fp64 on the same rounded inputs")
    ax.set_title("Accuracy in the bench's quick verify (sampled heads)")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14),
              ncol=min(3, len(ops) + 3))
    fig.tight_layout()
    fig.savefig(os.path.join(out, "accuracy.png"), dpi=120, bbox_inches="tight")
    plt.close(fig)
    return "accuracy.png", "", {"points": content, "markers": {op: op_marker(op)
                                                               for op in ops}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--baseline", required=True)
    args = ap.parse_args()
    rows = load_rows(args.results)
    os.makedirs(args.out, exist_ok=True)
    manifest = {}
    for name, draw in (("time_vs_t", lambda: plot_time_vs_t(rows, args.out)),
                       ("time_by_shape", lambda: plot_time_by_shape(rows, args.out)),
                       ("speedup", lambda: plot_speedup(rows, args.out, args.baseline)),
                       ("peak_fraction", lambda: plot_peak_fraction(rows, args.out)),
                       ("accuracy", lambda: plot_accuracy(rows, args.out))):
        file, reason, *content = draw()
        manifest[name] = {"file": file, "reason": reason}
        if content and content[0]:
            manifest[name]["content"] = content[0]
    with open(os.path.join(args.out, "plots.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
