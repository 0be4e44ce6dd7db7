#!/usr/bin/env bash
# usage: ci_gate_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
# scripts/ci_gate.sh on the CPU backend with this build (no GPU needed; --threshold 1000
# keeps host-timing noise out of the verdicts that should pass): --make-baseline writes a
# baseline from two agreeing runs; the gate passes against it and writes the comparison,
# the job summary and the report; it fails (1) against a baseline 100 times faster, and
# refuses (2) a missing baseline and one from another device, and bad option values
# before any work. The example workflow runs the script.
set -u
build=$1 source=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
source "$source/harness/tests/cli_checks.sh"
gate=("$source/scripts/ci_gate.sh" --build "$build" --backend naive_recurrent)
bench=(-- --op gla --dtype fp64 --mode fwd --shape 1,64,2,16,16 --time-cap 0.2 --min-reps 5)

expect_rc 0 "make a baseline" "${gate[@]}" --make-baseline --baseline "$dir/baselines/cpu/bench.json" \
  --threshold 1000 --out "$dir/make" "${bench[@]}"
[[ -s $dir/baselines/cpu/bench.json && -s $dir/make/compare_a_b.md ]] || fail "no baseline written: $out"

# Option values are checked before any work: a bad one exits 2 naming it, and nothing is
# benched (no output folder).
for threshold in abc nan inf -1 '' 1e3 5% 0x10; do
  expect_rc 2 "--threshold '$threshold'" "${gate[@]}" --baseline "$dir/baselines/cpu/bench.json" \
    --threshold "$threshold" --out "$dir/refused" "${bench[@]}"
  [[ "$out" == *"--threshold '$threshold': must be a decimal number ≥ 0"* ]] ||
    fail "--threshold '$threshold': message: $out"
  [[ ! -e $dir/refused ]] || fail "--threshold '$threshold': work done before the refusal"
done
touch "$dir/a_file"
expect_rc 2 "--out naming a file" "${gate[@]}" --baseline "$dir/baselines/cpu/bench.json" \
  --out "$dir/a_file" "${bench[@]}"
[[ "$out" == *"--out '$dir/a_file': exists and is not a folder"* ]] || fail "--out a file: $out"

export GITHUB_STEP_SUMMARY=$dir/summary.md
expect_rc 0 "gate against it" "${gate[@]}" --baseline "$dir/baselines/cpu/bench.json" --threshold 1000 \
  --out "$dir/pass" "${bench[@]}"
[[ "$out" == *"ci_gate: passed"* ]] || fail "gate: no verdict line: $out"
for f in new.json new.log compare.md compare.json report/report.md; do
  [[ -s $dir/pass/$f ]] || fail "gate: no $f"
done
# The comparison's row and its count line; host timing on a loaded machine can make the
# row FASTER (or SLOWER within the threshold) instead of SAME, and the gate still passes.
grep -q "naive_recurrent/gla/fp64/fwd/B1_T64_H2_K16_V16" "$dir/summary.md" &&
  grep -qE "^1 (SAME|FASTER|SLOWER)" "$dir/summary.md" || fail "gate: the job summary lacks the comparison"

# A baseline 100 times faster, with tight samples: SLOWER, exit 1.
python3 - "$dir/baselines/cpu/bench.json" "$dir/fast.json" "$dir/other_device.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["benchmarks"][0]
fast = [r["median_ms"] / 100 * (1 + 0.001 * i) for i in range(20)]
r["samples_ms"], r["iterations"], r["repetitions"] = fast, len(fast), len(fast)
json.dump(d, open(sys.argv[2], "w"))
d["context"]["device"] = "NVIDIA H200"
json.dump(d, open(sys.argv[3], "w"))
PY
expect_rc 1 "gate against a faster baseline" "${gate[@]}" --baseline "$dir/fast.json" --out "$dir/slow" "${bench[@]}"
grep -q "SLOWER" "$dir/slow/compare.md" || fail "faster baseline: no SLOWER row"
[[ -s $dir/slow/report/report.md ]] || fail "faster baseline: no report"
expect_rc 2 "gate against another device" "${gate[@]}" --baseline "$dir/other_device.json" --out "$dir/dev" "${bench[@]}"
expect_rc 2 "gate without a baseline" "${gate[@]}" --baseline "$dir/none.json" --out "$dir/none" "${bench[@]}"
[[ "$out" == *"--make-baseline --baseline $dir/none.json"* ]] || fail "missing baseline message: $out"

# The example workflow runs the gate and keeps its folder.
workflow=$source/examples/ci/glabench-gate.yml
grep -q "run: scripts/ci_gate.sh .*--out ci-gate" "$workflow" && grep -q "path: ci-gate/" "$workflow" ||
  fail "the example workflow does not run scripts/ci_gate.sh"
if python3 -c 'import yaml' 2>/dev/null; then
  python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); assert d["jobs"]["gate"]["steps"]' \
    "$workflow" || fail "the example workflow is not valid YAML"
fi

echo "$failures failures"
[[ $failures == 0 ]]
