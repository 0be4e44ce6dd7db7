#!/usr/bin/env python3
"""The bridge's CPU tests (ctest python_bridge/*): pure-PyTorch kernels through
`glabench --python`, on the committed fixtures, and kernels that go wrong on purpose.

usage: bridge_tests.py {fixtures,faults,api} GLABENCH FIXTURE_DIR
Exit 0 when every expectation holds; each failed expectation is printed."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
failures = []


def expect(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def run_glabench(tool, args, timeout=900, cwd=None):
    """(exit code, console, results document or {}) of one glabench run."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        has_json = any(a in ("verify", "bench") for a in args)
        argv = [tool] + args + (["--json", out] if has_json else [])
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout, cwd=cwd)
        doc = json.load(open(out)) if os.path.exists(out) else {}
        return done.returncode, done.stdout, doc


def listed(out, name):
    """What `glabench list` says of backend `name`: its line and the indented ones after."""
    lines, inside = [], False
    for line in out.splitlines(keepends=True):
        if not line[:1].isspace():
            inside = line.startswith(name + " ")
        if inside:
            lines.append(line)
    return "".join(lines)


def fixtures(tool, fixture_dir):
    backends = {"torch.gla": "torch_kernels:gla", "torch.rwkv6": "torch_kernels:rwkv6",
                "torch.attn": "torch_kernels:softmax_attn"}
    args = [a for n, s in backends.items() for a in ("--python", f"{n}={s}")] + ["verify"]
    args += [a for n in backends for a in ("--backend", n)] + ["--fixture", fixture_dir]
    code, out, doc = run_glabench(tool, args)
    rows = doc.get("results", [])
    expect(code == 0, f"verify of the pure-PyTorch kernels exits 0 (got {code})")
    committed = [f for f in os.listdir(fixture_dir) if f.endswith(".h5")]
    expect(len(rows) == 2 * len(committed),
           f"one case per fixture and dtype (fp64, fp32): {len(rows)} of {2 * len(committed)}")
    bad = [f"{r['backend']}/{r['fixture']}/{r['dtype']}: {r['status']} {r['message']}"
           for r in rows if r["status"] != "passed"]
    expect(not bad, "every case passes" + ("" if not bad else ": " + "; ".join(bad[:5])))
    fd = [r for r in rows if r["dtype"] == "fp64" and r.get("gradcheck")]
    with_grads = [r for r in rows if r["dtype"] == "fp64" and "forward_only" not in r["fixture"]]
    expect(len(fd) == len(with_grads) and all(r["gradcheck"]["passed"] for r in fd),
           f"the finite-difference check ran and passed on every fp64 case with gradients "
           f"({len(fd)} of {len(with_grads)})")
    names = {t["name"] for r in rows if r["backend"] == "torch.rwkv6" for t in r["tensors"]}
    expect({"o", "ht", "dq", "dk", "dv", "dg", "du", "dh0"} <= names,
           "rwkv6's o, ht and every gradient, du included, are checked")
    # Packed batches (cu_seqlens): the kernels declare varlen, so every such fixture runs,
    # in fp64 with the finite-difference check where it has gradients.
    packed = [r for r in rows if "varlen" in r["fixture"] and r["dtype"] == "fp64"]
    if not packed:
        print("note  no packed-batch (varlen) fixture is committed yet")
    expect(all(r["status"] == "passed" and r.get("gradcheck", {"passed": True})["passed"]
               for r in packed),
           f"every packed-batch fixture passes in fp64 ({len(packed)} cases)")


def faults(tool, fixture_dir):
    fixture = os.path.join(fixture_dir, "gla_tiny.h5")
    cases = {  # kernel: (status, text the message must hold)
        "gla_off_by_one": ("failed", ""),
        "gla_raises": ("failed", "ValueError: this kernel does not like its inputs "
                                 "(at torch_kernels.py:"),
        "gla_segfaults": ("crashed", "signal 11"),
        "gla_hangs": ("timeout", "past the limit of 30 s"),
        "gla_wrong_shape": ("failed", "returned o of shape (1, 1, 3, 3), expected (1, 3, 1, 3)"),
        "gla_wrong_dtype": ("failed", "returned o in torch.float16, expected torch.float64"),
        "gla_not_a_pair": ("failed", "not the pair (o, ht)"),
    }
    # Loading the bridge (torch's import) runs under the limit too: 30 s, not a few.
    args = ["--call-timeout", "30"]
    args += [a for k in cases for a in ("--python", f"{k}={'torch_kernels:' + k}")]
    args += ["verify", "--fixture", fixture, "--dtype", "fp64"]
    args += [a for k in cases for a in ("--backend", k)]
    code, out, doc = run_glabench(tool, args)
    expect(code == 1, f"verify exits 1 when kernels fail (got {code})")
    by_backend = {r["backend"]: r for r in doc.get("results", [])}
    for kernel, (status, text) in cases.items():
        r = by_backend.get(kernel, {})
        expect(r.get("status") == status and text in r.get("message", ""),
               f"{kernel}: {status}, '{text}' (got {r.get('status')}: {r.get('message', '')[:160]})")
    o = [t for t in by_backend.get("gla_off_by_one", {}).get("tensors", []) if t["name"] == "o"]
    expect(bool(o) and not o[0]["passed"], "gla_off_by_one: o fails its check")

    loads = {  # --python value: exit 2 and text the message must hold
        "x=no_such_module:f": "ModuleNotFoundError: No module named 'no_such_module'",
        "x=torch_kernels:no_such": "has no attribute 'no_such'",
        "x=torch_kernels": "SPEC must be MODULE:FUNCTION or FILE.py:FUNCTION",
        "bad name=torch_kernels:gla": "needs a NAME of 1 to 64",
        "x=/no/such/file.py:f": "/no/such/file.py: no such file",
    }
    for value, text in loads.items():
        code, out, _ = run_glabench(tool, ["--python", value, "list"])
        expect(code == 2 and text in out, f"--python {value}: exit 2 naming '{text}' "
                                          f"(got {code}: {out.strip()[:160]})")
    env = dict(os.environ, GLABENCH_PYTHON="/no/such/python3")
    done = subprocess.run([tool, "--python", "x=torch_kernels:gla", "list"], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    expect(done.returncode == 2 and "'/no/such/python3' did not run" in done.stdout,
           f"GLABENCH_PYTHON naming no interpreter: exit 2 naming it (got {done.returncode})")


def api(tool, fixture_dir):
    sys.path.insert(0, HERE)
    import glabench
    import torch_kernels
    gla = os.path.join(fixture_dir, "gla_basic.h5")
    result = glabench.verify(torch_kernels.gla, fixtures=[gla], tool=tool)
    expect(result.passed and len(result.rows) == 2,
           f"glabench.verify(gla) passes on gla_basic in fp64 and fp32:\n{result.table()}")
    result = glabench.verify(torch_kernels.gla_off_by_one, fixtures=[gla], dtypes=["fp64"],
                             tool=tool)
    expect(not result.passed and result.rows[0]["status"] == "failed",
           f"glabench.verify(gla_off_by_one) fails:\n{result.table()}")
    result = glabench.verify(torch_kernels.gla_in_place, fixtures=[gla], tool=tool)
    fd = [r.get("gradcheck", {}).get("passed") for r in result.rows if r["dtype"] == "fp64"]
    expect(result.passed and fd == [True],
           f"outputs='arguments' with the kernel's own backward passes, finite differences "
           f"included:\n{result.table()}")
    result = glabench.verify(torch_kernels.gla_head_8, tool=tool, dtypes=["fp32"],
                             fixtures=[gla, os.path.join(fixture_dir, "gla_k100.h5")])
    status = {r["fixture"]: (r["status"], r["message"]) for r in result.rows}
    expect(status.get("gla_basic", ("",))[0] == "passed" and
           status.get("gla_k100", ("",))[0] == "unsupported" and
           "declares head sizes [8], not K=100" in status["gla_k100"][1],
           f"declared head sizes: K = 8 runs, K = 100 is refused with the reason: {status}")
    code, out, doc = run_glabench(tool, ["--python", "rel=torch_kernels.py:gla", "verify",
                                         "--backend", "rel", "--fixture", os.path.abspath(gla),
                                         "--dtype", "fp64"], cwd=HERE)
    expect(code == 0 and doc.get("results", [{}])[0].get("status") == "passed",
           f"a kernel file named relative to the working folder verifies (got {code})")
    code, out, _ = run_glabench(tool, ["--python", "h8=torch_kernels:gla_head_8", "list"])
    expect(code == 0 and "head sizes 8" in out, "glabench list shows the declared head sizes")
    expect("features:" not in listed(out, "h8"), "a kernel that declares no feature lists none")
    code, out, _ = run_glabench(tool, ["--python", "packed=torch_kernels:gla", "--python",
                                       "fp32=torch_kernels:gla_state_fp32", "list"])
    expect(code == 0 and "features: varlen\n" in listed(out, "packed") and
           "features: fp32 state\n" in listed(out, "fp32"),
           f"glabench list shows the declared features (varlen, fp32 state):\n{out}")
    result = glabench.verify(f"{os.path.join(HERE, 'torch_kernels.py')}:rwkv6",
                             fixtures=[os.path.join(fixture_dir, "rwkv6_basic.h5")],
                             dtypes=["fp32"], tool=tool, name="by_file")
    expect(result.passed and result.rows[0]["backend"] == "by_file",
           f"a kernel named by FILE.py:FUNCTION verifies:\n{result.table()}")


if __name__ == "__main__":
    case, tool, fixture_dir = sys.argv[1:4]
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [HERE] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))
    {"fixtures": fixtures, "faults": faults, "api": api}[case](tool, fixture_dir)
    if failures:
        print(f"{len(failures)} expectation(s) failed")
    sys.exit(1 if failures else 0)
