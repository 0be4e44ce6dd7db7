#!/usr/bin/env bash
# Every malformed fixture must make `glabench verify` exit 2 with a message naming
# the file, the field and the rule, and write no results file.
set -u
glabench=$1 write_bad=$2 dir=$3 hostile=$4
rm -rf "$dir" && mkdir -p "$dir"
"$write_bad" "$dir" || { echo "write_bad_fixtures failed"; exit 1; }
failures=0 checked=0
while IFS=$'\t' read -r file field rule; do
  checked=$((checked + 1))
  # Some fixtures lead to a FIFO: `timeout` turns a reader that blocks into a failure.
  out=$(timeout 30 "$glabench" verify --backend naive_recurrent --fixture "$file" --json "$dir/results.json" 2>&1)
  rc=$?
  for want in "$file" "$field" "$rule"; do
    if [[ "$out" != *"$want"* ]]; then
      echo "FAIL $file: message lacks '$want': $out"; failures=$((failures + 1))
    fi
  done
  [[ $rc == 2 ]] || { echo "FAIL $file: exit code $rc, expected 2"; failures=$((failures + 1)); }
  [[ ! -e "$dir/results.json" ]] || { echo "FAIL $file: a results file was written"; failures=$((failures + 1)); }
  echo "ok   rc=$rc  $out"
done < "$dir/expected.tsv"
# Special files, passed directly or found in a fixture folder, are refused without
# blocking (reading a FIFO waits for a writer forever): exit 2, the file and the rule named.
expect_refusal() {  # WHAT RULE COMMAND...
  local what=$1 rule=$2; shift 2
  checked=$((checked + 1))
  out=$(timeout 30 "$@" 2>&1); rc=$?
  if [[ $rc != 2 || "$out" != *"$rule"* || -e "$dir/results.json" ]]; then
    echo "FAIL $what: rc=$rc (expected 2), wanted '$rule' and no results file: $out"
    failures=$((failures + 1))
  else
    echo "ok   rc=$rc  $out"
  fi
}
good="$dir/good" special="$dir/special" folder="$dir/folder_with_fifo"
mkdir -p "$special" "$folder"
"$glabench" fixtures make --out "$good" --only gla_t1 >/dev/null || { echo "fixtures make failed"; exit 1; }
mkfifo "$special/pipe.h5" "$folder/zz_pipe.h5"
cp "$good/gla_t1.h5" "$folder/"
expect_refusal "FIFO" "$special/pipe.h5: (file): is a FIFO (named pipe), not a regular file" \
  "$glabench" verify --backend naive_recurrent --fixture "$special/pipe.h5" --json "$dir/results.json"
expect_refusal "FIFO in a folder" "$folder/zz_pipe.h5: (file): is a FIFO (named pipe)" \
  "$glabench" verify --backend naive_recurrent --fixture "$folder" --json "$dir/results.json"
expect_refusal "fixtures show FIFO" "$special/pipe.h5: (file): is a FIFO" \
  "$glabench" fixtures show "$special/pipe.h5"
expect_refusal "device" "/dev/null: (file): is a character device, not a regular file" \
  "$glabench" fixtures show /dev/null
# A file on which libhdf5 1.10 itself segfaults (found by fuzzing): refused, not a crash.
expect_refusal "a file that crashes libhdf5" "$hostile/libhdf5_segfault.h5: (file): " \
  "$glabench" verify --backend naive_recurrent --fixture "$hostile/libhdf5_segfault.h5" --json "$dir/results.json"
expect_refusal "fixtures show, a file that crashes libhdf5" "$hostile/libhdf5_segfault.h5: (file): " \
  "$glabench" fixtures show "$hostile/libhdf5_segfault.h5"
# A file on which libhdf5 1.10 allocates without bound (found by fuzzing: 24 GB, all of the
# machine's memory, before): the child that reads it first may grow by the datasets' limit
# and 1 GiB, so it fails there; refused, quickly at a small limit (expect_refusal's 30 s).
expect_refusal "a file on which libhdf5 allocates without bound" "$hostile/libhdf5_unbounded_alloc.h5: " \
  "$glabench" fixtures show --max-fixture-bytes 67108864 "$hostile/libhdf5_unbounded_alloc.h5"
# --max-fixture-bytes: gla_t1 needs 1664 bytes; the limit is named in the refusal.
expect_refusal "over the memory limit" \
  "gla_t1.h5: (file): needs 1664 bytes (1.6 KiB) of memory for its datasets (B=1 T=1 H=2 K=4 V=4), over the limit of 1000 bytes (--max-fixture-bytes)" \
  "$glabench" verify --backend naive_recurrent --max-fixture-bytes 1kB --fixture "$good/gla_t1.h5" --json "$dir/results.json"
expect_refusal "fixtures show over the limit" "over the limit of 1663 bytes (1.6 KiB) (--max-fixture-bytes)" \
  "$glabench" fixtures show --max-fixture-bytes 1663 "$good/gla_t1.h5"
expect_refusal "a limit that is not a size" "--max-fixture-bytes" \
  "$glabench" fixtures show --max-fixture-bytes lots "$good/gla_t1.h5"
expect_refusal "a zero limit" "--max-fixture-bytes" \
  "$glabench" fixtures show --max-fixture-bytes 0 "$good/gla_t1.h5"
out=$("$glabench" fixtures show --max-fixture-bytes 1664 "$good/gla_t1.h5" 2>&1); rc=$?
[[ $rc == 0 && "$out" == *"B=1 T=1 H=2 K=4 V=4"* ]] || { echo "FAIL a fixture at the limit: rc=$rc $out"; failures=$((failures + 1)); }
out=$("$glabench" verify --help 2>&1)
[[ "$out" == *"--max-fixture-bytes"*"half the physical"* ]] || { echo "FAIL verify --help lacks --max-fixture-bytes: $out"; failures=$((failures + 1)); }
# An unknown backend is bad usage too.
out=$("$glabench" verify --backend no_such_backend 2>&1); rc=$?
[[ $rc == 2 && "$out" == *"no_such_backend"* ]] || { echo "FAIL unknown backend: rc=$rc $out"; failures=$((failures + 1)); }
echo "$checked malformed fixtures checked, $failures failures"
[[ $checked -ge 14 && $failures == 0 ]]
