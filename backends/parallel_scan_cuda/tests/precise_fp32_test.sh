#!/usr/bin/env bash
# Precise fp32 (PARALLEL_SCAN_CUDA_FP32_STATE=64, launch.cu): `glabench verify` of the fp32
# forward and backward on the gla fixtures given must pass, and o and ht must come within
# rel_l2 1e-7 of the fp64 reference (issue 4's fp32 target; the fast mode's o is ~1.5e-7).
# Skipped (77) without a GPU.
# usage: precise_fp32_test.sh GLABENCH FIXTURE...
set -u
glabench=$1
shift
json=$(mktemp --suffix=.json)
trap 'rm -f "$json"' EXIT
args=()
for f in "$@"; do args+=(--fixture "$f"); done
PARALLEL_SCAN_CUDA_FP32_STATE=64 "$glabench" verify --backend parallel_scan_cuda --op gla --dtype fp32 \
  "${args[@]}" --json "$json"
status=$?
case $status in 77) echo "no usable GPU: skipped"; exit 77 ;; 0) ;; *) exit "$status" ;; esac
python3 - "$json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
bad = [f"{r['fixture']} {t['name']} rel_l2 {t['rel_l2']:.3g} > 1e-7"
       for r in results for t in r["tensors"] if t["name"] in ("o", "ht") and not t["rel_l2"] <= 1e-7]
for line in bad:
    print("precise fp32:", line)
print(f"precise fp32: o and ht within 1e-7 on {len(results) - len(bad)} of {len(results)} fixtures" if not bad else "")
sys.exit(1 if bad or not results else 0)
PY
