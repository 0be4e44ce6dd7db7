#!/usr/bin/env bash
# bench → compare → report through the CLI on the CPU backend: a smoke run, the gate's
# exit codes (SAME → 0, a slowed copy → SLOWER and 1, a correctness loss → 1, bad or
# foreign input → 2, different devices → 2), and a report with its PNGs.
set -u
glabench=$1 plugin_dir=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
source "$(dirname "${BASH_SOURCE[0]}")/cli_checks.sh"
python=${GLABENCH_PYTHON:-python3}

# A small bench on the CPU backend.
expect_rc 0 "bench" "$glabench" bench --backend naive_recurrent --op gla --dtype fp64 \
  --shape 1,64,2,16,16 --shape 1,128,2,16,16 --time-cap 0.2 --min-reps 5 --json "$dir/a.json"
"$python" - "$dir/a.json" <<'PY' || fail "bench JSON content"
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["benchmarks"]
assert d["context"]["glabench_results"] == "bench", d["context"]
assert len(rows) == 4, len(rows)  # 2 shapes x fwd, fwdbwd
for r in rows:
    assert r["status"] == "ok", r
    assert len(r["samples_ms"]) >= 5 and r["real_time"] > 0 and r["time_unit"] == "ms"
    assert r["p20_ms"] <= r["median_ms"] <= r["p80_ms"] and r["min_ms"] <= r["p20_ms"]
    assert all(c["passed"] for c in r["checks"]) and r["checks"], r["checks"]
    assert r["gbps"] > 0 and r["bandwidth_fraction"] > 0
assert d["context"]["peaks"]["host"]["copy_gbps"] > 0
build = d["context"]["backend_builds"]["naive_recurrent"]
assert build["described"] and build["abi"] == "1.5" and build["compiler"], build
assert all(r["devices"] == [0] and "backend_report" not in r for r in rows), rows
assert "warnings" not in d["context"] or build["optimized"] is False, d["context"]
PY

# How each backend was built (ABI 1.1), through the worker that loads it. Built without
# optimisation and timed: a loud warning on stderr, and in the results. A plugin built
# against ABI 1.0 (no build member) still loads, verifies and is timed: "not described".
unopt=$plugin_dir/glabench_backend_test_unoptimised.so old=$plugin_dir/glabench_backend_test_abi_1_0.so
expect_rc 0 "list builds" "$glabench" --backend-lib "$unopt" --backend-lib "$old" list
[[ "$out" == *"test_unoptimised"*"built: "*", NOT OPTIMISED"* ]] || fail "list: unoptimised build: $out"
[[ "$out" == *"test_abi_1_0"*"built: not described (ABI 1.0)"* ]] || fail "list: ABI 1.0 build: $out"
"$glabench" --backend-lib "$unopt" bench --backend test_unoptimised --shape 1,16,1,4,4 --mode fwd \
  --time-cap 0.1 --min-reps 5 --json "$dir/unopt.json" >"$dir/unopt.out" 2>"$dir/unopt.err" ||
  fail "bench of an unoptimised build: exit $?"
grep -q "^WARNING: backend 'test_unoptimised' was built WITHOUT OPTIMISATION" "$dir/unopt.err" ||
  fail "no warning on stderr: $(cat "$dir/unopt.err")"
! grep -q "WARNING: backend" "$dir/unopt.out" || fail "the warning went to stdout"
expect_rc 0 "bench ABI 1.0" "$glabench" --backend-lib "$old" bench --backend test_abi_1_0 \
  --shape 1,16,1,4,4 --mode fwd --time-cap 0.1 --min-reps 5 --json "$dir/old.json"
[[ "$out" != *"WARNING: backend"* ]] || fail "bench of an ABI 1.0 plugin warned: $out"
expect_rc 0 "verify ABI 1.0" "$glabench" --backend-lib "$old" verify --backend test_abi_1_0 \
  --fixture "$(dirname "${BASH_SOURCE[0]}")/../../datasets/fixtures/gla_basic.h5" --json "$dir/old_verify.json"
"$python" - "$dir/unopt.json" "$dir/old.json" "$dir/old_verify.json" <<'PY' || fail "build descriptions in the results"
import json, sys
unopt, old, verify = (json.load(open(p)) for p in sys.argv[1:])
b = unopt["context"]["backend_builds"]["test_unoptimised"]
assert b["described"] and b["optimized"] is False, b
assert unopt["benchmarks"][0]["status"] == "ok", unopt["benchmarks"][0]
w = unopt["context"]["warnings"]
assert len(w) == 1 and w[0].startswith("backend 'test_unoptimised' was built WITHOUT OPTIMISATION"), w
old_build = {"described": False, "abi": "1.0", "version": "0.0.0"}  # the table's version too
assert old["context"]["backend_builds"]["test_abi_1_0"] == old_build, old["context"]
assert old["benchmarks"][0]["status"] == "ok" and "warnings" not in old["context"], old
assert verify["context"]["backend_builds"]["test_abi_1_0"] == old_build, verify["context"]
PY
expect_rc 0 "report of an unoptimised build" "$glabench" report "$dir/unopt.json" --out "$dir/report_unopt"
grep -q "^- \*\*warning:\*\* backend 'test_unoptimised' was built WITHOUT OPTIMISATION" \
  "$dir/report_unopt/report.md" || fail "report lacks the unoptimised warning"
grep -q "^- backends built: \`test_unoptimised\` (.*NOT OPTIMISED.*, version " "$dir/report_unopt/report.md" ||
  fail "report lacks the backend's build"

# The same results compared with themselves: every row SAME, the gate passes.
expect_rc 0 "compare same" "$glabench" compare "$dir/a.json" "$dir/a.json" --fail-on-regression 5 \
  --json "$dir/same.json"
[[ "$out" == *"4 SAME"* ]] || fail "compare same: $out"

# The first configuration's samples replaced by a tight set (CPU timings of tiny problems
# are too noisy to decide on), then a copy 50% slower: SLOWER, exit 1; within
# --fail-on-regression 80: 0. And a copy where it fails its verify: BROKEN, exit 1.
"$python" - "$dir/a.json" "$dir/base.json" "$dir/slow.json" "$dir/broken.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["benchmarks"][0]
r["samples_ms"] = [1.0 + 0.001 * ((i * 7) % 20) for i in range(20)]
json.dump(d, open(sys.argv[2], "w"))
r["samples_ms"] = [x * 1.5 for x in r["samples_ms"]]
json.dump(d, open(sys.argv[3], "w"))
r["status"], r["message"], r["samples_ms"] = "failed", "quick verify failed", []
json.dump(d, open(sys.argv[4], "w"))
PY
expect_rc 1 "compare slowed" "$glabench" compare "$dir/base.json" "$dir/slow.json" --fail-on-regression 5
[[ "$out" == *"SLOWER"* && "$out" == *"regression"* ]] || fail "compare slowed: $out"
expect_rc 0 "compare slowed, lenient" "$glabench" compare "$dir/base.json" "$dir/slow.json" --fail-on-regression 80
expect_rc 0 "compare sped up" "$glabench" compare "$dir/slow.json" "$dir/base.json" --fail-on-regression 0
[[ "$out" == *"FASTER"* ]] || fail "compare sped up: $out"
expect_rc 1 "compare broken" "$glabench" compare "$dir/base.json" "$dir/broken.json" --fail-on-regression 1000
[[ "$out" == *"BROKEN"* ]] || fail "compare broken: $out"

# A bench stopped part-way (here killed once its first row is written) leaves the rows it
# finished in --json, marked context.incomplete; compare warns about it on stderr.
"$glabench" bench --backend naive_recurrent --op gla --dtype fp64 --mode fwd \
  --shape 1,64,2,16,16 --shape 1,96,2,16,16 --shape 1,128,2,16,16 --shape 1,160,2,16,16 \
  --noise-target 1e-9 --time-cap 2 --json "$dir/stopped.json" >"$dir/stopped.out" 2>&1 &
pid=$!
for _ in $(seq 300); do [[ -s $dir/stopped.json ]] && break; sleep 0.1; done
kill -TERM "$pid"
wait "$pid"
"$python" - "$dir/stopped.json" <<'PY' || fail "results of a stopped bench"
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["benchmarks"]
assert 1 <= len(rows) < 4, len(rows)
assert d["context"]["incomplete"].startswith(f"{len(rows)} of 4 configurations"), d["context"]
assert all(r["status"] == "ok" for r in rows), rows
PY
expect_rc 0 "compare a stopped bench" "$glabench" compare "$dir/stopped.json" "$dir/stopped.json"
[[ "$out" == *"WARNING: $dir/stopped.json: an incomplete run: "*" of 4 configurations"* ]] ||
  fail "compare of an incomplete run did not warn: $out"
! grep -q incomplete "$dir/a.json" || fail "a whole run is marked incomplete"

# --mask: each softmax_attn configuration once per mask (repeatable, or a comma list;
# repeats dropped), through the workers; gla ignores it. test_softmax is a softmax_attn
# fp64 forward on the CPU (plugins/softmax_plugin.cpp).
softmax=$plugin_dir/glabench_backend_test_softmax.so
mask_bench=("$glabench" --backend-lib "$softmax" bench --backend test_softmax --backend naive_recurrent
            --op softmax_attn --op gla --dtype fp64 --mode fwd --shape 1,32,2,8,8 --time-cap 0.1
            --min-reps 5)
expect_rc 0 "bench --mask causal,full" "${mask_bench[@]}" --mask causal,full --mask full \
  --json "$dir/masks.json"
[[ "$out" == *"test_softmax     softmax_attn  fp64  fwd     B1 T32 H2 K8 V8 causal  "* &&
   "$out" == *"test_softmax     softmax_attn  fp64  fwd     B1 T32 H2 K8 V8 full    "* ]] ||
  fail "bench table lacks the masks: $out"
expect_rc 0 "bench without --mask" "${mask_bench[@]}" --json "$dir/causal.json"
[[ "$out" != *" full "* ]] || fail "bench without --mask ran a full mask: $out"
"$python" - "$dir/masks.json" "$dir/causal.json" <<'PY' || fail "bench --mask rows"
import json, sys
masks, causal = (json.load(open(p)) for p in sys.argv[1:])
rows = {(r["backend"], r["op"], r["causal"]): r for r in masks["benchmarks"]}
# Each backend × op asked for, softmax_attn once per mask, gla once (causal); the ops a
# backend lacks are skipped rows.
assert len(rows) == len(masks["benchmarks"]) == 6, sorted(rows)
assert set(rows) == {(b, "gla", True) for b in ("test_softmax", "naive_recurrent")} | \
    {(b, "softmax_attn", m) for b in ("test_softmax", "naive_recurrent") for m in (True, False)}, \
    sorted(rows)
c, f = rows["test_softmax", "softmax_attn", True], rows["test_softmax", "softmax_attn", False]
assert c["status"] == f["status"] == "ok", (c["message"], f["message"])
assert all(ch["passed"] for ch in c["checks"] + f["checks"]), (c["checks"], f["checks"])
assert sorted(ch["tensor"] for ch in f["checks"]) == ["lse", "o"], f["checks"]
assert f["name"] == "test_softmax/softmax_attn/fp64/fwd/B1_T32_H2_K8_V8/full", f["name"]
assert c["name"] == "test_softmax/softmax_attn/fp64/fwd/B1_T32_H2_K8_V8", c["name"]
assert f["flops"] == 2 * c["flops"] == 4 * 2 * 32 * 32 * 8, (c["flops"], f["flops"])
assert rows["naive_recurrent", "gla", True]["status"] == "ok"  # gla: once, causal
assert masks["context"]["bench_options"]["masks"] == ["causal", "full"], masks["context"]
assert {(r["backend"], r["op"], r["causal"]) for r in causal["benchmarks"]} == \
    {k for k in rows if k[2]}, causal["benchmarks"]
assert causal["context"]["bench_options"]["masks"] == ["causal"], causal["context"]
PY
# The results of a run from before the mask was recorded: no "causal" in any row.
"$python" - "$dir/causal.json" "$dir/old.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["benchmarks"]:
    del r["causal"]
json.dump(d, open(sys.argv[2], "w"))
PY
# compare keys rows by mask: a file with both masks against itself pairs each row with
# its own; a causal-only run (old or new) against it pairs the causal rows and lists the
# full rows as NEW; an old file against the new causal run pairs every row.
expect_rc 0 "compare masks with itself" "$glabench" compare "$dir/masks.json" "$dir/masks.json" \
  --json "$dir/masks_self.json"
[[ "$out" == *"test_softmax/softmax_attn/fp64/fwd/B1_T32_H2_K8_V8/full | "* ]] ||
  fail "compare does not name the full row: $out"
for base in causal old; do
  expect_rc 0 "compare $base with masks" "$glabench" compare "$dir/$base.json" "$dir/masks.json" \
    --json "$dir/${base}_masks.json"
done
expect_rc 0 "compare old with causal" "$glabench" compare "$dir/old.json" "$dir/causal.json" \
  --fail-on-regression 1000 --json "$dir/old_causal.json"
"$python" - "$dir" <<'PY' || fail "compare by mask"
import json, os, sys
def rows(name):
    return {r["name"]: r for r in json.load(open(os.path.join(sys.argv[1], name)))["rows"]}
full = "test_softmax/softmax_attn/fp64/fwd/B1_T32_H2_K8_V8/full"
causal = "test_softmax/softmax_attn/fp64/fwd/B1_T32_H2_K8_V8"
same = rows("masks_self.json")
assert same[full]["status"] == same[causal]["status"] == "SAME", same
assert same[full]["causal"] is False and same[causal]["causal"] is True, same
assert same[full]["ratio"] == same[causal]["ratio"] == 1.0, same
for name in ("causal_masks.json", "old_masks.json"):
    r = rows(name)
    assert r[full]["status"] == "NEW" and r[full]["base_ms"] is None, (name, r[full])
    assert r[causal]["base_ms"] is not None and r[causal]["new_ms"] is not None, (name, r[causal])
    assert r[causal]["status"] not in ("NEW", "GONE"), (name, r[causal])
r = rows("old_causal.json")
assert r and all(x["status"] not in ("NEW", "GONE") and x["causal"] is True for x in r.values()), r
PY
expect_rc 0 "report of both masks" "$glabench" report "$dir/masks.json" --out "$dir/report_masks" \
  --baseline test_softmax
grep -q "| test_softmax | softmax_attn | fp64 | fwd | B1 T32 H2 K8 V8 full | ok |" \
  "$dir/report_masks/report.md" || fail "report lacks the full row"
grep -q "| test_softmax | softmax_attn | fp64 | fwd | B1 T32 H2 K8 V8 causal | ok |" \
  "$dir/report_masks/report.md" || fail "report lacks the causal row"

# A packed batch (ABI 1.5): its row records the lengths, keyed apart from the equal-length
# row of the same sizes; its quick verify checks the first and last sequence; compare reads
# it back. Lengths that do not sum to T, or B ≠ 1, exit 2.
expect_rc 0 "bench packed" "$glabench" bench --backend naive_recurrent --op gla --dtype fp64 \
  --mode fwdbwd --shape 1,100,2,8,8:1+64+35 --shape 1,100,2,8,8 --min-reps 2 --max-reps 3 \
  --json "$dir/packed.json"
"$python" - "$dir/packed.json" <<'PY' || fail "packed bench JSON"
import json, sys
rows = json.load(open(sys.argv[1]))["benchmarks"]
assert len(rows) == 2, rows
packed = [r for r in rows if "seqlens" in r]
assert len(packed) == 1 and packed[0]["seqlens"] == [1, 64, 35], rows
assert packed[0]["status"] == "ok" and packed[0]["checks"], packed[0]
assert all(c["passed"] for c in packed[0]["checks"]), packed[0]["checks"]
assert packed[0]["name"].endswith("/packed-N3-L1-64-35"), packed[0]["name"]
PY
expect_rc 0 "compare packed" "$glabench" compare "$dir/packed.json" "$dir/packed.json"
[[ "$out" == *"/packed-N3-L1-64-35 "* && "$out" == *"2 SAME"* ]] || fail "compare packed: $out"
expect_rc 2 "packed lengths off" "$glabench" bench --shape 1,100,2,8,8:1+64 --json "$dir/bad.json"
expect_rc 2 "packed B 2" "$glabench" bench --shape 2,100,2,8,8:50+50 --json "$dir/bad.json"

# Bad input: exit 2 naming the file and the rule.
echo '{"not": "ours"}' > "$dir/foreign.json"
expect_rc 2 "foreign JSON" "$glabench" compare "$dir/a.json" "$dir/foreign.json"
[[ "$out" == *"foreign.json"*"context"* ]] || fail "foreign JSON message: $out"
expect_rc 2 "missing file" "$glabench" compare "$dir/a.json" "$dir/nothing.json"
"$python" -c "
import json,sys; d=json.load(open('$dir/a.json')); d['context']['device']='NVIDIA H200'
json.dump(d, open('$dir/other_device.json','w'))"
expect_rc 2 "device mismatch" "$glabench" compare "$dir/a.json" "$dir/other_device.json"
[[ "$out" == *"--ignore-device"* ]] || fail "device mismatch message: $out"
expect_rc 0 "device mismatch ignored" "$glabench" compare "$dir/a.json" "$dir/other_device.json" --ignore-device
expect_rc 2 "bad shape" "$glabench" bench --shape 1,2,3 --json "$dir/bad.json"
expect_rc 2 "unknown shape set" "$glabench" bench --shapes nope --json "$dir/bad.json"
expect_rc 2 "unknown backend" "$glabench" bench --backend no_such_backend --json "$dir/bad.json"
[[ ! -e "$dir/bad.json" ]] || fail "bad input wrote a results file"

# A backend that writes nothing fails its quick verify: no time, exit 1.
expect_rc 1 "failing backend" "$glabench" --backend-lib "$plugin_dir/glabench_backend_test_silent.so" \
  bench --backend test_silent --shape 1,16,1,4,4 --mode fwd --json "$dir/silent.json"
grep -q '"status": "failed"' "$dir/silent.json" || fail "silent backend row not failed"
# Its NaN outputs are written as null and read back: compare and report still work.
expect_rc 0 "compare a failed run" "$glabench" compare "$dir/silent.json" "$dir/silent.json"
[[ "$out" == *"FAILED"* ]] || fail "compare a failed run: $out"
expect_rc 0 "report a failed run" "$glabench" report "$dir/silent.json" --out "$dir/report_silent"
grep -q "non-finite" "$dir/report_silent/report.md" || fail "report of a failed run lacks non-finite"

# The report: markdown and readable PNGs.
expect_rc 0 "report" "$glabench" report "$dir/a.json" "$dir/slow.json" --out "$dir/report"
for f in report.md time_vs_t.png peak_fraction.png accuracy.png; do
  [[ -s "$dir/report/$f" ]] || fail "report lacks $f"
done
grep -q "naive_recurrent | gla | fp64 | fwd | B1 T64 H2 K16 V16 gates:mild | ok" "$dir/report/report.md" ||
  fail "report table"
expect_rc 2 "report of foreign JSON" "$glabench" report "$dir/foreign.json" --out "$dir/report2"
[[ ! -e "$dir/report2" ]] || fail "report of bad input wrote a folder"
# What compare accepts, report draws: rows without a name, or with a median that does not
# match their samples, reach the plot script in glabench's own form (no traceback).
"$python" - "$dir/a.json" "$dir/odd.json" <<'PY' || fail "odd.json"
import json, sys
d = json.load(open(sys.argv[1]))
d["benchmarks"][0].pop("name")
d["benchmarks"][-1]["median_ms"] = -1.0
d["benchmarks"][-1]["extra"] = {"nested": [1, {"x": None}]}
json.dump(d, open(sys.argv[2], "w"))
PY
expect_rc 0 "compare of rows without a name" "$glabench" compare "$dir/odd.json" "$dir/odd.json"
expect_rc 0 "report of rows without a name" "$glabench" report "$dir/odd.json" --out "$dir/report_odd"
[[ "$out" != *Traceback* && -s "$dir/report_odd/time_vs_t.png" ]] || fail "report_odd: $out"
# Each input is read once: a FIFO and a process substitution work (the plot script is
# given what was read), and nothing of it is left in the report folder.
rm -f "$dir/fifo.json" && mkfifo "$dir/fifo.json"
cat "$dir/a.json" > "$dir/fifo.json" &
expect_rc 0 "report of a FIFO" timeout 120 "$glabench" report "$dir/fifo.json" --out "$dir/report_fifo"
wait
expect_rc 0 "report of a pipe" bash -c '"$0" report <(cat "$1") --out "$2"' "$glabench" \
  "$dir/a.json" "$dir/report_pipe"
for r in report_fifo report_pipe; do
  [[ -s "$dir/$r/report.md" && -s "$dir/$r/time_vs_t.png" && ! -e "$dir/$r/inputs" ]] ||
    fail "$r: report.md, its plots, or a left-over inputs folder"
done

echo "$failures failures"
[[ $failures == 0 ]]
