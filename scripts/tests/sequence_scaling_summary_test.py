#!/usr/bin/env python3
"""scripts/sequence_scaling_summary.py on made-up bench rows: strong scaling beside fla's
one-GPU row, weak scaling against T131072 on one GPU, each rank's phases (with head groups'
exposed time and hidden share, and without: all exposed), and the longest run."""
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sequence_scaling_summary.py")


def row(T, mode, ms, backend="chunked_fuse_cuda", timing="graph", report=None, status="ok"):
    return {"backend": backend, "B": 1, "T": T, "mode": mode, "gates": "mild", "timing": timing,
            "median_ms": ms, "status": status, "backend_report": report, "message": ""}


def write(folder, name, rows):
    with open(os.path.join(folder, name + ".json"), "w") as f:
        json.dump({"benchmarks": rows, "context": {}}, f)


def main():
    grouped = {"contribution_ms": [1.0, 1.0], "exchange_ms": [0.02, 0.04], "carried_ms": [2.0, 2.0],
               "exposed_ms": [0.005, 0.004], "hidden_fraction": [0.75, 0.9]}
    plain = {"contribution_ms": [1.0], "exchange_ms": [0.03], "carried_ms": [2.0]}
    with tempfile.TemporaryDirectory() as out:
        write(out, "strong_1gpu", [row(262144, "fwd", 8.0), row(262144, "fwd", 16.0, "fla.chunk_gla")])
        write(out, "strong_2gpu", [row(262144, "fwd", 4.2),
                                   row(262144, "fwd", 4.0, timing="eager", report=grouped),
                                   row(262144, "fwdbwd", 20.0, timing="eager", report=plain)])
        write(out, "weak_1gpu", [row(131072, "fwd", 4.1)])
        write(out, "longest_2gpu", [row(524288, "fwdbwd", 0.0, status="skipped")])
        text = subprocess.run([sys.executable, SCRIPT, out, "2"], check=True, capture_output=True,
                              text=True).stdout
    lines = text.splitlines()
    for want in [
        "| 262144 | mild | fwd | 8.000 | 4.200 | 1.90× | 95.2 % | 16.000 | 0.50 |",
        "| 2 | 262144 | mild | fwd | 4.100 | 4.200 | 97.6 % |",
        "| 262144 | mild | fwd | 4.000 | 0 | 1.0000 | 0.0200 | 2.0000 | 0.50 % | 0.0050 | 75 % |",
        "| 262144 | mild | fwd | 4.000 | 1 | 1.0000 | 0.0400 | 2.0000 | 1.00 % | 0.0040 | 90 % |",
        "| 262144 | mild | fwdbwd | 20.000 | 0 | 1.0000 | 0.0300 | 2.0000 | 0.15 % | 0.0300 | 0 % |",
        "- B1 T524288 fwdbwd mild: skipped, ",
    ]:
        assert want in lines, want + "\n---\n" + text
    print("ok: 6 lines")


if __name__ == "__main__":
    main()
