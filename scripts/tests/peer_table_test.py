#!/usr/bin/env python3
"""peer_table.py (Python alone): rows pair with the peer's row of the same gate regime and
timing only, and no backend name, however hostile, ends a cell or forges a table row."""
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers", "peer_table.py")


def row(backend, ms, gates="mild", timing="eager", peer=False):
    r = {"backend": backend, "op": "gla", "dtype": "bf16", "mode": "fwd", "B": 1, "T": 64,
         "H": 2, "K": 16, "V": 16, "status": "ok", "median_ms": ms, "gates": gates,
         "timing": timing}
    if peer:
        r["peer"] = True
    return r


def main():
    hostile = "evil | 1 | 2 |\n| forged | row"
    rows = [row(hostile, 1.0), row("ours", 2.0, gates="fla"), row("ours", 3.0, timing="graph"),
            row("fla.chunk_gla", 4.0, peer=True), row("fla.chunk_gla", 8.0, gates="fla", peer=True),
            row("fla.chunk_gla", 6.0, timing="graph", peer=True)]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "rows.json")
        with open(path, "w") as f:
            json.dump({"context": {}, "benchmarks": rows}, f)
        out = subprocess.run([sys.executable, SCRIPT, path], check=True, capture_output=True,
                             text=True).stdout
    lines = out.splitlines()
    assert len(lines) == 2 + 3, out  # header, rule, one line per row of ours
    assert all(line.count(" | ") == lines[0].count(" | ") for line in lines[2:]), out
    assert not any(line.startswith("| forged") for line in lines), out
    assert r"evil \| 1 \| 2 \| \| forged \| row" in out, out
    # Each of ours against the peer's row of its own regime and timing.
    assert "| gla gates-fla | bf16 | fwd | 1 64 2 16 16 | ours | 2 | 0.250 (8) |" in out, out
    assert "| gla gates-mild graph | bf16 | fwd | 1 64 2 16 16 | ours | 3 | 0.500 (6) |" in out, out
    print("peer_table: ok")


if __name__ == "__main__":
    main()
