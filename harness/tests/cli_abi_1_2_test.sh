#!/usr/bin/env bash
# ABI 1.2, 1.3 and --devices through the CLI, in worker processes (docs/design.md §3):
#   - a backend with prepare, release, last_call_report and collect
#     (plugins/prepare_plugin.cpp, whose calls fail unless prepare ran with their very
#     tensors, and leave NaN in their outputs until collect) benches and verifies, in
#     workers and with --no-isolate, and its report lands in the results as
#     backend_report; report and compare read it;
#   - a prepare that fails is a recorded failure with its message (exit 1);
#   - a report that is not a JSON object is a warning (stderr, context.warnings), the
#     time stands;
#   - plugins built against ABI 1.1 (its table ends at build) and 1.2 (at
#     last_call_report) load, verify, bench;
#   - --devices: bad lists exit 2 naming the option and writing nothing; a CPU backend
#     given two devices is skipped (exit 77), its rows recording the devices and keyed
#     /x2, so compare never matches them with one-device rows.
set -u
glabench=$1 plugin_dir=$2 fixture=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir"
source "$(dirname "${BASH_SOURCE[0]}")/cli_checks.sh"
python=${GLABENCH_PYTHON:-python3}
lib() { echo "--backend-lib=$plugin_dir/glabench_backend_test_$1.so"; }
small=(--shape 1,32,2,8,8 --time-cap 0.1 --min-reps 5 --warmup 1)

# prepare / release / last_call_report, bench and verify, isolated and not.
expect_rc 0 "bench prepared" "$glabench" "$(lib prepared)" bench --backend test_prepared \
  "${small[@]}" --json "$dir/prepared.json"
expect_rc 0 "bench prepared, in-process" "$glabench" --no-isolate "$(lib prepared)" bench \
  --backend test_prepared "${small[@]}" --json "$dir/prepared_in.json"
expect_rc 0 "verify prepared" "$glabench" "$(lib prepared)" verify --backend test_prepared \
  --fixture "$fixture" --json "$dir/prepared_verify.json"
[[ "$out" == *"1 passed, 0 failed"* ]] || fail "verify prepared: $out"
"$python" - "$dir/prepared.json" "$dir/prepared_in.json" "$dir/prepared_verify.json" <<'PY' ||
import json, sys
*benches, verify = (json.load(open(p)) for p in sys.argv[1:])
for d in benches:
    rows = d["benchmarks"]
    assert [r["mode"] for r in rows] == ["fwd", "fwdbwd"], rows
    for r in rows:
        assert r["status"] == "ok" and r["devices"] == [0], r
        rep = r["backend_report"]
        assert rep["last_call"] == ("forward" if r["mode"] == "fwd" else "backward"), rep
        assert rep["prepared_mode"] == rep["last_call"], rep
        assert rep["rank_ms"] == [0.25, 0.5] and rep["comm_hidden_fraction"] == 0.93, rep
    assert d["context"]["bench_options"]["devices"] == [0], d["context"]
    assert "warnings" not in d["context"], d["context"]
    assert d["context"]["backend_builds"]["test_prepared"]["abi"] == "1.5"
(case,) = verify["results"]
assert case["status"] == "passed" and case["devices"] == [0], case
assert case["gradcheck"]["passed"], case
PY
  fail "prepared: results JSON"
expect_rc 0 "compare with a backend_report" "$glabench" compare "$dir/prepared.json" "$dir/prepared.json"
[[ "$out" == *"2 SAME"* ]] || fail "compare with a backend_report: $out"
expect_rc 0 "report with a backend_report" "$glabench" report "$dir/prepared.json" --out "$dir/report"
grep -q 'backend report: {"calls_since_prepare":' "$dir/report/report.md" ||
  fail "report lacks the backend report: $(cat "$dir/report/report.md")"

# A failing prepare: a failure of the case, with its message.
expect_rc 1 "bench prepare_fails" "$glabench" "$(lib prepare_fails)" bench --backend test_prepare_fails \
  "${small[@]}" --json "$dir/prepare_fails.json"
[[ "$out" == *"FAILED: test_prepare_fails prepare failed (runtime error): deliberate prepare failure: the shards do not fit"* ]] ||
  fail "bench prepare_fails: $out"
expect_rc 1 "verify prepare_fails" "$glabench" "$(lib prepare_fails)" verify --backend test_prepare_fails \
  --fixture "$fixture" --json "$dir/prepare_fails_verify.json"
"$python" - "$dir/prepare_fails.json" "$dir/prepare_fails_verify.json" <<'PY' || fail "prepare_fails: results JSON"
import json, sys
bench, verify = (json.load(open(p)) for p in sys.argv[1:])
for r in bench["benchmarks"]:
    assert r["status"] == "failed" and "deliberate prepare failure" in r["message"], r
    assert "backend_report" not in r and r["samples_ms"] == [], r
(case,) = verify["results"]
assert case["status"] == "failed" and "deliberate prepare failure" in case["message"], case
PY

# A report that is not JSON: a warning, the time stands.
"$glabench" "$(lib bad_report)" bench --backend test_bad_report "${small[@]}" --mode fwd \
  --json "$dir/bad_report.json" >"$dir/bad_report.out" 2>"$dir/bad_report.err" ||
  fail "bench bad_report: exit $?: $(cat "$dir/bad_report.out" "$dir/bad_report.err")"
grep -q "^WARNING: test_bad_report/gla/fp64/fwd/B1_T32_H2_K8_V8/gates-mild: backend_report ignored: last_call_report wrote text that is not JSON" \
  "$dir/bad_report.err" || fail "bad_report: no warning on stderr: $(cat "$dir/bad_report.err")"
"$python" - "$dir/bad_report.json" <<'PY' || fail "bad_report: results JSON"
import json, sys
d = json.load(open(sys.argv[1]))
(r,) = d["benchmarks"]
assert r["status"] == "ok" and "backend_report" not in r, r
assert r["message"].startswith("backend_report ignored: "), r
assert any("backend_report ignored" in w for w in d["context"]["warnings"]), d["context"]
PY

# A report nested deeper than a results file may hold: a warning, the time stands, and
# the results file stays readable.
"$glabench" "$(lib deep_report)" bench --backend test_deep_report "${small[@]}" --mode fwd \
  --json "$dir/deep_report.json" >"$dir/deep_report.out" 2>"$dir/deep_report.err" ||
  fail "bench deep_report: exit $?: $(cat "$dir/deep_report.out" "$dir/deep_report.err")"
grep -q "backend_report ignored: last_call_report nests objects or arrays deeper than 32 levels" \
  "$dir/deep_report.err" || fail "deep_report: no warning on stderr: $(cat "$dir/deep_report.err")"
expect_rc 0 "compare of deep_report's results" "$glabench" compare "$dir/deep_report.json" "$dir/deep_report.json"

# Plugins built against earlier minors run: ABI 1.1 (no prepare, release, report or
# collect) and 1.2 (no collect). Their tripwires past the table's end would fail, abort
# or report.
for old in 1.1 1.2; do
  name=test_abi_${old/./_}
  expect_rc 0 "bench ABI $old" "$glabench" "$(lib abi_${old/./_})" bench --backend $name \
    "${small[@]}" --json "$dir/$name.json"
  expect_rc 0 "verify ABI $old" "$glabench" "$(lib abi_${old/./_})" verify --backend $name \
    --fixture "$fixture"
  "$python" - "$dir/$name.json" "$name" "$old" <<'PY' || fail "ABI $old: results JSON"
import json, sys
path, name, version = sys.argv[1:]
d = json.load(open(path))
assert d["context"]["backend_builds"][name]["abi"] == version, d["context"]
for r in d["benchmarks"]:
    assert r["status"] == "ok" and "backend_report" not in r and r["message"] == "", r
PY
done

# --devices: bad lists exit 2, name the option and the rule, write nothing.
for bad in "" "0,0" "-1" "a" "0,,1" "01"; do
  for cmd in bench verify; do
    expect_rc 2 "$cmd --devices '$bad'" "$glabench" "$cmd" --devices "$bad" --json "$dir/bad.json"
    [[ "$out" == *"--devices"*"'$bad'"*"must be a comma-separated list of device numbers"* ]] ||
      fail "$cmd --devices '$bad': message: $out"
  done
done
[[ ! -e "$dir/bad.json" ]] || fail "a bad --devices wrote a results file"

# Two devices for a CPU backend: skipped with the reason; rows keyed /x2.
expect_rc 77 "bench a CPU backend on two devices" "$glabench" "$(lib prepared)" bench \
  --backend test_prepared "${small[@]}" --devices 0,1 --json "$dir/two.json"
[[ "$out" == *"skipped  test_prepared: 2 configurations: a host backend runs on one device; 2 were asked for (--devices)"* ]] ||
  fail "bench on two devices: $out"
expect_rc 77 "verify a CPU backend on two devices" "$glabench" "$(lib prepared)" verify \
  --backend test_prepared --fixture "$fixture" --devices 1,0 --json "$dir/two_verify.json"
"$python" - "$dir/two.json" "$dir/two_verify.json" <<'PY' || fail "two devices: results JSON"
import json, sys
bench, verify = (json.load(open(p)) for p in sys.argv[1:])
for r in bench["benchmarks"]:
    assert r["status"] == "skipped" and r["devices"] == [0, 1], r
    assert r["name"].endswith("/B1_T32_H2_K8_V8/x2/gates-mild"), r["name"]
(case,) = verify["results"]
assert case["status"] == "unsupported" and case["devices"] == [1, 0], case
PY
# One device against two: never the same configuration. The one-device rows are GONE,
# not SKIPPED (a matched row skipped now would be).
expect_rc 0 "compare one device with two" "$glabench" compare "$dir/prepared.json" "$dir/two.json"
[[ "$out" == *"2 GONE"* && "$out" != *"SKIPPED"* ]] || fail "compare one device with two: $out"

echo "$failures failures"
[[ $failures == 0 ]]
