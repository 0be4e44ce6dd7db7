#!/usr/bin/env python3
"""scripts/plot_results.py on made-up results, directly and through `glabench report`:

- a one-shape run draws no time-against-T plot (it would be isolated dots): the times
  are grouped bars, one group for the shape with every backend and dtype in it;
- a multi-shape run draws a line only for a backend's several T at one (B, H, K, V) and
  bars for every shape where some backend has a single T, with every backend timed there
  (so a peer timed at one T of our T sweep is drawn beside our bar);
- a run that is all T sweeps draws no bars;
- the accuracy plot has a marker per op, all different;
- softmax_attn rows of the full mask ("causal": false, bench --mask full) are another
  configuration than the causal ones: their own bar panel, and speed-ups pair each mask
  with the baseline's row of the same mask only;
- rows of different gate regimes ("gates"; absent on a gla row: mild) or timings
  ("timing": graph; absent: eager) are never one line, bar group or speed-up pair, and
  an older file's row without the keys is the same configuration as a newer mild, eager
  one (the first file's is kept);
- time_vs_regime.png has a panel per op, dtype, mode and shape with a line per backend
  and timing timed there in two regimes or more (a lone regime draws no line), at most
  16 panels (plots.json names the others), and is not drawn for a one-regime run or one
  without gla or rwkv6 rows (plots.json says why);
- every PNG is a PNG of a sane size, and report.md shows the plots drawn and says why the
  others are not.

usage: plot_results_test.py GLABENCH WORK_DIR   (exit 77 when matplotlib is missing)
"""
import json
import os
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PLOT = os.path.join(HERE, "..", "plot_results.py")
THRESHOLD = {"fp32": 1e-5, "bf16": 1e-2}


def row(backend, op, dtype, mode, B, T, H, K, V, ms, peer=False, rel=1e-7, causal=None,
        gates=None, timing=None):
    """A results row; gates and timing (None: the key absent, as in older files) add the
    keys and the name's /gates-<regime> and /graph parts."""
    name = f"{backend}/{op}/{dtype}/{mode}/B{B}_T{T}_H{H}_K{K}_V{V}"
    if causal is False:
        name += "/full"
    if gates is not None:
        name += f"/gates-{gates}"
    if timing == "graph":
        name += "/graph"
    samples = [ms * f for f in (0.99, 1.0, 1.01, 1.0, 1.0)]
    r = {"name": name, "backend": backend, "op": op, "dtype": dtype, "mode": mode, "B": B,
         "T": T, "H": H, "K": K, "V": V, "hot": False, "status": "ok", "message": "",
         "ran_on": "cuda", "samples_ms": samples, "median_ms": ms, "p20_ms": ms * 0.996,
         "p80_ms": ms * 1.004, "cv": 0.007, "bytes": 1e9, "flops": 1e12,
         "noise_target_met": True, "gbps": 1e9 / ms / 1e6, "tflops": 1e12 / ms / 1e9,
         "bandwidth_fraction": 1e9 / ms / 1e6 / 4000.0, "flop_fraction": None,
         "checks": [{"tensor": "o", "rel_l2": rel, "max_abs": None,
                     "threshold": THRESHOLD[dtype], "passed": rel <= THRESHOLD[dtype]}]}
    if peer:
        r["peer"] = True
    if causal is not None:
        r["causal"] = causal
    if gates is not None:
        r["gates"] = gates
    if timing is not None:
        r["timing"] = timing
    return r


def results(path, rows):
    context = {"glabench_results": "bench", "schema_version": 1, "device": "NVIDIA H200",
               "peaks": {"cuda": {"copy_gbps": 4000.0, "gemm_tflops": {}, "notes": "made up"}}}
    with open(path, "w") as f:
        json.dump({"context": context, "benchmarks": rows}, f)
    return path


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def plot(work, name, files, baseline):
    out = os.path.join(work, name)
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([sys.executable, PLOT, *files, "--out", out, "--baseline", baseline],
                   check=True)
    manifest = json.load(open(os.path.join(out, "plots.json")))
    for entry in manifest.values():
        if entry["file"]:
            w, h = png_size(os.path.join(out, entry["file"]))
            assert 300 <= w <= 6000 and 100 <= h <= 6000, (entry["file"], w, h)
    return out, manifest


def main():
    glabench, work = sys.argv[1], sys.argv[2]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib is not installed: skipped")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL", what)

    # One shape: ours in two dtypes and modes, a peer in bf16.
    one = []
    for mode, scale in (("fwd", 1.0), ("fwdbwd", 4.0)):
        for dtype in ("fp32", "bf16"):
            one.append(row("parallel_scan_cuda", "gla", dtype, mode, 4, 2048, 16, 128, 128,
                           0.4 * scale, rel=1e-7 if dtype == "fp32" else 2e-3))
        one.append(row("fla.chunk_gla", "gla", "bf16", mode, 4, 2048, 16, 128, 128, 0.3 * scale,
                       peer=True, rel=3e-3))
    one_file = results(os.path.join(work, "one.json"), one)
    out, m = plot(work, "one", [one_file], "fla.chunk_gla")
    expect(m["time_vs_t"]["file"] is None and "several T" in m["time_vs_t"]["reason"],
           f"one shape: time_vs_t drawn or without its reason: {m['time_vs_t']}")
    expect(not os.path.exists(os.path.join(out, "time_vs_t.png")), "one shape: time_vs_t.png")
    groups = m["time_by_shape"].get("content", {}).get("groups", {})
    expect(sorted(groups) == ["gla fwd", "gla fwdbwd"], f"one shape: panels {sorted(groups)}")
    for panel, shapes in groups.items():
        expect([s["shape"] for s in shapes] == ["B4 T2048 H16 D128"], f"{panel}: {shapes}")
        expect(shapes[0]["bars"] == ["fla.chunk_gla bf16", "parallel_scan_cuda fp32",
                                     "parallel_scan_cuda bf16"], f"{panel} bars: {shapes}")
    expect(m["speedup"]["file"] == "speedup.png", f"one shape: speedup {m['speedup']}")
    expect(m["time_vs_regime"]["file"] is None and
           "one gate regime (mild)" in m["time_vs_regime"]["reason"],
           f"one shape (old rows, all mild): time_vs_regime {m['time_vs_regime']}")
    expect(not os.path.exists(os.path.join(out, "time_vs_regime.png")),
           "one shape: time_vs_regime.png")

    # Several shapes: a T sweep of ours at B4 H16 D128 with the peer at one of its T, and
    # the fla-like shapes, each a single T.
    multi = []
    for T in (512, 1024, 2048, 4096):
        multi.append(row("parallel_scan_cuda", "gla", "bf16", "fwd", 4, T, 16, 128, 128, T / 5000))
    multi.append(row("fla.chunk_gla", "gla", "bf16", "fwd", 4, 2048, 16, 128, 128, 0.3, peer=True))
    for shape, ms in (((2, 16384, 16, 128, 128), 4.5), ((8, 1024, 8, 64, 64), 0.3),
                      ((1, 8192, 96, 128, 128), 4.1)):
        multi.append(row("parallel_scan_cuda", "gla", "bf16", "fwd", *shape, ms))
        multi.append(row("fla.chunk_gla", "gla", "bf16", "fwd", *shape, ms * 0.8, peer=True))
    multi.append(row("naive_recurrent", "rwkv6", "fp32", "fwd", 1, 64, 2, 16, 16, 1.5))
    multi.append(row("torch.sdpa", "softmax_attn", "bf16", "fwd", 4, 2048, 16, 128, 128, 0.2,
                     peer=True, rel=4e-3))
    multi_file = results(os.path.join(work, "multi.json"), multi)
    out, m = plot(work, "multi", [multi_file], "fla.chunk_gla")
    lines = m["time_vs_t"].get("content", {}).get("lines", {})
    expect(list(lines) == ["gla fwd"], f"multi: line panels {list(lines)}")
    expect([(l["backend"], l["T"]) for l in lines.get("gla fwd", [])] ==
           [("parallel_scan_cuda", [512, 1024, 2048, 4096])], f"multi: lines {lines}")
    groups = m["time_by_shape"].get("content", {}).get("groups", {})
    gla = {g["shape"]: g["bars"] for g in groups.get("gla fwd", [])}
    expect(sorted(gla) == sorted(["B8 T1024 H8 D64", "B4 T2048 H16 D128", "B2 T16384 H16 D128",
                                  "B1 T8192 H96 D128"]), f"multi: gla groups {sorted(gla)}")
    expect(gla.get("B4 T2048 H16 D128") == ["fla.chunk_gla bf16", "parallel_scan_cuda bf16"],
           f"multi: the peer's T of the sweep lacks ours beside it: {gla}")
    expect(sorted(groups) == ["gla fwd", "rwkv6 fwd", "softmax_attn fwd"],
           f"multi: bar panels {sorted(groups)}")
    markers = m["accuracy"]["content"]["markers"]
    expect(sorted(markers) == ["gla", "rwkv6", "softmax_attn"] and
           len(set(markers.values())) == 3, f"accuracy markers per op: {markers}")

    # Both masks of softmax_attn, ours and the peer's (full twice causal's time, ours half
    # the peer's): a panel per mask, and each speed-up against the peer's row of its mask.
    masks = []
    for causal, ms in ((True, 0.2), (False, 0.4)):
        masks.append(row("torch.sdpa", "softmax_attn", "bf16", "fwd", 4, 2048, 16, 128, 128, ms,
                         peer=True, causal=causal))
        masks.append(row("ring_softmax_cuda", "softmax_attn", "bf16", "fwd", 4, 2048, 16, 128, 128,
                         ms / 2, causal=causal))
    out, m = plot(work, "masks", [results(os.path.join(work, "masks.json"), masks)], "torch.sdpa")
    groups = m["time_by_shape"].get("content", {}).get("groups", {})
    expect(sorted(groups) == sorted(["softmax_attn fwd", "softmax_attn full fwd"]),
           f"masks: bar panels {sorted(groups)}")
    bars = m["speedup"].get("content", {}).get("bars", [])
    expect(sorted(bars) == ["ring_softmax_cuda: softmax_attn bf16 fwd · B4 T2048 H16 D128: 2",
                            "ring_softmax_cuda: softmax_attn full bf16 fwd · B4 T2048 H16 D128: 2"],
           f"masks: speed-ups {bars}")
    expect(m["time_vs_regime"]["file"] is None and
           "no timed gla or rwkv6" in m["time_vs_regime"]["reason"],
           f"masks (softmax_attn only): time_vs_regime {m['time_vs_regime']}")

    # Gate regimes and timings. At the fla shape, gla bf16 fwd: ours eager in all five
    # regimes (mild named explicitly), ours graph in three; the peer eager in mild (an
    # older row, no keys, "peer": true) and strong (a bridge row: a peer by its name), and
    # graph in strong only (one regime: no line). gla fp32: ours eager, mild (older row)
    # and cliff. Each speed-up tells its pair: eager
    # mild 2, eager strong 3, graph strong 5. A T sweep of ours in mild and strong, rwkv6
    # in mild only (no panel), softmax_attn (no regime: no panel); then a second, older
    # file that repeats ours bf16 eager mild without the keys, at 99 ms: dropped.
    fla_shape = (4, 2048, 16, 128, 128)
    regimes = []
    for gates, ms in (("model", 0.12), ("mild", 0.15), ("fla", 0.18), ("strong", 0.2),
                      ("cliff", 0.25)):
        regimes.append(row("parallel_scan_cuda", "gla", "bf16", "fwd", *fla_shape, ms,
                           gates=gates, timing="eager" if gates == "fla" else None))
    for gates, ms in (("model", 0.08), ("mild", 0.09), ("strong", 0.1)):
        regimes.append(row("parallel_scan_cuda", "gla", "bf16", "fwd", *fla_shape, ms,
                           gates=gates, timing="graph"))
    regimes.append(row("fla.chunk_gla", "gla", "bf16", "fwd", *fla_shape, 0.3, peer=True))
    regimes.append(row("fla.chunk_gla", "gla", "bf16", "fwd", *fla_shape, 0.6,
                       gates="strong"))
    regimes.append(row("fla.chunk_gla", "gla", "bf16", "fwd", *fla_shape, 0.5, peer=True,
                       gates="strong", timing="graph"))
    regimes.append(row("parallel_scan_cuda", "gla", "fp32", "fwd", *fla_shape, 0.4))
    regimes.append(row("parallel_scan_cuda", "gla", "fp32", "fwd", *fla_shape, 0.7,
                       gates="cliff"))
    for gates in ("mild", "strong"):
        for T in (512, 1024):
            regimes.append(row("parallel_scan_cuda", "gla", "bf16", "fwd", 2, T, 8, 64, 64,
                               T / 5000, gates=gates))
    regimes.append(row("naive_recurrent", "rwkv6", "fp32", "fwd", 1, 64, 2, 16, 16, 1.5))
    regimes.append(row("torch.sdpa", "softmax_attn", "bf16", "fwd", *fla_shape, 0.2, peer=True,
                       rel=4e-3))
    older = [row("parallel_scan_cuda", "gla", "bf16", "fwd", *fla_shape, 99.0)]
    out, m = plot(work, "regimes", [results(os.path.join(work, "regimes.json"), regimes),
                                    results(os.path.join(work, "older.json"), older)],
                  "fla.chunk_gla")
    tvr = m["time_vs_regime"]
    expect(tvr["file"] == "time_vs_regime.png" and
           os.path.exists(os.path.join(out, "time_vs_regime.png")),
           f"regimes: time_vs_regime {tvr}")
    content = tvr.get("content", {})
    expect(content.get("regimes") == ["model", "mild", "fla", "strong", "cliff"],
           f"regimes: regimes present {content.get('regimes')}")
    expect(content.get("left_out") == [], f"regimes: left out {content.get('left_out')}")
    lines = {panel: [(l["label"], l["gates"]) for l in drawn]
             for panel, drawn in content.get("lines", {}).items()}
    expect(lines == {
        "gla bf16 fwd · B2 T512 H8 D64": [("parallel_scan_cuda", ["mild", "strong"])],
        "gla bf16 fwd · B2 T1024 H8 D64": [("parallel_scan_cuda", ["mild", "strong"])],
        "gla bf16 fwd · B4 T2048 H16 D128": [
            ("parallel_scan_cuda", ["model", "mild", "fla", "strong", "cliff"]),
            ("parallel_scan_cuda (graph)", ["model", "mild", "strong"]),
            ("fla.chunk_gla (peer)", ["mild", "strong"])],
        "gla fp32 fwd · B4 T2048 H16 D128": [("parallel_scan_cuda", ["mild", "cliff"])]},
        f"regimes: time_vs_regime lines {lines}")
    ours = content.get("lines", {}).get("gla bf16 fwd · B4 T2048 H16 D128", [{}])[0]
    expect(ours.get("median_ms") == [0.12, 0.15, 0.18, 0.2, 0.25] and
           ours.get("timing") == "eager" and ours.get("peer") is False,
           f"regimes: ours eager (the older file's 99 ms row is the same configuration): {ours}")
    t_lines = sorted((l["gates"], l["timing"], l["T"])
                     for l in m["time_vs_t"].get("content", {}).get("lines", {}).get("gla fwd", []))
    expect(t_lines == [("mild", "eager", [512, 1024]), ("strong", "eager", [512, 1024])],
           f"regimes: time_vs_t lines {t_lines}")
    groups = m["time_by_shape"].get("content", {}).get("groups", {})
    gla = {(g["shape"], g["gates"], g["timing"]): g["bars"] for g in groups.get("gla fwd", [])}
    expect(gla == {
        ("B4 T2048 H16 D128", "model", "eager"): ["parallel_scan_cuda bf16"],
        ("B4 T2048 H16 D128", "mild", "eager"): ["fla.chunk_gla bf16", "parallel_scan_cuda fp32",
                                                 "parallel_scan_cuda bf16"],
        ("B4 T2048 H16 D128", "fla", "eager"): ["parallel_scan_cuda bf16"],
        ("B4 T2048 H16 D128", "strong", "eager"): ["fla.chunk_gla bf16", "parallel_scan_cuda bf16"],
        ("B4 T2048 H16 D128", "cliff", "eager"): ["parallel_scan_cuda fp32",
                                                  "parallel_scan_cuda bf16"],
        ("B4 T2048 H16 D128", "model", "graph"): ["parallel_scan_cuda bf16"],
        ("B4 T2048 H16 D128", "mild", "graph"): ["parallel_scan_cuda bf16"],
        ("B4 T2048 H16 D128", "strong", "graph"): ["fla.chunk_gla bf16",
                                                   "parallel_scan_cuda bf16"]},
        f"regimes: bar groups {gla}")
    expect(len(groups.get("gla fwd", [])) == len(gla), "regimes: two bar groups of one variant")
    bars = m["speedup"].get("content", {}).get("bars", [])
    expect(sorted(bars) == [
        "parallel_scan_cuda: gla bf16 fwd · B4 T2048 H16 D128 (gates:mild): 2",
        "parallel_scan_cuda: gla bf16 fwd · B4 T2048 H16 D128 (gates:strong): 3",
        "parallel_scan_cuda: gla bf16 fwd · B4 T2048 H16 D128 (gates:strong, graph): 5"],
        f"regimes: speed-ups {bars}")

    # More configurations in two regimes than panels: the first 16 drawn, the rest named.
    many = [row("parallel_scan_cuda", "gla", "bf16", "fwd", 1, 64 * (i + 1), 2, 16, 16, ms,
                gates=gates)
            for i in range(20) for gates, ms in (("mild", 0.1), ("cliff", 0.2))]
    out, m = plot(work, "many", [results(os.path.join(work, "many.json"), many)],
                  "parallel_scan_cuda")
    content = m["time_vs_regime"].get("content", {})
    expect(len(content.get("lines", {})) == 16 and len(content.get("left_out", [])) == 4 and
           "gla bf16 fwd · B1 T1280 H2 D16" in content.get("left_out", []),
           f"many: {len(content.get('lines', {}))} panels, left out {content.get('left_out')}")

    # Only T sweeps: no bars, with the reason.
    sweep = [row("parallel_scan_cuda", "gla", d, "fwd", 4, T, 16, 128, 128, T / 5000)
             for d in ("fp32", "bf16") for T in (512, 1024)]
    out, m = plot(work, "sweep", [results(os.path.join(work, "sweep.json"), sweep)],
                  "parallel_scan_cuda")
    expect(m["time_by_shape"]["file"] is None and "time_vs_t.png" in m["time_by_shape"]["reason"],
           f"sweep: time_by_shape {m['time_by_shape']}")
    expect(m["time_vs_t"]["file"] == "time_vs_t.png", f"sweep: time_vs_t {m['time_vs_t']}")

    # Through glabench report: the one-shape run.
    report = os.path.join(work, "report")
    done = subprocess.run([glabench, "report", one_file, "--out", report, "--baseline",
                           "fla.chunk_gla"], capture_output=True, text=True)
    expect(done.returncode == 0, f"report: exit {done.returncode}: {done.stdout}{done.stderr}")
    if done.returncode == 0:
        md = open(os.path.join(report, "report.md")).read()
        expect("![Time per shape](time_by_shape.png)" in md, "report.md lacks the bars")
        expect("### Time against T\n\nNot drawn: no backend has several T" in md,
               "report.md does not say why there is no time-against-T plot")
        expect(sorted(f for f in os.listdir(report) if f.endswith(".png")) ==
               ["accuracy.png", "peak_fraction.png", "speedup.png", "time_by_shape.png"],
               f"report PNGs: {sorted(os.listdir(report))}")

    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
