#!/usr/bin/env bash
# The regression gate through the CLI: it cannot pass by comparing nothing. Under
# --fail-on-regression a row timed in BASE that is GONE or SKIPPED in NEW fails it unless
# --allow-missing (BROKEN fails it always), no row timed in both fails it, a --backend
# that names nothing is bad input (2), and the markdown ends with the verdict line, which
# --json records too.
set -u
glabench=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir"
python=${GLABENCH_PYTHON:-python3}
source "$(dirname "${BASH_SOURCE[0]}")/cli_checks.sh"
last_line() { printf '%s\n' "$out" | tail -1; }

# base: three timed rows (T 64, 128, 256). gone: T256 missing. skipped: T256 skipped.
# broken: T256 failed. empty: no rows. failed: every row failed.
"$python" - "$dir" <<'PY'
import copy, json, sys
d = sys.argv[1]
def row(t):
    return {"backend": "k", "op": "gla", "dtype": "fp64", "mode": "fwd", "B": 1, "T": t,
            "H": 1, "K": 4, "V": 4, "hot": False, "status": "ok", "ran_on": "host",
            "message": "", "checks": [], "bytes": 1.0, "flops": 1.0, "noise_target_met": True,
            "samples_ms": [1.0 + 0.001 * ((i * 7) % 20) for i in range(20)]}
ctx = {"glabench_results": "bench", "schema_version": 1, "device": "cpu: test", "peaks": {}}
def write(name, rows):
    json.dump({"context": ctx, "benchmarks": rows}, open(f"{d}/{name}.json", "w"))
base = [row(64), row(128), row(256)]
write("base", base)
write("gone", base[:2])
skipped = copy.deepcopy(base)
skipped[2].update(status="skipped", message="needs about 300 GiB of host memory", samples_ms=[])
write("skipped", skipped)
broken = copy.deepcopy(base)
broken[2].update(status="failed", message="quick verify failed", samples_ms=[])
write("broken", broken)
write("empty", [])
failed = copy.deepcopy(base)
for r in failed:
    r.update(status="failed", message="quick verify failed", samples_ms=[])
write("failed", failed)
PY

T256=k/gla/fp64/fwd/B1_T256_H1_K4_V4/gates-mild
expect_rc 0 "same" "$glabench" compare "$dir/base.json" "$dir/base.json" --fail-on-regression 5
[[ "$(last_line)" == "verdict: PASS — --fail-on-regression 5%: 3 rows timed in both runs, none SLOWER by more than 5%, BROKEN, GONE or SKIPPED" ]] ||
  fail "same: verdict line: $(last_line)"

expect_rc 1 "gone" "$glabench" compare "$dir/base.json" "$dir/gone.json" --fail-on-regression 5 \
  --json "$dir/gone_compare.json"
[[ "$(last_line)" == "verdict: FAIL — --fail-on-regression 5%: 1 row timed in the base GONE (pass --allow-missing to allow) ($T256)" ]] ||
  fail "gone: verdict line: $(last_line)"
"$python" - "$dir/gone_compare.json" <<'PY' || fail "gone: JSON"
import json, sys
d = json.load(open(sys.argv[1]))
g = d["gate"]
assert d["exit_code"] == 1 and g["passed"] is False, d
assert g["gone"] == ["k/gla/fp64/fwd/B1_T256_H1_K4_V4/gates-mild"] and g["rows_compared"] == 2, g
assert g["verdict"].startswith("verdict: FAIL — --fail-on-regression 5%: 1 row timed in the base GONE"), g
PY
expect_rc 0 "gone, allowed" "$glabench" compare "$dir/base.json" "$dir/gone.json" \
  --fail-on-regression 5 --allow-missing
[[ "$(last_line)" == *"PASS — --fail-on-regression 5% --allow-missing: 2 rows timed in both runs"*"allowed by --allow-missing: 1 row timed in the base GONE or SKIPPED ($T256)" ]] ||
  fail "gone, allowed: verdict line: $(last_line)"
expect_rc 0 "gone, no gate" "$glabench" compare "$dir/base.json" "$dir/gone.json"
[[ "$out" != *"verdict:"* ]] || fail "no gate, yet a verdict line: $out"

expect_rc 1 "skipped" "$glabench" compare "$dir/base.json" "$dir/skipped.json" --fail-on-regression 5
[[ "$(last_line)" == *"FAIL"*"1 row timed in the base SKIPPED (pass --allow-missing to allow) ($T256)" ]] ||
  fail "skipped: verdict line: $(last_line)"
expect_rc 0 "skipped, allowed" "$glabench" compare "$dir/base.json" "$dir/skipped.json" \
  --fail-on-regression 5 --allow-missing

expect_rc 1 "broken" "$glabench" compare "$dir/base.json" "$dir/broken.json" --fail-on-regression 5
expect_rc 1 "broken, --allow-missing" "$glabench" compare "$dir/base.json" "$dir/broken.json" \
  --fail-on-regression 5 --allow-missing
[[ "$(last_line)" == *"FAIL"*"1 row BROKEN (timed in the base, failing now) ($T256)" ]] ||
  fail "broken: verdict line: $(last_line)"

# Nothing compared: empty runs, runs that failed everything, a run against an empty one.
for pair in "empty empty" "failed failed" "base empty" "empty base"; do
  read -r a b <<< "$pair"
  expect_rc 1 "nothing compared ($a, $b)" "$glabench" compare "$dir/$a.json" "$dir/$b.json" \
    --fail-on-regression 5 --allow-missing
  [[ "$(last_line)" == "verdict: FAIL — "*"no row was timed in both runs: nothing was compared"* ]] ||
    fail "nothing compared ($a, $b): verdict line: $(last_line)"
done

# A --backend filter that names no row: bad input, not an empty comparison that passes.
expect_rc 2 "--backend typo" "$glabench" compare "$dir/base.json" "$dir/base.json" \
  --backend kk --fail-on-regression 5
[[ "$out" == *"--backend 'kk': no row of"* ]] || fail "--backend typo message: $out"
expect_rc 2 "--allow-missing alone" "$glabench" compare "$dir/base.json" "$dir/gone.json" --allow-missing
[[ "$out" == *"--allow-missing requires --fail-on-regression"* ]] || fail "--allow-missing alone: $out"

echo "$failures failures"
[[ $failures == 0 ]]
