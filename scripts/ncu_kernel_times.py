#!/usr/bin/env python3
"""Per-kernel GPU times from the text output of
`ncu --metrics gpu__time_duration.sum ...`: one line per launch, kernel name, grid and
microseconds (how the backend READMEs give each stage's share of the time).

usage: ncu_kernel_times.py NCU_LOG
"""
import re
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    name = None
    with open(sys.argv[1], errors="replace") as f:
        for line in f:
            m = re.match(r"\s+void (\w+)<.*?\) (\([\d, ]+\))x", line)
            if m:
                name = (m.group(1), m.group(2))
                continue
            t = re.search(r"gpu__time_duration.sum\s+(\w+)\s+([\d.,]+)", line)
            if t and name:
                us = float(t.group(2).replace(",", "")) * (1000 if t.group(1) == "ms" else 1)
                print(f"{name[0]:28s} {name[1]:16s} {us:9.1f} us")
                name = None


if __name__ == "__main__":
    main()
