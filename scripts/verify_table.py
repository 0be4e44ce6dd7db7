#!/usr/bin/env python3
"""Markdown tables of glabench verify results: per backend, op and dtype, the cases that
passed, and each tensor's worst rel_l2 over the fixtures, with the fixture it came from;
then every case that did not pass, with its status and the first line of its message.
Backends, ops and dtypes where no case ran (all unsupported or skipped) have no row.

With --base, a last table sets each case beside the same case (backend, op, dtype,
fixture) of another run, say the build before a kernel change: per backend, op and dtype,
the cases both ran, how many of their tensors have the same rel_l2 and max_abs to the last
digit, the largest rel_l2 ratio (this run ÷ the base) with its fixture and tensor, the
cases whose status differs, and the cases only one side ran. A change that must not move
any output reads "all the same".

usage: verify_table.py VERIFY.json[.xz]... [--backends PATTERN,...] [--base BASE.json[.xz]...]
  Several files (say, one verify per backend run side by side) make one table. A case
  given by more than one file is counted once (the last file's). --backends keeps the
  rows whose backend matches a pattern (shell-style; comma-separated or repeated).
"""
import argparse
import fnmatch
import json
import lzma
import sys

TENSORS = ["o", "lse", "ht", "dq", "dk", "dv", "dg", "du", "dh0"]


def cell(text):
    """A markdown table cell: '|' escaped and line breaks made spaces."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("\r", " ")


def load(paths):
    cases = {}
    for path in paths:
        try:
            with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:
                doc = json.load(f)
        except (OSError, ValueError, lzma.LZMAError) as e:
            sys.exit(f"verify_table.py: {path}: {e}")
        results = doc.get("results") if isinstance(doc, dict) else None
        if not isinstance(results, list):
            sys.exit(f"verify_table.py: {path}: no 'results' list (not a glabench verify file)")
        for r in results:
            key = (r.get("backend"), r.get("op"), r.get("dtype"), r.get("fixture"))
            cases[key] = r
    return cases


NOT_RUN = ("skipped", "unsupported")


def kept(case, patterns):
    """Whether --backends keeps the case (no patterns: every case)."""
    return not patterns or any(fnmatch.fnmatchcase(str(case.get("backend")), p) for p in patterns)


def errors(case):
    """A case's tensors that carry a rel_l2: name -> (rel_l2, max_abs)."""
    return {x.get("name"): (x.get("rel_l2"), x.get("max_abs")) for x in case.get("tensors", [])
            if isinstance(x.get("rel_l2"), (int, float))}


def tables(cases, patterns):
    keep = [c for c in cases.values() if kept(c, patterns)]
    groups = {}
    for c in keep:
        groups.setdefault((c.get("backend"), c.get("op"), c.get("dtype")), []).append(c)
    names = [t for t in TENSORS if any(x.get("name") == t for c in keep for x in c.get("tensors", []))]
    out = ["| backend | op | dtype | passed | " + " | ".join(names) + " |",
           "|---|---|---|---|" + "---|" * len(names)]
    for (backend, op, dtype), group in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        ran = [c for c in group if c.get("status") not in NOT_RUN]
        if not ran:
            continue  # an op or dtype the backend does not offer
        passed = sum(c.get("status") == "passed" for c in group)
        row = [cell(backend), cell(op), cell(dtype), f"{passed}/{len(ran)}"]
        for name in names:
            worst = None
            for c in group:
                rel = errors(c).get(name, (None,))[0]
                if rel is not None and (worst is None or rel > worst[0]):
                    worst = (rel, c.get("fixture"))
            row.append("" if worst is None else f"{worst[0]:.2e} ({cell(worst[1])})")
        out.append("| " + " | ".join(row) + " |")
    bad = [c for c in keep if c.get("status") != "passed" and c.get("status") not in NOT_RUN]
    if bad:
        out += ["", "| backend | dtype | fixture | status | message |", "|---|---|---|---|---|"]
        for c in sorted(bad, key=lambda c: tuple(map(str, (c.get("backend"), c.get("dtype"), c.get("fixture"))))):
            message = (c.get("message") or "").replace("\\n", "\n").split("\n")[0][:160]
            out.append(f"| {cell(c.get('backend'))} | {cell(c.get('dtype'))} | {cell(c.get('fixture'))} | "
                       f"{cell(c.get('status'))} | {cell(message)} |")
    return "\n".join(out)


def beside_base(cases, base, patterns):
    groups = {}
    for key in set(cases) | set(base):
        if kept(cases.get(key) or base.get(key), patterns):
            groups.setdefault(key[:3], []).append(key)
    out = ["| backend | op | dtype | cases in both | tensors the same | largest rel_l2 ratio "
           "(fixture, tensor) | status changed | only in base | only here |",
           "|---|---|---|---|---|---|---|---|---|"]
    for group, keys in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        statuses = [d[k].get("status") for k in keys for d in (cases, base) if k in d]
        if all(st in NOT_RUN for st in statuses):
            continue  # nothing ran on either side
        keys.sort(key=lambda k: tuple(map(str, k)))
        both = [k for k in keys if k in cases and k in base]
        same = total = changed = 0
        worst = None
        for k in both:
            changed += cases[k].get("status") != base[k].get("status")
            new, old = errors(cases[k]), errors(base[k])
            for name in sorted(set(old) | set(new)):  # a tensor on one side only is not the same
                total += 1
                if name not in new or name not in old:
                    continue
                rel = old[name][0]
                same += new[name] == old[name]
                ratio = new[name][0] / rel if rel else (1.0 if new[name][0] == 0 else float("inf"))
                if worst is None or ratio > worst[0]:
                    worst = (ratio, k[3], name)
        same_cell = "all the same" if total and same == total else f"{same} of {total}"
        worst_cell = "" if worst is None else f"{worst[0]:.3f} ({cell(worst[1])}, {cell(worst[2])})"
        only_base = sum(k not in cases for k in keys)
        only_here = sum(k not in base for k in keys)
        out.append(f"| {cell(group[0])} | {cell(group[1])} | {cell(group[2])} | {len(both)} | {same_cell} | "
                   f"{worst_cell} | {changed} | {only_base} | {only_here} |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--backends", action="append", default=[])
    ap.add_argument("--base", nargs="+", default=[], metavar="BASE")
    a = ap.parse_args()
    patterns = [p for arg in a.backends for p in arg.split(",") if p]
    cases = load(a.files)
    print(tables(cases, patterns))
    if a.base:
        print()
        print(beside_base(cases, load(a.base), patterns))


if __name__ == "__main__":
    main()
