#!/usr/bin/env bash
# Backends run isolated: each way a backend can fail in a call (faulty_plugin.cpp) costs
# only its own cases, recorded as CRASHED, TIMEOUT or failed with the reason, in the table
# and the JSON, with exit code 1; a fresh worker carries on with the next case; another
# backend in the same run is untouched; a plugin that crashes while loading is listed as
# not loaded. Also the refusal at call time in bench, and --no-isolate.
set -u
glabench=$1 plugins=$2 fixtures=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir"
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
two_fixtures=(--fixture "$fixtures/gla_basic.h5" --fixture "$fixtures/gla_t1.h5")

# verify FAULT STATUS PATTERN: two cases, each recorded with STATUS and PATTERN.
verify() {
  local fault=$1 status=$2 pattern=$3 json=$dir/$1.json
  out=$(timeout 120 "$glabench" --call-timeout 2 --backend-lib "$plugins/glabench_backend_faulty_$fault.so" \
        verify --backend "faulty_$fault" --backend naive_recurrent "${two_fixtures[@]}" --dtype fp64 \
        --json "$json" 2>&1)
  rc=$?
  [[ $rc == 1 ]] || fail "$fault: exit $rc, expected 1: $out"
  [[ "$out" == *"$pattern"* ]] || fail "$fault: output lacks '$pattern': $out"
  python3 - "$json" "$fault" "$status" <<'PY' || fail "$fault: JSON"
import json, sys
path, fault, status = sys.argv[1:]
rows = json.load(open(path))["results"]
mine = [r for r in rows if r["backend"] == "faulty_" + fault]
naive = [r for r in rows if r["backend"] == "naive_recurrent"]
assert len(mine) == 2 and all(r["status"] == status for r in mine), mine
assert len(naive) == 2 and all(r["status"] == "passed" for r in naive), naive
PY
  echo "ok   $fault: $status ($(grep -o "$pattern[^\"]*" <<<"$out" | head -1))"
}
verify segfault crashed "killed by signal 11"
verify abort crashed "killed by signal 6"
verify throw crashed "killed by signal 6"
verify exit crashed "exited with code 3"
verify hang timeout "past the limit of 2 s"
verify refuse failed "refused at call time"
verify no_device failed "no device at call time"

# The same refusal without isolation: the same verdict.
out=$("$glabench" --no-isolate --backend-lib "$plugins/glabench_backend_faulty_refuse.so" verify \
      --backend faulty_refuse --fixture "$fixtures/gla_basic.h5" --dtype fp64 2>&1)
rc=$?
[[ $rc == 1 && "$out" == *"refused at call time"* ]] || fail "--no-isolate refuse: rc=$rc $out"

# bench: a crash and a call-time refusal are failures (exit 1), recorded in the JSON.
for fault in segfault refuse; do
  out=$(timeout 120 "$glabench" --backend-lib "$plugins/glabench_backend_faulty_$fault.so" bench \
        --backend "faulty_$fault" --shape 1,16,1,8,8 --dtype fp64 --mode fwd \
        --json "$dir/bench_$fault.json" 2>&1)
  rc=$?
  [[ $rc == 1 ]] || fail "bench $fault: exit $rc, expected 1: $out"
  want=$([[ $fault == segfault ]] && echo crashed || echo failed)
  python3 -c "
import json, sys
rows = json.load(open('$dir/bench_$fault.json'))['benchmarks']
assert len(rows) == 1 and rows[0]['status'] == '$want', rows
" || fail "bench $fault: JSON status not $want"
done

# A plugin that crashes while loading: listed as not loaded; asked for by path, exit 2.
mkdir -p "$dir/search" && cp "$plugins/glabench_backend_faulty_load_crash.so" "$dir/search/"
chmod 755 "$dir/search" "$dir/search/glabench_backend_faulty_load_crash.so"
out=$(GLABENCH_BACKEND_PATH=$dir/search timeout 60 "$glabench" list 2>&1)
rc=$?
[[ $rc == 0 && "$out" == *"not loaded"*"faulty_load_crash"*"signal 11"* ]] || fail "list with a crashing plugin: rc=$rc $out"
[[ "$out" == *"naive_recurrent"* ]] || fail "list lost the other backends: $out"
out=$(timeout 60 "$glabench" --backend-lib "$dir/search/glabench_backend_faulty_load_crash.so" verify 2>&1)
rc=$?
[[ $rc == 2 && "$out" == *"signal 11"* ]] || fail "verify with a crashing --backend-lib: rc=$rc $out"

echo "$failures failures"
[[ $failures == 0 ]]
