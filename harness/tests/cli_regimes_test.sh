#!/usr/bin/env bash
# Benchmarks that cannot flatter, through the CLI on CPU backends: gate regimes as a bench
# axis (--gates), the timing mode (--timing; graph rows of a host backend are skipped,
# saying why), compare never pairing two regimes or timing modes (rows of older files read
# as mild and eager), the last timed call's outputs checked against the quick verify's
# (test plugins right once and wrong later), and a CUDA backend's build described.
set -u
glabench=$1 plugin_dir=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
source "$(dirname "${BASH_SOURCE[0]}")/cli_checks.sh"
python=${GLABENCH_PYTHON:-python3}
small=(--op gla --dtype fp64 --mode fwd --shape 1,32,2,8,8 --time-cap 0.1 --min-reps 5)

# Every regime in both timing modes: five timed eager rows, five graph rows skipped.
expect_rc 0 "bench --gates all --timing eager,graph" "$glabench" bench --backend naive_recurrent \
  "${small[@]}" --gates all --timing eager --timing graph --json "$dir/all.json"
[[ "$out" == *"B1 T32 H2 K8 V8 gates:cliff "*"5 configurations: --timing graph captures CUDA work"* ]] ||
  fail "bench table lacks the regimes or the graph rows' reason: $out"
"$python" - "$dir/all.json" <<'PY' || fail "bench --gates all rows"
import json, sys
d = json.load(open(sys.argv[1]))
rows = {(r["gates"], r["timing"]): r for r in d["benchmarks"]}
regimes = ["model", "mild", "fla", "strong", "cliff"]
assert set(rows) == {(g, t) for g in regimes for t in ("eager", "graph")}, sorted(rows)
for g in regimes:
    e, gr = rows[g, "eager"], rows[g, "graph"]
    assert e["status"] == "ok" and e["name"].endswith(f"/B1_T32_H2_K8_V8/gates-{g}"), e["name"]
    assert e["timed_outputs_identical"] is True and e["timed_outputs_rel_l2"] == 0, e
    assert gr["status"] == "skipped" and gr["name"].endswith(f"/gates-{g}/graph"), gr["name"]
    assert "runs on the host" in gr["message"], gr["message"]
assert d["context"]["bench_options"]["gates"] == regimes, d["context"]["bench_options"]
assert d["context"]["bench_options"]["timings"] == ["eager", "graph"]
PY
# Regime lists as --mask takes them; unknown names are bad usage that writes nothing.
expect_rc 0 "bench --gates fla,strong" "$glabench" bench --backend naive_recurrent "${small[@]}" \
  --gates fla,strong --gates fla --json "$dir/fla_strong.json"
"$python" -c "
import json; d = json.load(open('$dir/fla_strong.json'))
assert [r['gates'] for r in d['benchmarks']] == ['fla', 'strong'], d['benchmarks']" ||
  fail "bench --gates fla,strong rows"
expect_rc 2 "unknown regime" "$glabench" bench --backend naive_recurrent "${small[@]}" --gates gentle \
  --json "$dir/bad.json"
[[ "$out" == *"--gates"*"gentle"*"model, mild, fla, strong, cliff"* ]] || fail "unknown regime: $out"
expect_rc 2 "unknown timing" "$glabench" bench --backend naive_recurrent "${small[@]}" --timing host \
  --json "$dir/bad.json"
[[ "$out" == *"--timing"*"eager or graph"* ]] || fail "unknown timing: $out"
[[ ! -e "$dir/bad.json" ]] || fail "bad usage wrote a results file"

# compare pairs rows of one regime and timing only: against itself every timed row is
# SAME; fla+strong against all pairs those two and leaves the rest NEW.
expect_rc 0 "compare all with itself" "$glabench" compare "$dir/all.json" "$dir/all.json" \
  --json "$dir/self.json"
expect_rc 0 "compare two regimes with all" "$glabench" compare "$dir/fla_strong.json" \
  "$dir/all.json" --json "$dir/sub.json"
# The same file with its rows re-labelled as another regime and timing: nothing pairs.
"$python" - "$dir/fla_strong.json" "$dir/relabelled.json" "$dir/old.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["benchmarks"]:
    r["gates"] = {"fla": "model", "strong": "cliff"}[r["gates"]]
json.dump(d, open(sys.argv[2], "w"))
# Rows of a file from before regimes and timing modes: no such keys (mild and eager).
d = json.load(open(sys.argv[1]))
d["benchmarks"] = d["benchmarks"][:1]
for r in d["benchmarks"]:
    del r["gates"], r["timing"]
    r["name"] = r["name"].rsplit("/gates-", 1)[0]
json.dump(d, open(sys.argv[3], "w"))
PY
expect_rc 0 "compare relabelled" "$glabench" compare "$dir/fla_strong.json" "$dir/relabelled.json" \
  --json "$dir/relabelled_cmp.json"
expect_rc 0 "compare old with all" "$glabench" compare "$dir/old.json" "$dir/all.json" \
  --json "$dir/old_cmp.json"
"$python" - "$dir" <<'PY' || fail "compare by regime and timing"
import json, os, sys
def rows(name):
    return json.load(open(os.path.join(sys.argv[1], name)))["rows"]
for r in rows("self.json"):
    want = "SAME" if r["timing"] == "eager" else "SKIPPED"
    assert r["status"] == want, r
sub = {(r["gates"], r["timing"]): r["status"] for r in rows("sub.json")}
for k, status in sub.items():
    paired = k in {("fla", "eager"), ("strong", "eager")}
    assert (status not in ("NEW", "GONE")) == paired, (k, status)
assert all(r["status"] in ("NEW", "GONE") for r in rows("relabelled_cmp.json")), rows("relabelled_cmp.json")
old = {(r["gates"], r["timing"]): r["status"] for r in rows("old_cmp.json")}
assert old["mild", "eager"] not in ("NEW", "GONE"), old  # an old row is mild and eager
assert all(s in ("NEW", "GONE", "SKIPPED") for k, s in old.items() if k != ("mild", "eager")), old
PY
"$python" - "$dir/all.json" "$dir/bad_regime.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["benchmarks"][0]["gates"] = "gentle"
json.dump(d, open(sys.argv[2], "w"))
PY
expect_rc 2 "compare a row with an unknown regime" "$glabench" compare "$dir/all.json" "$dir/bad_regime.json"
[[ "$out" == *"bad_regime.json"*"benchmarks[0].gates"*"must be one of"* ]] || fail "bad regime message: $out"

# The report shows each row's regime and timing.
expect_rc 0 "report of all regimes" "$glabench" report "$dir/all.json" --out "$dir/report"
grep -q "| naive_recurrent | gla | fp64 | fwd | B1 T32 H2 K8 V8 gates:strong | ok |" \
  "$dir/report/report.md" || fail "report lacks the strong row"

# The last timed call's outputs against the quick verify's: NaN, nothing written, or a
# drift fail the row (exit 1); a difference within the threshold passes, not identical.
for variant in nan_later stale_later drift_later jitter_later; do
  want=1
  [[ $variant == jitter_later ]] && want=0
  expect_rc $want "bench $variant" "$glabench" --backend-lib "$plugin_dir/glabench_backend_test_$variant.so" \
    bench --backend test_$variant "${small[@]}" --json "$dir/$variant.json"
  "$python" - "$dir/$variant.json" "$variant" <<'PY' || fail "bench $variant row"
import json, sys
(r,) = json.load(open(sys.argv[1]))["benchmarks"]
assert all(c["passed"] for c in r["checks"]), r["checks"]  # the quick verify passed
assert r["timed_outputs_identical"] is False, r
if sys.argv[2] == "jitter_later":
    assert r["status"] == "ok" and 0 < r["timed_outputs_rel_l2"] < 1e-12, r
else:
    assert r["status"] == "failed" and r["samples_ms"] == [], r
    assert r["message"].startswith("the last timed call's outputs: o "), r["message"]
PY
done

# --max-call-seconds judges a warm call: a first call slower than the limit (compiling,
# autotuning) is timed again before the row is skipped; one slow every time is skipped,
# the message giving both calls (exit 77: nothing ran).
expect_rc 0 "bench slow_first" "$glabench" --backend-lib "$plugin_dir/glabench_backend_test_slow_first.so" \
  bench --backend test_slow_first "${small[@]}" --max-call-seconds 1 --json "$dir/slow_first.json"
expect_rc 77 "bench slow_every" "$glabench" --backend-lib "$plugin_dir/glabench_backend_test_slow_every.so" \
  bench --backend test_slow_every "${small[@]}" --max-call-seconds 0.2 --json "$dir/slow_every.json"
"$python" - "$dir/slow_first.json" "$dir/slow_every.json" <<'PY' || fail "bench slow rows"
import json, sys
(first,) = json.load(open(sys.argv[1]))["benchmarks"]
assert first["status"] == "ok" and first["samples_ms"], first
assert max(first["samples_ms"]) < 1000, first["samples_ms"]  # the slow first call untimed
(every,) = json.load(open(sys.argv[2]))["benchmarks"]
assert every["status"] == "skipped", every
m = every["message"]
assert m.startswith("one call took 0.") and "(the first 0." in m and "--max-call-seconds 0.2" in m, m
PY

# A CUDA backend in this build describes nvcc and its architectures, wherever its table is.
if [[ -e "$(dirname "$glabench")/../backends/glabench_backend_parallel_scan_cuda.so" ]] ||
   "$glabench" list 2>/dev/null | grep -q "^parallel_scan_cuda"; then
  expect_rc 0 "list" "$glabench" list
  line=$(grep -A3 "^parallel_scan_cuda" <<<"$out" | grep "built:")
  [[ "$line" == *"NVIDIA "*", CUDA "[0-9]* ]] || fail "parallel_scan_cuda's build lacks nvcc or its architectures: $out"
fi

echo "$failures failures"
[[ $failures == 0 ]]
