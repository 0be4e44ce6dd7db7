#!/usr/bin/env bash
# glabench decode-drift through the CLI on the CPU backend and test plugins: the chained
# decode of naive_recurrent (gla, rwkv6) drifts by nothing at fp64, by fp32's rounding at
# fp32, and at bf16 and fp16 by their rounding of o while its fp32 state stays near fp32's,
# over 1024 steps, asserted on the results JSON; the context names the run; a
# backend or op that cannot run is a recorded result with its reason; a NaN, a crash, a
# hang and a drifting backend are recorded failures, never glabench's end; bad options
# exit 2 and write nothing.
set -u
glabench=$1 plugin_dir=$2 faulty_dir=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir"
source "$(dirname "${BASH_SOURCE[0]}")/cli_checks.sh"
python=${GLABENCH_PYTHON:-python3}
naive=(decode-drift --backend naive_recurrent --shape 2,2,32,32)

# 1024 steps of gla and rwkv6 in every dtype naive_recurrent has (fp64, fp32, bf16, fp16;
# fp32 states at 16 bits).
expect_rc 0 "naive_recurrent 1024 steps" "$glabench" "${naive[@]}" --json "$dir/naive.json"
[[ "$out" == *"B2 H2 K32 V32, 1024 steps of T = 1"*"naive_recurrent  rwkv6  fp32   fp32   mild    o  "* &&
   "$out" == *"naive_recurrent  rwkv6  fp16   fp32   mild    o  "* &&
   "$out" == *"8 passed, 0 failed, 0 skipped"* ]] || fail "naive_recurrent table: $out"
"$python" - "$dir/naive.json" <<'PY' || fail "naive_recurrent drift"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["glabench_results"] == "decode_drift" and d["schema_version"] == 1, d.keys()
c = d["context"]
for key in ("git_commit", "device", "host_cpu", "glabench_version", "backend_builds", "date"):
    assert key in c, key
o = c["decode_drift_options"]
assert (o["B"], o["H"], o["K"], o["V"], o["steps"]) == (2, 2, 32, 32, 1024), o
assert o["gates"] == ["mild"] and o["checkpoints"] == [1, 4, 16, 64, 256, 1024], o
cases = {(r["op"], r["dtype"]): r for r in d["results"]}
dtypes = ("fp64", "fp32", "bf16", "fp16")
assert set(cases) == {(op, dt) for op in ("gla", "rwkv6") for dt in dtypes}, cases
for (op, dt), r in cases.items():
    assert r["status"] == "passed" and r["message"] == "", r
    state = "fp32" if dt in ("bf16", "fp16") else dt
    assert r["state_dtype"] == state and r["gates"] == "mild", r
    assert r["steps"] == r["steps_run"] == 1024, r
    assert [p["step"] for p in r["checkpoints"]] == o["checkpoints"], r["checkpoints"]
    drifts = [p[k] for p in r["checkpoints"] for k in ("o_rel_l2", "state_rel_l2")]
    m = r["max"]
    drifts += [m["o_rel_l2"], m["state_rel_l2"]]
    assert 1 <= m["o_step"] <= 1024 and 1 <= m["state_step"] <= 1024, m
    assert max(drifts) >= max(p["o_rel_l2"] for p in r["checkpoints"]), r
    if dt == "fp64":
        assert max(drifts) <= 1e-12 and r["threshold"] == 1e-12, (op, dt, drifts)
    elif dt == "fp32":  # fp32's rounding, carried 1024 steps: there, and bounded
        assert 1e-9 < m["o_rel_l2"] <= 1e-5 and 1e-9 < m["state_rel_l2"] <= 1e-5, (op, dt, m)
        assert r["threshold"] == 1e-5, r
    else:  # o rounded once to 16 bits a step; the fp32 state does not drift with it
        limit = {"bf16": 1e-2, "fp16": 5e-3}[dt]
        assert limit / 100 < m["o_rel_l2"] <= limit and m["state_rel_l2"] <= 1e-5, (op, dt, m)
        assert r["threshold"] == limit, r
PY

# The same chain in this process (--no-isolate) and again in a worker: the same numbers;
# another seed, other inputs.
expect_rc 0 "--no-isolate" "$glabench" --no-isolate "${naive[@]}" --op gla --dtype fp32 --steps 64 \
  --json "$dir/in_process.json"
expect_rc 0 "isolated" "$glabench" "${naive[@]}" --op gla --dtype fp32 --steps 64 \
  --json "$dir/isolated.json"
expect_rc 0 "another seed" "$glabench" "${naive[@]}" --op gla --dtype fp32 --steps 64 --seed 7 \
  --json "$dir/seed7.json"
"$python" - "$dir/in_process.json" "$dir/isolated.json" "$dir/seed7.json" <<'PY' ||
import json, sys
a, b, c = (json.load(open(p))["results"][0] for p in sys.argv[1:])
assert a["checkpoints"] == b["checkpoints"] and a["max"] == b["max"], (a, b)
assert c["checkpoints"] != a["checkpoints"], c
PY
  fail "in-process and isolated runs differ, or the seed changed nothing"

# Every gate regime, each its own case.
expect_rc 0 "--gates all" "$glabench" "${naive[@]}" --op rwkv6 --dtype fp32 --steps 64 \
  --gates all --json "$dir/regimes.json"
"$python" -c "
import json; d = json.load(open('$dir/regimes.json'))
assert [r['gates'] for r in d['results']] == ['model', 'mild', 'fla', 'strong', 'cliff'], d
assert all(r['status'] == 'passed' for r in d['results'])
assert d['context']['decode_drift_options']['gates'] == ['model', 'mild', 'fla', 'strong', 'cliff']" ||
  fail "--gates all results"

# What cannot run is recorded with its reason: a dtype the varlen plugin lacks (fp16), an
# op the softmax plugin lacks. Nothing ran: exit 77.
expect_rc 77 "a dtype the backend lacks" "$glabench" --backend-lib \
  "$plugin_dir/glabench_backend_test_varlen_state_fp32.so" decode-drift \
  --backend test_varlen_state_fp32 --op gla --dtype fp16 --steps 4 --json "$dir/fp16.json"
[[ "$out" == *"test_varlen_state_fp32: 1 case unsupported: no gla forward in fp16"* ]] ||
  fail "unsupported dtype not shown: $out"
expect_rc 77 "an op the backend lacks" "$glabench" --backend-lib \
  "$plugin_dir/glabench_backend_test_softmax.so" decode-drift --backend test_softmax --op rwkv6 \
  --steps 4 --json "$dir/no_op.json"
"$python" - "$dir/fp16.json" "$dir/no_op.json" <<'PY' || fail "unsupported cases recorded"
import json, sys
fp16, no_op = (json.load(open(p))["results"] for p in sys.argv[1:])
assert [(r["op"], r["status"], r["message"]) for r in fp16] == [
    ("gla", "unsupported", "no gla forward in fp16")], fp16
assert [(r["op"], r["status"], r["message"]) for r in no_op] == [
    ("rwkv6", "unsupported", "no rwkv6 forward in any dtype")], no_op
PY

# Faults are the case's: a NaN in a later step ends the chain there, a drifting o fails
# (and passes under a looser --tolerance), a crash and a hang are recorded; each run
# writes its results and exits 1.
small=(--op gla --steps 64 --shape 1,2,8,8)
for plugin in nan_later drift_later; do
  expect_rc 1 "$plugin" "$glabench" --backend-lib "$plugin_dir/glabench_backend_test_$plugin.so" \
    decode-drift --backend "test_$plugin" "${small[@]}" --json "$dir/$plugin.json"
done
expect_rc 0 "drift_later under --tolerance 1e-5" "$glabench" --backend-lib \
  "$plugin_dir/glabench_backend_test_drift_later.so" decode-drift --backend test_drift_later \
  "${small[@]}" --tolerance 1e-5 --json "$dir/drift_tolerated.json"
for fault in segfault hang; do
  expect_rc 1 "faulty_$fault" "$glabench" --call-timeout 1 --backend-lib \
    "$faulty_dir/glabench_backend_faulty_$fault.so" decode-drift --backend "faulty_$fault" \
    "${small[@]}" --json "$dir/$fault.json"
done
"$python" - "$dir" <<'PY' || fail "faults recorded"
import json, math, sys
def case(name):
    (r,) = json.load(open(f"{sys.argv[1]}/{name}.json"))["results"]
    return r
r = case("nan_later")  # its first call is right, every later one puts a NaN in o
assert r["status"] == "failed" and r["steps_run"] == 1, r
assert r["message"].startswith("step 2: o (1 of 16 NaN or Inf"), r["message"]
assert r["checkpoints"][-1]["step"] == 2 and r["checkpoints"][-1]["o_rel_l2"] is None, r
r = case("drift_later")  # o scaled by 1 + 1e-6 from the second call on; its state is right
assert r["status"] == "failed" and r["steps_run"] == 64, r
assert math.isclose(r["max"]["o_rel_l2"], 1e-6, rel_tol=1e-3) and r["max"]["state_rel_l2"] == 0, r
assert r["message"].startswith("drifted past the limit 1e-12: o rel_l2 1e-06 at step"), r
assert case("drift_tolerated")["status"] == "passed"
r = case("segfault")
assert r["status"] == "crashed" and "signal 11" in r["message"] and r["steps_run"] == 0, r
r = case("hang")
assert r["status"] == "timeout" and "past the limit of 1 s" in r["message"], r
PY

# Bad options: exit 2 naming the option, before anything runs or is written.
bad() {
  local want=$1; shift
  expect_rc 2 "$*" "$glabench" decode-drift --backend naive_recurrent --steps 4 "$@" \
    --json "$dir/bad.json"
  [[ "$out" == *"$want"* ]] || fail "$*: message lacks '$want': $out"
}
bad "--op 'softmax_attn' has no state to carry" --op softmax_attn
bad "--op 'retnet' is not one of" --op retnet
bad "--dtype 'fp8' is not one of" --dtype fp8
bad "--backend 'nothing' is not a known backend" --backend nothing
bad "--shape '2,2,32' must have 4 values B,H,K,V" --shape 2,2,32
bad "--shape '2,0,32,32': '0' is not a positive integer (want B,H,K,V)" --shape 2,0,32,32
bad "--shape '2,2,32,32,': '' is not a positive integer" --shape 2,2,32,32,
bad "B·steps·H·K·V must be at most 2^62" --shape 2147483648,2147483648,2,2
bad "--steps: '0': must be a whole number in [1, 1000000]" --steps 0
bad "--gates: 'gentle': must be model, mild, fla, strong, cliff or all" --gates gentle
bad "--tolerance: '1': must be a finite number in [0, 1)" --tolerance 1
bad "--devices: '0,0': must be" --devices 0,0
[[ ! -e "$dir/bad.json" ]] || fail "bad usage wrote a results file"
expect_rc 2 "--json into a missing folder" "$glabench" "${naive[@]}" --steps 4 \
  --json "$dir/missing/out.json"
[[ "$out" == *"--json $dir/missing/out.json: the folder"*"does not exist"* ]] ||
  fail "missing folder: $out"

echo "$failures failures"
[[ $failures == 0 ]]
