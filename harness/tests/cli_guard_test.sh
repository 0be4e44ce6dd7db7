#!/usr/bin/env bash
# Writes outside a tensor through the CLI (plugins/overrun_plugin.cpp): verify and bench
# exit 1, print the tensor and where the write landed, and record the failure in their
# JSON; naive_recurrent, verified in the same run, still passes; the in-bounds control
# passes both.
set -u
glabench=$1 plugin_dir=$2 fixture=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir"
source "$(dirname "${BASH_SOURCE[0]}")/cli_checks.sh"
python=${GLABENCH_PYTHON:-python3}
plugin() { echo "$plugin_dir/glabench_backend_test_$1.so"; }

# verify: every backend found (naive_recurrent too) on one fixture, JSON checked.
check_verify() {  # check_verify VARIANT WANT_RC MESSAGE_PART
  local variant=$1 want=$2 part=$3
  expect_rc "$want" "verify $variant" "$glabench" --backend-lib "$(plugin "$variant")" verify \
    --fixture "$fixture" --json "$dir/verify_$variant.json"
  [[ -z "$part" || "$out" == *"$part"* ]] || fail "verify $variant output lacks '$part': $out"
  "$python" - "$dir/verify_$variant.json" "test_$variant" "$part" <<'PY' || fail "verify $variant JSON"
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["results"]
by = {r["backend"]: r for r in rows}
assert by["naive_recurrent"]["status"] == "passed", by["naive_recurrent"]
r = by[sys.argv[2]]
if sys.argv[3]:
    assert r["status"] == "failed", r
    assert sys.argv[3] in r["message"], r["message"]
else:
    assert r["status"] == "passed", r
PY
}
check_verify overrun 1 "test_overrun forward wrote past the end of output 'o'"
check_verify underrun 1 "test_underrun forward wrote before the start of output 'o'"
check_verify overrun_dq 1 "test_overrun_dq backward wrote past the end of output 'dq'"
check_verify overrun_input 1 "test_overrun_input forward wrote past the end of input 'q'"
check_verify inbounds 0 ""

# bench: the guards are checked after the quick verify's call and after sampling.
check_bench() {  # check_bench VARIANT MODE WANT_RC MESSAGE_PART
  local variant=$1 mode=$2 want=$3 part=$4
  expect_rc "$want" "bench $variant $mode" "$glabench" --backend-lib "$(plugin "$variant")" bench \
    --backend "test_$variant" --op gla --dtype fp64 --shape 1,16,2,8,8 --mode "$mode" \
    --time-cap 0.2 --min-reps 5 --json "$dir/bench_${variant}_$mode.json"
  [[ -z "$part" || "$out" == *"$part"* ]] || fail "bench $variant output lacks '$part': $out"
  "$python" - "$dir/bench_${variant}_$mode.json" "$part" <<'PY' || fail "bench $variant $mode JSON"
import json, sys
rows = json.load(open(sys.argv[1]))["benchmarks"]
assert len(rows) == 1, rows
r = rows[0]
if sys.argv[2]:
    assert r["status"] == "failed", r
    assert sys.argv[2] in r["message"], r["message"]
    assert not r.get("samples_ms"), r
else:
    assert r["status"] == "ok", r
PY
}
check_bench overrun fwd 1 "test_overrun forward wrote past the end of output 'o'"
check_bench overrun_dq fwdbwd 1 "test_overrun_dq backward wrote past the end of output 'dq'"
check_bench inbounds fwdbwd 0 ""

if ((failures)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "all guard CLI checks passed"
