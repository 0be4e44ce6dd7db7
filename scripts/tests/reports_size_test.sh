#!/usr/bin/env bash
# reports/ is evidence, not a notebook: its committed files (reports/latest/, written by
# scripts/run.sh, is not committed) stay under 3 MB in all, each counted as the 4 KiB
# blocks it takes on disk (as `du` counts it). Names the largest files when they do not.
# usage: reports_size_test.sh REPORTS_DIR
set -u
dir=${1:?usage: reports_size_test.sh REPORTS_DIR}
limit=3000000
[[ -d $dir ]] || { echo "$dir: not a folder"; exit 2; }
total=$(find "$dir" -path "$dir/latest" -prune -o -type f -printf '%s\n' |
  awk '{s += int(($1 + 4095) / 4096) * 4096} END {print s + 0}')
echo "$dir: $total bytes (limit $limit)"
if ((total > limit)); then
  echo "$dir holds more than 3 MB; the largest files:"
  find "$dir" -path "$dir/latest" -prune -o -type f -printf '%s %p\n' | sort -rn | head -10
  echo "compress results files (xz), drop superseded runs (git keeps them) or plots nobody cites"
  exit 1
fi
