#!/usr/bin/env bash
# The regression gate on the committed H200 results (CI has no GPU). Inputs: $runs is
# harness/tests/data/committed_results/ (README there: which run each file is), $baseline
# the CI gate's baseline reports/baselines/h200/bench.json, $final run B of the run whose
# run A is that baseline.
# - two back-to-back runs of one build (bench_a, bench_b) must compare all SAME and pass;
# - the run with parallel_scan_cuda built deliberately slow (bench_slow) must show that
#   backend's rows SLOWER (and no other's) and fail;
# - the baseline (taken from the current kernels) must fail against the earlier kernels'
#   run (bench_b) — the gate catches them as a regression, 28 SLOWER — and pass, 28 SAME,
#   against the second run of the current kernels ($final), both for the GPU backend as
#   the README's CI recipe runs it;
# - the report must build (bench_a with bench_t_sweep).
set -u
glabench=$1 runs=$2 baseline=$3 final=$4 dir=$5
rm -rf "$dir" && mkdir -p "$dir"
python=${GLABENCH_PYTHON:-python3}
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

"$glabench" compare "$runs/bench_a.json" "$runs/bench_b.json" --fail-on-regression 5 \
  --json "$dir/a_b.json" > "$dir/a_b.md"
rc=$?; [[ $rc == 0 ]] || fail "back-to-back runs: exit $rc"
"$glabench" compare "$runs/bench_a.json" "$runs/bench_slow.json" --fail-on-regression 5 \
  --json "$dir/a_slow.json" > "$dir/a_slow.md"
rc=$?; [[ $rc == 1 ]] || fail "slowed build: exit $rc, expected 1"
"$glabench" compare "$baseline" "$runs/bench_b.json" --backend parallel_scan_cuda \
  --fail-on-regression 5 > "$dir/earlier.md"
rc=$?; [[ $rc == 1 ]] || fail "baseline against the earlier kernels: exit $rc, expected 1"
grep -q "28 SLOWER" "$dir/earlier.md" || fail "earlier kernels: not 28 SLOWER: $(tail -1 "$dir/earlier.md")"
"$glabench" compare "$baseline" "$final" --backend parallel_scan_cuda --fail-on-regression 5 \
  > "$dir/final.md"
rc=$?; [[ $rc == 0 ]] || fail "baseline against the final build (GPU backend): exit $rc"
grep -q "28 SAME" "$dir/final.md" || fail "final build: not 28 SAME: $(tail -1 "$dir/final.md")"

"$python" - "$dir/a_b.json" "$dir/a_slow.json" <<'PY' || fail "verdicts"
import json, sys
same = json.load(open(sys.argv[1]))["rows"]
timed = [r for r in same if r["ratio"] is not None]
assert len(timed) >= 30, len(timed)
bad = [r["name"] for r in timed if r["status"] != "SAME"]
assert not bad, f"back-to-back rows not SAME: {bad}"
slow = json.load(open(sys.argv[2]))["rows"]
for r in slow:
    if r["ratio"] is None:
        continue
    if r["backend"] == "parallel_scan_cuda":
        assert r["status"] == "SLOWER" and r["ratio"] > 1.9, r
    else:
        assert r["status"] == "SAME", r
print("verdicts ok:", len(timed), "rows SAME back to back;",
      sum(r["status"] == "SLOWER" for r in slow), "SLOWER with the slowed build")
PY

"$glabench" report "$runs/bench_a.json" "$runs/bench_t_sweep.json" --out "$dir/report" > /dev/null
rc=$?; [[ $rc == 0 ]] || fail "report: exit $rc"
for f in report.md time_vs_t.png speedup.png peak_fraction.png accuracy.png; do
  [[ -s "$dir/report/$f" ]] || fail "report lacks $f"
done
# Each timed row's copy floor is its median × the share of the copy bandwidth it reached.
python3 - "$dir/report/report.md" "$runs/bench_a.json" <<'PY' || fail "report's copy floor"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
head = next(l for l in lines if l.startswith("| backend |"))
cols = [c.strip() for c in head.strip("|").split("|")]
at, med = cols.index("copy floor ms"), cols.index("median ms")
rows = [[c.strip() for c in l.strip("|").split("|")] for l in lines
        if l.startswith("| ") and len(l.split("|")) == len(head.split("|")) and l != head]
timed = [r for r in rows if r[at] not in ("–", "copy floor ms") and not r[at].startswith("-")]
assert timed, "no row with a copy floor"
for r in timed:
    floor, median = float(r[at]), float(r[med])
    assert 0 < floor <= median, r
want = sorted(round(b["median_ms"] * b["bandwidth_fraction"], 4)
              for b in json.load(open(sys.argv[2]))["benchmarks"] if b.get("bandwidth_fraction"))
print("copy floors:", len(timed), "rows; smallest", min(float(r[at]) for r in timed),
      "ms; the file's smallest", want[0] if want else None)
PY
echo "$failures failures"
[[ $failures == 0 ]]
