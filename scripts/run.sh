#!/usr/bin/env bash
# The main job: set up, build, verify every backend found on the committed fixtures
# (reports/latest/verify.json), benchmark what verified at the seed shape
# (reports/latest/bench.json) and write a report with plots (reports/latest/report/).
# On a machine without a GPU the CUDA backends report themselves unavailable and the
# CPU backends run. Extra arguments go to both verify and bench (e.g. --backend NAME,
# --op gla, --dtype fp32). Exits with verify's status if it failed, else bench's.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh glabench glabench_plugins  # the tests are scripts/test.sh's
verify_rc=0 bench_rc=0
mkdir -p reports/latest  # glabench creates no folders for its outputs
rm -rf reports/latest/bench.json reports/latest/verify.json reports/latest/report  # no stale results in the summary
build/release/glabench verify --fixture datasets/fixtures --json reports/latest/verify.json "$@" || verify_rc=$?
build/release/glabench bench --shapes seed --max-call-seconds 5 --json reports/latest/bench.json "$@" || bench_rc=$?
if [[ -s reports/latest/bench.json ]]; then
  build/release/glabench report reports/latest/bench.json --out reports/latest/report
fi

# A short summary, and where everything is.
python3 - <<'PY' || true
import collections, json, os
def counts(path, key):
    if not os.path.exists(path):
        return "not written"
    rows = json.load(open(path))[key]
    c = collections.Counter(r["status"] for r in rows)
    return ", ".join(f"{n} {s}" for s, n in sorted(c.items())) or "nothing ran"
print("\n== summary ==")
print(f"verify: {counts('reports/latest/verify.json', 'results'):50s} reports/latest/verify.json")
print(f"bench:  {counts('reports/latest/bench.json', 'benchmarks'):50s} reports/latest/bench.json")
report = "reports/latest/report/report.md"
print(f"report: {'(with plots)' if os.path.exists(report) else 'not written':50s} {report}")
PY
if [[ $verify_rc != 0 && $verify_rc != 77 ]]; then exit "$verify_rc"; fi
exit "$bench_rc"
