#!/usr/bin/env python3
"""verify_table.py (Python alone): each backend, op and dtype gets a row with its passed
count and each tensor's worst rel_l2 and fixture; a case given by two files counts once;
groups where nothing ran have no row; failures are listed with the first line of their
message; --backends filters; a file that is not a verify document is exit 1 naming it."""
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "verify_table.py")


def case(backend, fixture, status="passed", o=1e-3, dg=None, dtype="bf16", message=None):
    tensors = [{"name": "o", "rel_l2": o, "passed": status == "passed"}]
    if dg is not None:
        tensors.append({"name": "dg", "rel_l2": dg, "passed": status == "passed"})
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
        bad = os.path.join(d, "bad.json")
        json.dump({"benchmarks": []}, open(bad, "w"))
        rc, _, err = run(bad)
        assert rc == 1 and "bad.json" in err, (rc, err)
    print("verify_table: ok")


if __name__ == "__main__":
    main()
