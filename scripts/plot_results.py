#!/usr/bin/env python3
"""Plots for `glabench report`: reads glabench bench results JSON files (already
validated by glabench) and draws, into --out:

  time_vs_t.png      median time against T, log-log, one panel per op and mode: a line
                     per backend, dtype, (B, H, K, V) and variant that has several T; drawn
                     only where some backend has (a lone T would be an isolated dot)
  time_by_shape.png  median time per shape as grouped bars, one panel per op and mode:
                     a group per shape and variant where some backend has a single T at
                     its (B, H, K, V) (a one-shape run, the fla shape set), with every
                     backend timed there in that variant
  speedup.png        speed-up of each backend over --baseline, per configuration: each
                     row against the baseline's row of the same variant
  peak_fraction.png  achieved fraction of the measured copy bandwidth and GEMM rate
  time_vs_regime.png median time against the gate regime (model, mild, fla, strong,
                     cliff: those present), one panel per op, dtype, mode and shape: a
                     line per backend and variant but the regime, for each timed in two
                     regimes or more there (peers dashed, CUDA-graph timings dotted);
                     at most 16 panels, plots.json names those left out
  accuracy.png       worst rel_l2 of the quick verify per backend, dtype and variant, a
                     marker per op (filled fwd, hollow fwdbwd), with the pass threshold

and plots.json, which names each plot drawn or says why it was not (no data), and
what it holds ("content": the lines, bar groups or points drawn).

A variant is the gate regime the inputs were drawn from ("gates": gla and rwkv6 rows;
absent: mild), the timing ("timing": eager, host launches included, or graph, the call
replayed from a CUDA graph; absent: eager) and --hot. Rows of different variants are
never one line, bar group or speed-up pair; labels name the variant where it is not the
default: "(gates:strong, graph)". The regime is named wherever the rows are not all mild.
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
GATED_OPS = ("gla", "rwkv6")  # the ops whose rows have a gate regime
REGIME_ORDER = ("model", "mild", "fla", "strong", "cliff")  # weakest decay first
DEFAULT_REGIME = "mild"  # a gla or rwkv6 row without "gates" (older files)
MAX_REGIME_PANELS = 16
# Peers, drawn dashed: the kernels users have today, through the Python bridge (fla.*,
# torch.sdpa.*), or rows of older results files marked "peer": true.
PEER_PREFIXES = ("fla.", "torch.sdpa")


def is_peer(r):
    return bool(r.get("peer")) or r["backend"].startswith(PEER_PREFIXES)


def load_rows(paths):
    """Every row of every file; a configuration in several files is kept once (the
    first file's), so overlapping shape sets draw no duplicate points. A configuration
    is its name less the /gates-<regime> and /graph parts, with its regime and timing
    (so an older file's row is the same configuration as a newer one's mild, eager)."""
    rows, seen = [], set()
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        device = data["context"].get("device", "?")
        for r in data["benchmarks"]:
            r = dict(r)
            gates = r.get("gates")
            r["gates"] = gates if gates else (DEFAULT_REGIME if r["op"] in GATED_OPS else None)
            r["timing"] = r.get("timing") or "eager"
            r["hot"] = bool(r.get("hot", False))
            base = "/".join(p for p in r["name"].split("/")
                            if not p.startswith("gates-") and p != "graph")
            if (base, r["gates"], r["timing"]) in seen:
                continue
            seen.add((base, r["gates"], r["timing"]))
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
    # The regime is named in labels wherever the rows are not all of the default one.
    show_regime = bool({r["gates"] for r in rows if r["gates"]} - {DEFAULT_REGIME})
    for r in rows:
        r["show_regime"] = show_regime
    return rows


def regime_rank(gates):
    """Sort key of a regime: none (softmax_attn) first, then REGIME_ORDER, then others."""
    if gates is None:
        return (-1, "")
    return (REGIME_ORDER.index(gates), "") if gates in REGIME_ORDER else (len(REGIME_ORDER), gates)


def variant_key(r, regime=True):
    """The row's variant as a sortable key: regime, timing (eager first), hot."""
    return ((regime_rank(r["gates"]) if regime else ()), r["timing"] != "eager", r["timing"],
            r["hot"])


def variant_tags(r, regime=True):
    """The variant's words for labels: the regime where named, a timing other than eager,
    hot. Empty for the default variant."""
    tags = []
    if regime and r["gates"] and r["show_regime"]:
        tags.append(f"gates:{r['gates']}")  # as the C++ tables spell it
    if r["timing"] != "eager":
        tags.append(r["timing"])
    if r["hot"]:
        tags.append("hot")
    return tags


def variant_suffix(r, regime=True):
    tags = variant_tags(r, regime)
    return f" ({', '.join(tags)})" if tags else ""


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
    """Backend, op, dtype, mode, problem size, then variant: a stable, readable row order."""
    return (r["backend"], r["op"], r["dtype"], r["mode"],
            r["B"] * r["T"] * r["H"] * r["K"] * r["V"], r["T"], variant_key(r))


def colors_for(backends):
    cmap = plt.get_cmap("tab10")
    return {b: cmap(i % 10) for i, b in enumerate(sorted(backends))}


def t_series(ok):
    """The timed rows by (op, mode, backend, variant, dtype, B, H, K, V), each series
    sorted by T."""
    series = {}
    for r in ok:
        key = (r["op"], r["mode"], r["backend"], variant_key(r), r["dtype"],
               r["B"], r["H"], r["K"], r["V"])
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
    # A color per backend and variant ("backend (graph)"), a line style per dtype.
    colors = colors_for({p[0]["backend"] + variant_suffix(p[0]) for p in lines.values()})
    fig, axes = panel_grid(len(panels), 8, 5.5)
    content = {}
    for ax, (op, mode) in zip(axes, panels):
        labelled, annotated = set(), set()
        drawn = []
        for (_, _, backend, _, dtype, *shape), pts in sorted(
                ((k, p) for k, p in lines.items() if k[:2] == (op, mode)), key=lambda kp: kp[0]):
            series = backend + variant_suffix(pts[0])
            name = f"{backend} {dtype}{variant_suffix(pts[0])}"
            color = colors[series]
            ax.plot([r["T"] for r in pts], [r["median_ms"] for r in pts],
                    linestyle=STYLES.get(dtype, "-"), marker=MARKERS.get(dtype, "o"),
                    color=color, markerfacecolor="none" if pts[0]["timing"] != "eager" else color,
                    label=None if name in labelled else name)
            labelled.add(name)
            drawn.append({"backend": backend, "dtype": dtype,
                          "shape": shape_label(pts[0], with_t=False),
                          "gates": pts[0]["gates"], "timing": pts[0]["timing"],
                          "T": [r["T"] for r in pts]})
            last = pts[-1]
            if (series, *shape, last["T"]) in annotated:
                continue  # one label per backend, variant and shape, not per dtype
            annotated.add((series, *shape, last["T"]))
            # Labels at the same T are stacked so that close points stay legible.
            stack = sum(1 for a in annotated if a[-1] == last["T"]) - 1
            ax.annotate(shape_label(last, with_t=False), (last["T"], last["median_ms"]),
                        textcoords="offset points", xytext=(4, 2 - 9 * (stack % 3)),
                        fontsize=7, color=color)
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
    """Grouped bars: for each shape and variant where some backend has one T at its
    (B, H, K, V), the median of every backend and dtype timed at that shape in that
    variant (a group per variant: regimes and timings are never one group)."""
    ok = [r for r in rows if r["status"] == "ok"]
    if not ok:
        return None, "no timed configuration", {}
    lone = {(r["op"], r["mode"], r["B"], r["T"], r["H"], r["K"], r["V"], variant_key(r))
            for pts in t_series(ok).values() if len({r["T"] for r in pts}) < 2 for r in pts}
    if not lone:
        return None, ("every backend has several T at each B, H, K, V: the times are drawn "
                      "against T in time_vs_t.png"), {}
    groups = {}
    for r in ok:
        key = (r["op"], r["mode"], r["B"], r["T"], r["H"], r["K"], r["V"], variant_key(r))
        if key in lone:
            groups.setdefault(key[:2], {}).setdefault(key[2:], []).append(r)
    panels = sorted(groups)
    colors = colors_for({r["backend"] for p in groups.values() for g in p.values() for r in g})
    # A group's tick names its variant where the run has several: a little wider then.
    tag_width = 0.35 if any(variant_tags(g[0]) for p in groups.values() for g in p.values()) else 0
    widths = [sum(len(g) for g in groups[p].values()) * 0.32 + len(groups[p]) * (0.5 + tag_width)
              + 2.5 for p in panels]
    if max(widths) <= 8:  # narrow panels (few shapes) side by side, two a row
        fig, axes = panel_grid(len(panels), 7.5, 4.8)
    else:
        fig, axes = plt.subplots(len(panels), 1, figsize=(max(widths), 4.8 * len(panels)),
                                 squeeze=False)
        axes = axes[:, 0]
    content = {}
    for ax, panel in zip(axes, panels):
        shapes = sorted(groups[panel], key=lambda s: (s[0] * s[1] * s[2] * s[3] * s[4], s))
        tagged = any(variant_tags(g[0]) for g in groups[panel].values())
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
            tick = shape_label(bars[0]).replace(" H", "\nH", 1)
            if tagged:  # the variant under the shape, where some group of the panel has one
                tick += "\n" + ("\n".join(variant_tags(bars[0])) or "default")
            ticks.append(((start + x - 1) / 2, tick))
            drawn.append({"shape": shape_label(bars[0]), "gates": bars[0]["gates"],
                          "timing": bars[0]["timing"],
                          "bars": [f"{r['backend']} {r['dtype']}" for r in bars]})
            x += 0.8  # the gap between shapes
        content[" ".join(panel)] = drawn
        ax.set_xticks([t for t, _ in ticks], [label for _, label in ticks], fontsize=8)
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
    # Each row against the baseline's row of the same configuration and variant (regime,
    # timing, hot): a CUDA-graph time is never divided into an eager one.
    base = {}
    for r in ok:
        if r["backend"] == baseline:
            base[(r["op"], r["dtype"], r["mode"], r["B"], r["T"], r["H"], r["K"], r["V"],
                  variant_key(r))] = r
    bars = []
    for r in ok:
        key = (r["op"], r["dtype"], r["mode"], r["B"], r["T"], r["H"], r["K"], r["V"],
               variant_key(r))
        if r["backend"] != baseline and key in base:
            bars.append((config_label(r) + variant_suffix(r), r["backend"],
                         base[key]["median_ms"] / r["median_ms"]))
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
    labels = [f"{r['backend']}: {config_label(r)}{variant_suffix(r)}" +
              (" [of host peak]" if r.get("ran_on") == "host" else "")
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


def plot_time_vs_regime(rows, out):
    """Median time against the gate regime: a panel per op, dtype, mode and shape, a line
    per backend and timing (and hot) timed there in two regimes or more."""
    ok = [r for r in rows if r["status"] == "ok" and r["gates"]]
    if not ok:
        return None, "no timed gla or rwkv6 configuration (the gate regime applies to those only)", {}
    present = sorted({r["gates"] for r in ok}, key=regime_rank)
    if len(present) < 2:
        return None, (f"every timed gla and rwkv6 configuration is of one gate regime "
                      f"({present[0]}): there is nothing to draw against the regime"), {}
    panels = {}
    for r in ok:
        panel = (r["op"], DTYPE_ORDER.get(r["dtype"], 9), r["dtype"], r["mode"],
                 r["B"] * r["T"] * r["H"] * r["K"] * r["V"], r["B"], r["T"], r["H"], r["K"], r["V"])
        line = (is_peer(r), r["backend"], variant_key(r, regime=False))
        panels.setdefault(panel, {}).setdefault(line, {}).setdefault(r["gates"], r)
    panels = {p: {k: v for k, v in lines.items() if len(v) >= 2} for p, lines in panels.items()}
    panels = {p: lines for p, lines in panels.items() if lines}
    if not panels:
        return None, ("no backend was timed in two gate regimes at one op, dtype, mode and "
                      "shape (and timing)"), {}
    order = sorted(panels)
    drawn_panels, left_out = order[:MAX_REGIME_PANELS], order[MAX_REGIME_PANELS:]

    def label_of(lines):
        return config_label(next(iter(next(iter(lines.values())).values())))

    colors = colors_for({k[1] for p in drawn_panels for k in panels[p]})
    n = len(drawn_panels)
    ncols = min(4, math.ceil(math.sqrt(n)))
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.6 * ncols, 4.4 * nrows + 0.6),
                             squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    content = {}
    for ax, panel in zip(axes.flat, drawn_panels):
        lines = panels[panel]
        regimes = sorted({g for pts in lines.values() for g in pts}, key=regime_rank)
        x = {g: i for i, g in enumerate(regimes)}
        drawn = []
        # Ours first, then the peers; a backend's eager line before its graph one.
        for (peer, backend, _), pts in sorted(lines.items()):
            gates = sorted(pts, key=regime_rank)
            first = pts[gates[0]]
            graph = first["timing"] != "eager"
            tags = variant_tags(first, regime=False)
            label = backend + (f" ({', '.join(['peer'] + tags if peer else tags)})"
                               if peer or tags else "")
            color = colors[backend]
            # Peers dashed, ours solid; a CUDA-graph timing dotted, with hollow markers.
            style = ("-." if graph else "--") if peer else (":" if graph else "-")
            ax.plot([x[g] for g in gates], [pts[g]["median_ms"] for g in gates],
                    linestyle=style, marker="s" if peer else "o", color=color,
                    markerfacecolor="none" if graph else color, label=label)
            drawn.append({"label": label, "backend": backend, "peer": peer,
                          "timing": first["timing"], "hot": first["hot"], "gates": gates,
                          "median_ms": [pts[g]["median_ms"] for g in gates]})
        content[label_of(lines)] = drawn
        ax.set_xticks(range(len(regimes)), regimes)
        ax.set_xlim(-0.4, len(regimes) - 0.6)
        ax.set_yscale("log")
        ax.set_xlabel("gate regime", fontsize=8)
        ax.set_ylabel("median time per call (ms)")
        ax.set_title(label_of(lines), fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    title = "Median time against the gate regime (weakest decay first, the cliff last)"
    if left_out:
        title += f" ({len(left_out)} more configurations left out: see plots.json)"
    height = 4.4 * nrows + 0.6
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / height))  # room for the suptitle
    fig.savefig(os.path.join(out, "time_vs_regime.png"), dpi=120, bbox_inches="tight")
    plt.close(fig)
    return "time_vs_regime.png", "", {"regimes": present, "lines": content,
                                      "left_out": [label_of(panels[p]) for p in left_out]}


def plot_accuracy(rows, out):
    pts, thresholds = {}, {}
    for r in rows:
        values = [c["rel_l2"] for c in r.get("checks", []) if c["rel_l2"] is not None]
        if not values:
            continue
        # A slot per backend, dtype and variant (the regime changes the numbers).
        pts.setdefault((r["backend"], r["dtype"], variant_key(r), ", ".join(variant_tags(r))),
                       []).append((max(max(values), EXACT_FLOOR), r["op"], r["mode"]))
        thresholds[r["dtype"]] = r["checks"][0]["threshold"]
    if not pts:
        return None, "no configuration was verified", {}
    keys = sorted(pts, key=lambda k: (k[0], DTYPE_ORDER.get(k[1], 9), k[2]))
    ops = sorted({op for p in pts.values() for _, op, _ in p})
    colors = colors_for({k[0] for k in keys})
    # Within a (backend, dtype) slot, one column per op and mode: fwd filled, fwdbwd hollow.
    columns = [(op, mode) for op in ops for mode in ("fwd", "fwdbwd")]
    offset = {c: -0.3 + (i + 0.5) * 0.6 / len(columns) for i, c in enumerate(columns)}
    many = len(keys) > 16  # then one rotated label a slot, so the figure stays sane
    fig, ax = plt.subplots(figsize=(max(7, (0.5 if many else 1.6) * len(keys) + (3 if many else 0)),
                                    5.5))
    content = {}
    for i, key in enumerate(keys):
        for value, op, mode in pts[key]:
            color = colors[key[0]]
            ax.scatter(i + offset.get((op, mode), 0), value, marker=op_marker(op), s=34,
                       facecolors=color if mode == "fwd" else "none", edgecolors=color,
                       linewidths=1.2)
            content.setdefault(f"{key[0]} {key[1]}" + (f" ({key[3]})" if key[3] else ""),
                               []).append(f"{op} {mode}")
        ax.hlines(thresholds[key[1]], i - 0.38, i + 0.38, color="red", linewidth=1)
    for op in ops:
        ax.scatter([], [], color="gray", marker=op_marker(op), label=op)
    ax.scatter([], [], facecolors="gray", edgecolors="gray", marker="o",
               label="filled: fwd (worst of o, ht, lse)")
    ax.scatter([], [], facecolors="none", edgecolors="gray", marker="o",
               label="hollow: fwdbwd (backends: and the gradients)")
    ax.hlines([], 0, 0, color="red", label="pass threshold for the dtype")
    if many:
        ax.set_xticks(range(len(keys)), [f"{b} {d}" + (f" ({t})" if t else "") for b, d, _, t in keys],
                      fontsize=7, rotation=90)
    else:
        ax.set_xticks(range(len(keys)), [f"{b}\n{d}" + (f"\n{t}" if t else "")
                                         for b, d, _, t in keys], fontsize=8)
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
                       ("time_vs_regime", lambda: plot_time_vs_regime(rows, args.out)),
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
