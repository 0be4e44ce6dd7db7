#!/usr/bin/env python3
"""Per-kernel GPU times from the text output of
`ncu --metrics gpu__time_duration.sum ...`: one line per launch, kernel name, grid and
microseconds (how the backend READMEs give each stage's share of the time).

usage: ncu_kernel_times.py NCU_LOG
"""
import re
import sys


def short_name(signature):
    """A kernel's name without its namespaces, template arguments and parameters:
    `glabench::(anonymous namespace)::k<T>(args)` is k, as ncu's `rwkv6::<unnamed>::k<…>(…)`
    and `unnamed>::k<…>(…)` are."""
    for anonymous in ("(anonymous namespace)", "<unnamed>", "unnamed>"):
        signature = signature.replace(anonymous, "")
    cut = min((i for i in (signature.find("<"), signature.find("(")) if i >= 0),
              default=len(signature))
    return signature[:cut].split("::")[-1]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    name = None
    with open(sys.argv[1], errors="replace") as f:
        for line in f:
            m = re.match(r"\s+(?:void )?(.+?) (\([\d, ]+\))x\([\d, ]+\), Context", line)
            if m:
                name = (short_name(m.group(1)), m.group(2))
                continue
            t = re.search(r"gpu__time_duration.sum\s+(\w+)\s+([\d.,]+)", line)
            if t and name:
                scale = {"ms": 1000, "us": 1, "ns": 1e-3}.get(t.group(1), 1)
                us = float(t.group(2).replace(",", "")) * scale
                print(f"{name[0]:28s} {name[1]:16s} {us:9.1f} us")
                name = None


if __name__ == "__main__":
    main()
