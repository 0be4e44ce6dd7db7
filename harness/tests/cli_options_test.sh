#!/usr/bin/env bash
# Every numeric option of every subcommand rejects NaN, infinities, overflow and values
# out of its range with exit 2 and a message naming the option, the value and the rule
# (harness/cli/option_checks.hpp), before anything runs; values in range are taken as
# written. The options are found in each command's --help: each that takes a value is
# listed below as numeric or as taking words, and every numeric one is run with nan and
# inf. The command lines are valid but for the option tried (the compare runs use valid
# results files), so that a value let through would show as exit 0 or 1.
set -u
glabench=$1 fixture=$2 dir=$3
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

# with OPTION VALUE COMMAND...: COMMAND with OPTION VALUE in place of its word {}, or
# appended when it has none (a global option goes before the subcommand).
with() {
  local option=$1 value=$2 placed=0; shift 2
  cmd=()
  for word in "$@"; do
    if [[ $word == "{}" ]]; then cmd+=("$option" "$value") placed=1; else cmd+=("$word"); fi
  done
  ((placed)) || cmd+=("$option" "$value")
}
# rejects OPTION RULE VALUE... -- COMMAND...: each VALUE of OPTION exits 2 naming both.
rejects() {
  local option=$1 rule=$2; shift 2
  local values=()
  while [[ $1 != -- ]]; do values+=("$1"); shift; done
  shift
  for value in "${values[@]}"; do
    checked=$((checked + 1))
    with "$option" "$value" "$@"
    out=$("${cmd[@]}" 2>&1); rc=$?
    [[ $rc == 2 ]] || fail "${cmd[*]}: exit $rc, expected 2: $out"
    [[ "$out" == *"$option: '$value': must be $rule"* ]] ||
      fail "${cmd[*]}: message lacks '$option: '$value': must be $rule': $out"
  done
}
nonfinite=(nan NaN -nan inf -inf infinity 1e400 '' abc 1,5 0x10)
compare=("$glabench" compare "$dir/base.json" "$dir/slow.json")
bench=("$glabench" bench --backend naive_recurrent --op gla --dtype fp64 --mode fwd
       --shape 1,16,1,4,4 --json "$dir/bad.json")
verify=("$glabench" verify --backend naive_recurrent --fixture "$fixture" --json "$dir/bad.json")
decode_drift=("$glabench" decode-drift --backend naive_recurrent --op gla --dtype fp64 --steps 4
              --json "$dir/bad.json")

# --- Every option, from the commands' --help ---------------------------------------------
# Each option that takes a value is numeric or takes words (names, paths, choices); one in
# neither list fails, so that a new option is placed, and a numeric one tried, here.
numeric=(
  "--call-timeout"
  "fixtures show --max-fixture-bytes"
  "verify --tolerance" "verify --devices" "verify --max-fixture-bytes"
  "bench --shape" "bench --devices" "bench --noise-target" "bench --min-reps" "bench --max-reps"
  "bench --time-cap" "bench --max-call-seconds" "bench --warmup" "bench --seed"
  "compare --fail-on-regression" "compare --min-change" "compare --min-change-host"
  "compare --alpha"
  "decode-drift --shape" "decode-drift --steps" "decode-drift --tolerance" "decode-drift --seed"
  "decode-drift --devices"
)
words=(
  "--backend-lib" "--python"
  "fixtures make --out" "fixtures make --preset" "fixtures make --only"
  "verify --backend" "verify --op" "verify --fixture" "verify --dtype" "verify --json"
  "bench --backend" "bench --op" "bench --shapes" "bench --dtype" "bench --mode" "bench --mask"
  "bench --gates" "bench --timing" "bench --json"
  "compare --backend" "compare --json"
  "report --out" "report --baseline"
  "decode-drift --backend" "decode-drift --op" "decode-drift --dtype" "decode-drift --gates"
  "decode-drift --json"
)
# options_of [COMMAND...]: "COMMAND --option" for each option of COMMAND that takes a
# value (its --help shows a type after the name: TEXT, FLOAT:…, SIZE, LIST), and the same
# for each of its subcommands.
options_of() {
  local help sub
  help=$("$glabench" "$@" --help) || { fail "glabench $* --help: exit $?"; return; }
  sed -n '/^Options:/,/^$/p' <<<"$help" |
    sed -nE 's/^  (-[a-zA-Z],)?(--[a-z0-9-]+) [A-Z]+([ :=].*)?$/\2/p' |
    while read -r option; do echo "${*:+$* }$option"; done
  for sub in $(sed -n '/^Subcommands:/,/^$/p' <<<"$help" | awk 'NR > 1 && NF { print $1 }'); do
    options_of "$@" "$sub"
  done
}
listed() { local x=$1; shift; for y in "$@"; do [[ $x == "$y" ]] && return 0; done; return 1; }
mapfile -t found < <(options_of)
echo "${#found[@]} options take a value: ${found[*]}"
((${#found[@]} >= ${#numeric[@]} + ${#words[@]})) || fail "only ${#found[@]} options in --help: ${found[*]}"
for option in "${found[@]}"; do
  listed "$option" "${numeric[@]}" "${words[@]}" ||
    fail "'$option' (in --help) is neither numeric nor words here: list it, and try it if numeric"
done
for option in "${numeric[@]}" "${words[@]}"; do
  listed "$option" "${found[@]}" || fail "'$option' is listed here but not in --help"
done

# Each numeric option with nan and inf, on a command line valid but for it: exit 2, the
# message naming the option and the value.
for entry in "${numeric[@]}"; do
  command=${entry% *} option=${entry##* }
  [[ $command == "$option" ]] && command=""
  case $command in
    "") base=("$glabench" {} list) ;;
    "fixtures show") base=("$glabench" fixtures show {} "$fixture") ;;
    verify) base=("${verify[@]}") ;;
    bench) base=("${bench[@]}") ;;
    compare) base=("${compare[@]}") ;;
    decode-drift) base=("${decode_drift[@]}") ;;
    *) fail "no command line to try '$entry' on"; continue ;;
  esac
  for value in nan -nan NaN inf -inf; do
    checked=$((checked + 1))
    with "$option" "$value" "${base[@]}"
    out=$("${cmd[@]}" 2>&1); rc=$?
    [[ $rc == 2 ]] || fail "${cmd[*]}: exit $rc, expected 2: $out"
    [[ "$out" == *"$option"*"'$value'"* ]] || fail "${cmd[*]}: message does not name $option and '$value': $out"
  done
done
[[ ! -e "$dir/bad.json" ]] || fail "a NaN or infinite option wrote a results file"

rejects --fail-on-regression "a finite number ≥ 0 (a percentage)" "${nonfinite[@]}" -1 -0.001 \
  -- "${compare[@]}"
rejects --alpha "a finite number in (0, 1) (the U test's significance level)" "${nonfinite[@]}" \
  -1 0 1 1.5 -- "${compare[@]}" --fail-on-regression 5
rejects --min-change "a finite number in [0, 1)" "${nonfinite[@]}" -0.1 1 7 \
  -- "${compare[@]}" --fail-on-regression 5
rejects --min-change-host "a finite number in [0, 1)" "${nonfinite[@]}" -0.1 1 7 \
  -- "${compare[@]}" --fail-on-regression 5
rejects --tolerance "a finite number in [0, 1) (a relative L2 error" "${nonfinite[@]}" -1e-3 1 2 \
  -- "${verify[@]}"
rejects --tolerance "a finite number in [0, 1) (a relative L2 error" "${nonfinite[@]}" -1e-3 1 2 \
  -- "${decode_drift[@]}"
# --call-timeout: CLI11's PositiveNumber let NaN through, and with it nothing was ever stopped.
rejects --call-timeout "a finite number in (0, 86400] (seconds)" "${nonfinite[@]}" 0 -1 86401 \
  -- "$glabench" {} list
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
rejects --seed "a whole number in [0, 18446744073709551615]" "${ints[@]}" -1 \
  18446744073709551616 -- "${decode_drift[@]}"
rejects --steps "a whole number in [1, 1000000]" "${ints[@]}" 0 -1 1000001 -- "${decode_drift[@]}"

# --max-fixture-bytes: a whole number of bytes with an optional unit, read strictly
# (CLI11's AsSizeValue read -1 as 2^64 - 1, 010 as 8, 0x10 as 16, and wrapped on overflow).
bytes_rule="a whole number of bytes ≥ 1 in decimal without leading zeros, optionally with a unit"
sizes=("${nonfinite[@]}" -1 0 010 1.5 1e3 +5 ' 5' 5B 5kiB5 5KB5 18446744073709551616
       20000000TiB 16777216TiB)
rejects --max-fixture-bytes "$bytes_rule" "${sizes[@]}" -- "${verify[@]}"
rejects --max-fixture-bytes "$bytes_rule" "${sizes[@]}" -- "$glabench" fixtures show {} "$fixture"
# In range: gla_basic needs 49152 bytes (48 KiB); units in any case.
for size in 49152 48KiB 48kib 1MB 18446744073709551615 16777215TiB; do
  out=$("$glabench" fixtures show --max-fixture-bytes "$size" "$fixture" 2>&1) ||
    fail "--max-fixture-bytes $size refused: $out"
done
for size in 49151 49kB; do
  out=$("$glabench" fixtures show --max-fixture-bytes "$size" "$fixture" 2>&1); rc=$?
  [[ $rc == 2 && "$out" == *"over the limit of ${size/kB/000} bytes"* ]] ||
    fail "--max-fixture-bytes $size: $rc $out"
done
# --devices: a list of device numbers (devices_option.cpp).
devices_rule="a comma-separated list of device numbers ≥ 0 (e.g. 0,1), at least one, none twice"
for command in verify bench decode-drift; do
  base=("${verify[@]}"); [[ $command == bench ]] && base=("${bench[@]}")
  [[ $command == decode-drift ]] && base=("${decode_drift[@]}")
  rejects --devices "$devices_rule" nan inf -inf '' -1 01 1.0 0,0 0, ,0 0x1 2147483648 \
    -- "${base[@]}"
done

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
for shape in 1,nan,4,4 1,inf,4,4 1,1,4,4.5 1,-1,4,4 0,1,4,4 1,1,4 1,1,4,4,4 1,1,4,4,; do
  checked=$((checked + 1))
  out=$("$glabench" decode-drift --backend naive_recurrent --shape "$shape" --json "$dir/bad.json" 2>&1)
  rc=$?
  [[ $rc == 2 && "$out" == *"--shape '$shape'"* ]] || fail "decode-drift --shape $shape: exit $rc: $out"
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
