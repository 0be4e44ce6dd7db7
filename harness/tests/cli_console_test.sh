#!/usr/bin/env bash
# What bench and verify print (README, "Benchmarking"; bench_printer.hpp, verify_printer.hpp):
# glabench's own bench table without Google Benchmark's columns, names, SI prefixes or
# debug warning; skips grouped per backend and reason; failures in red only on a terminal,
# never with NO_COLOR; a progress line that clears itself; verify's "unavailable" cases
# as one line per backend and reason; verify's failure line naming the tensors and, for
# NaN outputs, their count and the first index.
set -u
glabench=$1 plugin_dir=$2 fixtures=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir"
source "$(dirname "${BASH_SOURCE[0]}")/cli_checks.sh"
unavailable=(--backend-lib "$plugin_dir/glabench_backend_test_unavailable.so")
silent=(--backend-lib "$plugin_dir/glabench_backend_test_silent.so")
# Only these backends, so that what the tree's other backends (CUDA ones on a machine
# without a GPU, say) add to the output does not change what is checked.
quick=(--backend naive_recurrent --backend test_unavailable --backend test_silent
       --op gla --dtype fp64 --mode fwd --time-cap 0.1 --min-reps 5)

# bench into a file: the table, plain.
expect_rc 1 "bench" "$glabench" "${unavailable[@]}" "${silent[@]}" bench "${quick[@]}" \
  --shape 1,32,2,8,8 --shape 1,64,2,8,8
printf '%s\n' "$out" >"$dir/bench.txt"
! LC_ALL=C grep -q $'\x1b' "$dir/bench.txt" || fail "escape codes in bench output that is not a terminal"
for gb in "iterations:1" "manual_time" "Library was built as DEBUG" "ERROR OCCURRED" "Iterations"; do
  ! grep -q "$gb" "$dir/bench.txt" || fail "Google Benchmark's '$gb' in the bench output"
done
grep -q "^configuration  *median ms  *p20–p80 ms  *cv  *reps  *GB/s  *% peak  *status$" "$dir/bench.txt" ||
  fail "bench header: $(head -1 "$dir/bench.txt")"
# A timed row: plain numbers (no SI prefixes), the peak fraction and its kind, ok.
grep -Eq "^naive_recurrent +gla +fp64 +fwd +B1 T32 H2 K8 V8 gates:mild +[0-9]+\.[0-9]+ +[0-9.]+–[0-9.]+ +[0-9.]+% +[0-9]+ +[0-9.]+ +[0-9.]+% copy +ok" \
  "$dir/bench.txt" || fail "bench row: $(cat "$dir/bench.txt")"
grep -Eq "^test_silent .* FAILED: quick verify failed: (o|ht) holds NaN or Inf$" "$dir/bench.txt" ||
  fail "bench failure line: $(cat "$dir/bench.txt")"
# Skips: one line for the backend and reason, none per configuration.
[[ $(grep -c "test_unavailable" "$dir/bench.txt") == 1 ]] &&
  grep -q "^skipped  test_unavailable: 2 configurations: cannot run here: no frobnicator on this machine$" \
    "$dir/bench.txt" || fail "bench skips not grouped: $(cat "$dir/bench.txt")"
grep -q "^2 timed, 2 failed, 2 skipped$" "$dir/bench.txt" || fail "bench totals: $(tail -1 "$dir/bench.txt")"

# verify: the unavailable backend's cases as one line; the silent backend's NaN outputs.
expect_rc 1 "verify" "$glabench" "${unavailable[@]}" "${silent[@]}" verify --backend naive_recurrent \
  --backend test_unavailable --backend test_silent --op gla --dtype fp64 \
  --no-gradcheck --fixture "$fixtures" --json "$dir/verify.json"
printf '%s\n' "$out" >"$dir/verify.txt"
# Its packed batches are not offered to it at all (ABI 1.5, no GLABENCH_FEATURE_VARLEN):
# unsupported, said before whether it could run here.
packed=$(find "$fixtures" -name 'gla_*varlen*.h5' | wc -l)
cases=$(($(find "$fixtures" -name 'gla_*.h5' | wc -l) - packed))
[[ $(grep -c "test_unavailable" "$dir/verify.txt") == 2 ]] &&
  grep -q "^test_unavailable: $cases cases unavailable: cannot run here: no frobnicator on this machine$" \
    "$dir/verify.txt" &&
  grep -q "^test_unavailable: $packed cases unsupported: no packed variable-length batches (ABI 1.5 feature GLABENCH_FEATURE_VARLEN)$" \
    "$dir/verify.txt" || fail "verify: unavailable cases not collapsed: $(grep test_unavailable "$dir/verify.txt")"
grep -Eq "^ +failed: tensors o \(([0-9]+) of \1 NaN or Inf, the first at \[0, 0, 0, 0\]\), ht \(([0-9]+) of \2 NaN or Inf, the first at \[0, 0, 0, 0\]\)" \
  "$dir/verify.txt" || fail "verify failure line: $(grep -A2 "test_silent *gla_tiny" "$dir/verify.txt")"
python3 - "$dir/verify.json" <<'PY' || fail "verify JSON: NaN counts"
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
o = next(t for r in rows if r["backend"] == "test_silent" and r["fixture"] == "gla_tiny"
         for t in r["tensors"] if t["name"] == "o")
assert o["non_finite"] == o["elements"] > 0 and o["first_non_finite"] == [0, 0, 0, 0], o
PY

# On a terminal (script(1) gives one): colours, and a progress line that clears itself;
# NO_COLOR keeps the progress line and drops the colours.
if command -v script >/dev/null; then
  cmd="$glabench ${unavailable[*]} ${silent[*]} bench ${quick[*]} --shape 1,32,2,8,8"
  script -qec "$cmd" /dev/null >"$dir/tty.txt" 2>&1
  LC_ALL=C grep -q $'\x1b\\[32mok' "$dir/tty.txt" || fail "no colour on a terminal: $(cat -v "$dir/tty.txt")"
  LC_ALL=C grep -q $'\x1b\\[1;31mFAILED' "$dir/tty.txt" || fail "failure not red on a terminal"
  LC_ALL=C grep -q $'\r\x1b\\[K\\[1/3\\]' "$dir/tty.txt" || fail "no progress line on a terminal"
  python3 - "$dir/tty.txt" <<'PY' || fail "the progress line is not cleared: $(cat -v "$dir/tty.txt")"
import re, sys
text = open(sys.argv[1], encoding="utf-8", newline="").read()  # keep the \r
shown = list(re.finditer(r"\r\x1b\[K\[\d+/\d+\][^\r\n]*", text))
assert len(shown) == 3 and all(text.startswith("\r\x1b[K", m.end()) for m in shown), shown
PY
  NO_COLOR=1 script -qec "$cmd" /dev/null >"$dir/no_color.txt" 2>&1
  ! LC_ALL=C grep -q $'\x1b\\[[0-9;]*m' "$dir/no_color.txt" ||
    fail "colour despite NO_COLOR: $(cat -v "$dir/no_color.txt")"
  LC_ALL=C grep -q $'\r\x1b\\[K\\[1/3\\]' "$dir/no_color.txt" || fail "NO_COLOR dropped the progress line"
else
  echo "script(1) not found: terminal checks skipped"
fi

echo "$failures failures"
[[ $failures == 0 ]]
