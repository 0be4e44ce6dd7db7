#!/usr/bin/env bash
# The peer scripts on the CPU, where torch is importable (exit 77 otherwise; the Python is
# $GLABENCH_TORCH_PYTHON, else python3; a CPU-only torch will do):
#   - sdpa_peers.py --device cpu on a tiny shape, causal and full masks, fp32 and bf16, fwd
#     and fwdbwd: rows of glabench's schema, "peer": true, the mask as bench --mask writes
#     it ("causal", /full), o (and lse, flash) verified, bytes and flops as op_cost.cpp
#     counts them; an unknown --mask refused;
#   - fla_peers.py through a stand-in fla (fla_stand_in.py: fla itself needs a GPU): its
#     rows, and its bytes and flops equal to glabench bench's for the same configuration;
#   - glabench compare reads both files, against themselves (all SAME) and against a
#     glabench bench run on this host without --ignore-device (the same device name);
#     glabench report draws all three files.
set -u
glabench=$1 dir=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
peers=$here/../peers
source "$here/../../harness/tests/cli_checks.sh"
torch_python=${GLABENCH_TORCH_PYTHON:-python3}
python=${GLABENCH_PYTHON:-python3}
if ! "$torch_python" -c "import torch" >/dev/null 2>&1; then
  echo "$torch_python cannot import torch: skipped (GLABENCH_TORCH_PYTHON names a Python that can)"
  exit 77
fi
rm -rf "$dir" && mkdir -p "$dir"
shape=1,32,2,16,16

expect_rc 0 "sdpa_peers.py on the cpu" "$torch_python" "$peers/sdpa_peers.py" --device cpu \
  --out "$dir/sdpa.json" --shapes $shape --verify-tokens 16
echo "$out"
expect_rc 2 "sdpa_peers.py refuses an unknown kernel" "$torch_python" "$peers/sdpa_peers.py" \
  --device cpu --out "$dir/bad.json" --kernels flash,fastest
[[ "$out" == *"unknown kernel 'fastest'"* && ! -e "$dir/bad.json" ]] || fail "unknown kernel: $out"
expect_rc 2 "sdpa_peers.py refuses an unknown mask" "$torch_python" "$peers/sdpa_peers.py" \
  --device cpu --out "$dir/bad.json" --mask causal,diag
[[ "$out" == *"--mask: unknown mask 'diag' (one of causal, full)"* && ! -e "$dir/bad.json" ]] ||
  fail "unknown mask: $out"

# A configuration no allowed kernel takes (no efficient kernel on the CPU): a skipped row
# with the reason, which glabench reads.
expect_rc 0 "sdpa_peers.py with no kernel for it" "$torch_python" "$peers/sdpa_peers.py" \
  --device cpu --out "$dir/none.json" --shapes $shape --kernels efficient --dtypes fp32 \
  --modes fwd --mask causal
"$python" - "$dir/none.json" <<'PY' || fail "skipped row"
import json, sys
rows = json.load(open(sys.argv[1]))["benchmarks"]
assert len(rows) == 1 and rows[0]["status"] == "skipped" and rows[0]["samples_ms"] == [], rows
assert rows[0]["causal"] is True and rows[0]["backend"] == "torch.sdpa", rows[0]
assert rows[0]["message"].startswith("no SDPA kernel runs this here: efficient: "), rows[0]
PY
expect_rc 0 "compare reads a skipped peer row" "$glabench" compare "$dir/none.json" "$dir/none.json"
[[ "$out" == *SKIPPED* ]] || fail "compare of the skipped row: $out"

expect_rc 0 "fla_peers.py with the stand-in fla" "$torch_python" "$here/fla_stand_in.py" \
  --out "$dir/fla.json" --kernels fla.chunk_gla,fla.fused_recurrent_rwkv6 --shapes $shape \
  --dtypes bf16,fp32 --verify-tokens 16
echo "$out"

expect_rc 0 "glabench bench on the host" "$glabench" bench --backend naive_recurrent --op gla \
  --dtype fp32 --shape $shape --time-cap 0.2 --min-reps 5 --json "$dir/naive.json"

"$python" - "$dir/sdpa.json" "$dir/fla.json" "$dir/naive.json" <<'PY' || fail "peer rows"
import json, sys
sdpa, fla, naive = (json.load(open(p)) for p in sys.argv[1:])
B, T, H, K, V = 1, 32, 2, 16, 16
for d in (sdpa, fla):
    c = d["context"]
    assert c["glabench_results"] == "bench" and c["peers"] is True, c
    assert c["device"] == naive["context"]["device"], (c["device"], naive["context"]["device"])
    assert c["peaks"]["host"]["copy_gbps"] > 0, c["peaks"]
    for r in d["benchmarks"]:
        assert r["peer"] is True and r["status"] == "ok" and r["ran_on"] == "host", r["name"]
        assert len(r["samples_ms"]) >= 5 and r["p20_ms"] <= r["median_ms"] <= r["p80_ms"], r
        assert r["checks"] and all(c["passed"] for c in r["checks"]), r["checks"]
        assert r["checks"][0]["tensor"] == "o" and r["message"] == "", r

# SDPA: every configuration, the mask as bench --mask writes it, lse checked where flash ran.
rows = {(r["backend"], r["dtype"], r["mode"], r["causal"]): r for r in sdpa["benchmarks"]}
want = {("torch.sdpa", d, m, c) for d in ("bf16", "fp32") for m in ("fwd", "fwdbwd")
        for c in (True, False)}
assert set(rows) == want and len(sdpa["benchmarks"]) == len(want), sorted(rows)
for (backend, dtype, mode, causal), r in rows.items():
    assert r["op"] == "softmax_attn", r
    name = f"torch.sdpa/softmax_attn/{dtype}/{mode}/B{B}_T{T}_H{H}_K{K}_V{V}"
    assert r["name"] == (name if causal else name + "/full"), r["name"]
    tensors = [c["tensor"] for c in r["checks"]]
    if r["sdpa_kernel"] == "flash":
        assert tensors == ["o", "lse"], tensors
    else:
        assert tensors == ["o"] and "lse" in r["unchecked"], r
    # op_cost.cpp: o, lse out; q k v in; backward reads q k v o do lse, writes dq dk dv.
    width = 4 if dtype == "fp32" else 2
    elements = 2 * B * T * H * K + B * T * H * V + B * T * H * V + B * T * H
    if mode == "fwdbwd":
        elements += 2 * B * T * H * K + 3 * B * T * H * V + B * T * H + 2 * B * T * H * K + B * T * H * V
    flops = (0.5 if r["causal"] else 1.0) * 4 * B * H * T * T * K * (3.5 if mode == "fwdbwd" else 1)
    assert r["bytes"] == elements * width and r["flops"] == flops, (r["name"], r["bytes"], r["flops"])
# fla's rows are causal (gla and rwkv6 are), as bench writes them.
assert all(r["causal"] is True and not r["name"].endswith("/full") for r in fla["benchmarks"])
assert sdpa["context"]["bench_options"]["sdpa_kernels"] == ["flash", "efficient", "math"]

# fla through the stand-in: bytes and flops are glabench's for the same configuration.
ours = {(r["op"], r["dtype"], r["mode"]): r for r in naive["benchmarks"]}
theirs = {(r["op"], r["dtype"], r["mode"]): r for r in fla["benchmarks"]
          if r["backend"] == "fla.chunk_gla"}
assert len(fla["benchmarks"]) == 8, len(fla["benchmarks"])
for key in (("gla", "fp32", "fwd"), ("gla", "fp32", "fwdbwd")):
    assert (ours[key]["bytes"], ours[key]["flops"]) == (theirs[key]["bytes"], theirs[key]["flops"]), key
assert fla["context"]["fla_version"] == "stand-in"
print("peer rows ok:", len(sdpa["benchmarks"]), "sdpa,", len(fla["benchmarks"]), "fla")
PY

# glabench reads them: against themselves, and against a bench on this host.
for f in sdpa fla; do
  expect_rc 0 "compare $f with itself" "$glabench" compare "$dir/$f.json" "$dir/$f.json" \
    --json "$dir/$f.self.json"
  "$python" - "$dir/$f.self.json" <<'PY' || fail "compare $f with itself: not all SAME"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert rows and all(r["status"] == "SAME" for r in rows), [(r["name"], r["status"]) for r in rows]
PY
  expect_rc 0 "compare a host bench with $f" "$glabench" compare "$dir/naive.json" "$dir/$f.json"
done
[[ "$out" == *"fla.chunk_gla"* ]] || fail "compare does not list the peer rows: $out"

if "$python" -c "import matplotlib" >/dev/null 2>&1; then
  expect_rc 0 "report with peers" "$glabench" report "$dir/naive.json" "$dir/fla.json" \
    "$dir/sdpa.json" --out "$dir/report" --baseline fla.chunk_gla
  grep -q "| torch.sdpa | softmax_attn | bf16 | fwd |" "$dir/report/report.md" ||
    fail "report lacks the SDPA rows"
  # (report.md's speed-up table pairs rows of one file; the plot pairs across files.)
  "$python" - "$dir/report/plots.json" <<'PY' || fail "no speed-up of ours over fla drawn"
import json, sys
bars = json.load(open(sys.argv[1]))["speedup"]["content"]["bars"]
for mode in ("fwd", "fwdbwd"):
    assert any(b.startswith(f"naive_recurrent: gla fp32 {mode} · B1 T32 H2 D16:") for b in bars), bars
PY
else
  echo "matplotlib is missing: report not drawn"
fi

echo "$failures failures"
[[ $failures == 0 ]]
