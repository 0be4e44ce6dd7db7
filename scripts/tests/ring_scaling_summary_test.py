#!/usr/bin/env python3
"""scripts/ring_scaling_summary.py on made-up bench rows: speed-up, efficiency and the
hidden communication per layout; a failed or missing row shows as a dash, full-mask
rows are left out."""
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ring_scaling_summary.py")


def row(mode, ms, report=None, status="ok", causal=True):
    return {"B": 1, "T": 131072, "mode": mode, "median_ms": ms, "status": status, "causal": causal,
            "backend_report": report}


def write(folder, name, rows):
    with open(os.path.join(folder, name), "w") as f:
        json.dump({"benchmarks": rows, "context": {}}, f)


def main():
    with tempfile.TemporaryDirectory() as out:
        write(out, "one_gpu.json", [row("fwd", 100.0), row("fwdbwd", 400.0), row("fwd", 200.0, causal=False)])
        report = {"forward": {"comm_hidden_fraction": 0.9}, "backward": {"comm_hidden_fraction": 0.95}}
        write(out, "4gpu_zigzag.json", [row("fwd", 28.0, {"forward": {"comm_hidden_fraction": 0.875}}),
                                        row("fwdbwd", 110.0, report)])
        write(out, "4gpu_ring.json", [row("fwd", 50.0), row("fwdbwd", 0.0, status="failed")])
        text = subprocess.run([sys.executable, SCRIPT, out, "4"], check=True, capture_output=True, text=True).stdout
    lines = text.splitlines()
    expected = [
        "| B1 T131072 | fwd | 100.000 | zigzag | 28.000 | 3.57× | 89% | 0.88 |",
        "| B1 T131072 | fwd | 100.000 | ring | 50.000 | 2.00× | 50% | — |",
        "| B1 T131072 | fwdbwd | 400.000 | zigzag | 110.000 | 3.64× | 91% | 0.90 / 0.95 |",
        "| B1 T131072 | fwdbwd | 400.000 | ring | — | — | — | — |",
    ]
    assert lines[2:] == expected, "\n".join(lines)
    print("ok: 4 rows")


if __name__ == "__main__":
    main()
