#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time: the fuzz/* ctests (GLABENCH_FUZZ=ON, the
# fuzz preset). The seed corpus is copied afresh from the committed inputs; new inputs
# the fuzzer finds collect in WORKDIR/corpus, and a crashing input is written to
# WORKDIR/artifacts/ and named in the output (reproduce with: FUZZER ARTIFACT).
#   GLABENCH_FUZZ_SECONDS  fuzzing time (default 30)
#   GLABENCH_FUZZ_STRICT=1 treat exceptions other than the reader's own as findings
# usage: run_fuzzer.sh FUZZER WORKDIR EXT SEED...   (SEED: a file, or a folder whose *.EXT)
set -euo pipefail
fuzzer=$1 work=$2 ext=$3
shift 3
seconds=${GLABENCH_FUZZ_SECONDS:-30}
rm -rf "$work/seeds"
mkdir -p "$work/seeds" "$work/corpus" "$work/artifacts"
n=0
for seed in "$@"; do
  if [[ -d $seed ]]; then files=("$seed"/*."$ext"); else files=("$seed"); fi
  for f in "${files[@]}"; do
    [[ -f $f ]] || { echo "run_fuzzer: no seed $f"; exit 1; }
    n=$((n + 1))
    cp "$f" "$work/seeds/$n-$(basename "$f")"
  done
done
# Results files hold a hundred rows or more, which makes each run slow: add a small seed
# per file that keeps one row of each kind (status, ran_on, mode, hot).
if [[ $ext == json ]] && command -v python3 >/dev/null; then
  python3 - "$work"/seeds/*.json <<'PY' || echo "run_fuzzer: no small seeds (python3 failed)"
import json, sys
for path in sys.argv[1:]:
    d = json.load(open(path))
    rows, kinds = [], set()
    for r in d.get("benchmarks", []):
        kind = tuple(str(r.get(k)) for k in ("status", "ran_on", "mode", "hot"))
        if kind not in kinds:
            kinds.add(kind)
            rows.append(r)
    d["benchmarks"] = rows
    json.dump(d, open(path[: -len(".json")] + ".small.json", "w"))
PY
fi
# A malloc over 2 GiB returns NULL, as without overcommit: libhdf5 mallocs sizes read
# from a malformed file (20 GB for one object header, freed again), which under ASan
# would count as an out-of-memory finding; operator new over 2 GiB is still reported.
# HDF5's own over-reads and leaks are not the reader's (see the two suppression files).
here=$(cd "$(dirname "$0")" && pwd)
export ASAN_OPTIONS="allocator_may_return_null=1:max_allocation_size_mb=2048:suppressions=$here/asan_suppressions.txt${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$here/lsan_suppressions.txt${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
echo "run_fuzzer: $(basename "$fuzzer") for ${seconds}s from $n seeds; corpus $work/corpus"
# The fixture fuzzer reads in this process, which is fast (read_fixture's child costs a
# fork an input). A crash there is libhdf5's own where the sanitizer's report starts in
# libhdf5 (its first frame that is neither libc nor an interceptor), or where the same
# read in a child (GLABENCH_FUZZ_CONTAINED=1) turns it into a refusal; glabench refuses
# such a file. The input is kept in WORKDIR/libhdf5_crashes/ (its report is in the log
# above) and fuzzing goes on for the time left. So is an out-of-memory finding whose
# largest live allocations libhdf5 made (frame #1 over malloc): libhdf5 allocates without
# bound on some files, which glabench's contained read bounds and refuses. Any other
# finding ends the run with the fuzzer's exit code.
oom_in_libhdf5() {
  awk '/^Live Heap Allocations/ { on = 1; next }
       on && /^ *#1 / { found = ($0 ~ /libhdf5/); exit }
       END { exit !found }' "$1"
}
first_own_frame() {
  awk '/ERROR: AddressSanitizer/ { on = 1; next }
       on && /^ *#[0-9]+ / { if ($0 ~ /__interceptor_|libc\.so|sysdeps\/|string\//) next; print; exit }' "$1"
}
end=$((SECONDS + seconds))
while :; do
  left=$((end - SECONDS))
  ((left > 0)) || exit 0
  rm -f "$work"/artifacts/crash-* "$work"/artifacts/oom-*
  rc=0
  "$fuzzer" -max_total_time="$left" -rss_limit_mb=2048 -timeout=60 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" "$work/corpus" "$work/seeds" 2>"$work/round.log" || rc=$?
  cat "$work/round.log" >&2
  ((rc != 0)) || exit 0
  crash=$(ls -t "$work"/artifacts/crash-* "$work"/artifacts/oom-* 2>/dev/null | head -1 || true)
  if [[ $ext == h5 && -n $crash ]] &&
    { [[ $(first_own_frame "$work/round.log") == *libhdf5* ]] ||
      { [[ $crash == */oom-* ]] && oom_in_libhdf5 "$work/round.log"; } ||
      GLABENCH_FUZZ_CONTAINED=1 "$fuzzer" "$crash" >/dev/null 2>&1; }; then
    mkdir -p "$work/libhdf5_crashes"
    mv "$crash" "$work/libhdf5_crashes/"
    # Out of the inputs the next round starts from (libFuzzer names both by SHA-1).
    sha=${crash##*-}
    rm -f "$work/corpus/$sha"
    for f in "$work"/seeds/*; do
      [[ $(sha1sum <"$f") != "$sha "* ]] || rm -f "$f"
    done
    echo "run_fuzzer: libhdf5 failed on $(basename "$crash"), which read_fixture refuses" \
      "(read in a child first): kept in $work/libhdf5_crashes/; fuzzing goes on"
    continue
  fi
  exit "$rc"
done
