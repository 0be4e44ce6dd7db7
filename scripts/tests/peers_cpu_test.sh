#!/usr/bin/env bash
# The peer scripts on the CPU, where torch is importable (exit 77 otherwise; the Python is
# $GLABENCH_TORCH_PYTHON, else python3; a CPU-only torch will do):
#   - bench_policy.py's gate regimes: each drawn as named (its x recovered from g, its
#     mean), the cliff's -30 tokens and 0 features exactly where stated; row names;
#   - sdpa_peers.py --device cpu on a tiny shape, causal and full masks, fp32 and bf16, fwd
#     and fwdbwd: rows of glabench's schema, "peer": true, the mask as bench --mask writes
#     it ("causal", /full), "timing" and no "gates", o (and lse, flash) verified, the timed
#     outputs checked, bytes and flops as op_cost.cpp counts them; an unknown --mask or
#     --timing refused; --each-kernel's peers, each running its kernel alone (cudnn: none
#     on the CPU, a skipped row); --timing graph: skipped rows (graph timing needs CUDA);
#   - fla_peers.py through a stand-in fla (fla_stand_in.py: fla itself needs a GPU): its
#     rows, named and tagged by gate regime (default mild; --gates all: every regime) and
#     timing, and its bytes and flops equal to glabench bench's for the same configuration;
#     a kernel whose timed calls' o drifts from the verify's (--drift): a failed row;
#   - glabench compare reads both files, against themselves (all SAME) and against a
#     glabench bench run on this host without --ignore-device (the same device name), and
#     the --gates all rows where this glabench keys rows by regime (bench --gates);
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

"$torch_python" - "$peers" <<'PY' || fail "gate regimes and row names"
import sys
sys.path.insert(0, sys.argv[1])
import torch
from bench_policy import GATE_REGIMES, Config, gates
assert GATE_REGIMES == ("model", "mild", "fla", "strong", "cliff"), GATE_REGIMES
B, T, H, K = 2, 128, 4, 64
x = torch.randn(B, T, H, K, dtype=torch.float64, generator=torch.Generator().manual_seed(7))
drawn = {r: gates(r, x) for r in GATE_REGIMES}
assert all(g.dtype == torch.float64 and g.shape == x.shape for g in drawn.values())
assert all((g <= 0).all() for g in drawn.values())

def logit_of_exp(g):  # the x of g = log σ(x)
    return g - torch.log(-torch.expm1(g))

# Each regime's x, recovered from its g: the named normal, from the same draws.
for regime, x_of_g, shift in (("model", logit_of_exp(16 * drawn["model"]), 0.0),
                              ("mild", logit_of_exp(drawn["mild"]), 2.0),
                              ("fla", logit_of_exp(drawn["fla"]), 0.0),
                              ("strong", torch.log(-drawn["strong"]), -0.5)):
    err = (x_of_g - (x + shift)).abs().max().item()
    assert err < 1e-9, (regime, err)
    assert abs(x_of_g.mean().item() - shift) < 0.03 and abs(x_of_g.std().item() - 1) < 0.03, \
        (regime, x_of_g.mean().item(), x_of_g.std().item())
# The gates' means, as the regimes are described (model ≈ -0.05, mild ≈ -0.18, fla ≈ -0.81,
# strong ≈ -1.0).
for regime, mean, within in (("model", -0.0504, 0.002), ("mild", -0.1828, 0.01),
                             ("fla", -0.806, 0.02), ("strong", -1.0, 0.05)):
    assert abs(drawn[regime].mean().item() - mean) < within, (regime, drawn[regime].mean().item())

# cliff: mild, then -30 at every feature of tokens t % 53 == 17, then 0 at every token of
# features k % 8 == 3 (zeros win), exactly.
t = torch.arange(T).view(1, T, 1, 1).expand_as(x)
k = torch.arange(K).view(1, 1, 1, K).expand_as(x)
zero, cliff = k % 8 == 3, (t % 53 == 17) & (k % 8 != 3)
g = drawn["cliff"]
assert (g[zero] == 0).all() and (g[cliff] == -30).all()
assert torch.equal(g[~zero & ~cliff], drawn["mild"][~zero & ~cliff])
assert zero.sum() == B * T * H * K // 8 and cliff.sum() == B * 3 * H * (K - K // 8)
assert (drawn["mild"] < 0).all()  # so the zeros are the cliff's alone

shape = (4, 1024, 4, 100, 100)
assert Config("b", "gla", "bf16", "fwd", shape, gates="mild").name() == \
    "b/gla/bf16/fwd/B4_T1024_H4_K100_V100/gates-mild"
assert Config("b", "rwkv6", "fp32", "fwdbwd", shape, gates="cliff", timing="graph").name() == \
    "b/rwkv6/fp32/fwdbwd/B4_T1024_H4_K100_V100/gates-cliff/graph"
assert Config("b", "softmax_attn", "bf16", "fwd", shape, causal=False, timing="graph").name() == \
    "b/softmax_attn/bf16/fwd/B4_T1024_H4_K100_V100/full/graph"
assert Config("b", "softmax_attn", "bf16", "fwd", shape).name() == \
    "b/softmax_attn/bf16/fwd/B4_T1024_H4_K100_V100"
print("gate regimes and row names ok")
PY

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
expect_rc 2 "sdpa_peers.py refuses an unknown timing" "$torch_python" "$peers/sdpa_peers.py" \
  --device cpu --out "$dir/bad.json" --timing eager --timing lazy
[[ "$out" == *"--timing: unknown timing 'lazy' (one of eager, graph)"* && ! -e "$dir/bad.json" ]] ||
  fail "unknown timing: $out"
expect_rc 2 "fla_peers.py refuses an unknown gate regime" "$torch_python" "$here/fla_stand_in.py" \
  --out "$dir/bad.json" --gates mild,soft
[[ "$out" == *"--gates: unknown gate regime 'soft' (one of model, mild, fla, strong, cliff, all)"* &&
   ! -e "$dir/bad.json" ]] || fail "unknown gate regime: $out"

# One peer per kernel, eager and graph: flash and math time on the CPU, cudnn does not run
# there, and graph timing needs CUDA.
expect_rc 0 "sdpa_peers.py --each-kernel --timing eager,graph" "$torch_python" \
  "$peers/sdpa_peers.py" --device cpu --out "$dir/each.json" --shapes $shape --verify-tokens 16 \
  --kernels flash,math,cudnn --each-kernel --timing eager,graph --dtypes fp32 --mask causal
echo "$out"
"$python" - "$dir/each.json" <<'PY' || fail "--each-kernel and --timing graph rows"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["context"]["bench_options"]["sdpa_each_kernel"] is True, d["context"]["bench_options"]
assert d["context"]["bench_options"]["timing"] == ["eager", "graph"]
rows = {r["name"]: r for r in d["benchmarks"]}
base = "softmax_attn/fp32/{}/B1_T32_H2_K16_V16"
want = {f"torch.sdpa.{k}/{base.format(m)}{g}" for k in ("flash", "math", "cudnn")
        for m in ("fwd", "fwdbwd") for g in ("", "/graph")}
assert set(rows) == want and len(d["benchmarks"]) == len(want), sorted(rows)
for name, r in rows.items():
    kernel = r["backend"].split(".")[-1]
    assert "gates" not in r and r["timing"] == ("graph" if name.endswith("/graph") else "eager"), r
    if kernel == "cudnn":
        assert r["status"] == "skipped", r
        assert r["message"].startswith("no SDPA kernel runs this here: cudnn: "), r["message"]
    elif r["timing"] == "graph":
        assert r["status"] == "skipped" and r["samples_ms"] == [], r
        assert r["message"] == "graph timing needs CUDA (a CUDA graph); this run is on the CPU", r
    else:
        assert r["status"] == "ok" and r["sdpa_kernel"] == kernel and "sdpa_refused" not in r, r
        assert r["timed_outputs_identical"] or r["timed_outputs_rel_l2"] <= 1e-5, r
print("--each-kernel and graph rows ok:", len(rows))
PY

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

# Every gate regime (T 64 holds a cliff token, 17; K 16 two zero features, 3 and 11), eager
# and graph (skipped on the CPU).
expect_rc 0 "fla_peers.py --gates all --timing eager --timing graph" "$torch_python" \
  "$here/fla_stand_in.py" --out "$dir/gates.json" --kernels fla.chunk_gla --shapes 1,64,2,16,16 \
  --dtypes fp32 --verify-tokens 64 --gates all --timing eager --timing graph
echo "$out"
"$python" - "$dir/gates.json" <<'PY' || fail "--gates all rows"
import json, sys
d = json.load(open(sys.argv[1]))
regimes = ["model", "mild", "fla", "strong", "cliff"]
assert d["context"]["bench_options"]["gates"] == regimes, d["context"]["bench_options"]
rows = d["benchmarks"]
assert [r["gates"] for r in rows] == [g for g in regimes for _ in range(4)], [r["name"] for r in rows]
for r in rows:
    name = f"fla.chunk_gla/gla/fp32/{r['mode']}/B1_T64_H2_K16_V16/gates-{r['gates']}"
    if r["timing"] == "graph":
        assert r["name"] == name + "/graph" and r["status"] == "skipped", r
        assert "graph timing needs CUDA" in r["message"] and "timed_outputs_identical" not in r, r
    else:
        assert r["timing"] == "eager" and r["name"] == name and r["status"] == "ok", r
        assert r["checks"][0]["passed"] and r["timed_outputs_identical"] is True, r
        assert r["timed_outputs_rel_l2"] == 0, r
print("--gates all rows ok:", len(rows))
PY

# A kernel whose timed calls give another o than the verify saw: the row fails, saying so.
expect_rc 0 "fla_peers.py with a drifting stand-in" "$torch_python" "$here/fla_stand_in.py" \
  --drift --out "$dir/drift.json" --kernels fla.chunk_gla --shapes $shape --dtypes fp32 \
  --modes fwd --verify-tokens 16
"$python" - "$dir/drift.json" <<'PY' || fail "a drifting timed output"
import json, sys
[r] = json.load(open(sys.argv[1]))["benchmarks"]
assert r["status"] == "failed" and r["error_occurred"] is True and r["checks"][0]["passed"], r
assert r["message"].startswith("the timed call's output differs from the verified call's: "
                               "o rel_l2 "), r["message"]
assert r["timed_outputs_identical"] is False and r["timed_outputs_rel_l2"] > 1e-5, r
assert r["samples_ms"] == [] and "median_ms" not in r, r  # no time, as glabench's failed rows
print("drifting timed output:", r["message"])
PY
expect_rc 0 "compare reads a failed peer row" "$glabench" compare "$dir/drift.json" "$dir/drift.json"
[[ "$out" == *FAILED* ]] || fail "compare of the failed row: $out"

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
        assert r["timing"] == "eager" and type(r["timed_outputs_identical"]) is bool, r
        assert r["timed_outputs_identical"] or r["timed_outputs_rel_l2"] <= 1e-5, r

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
assert not any("gates" in r for r in sdpa["benchmarks"])
# fla's rows are causal (gla and rwkv6 are), as bench writes them, of the default gate
# regime, mild, which their names end with.
assert all(r["causal"] is True and r["gates"] == "mild" and r["name"].endswith("/gates-mild")
           for r in fla["benchmarks"]), [r["name"] for r in fla["benchmarks"]]
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
if "$glabench" bench --help 2>&1 | grep -q -- "--gates"; then
  expect_rc 0 "compare the --gates all rows with themselves" "$glabench" compare \
    "$dir/gates.json" "$dir/gates.json" --json "$dir/gates.self.json"
  "$python" - "$dir/gates.self.json" <<'PY' || fail "compare of the --gates all rows"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert len(rows) == 20, len(rows)
assert all(r["status"] == ("SKIPPED" if r["name"].endswith("/graph") else "SAME") for r in rows), \
    [(r["name"], r["status"]) for r in rows]
PY
else
  echo "this glabench does not key rows by gate regime (no bench --gates): compare of the" \
       "--gates all rows not run"
fi

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
