#!/usr/bin/env python3
"""verify_table.py (Python alone): each backend, op and dtype gets a row with its passed
count and each tensor's worst rel_l2 and fixture; a case given by two files counts once;
groups where nothing ran have no row; failures are listed with the first line of their
message; --backends filters; a file that is not a verify document is exit 1 naming it;
--base sets each case beside the base's: cases in both, tensors the same to the last digit,
the largest rel_l2 ratio with its fixture and tensor, status changes, cases on one side."""
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "verify_table.py")


def case(backend, fixture, status="passed", o=1e-3, dg=None, dtype="bf16", message=None, max_abs=None):
    tensors = [{"name": "o", "rel_l2": o, "passed": status == "passed"}]
    if dg is not None:
        tensors.append({"name": "dg", "rel_l2": dg, "passed": status == "passed"})
    if max_abs is not None:
        tensors[0]["max_abs"] = max_abs
    r = {"backend": backend, "op": "gla", "dtype": dtype, "fixture": fixture, "status": status,
         "tensors": tensors if status not in ("unsupported",) else []}
    if message:
        r["message"] = message
    return r


def run(*args):
    p = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def main():
    with tempfile.TemporaryDirectory() as d:
        a, b = os.path.join(d, "a.json"), os.path.join(d, "b.json")
        json.dump({"results": [case("ours", "gla_basic", o=2e-3, dg=1e-3),
                               case("ours", "gla_t1", o=5e-3),
                               case("ours", "gla_basic", dtype="fp16", status="unsupported"),
                               case("peer|x", "gla_basic", status="failed", o=0.5,
                                    message="peer backward failed\\nTraceback line")]}, open(a, "w"))
        # b repeats ours/gla_t1 (counted once, b's) and adds a passing peer case
        json.dump({"results": [case("ours", "gla_t1", o=4e-3),
                               case("peer|x", "gla_t1", o=1e-3)]}, open(b, "w"))
        rc, out, err = run(a, b)
        assert rc == 0, err
        lines = out.splitlines()
        assert lines[0].startswith("| backend | op | dtype | passed | o | dg |"), lines[0]
        ours = [l for l in lines if l.startswith("| ours | gla | bf16 |")]
        assert ours == ["| ours | gla | bf16 | 2/2 | 4.00e-03 (gla_t1) | 1.00e-03 (gla_basic) |"], ours
        assert not any("| fp16 |" in l for l in lines), "a group where nothing ran has a row"
        peer = [l for l in lines if l.startswith("| peer\\|x | gla | bf16 |")]
        assert peer == ["| peer\\|x | gla | bf16 | 1/2 | 5.00e-01 (gla_basic) |  |"], peer
        fail = [l for l in lines if "| failed |" in l]
        assert fail == ["| peer\\|x | bf16 | gla_basic | failed | peer backward failed |"], fail
        rc, out, _ = run(a, b, "--backends", "ours")
        assert rc == 0 and "peer" not in out, out
        # --base: ours/gla_basic the same to the last digit, ours/gla_t1 o 4e-3 against 2e-3,
        # peer|x/gla_t1 passed there and failed here, ours/gla_t63 only in the base, and
        # peer|x/gla_basic only here; the fp16 group ran on neither side (no row).
        base = os.path.join(d, "base.json")
        json.dump({"results": [case("ours", "gla_basic", o=2e-3, dg=1e-3),
                               case("ours", "gla_t1", o=2e-3),
                               case("ours", "gla_t63", o=1e-3),
                               case("ours", "gla_basic", dtype="fp16", status="unsupported"),
                               case("peer|x", "gla_t1", o=1e-3, status="failed")]}, open(base, "w"))
        rc, out, err = run(a, b, "--base", base)
        assert rc == 0, err
        lines = out.splitlines()
        head = lines.index("| backend | op | dtype | cases in both | tensors the same | largest rel_l2 "
                           "ratio (fixture, tensor) | status changed | only in base | only here |")
        rows = lines[head + 2:]
        assert rows == ["| ours | gla | bf16 | 2 | 2 of 3 | 2.000 (gla_t1, o) | 0 | 1 | 0 |",
                        "| peer\\|x | gla | bf16 | 1 | all the same | 1.000 (gla_t1, o) | 1 | 0 | 1 |"], rows
        rc, out, _ = run(a, "--base", a)
        assert rc == 0 and "| ours | gla | bf16 | 2 | all the same | 1.000 (gla_basic, dg) | 0 | 0 | 0 |" in out, out
        # max_abs counts too: the same rel_l2 with another max_abs is not the same
        c1, c2 = os.path.join(d, "c1.json"), os.path.join(d, "c2.json")
        json.dump({"results": [case("ours", "gla_basic", max_abs=0.5)]}, open(c1, "w"))
        json.dump({"results": [case("ours", "gla_basic", max_abs=0.25)]}, open(c2, "w"))
        rc, out, _ = run(c1, "--base", c2)
        assert rc == 0 and "| ours | gla | bf16 | 1 | 0 of 1 | 1.000 (gla_basic, o) | 0 | 0 | 0 |" in out, out
        # a tensor the base lacks (dg here) is not the same
        json.dump({"results": [case("ours", "gla_basic", max_abs=0.5, dg=1e-3)]}, open(c2, "w"))
        rc, out, _ = run(c2, "--base", c1)
        assert rc == 0 and "| ours | gla | bf16 | 1 | 1 of 2 | 1.000 (gla_basic, o) | 0 | 0 | 0 |" in out, out
        rc, _, err = run(a, "--base", os.path.join(d, "missing.json"))
        assert rc == 1 and "missing.json" in err, (rc, err)
        bad = os.path.join(d, "bad.json")
        json.dump({"benchmarks": []}, open(bad, "w"))
        rc, _, err = run(bad)
        assert rc == 1 and "bad.json" in err, (rc, err)
    print("verify_table: ok")


if __name__ == "__main__":
    main()
