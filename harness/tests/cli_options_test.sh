#!/usr/bin/env bash
# Every numeric option of every subcommand rejects NaN, infinities, overflow and values
# out of its range with exit 2 and a message naming the option, the value and the rule
# (harness/cli/option_checks.hpp), before anything runs; values in range are taken as
# written. The compare runs use valid results files, so that a value let through would
# show as exit 0 or 1, not as an error about the files.
set -u
glabench=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir"
python=${GLABENCH_PYTHON:-python3}
failures=0 checked=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# A results file with one timed row, and a copy 30% slower.
"$python" - "$dir/base.json" "$dir/slow.json" <<'PY'
import json, sys
row = {"name": "k/gla/fp64/fwd/B1_T64_H1_K4_V4", "backend": "k", "op": "gla", "dtype": "fp64",
       "mode": "fwd", "B": 1, "T": 64, "H": 1, "K": 4, "V": 4, "hot": False, "status": "ok",
       "ran_on": "host", "message": "", "checks": [], "bytes": 1.0, "flops": 1.0,
       "noise_target_met": True, "samples_ms": [1.0 + 0.001 * ((i * 7) % 20) for i in range(20)]}
ctx = {"glabench_results": "bench", "schema_version": 1, "device": "cpu: test", "peaks": {}}
json.dump({"context": ctx, "benchmarks": [row]}, open(sys.argv[1], "w"))
row["samples_ms"] = [x * 1.3 for x in row["samples_ms"]]
json.dump({"context": ctx, "benchmarks": [row]}, open(sys.argv[2], "w"))
PY

# rejects OPTION RULE VALUE... -- COMMAND...: each VALUE of OPTION exits 2 naming both.
rejects() {
  local option=$1 rule=$2; shift 2
  local values=()
  while [[ $1 != -- ]]; do values+=("$1"); shift; done
  shift
  for value in "${values[@]}"; do
    checked=$((checked + 1))
    out=$("$@" "$option" "$value" 2>&1); rc=$?
    [[ $rc == 2 ]] || fail "$* $option $value: exit $rc, expected 2: $out"
    [[ "$out" == *"$option: '$value': must be $rule"* ]] ||
      fail "$* $option $value: message lacks '$option: '$value': must be $rule': $out"
  done
}
nonfinite=(nan NaN -nan inf -inf infinity 1e400 '' abc 1,5 0x10)
compare=("$glabench" compare "$dir/base.json" "$dir/slow.json")
bench=("$glabench" bench --backend naive_recurrent --op gla --dtype fp64 --mode fwd
       --shape 1,16,1,4,4 --json "$dir/bad.json")

rejects --fail-on-regression "a finite number ≥ 0 (a percentage)" "${nonfinite[@]}" -1 -0.001 \
  -- "${compare[@]}"
rejects --alpha "a finite number in (0, 1) (the U test's significance level)" "${nonfinite[@]}" \
  -1 0 1 1.5 -- "${compare[@]}" --fail-on-regression 5
rejects --min-change "a finite number in [0, 1)" "${nonfinite[@]}" -0.1 1 7 \
  -- "${compare[@]}" --fail-on-regression 5
rejects --min-change-host "a finite number in [0, 1)" "${nonfinite[@]}" -0.1 1 7 \
  -- "${compare[@]}" --fail-on-regression 5
rejects --tolerance "a finite number in [0, 1) (a relative L2 error" "${nonfinite[@]}" -1e-3 1 2 \
  -- "$glabench" verify --backend naive_recurrent --json "$dir/bad.json"
rejects --noise-target "a finite number in (0, 1]" "${nonfinite[@]}" 0 -0.01 5 -- "${bench[@]}"
rejects --time-cap "a finite number in (0, 86400] (seconds)" "${nonfinite[@]}" 0 -1 1e9 \
  -- "${bench[@]}"
rejects --max-call-seconds "a finite number in (0, 86400] (seconds)" "${nonfinite[@]}" 0 -1 \
  -- "${bench[@]}"
ints=(nan inf 1e3 2.5 '' abc 0x10 +5 ' 5' 99999999999999999999 010 -010)
rejects --min-reps "a whole number in [1, 1000000]" "${ints[@]}" 0 -1 1000001 -- "${bench[@]}"
rejects --max-reps "a whole number in [1, 1000000]" "${ints[@]}" 0 -1 1000001 -- "${bench[@]}"
rejects --warmup "a whole number in [0, 1000000]" "${ints[@]}" -1 1000001 -- "${bench[@]}"
rejects --seed "a whole number in [0, 18446744073709551615]" "${ints[@]}" -1 \
  18446744073709551616 -- "${bench[@]}"

out=$("${bench[@]}" --warmup 010 2>&1); rc=$?
[[ $rc == 2 && "$out" == *"without leading zeros (CLI11 reads them as octal)"* ]] ||
  fail "--warmup 010 (octal to CLI11): $rc $out"

# --shape: each part a positive integer, and B·T·H·K·V within 2^62.
for shape in 1,nan,1,4,4 1,inf,1,4,4 1,16,1,4,4.5 1,16,1,4,1e3 1,-16,1,4,4 0,16,1,4,4 \
             1,99999999999999999999,1,4,4 4194304,4194304,4194304,1,1 1,16,1,4; do
  checked=$((checked + 1))
  out=$("$glabench" bench --backend naive_recurrent --shape "$shape" --json "$dir/bad.json" 2>&1)
  rc=$?
  [[ $rc == 2 && "$out" == *"--shape '$shape'"* ]] || fail "--shape $shape: exit $rc: $out"
done
[[ ! -e "$dir/bad.json" ]] || fail "a rejected option wrote a results file"

# --mask: causal or full, or a comma-separated list of them; anything else exits 2 naming
# --mask and the allowed values, before anything runs.
rejects --mask "causal or full, or a comma-separated list of them (softmax_attn's masks)" \
  diag '' Causal FULL noncausal none causal, ,full causal,,full "causal full" causal,diag \
  -- "${bench[@]}"
[[ ! -e "$dir/bad.json" ]] || fail "a rejected --mask wrote a results file"

# Between two options: --min-reps above --max-reps.
out=$("${bench[@]}" --min-reps 20 --max-reps 10 2>&1); rc=$?
[[ $rc == 2 && "$out" == *"--min-reps 20 must be ≤ --max-reps 10"* ]] || fail "min > max reps: $rc $out"

# In range: taken as written (the largest seed is a seed).
out=$("$glabench" bench --backend naive_recurrent --op gla --dtype fp64 --mode fwd \
  --shape 1,16,1,4,4 --time-cap 0.05 --min-reps 10 --max-reps 20 --warmup 0 \
  --seed 18446744073709551615 --noise-target 1 --max-call-seconds 86400 \
  --json "$dir/good.json" 2>&1)
rc=$?; [[ $rc == 0 ]] || fail "bench with options in range: exit $rc: $out"
"$python" - "$dir/good.json" <<'PY' || fail "bench options recorded"
import json, sys
o = json.load(open(sys.argv[1]))["context"]["bench_options"]
assert o["min_reps"] == 10 and o["max_reps"] == 20 and o["warmup"] == 0, o
assert o["seed"] == 18446744073709551615 and o["noise_target"] == 1 and o["time_cap_s"] == 0.05, o
PY
for args in "--fail-on-regression 0 --alpha 0.01" "--fail-on-regression 1e3 --min-change 0" \
            "--fail-on-regression 5 --min-change-host 0.999 --alpha 0.999"; do
  # shellcheck disable=SC2086
  out=$("${compare[@]}" $args 2>&1); rc=$?
  [[ $rc == 0 || $rc == 1 ]] || fail "compare $args: exit $rc: $out"
done
# Which one: 30% slower fails a 5% gate, passes a 50% one, and a 0.999 drift floor calls it SAME.
out=$("${compare[@]}" --fail-on-regression 5 2>&1); [[ $? == 1 ]] || fail "5% gate: $out"
out=$("${compare[@]}" --fail-on-regression 50 2>&1); [[ $? == 0 ]] || fail "50% gate: $out"
out=$("${compare[@]}" --fail-on-regression 5 --min-change-host 0.999 2>&1)
[[ $? == 0 && "$out" == *"1 SAME"* ]] || fail "0.999 drift floor: $out"

echo "$checked bad values checked, $failures failures"
[[ $checked -ge 150 && $failures == 0 ]]
