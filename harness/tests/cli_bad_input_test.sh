#!/usr/bin/env bash
# Every malformed fixture must make `glabench verify` exit 2 with a message naming
# the file, the field and the rule, and write no results file.
set -u
glabench=$1 write_bad=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
"$write_bad" "$dir" || { echo "write_bad_fixtures failed"; exit 1; }
failures=0 checked=0
while IFS=$'\t' read -r file field rule; do
  checked=$((checked + 1))
  out=$("$glabench" verify --backend naive_recurrent --fixture "$file" --json "$dir/results.json" 2>&1)
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
# An unknown backend is bad usage too.
out=$("$glabench" verify --backend no_such_backend 2>&1); rc=$?
[[ $rc == 2 && "$out" == *"no_such_backend"* ]] || { echo "FAIL unknown backend: rc=$rc $out"; failures=$((failures + 1)); }
echo "$checked malformed fixtures checked, $failures failures"
[[ $checked -ge 14 && $failures == 0 ]]
