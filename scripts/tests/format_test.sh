#!/usr/bin/env bash
# Every C, C++ and CUDA file git tracks is as clang-format writes it, with the version
# scripts/setup.sh pins (14: what the repository's .clang-format was written for; other
# majors format some constructs differently). Exit 77 (skipped) where that version, or
# git's file list, is missing.
# usage: format_test.sh SOURCE_DIR
set -euo pipefail
cd "$1"
pinned=14
fmt=$(command -v "clang-format-$pinned" || true)
if [[ -z $fmt ]] && command -v clang-format >/dev/null &&
  clang-format --version | grep -q "version $pinned\."; then
  fmt=$(command -v clang-format)
fi
if [[ -z $fmt ]]; then
  echo "format_test: clang-format $pinned not found (scripts/setup.sh installs clang-format-$pinned)"
  exit 77
fi
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "format_test: not a git checkout: no list of tracked files"
  exit 77
fi
bad=()
checked=0
while IFS= read -r -d '' f; do
  checked=$((checked + 1))
  "$fmt" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files -z '*.c' '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh')
if ((${#bad[@]})); then
  echo "format_test: ${#bad[@]} of $checked files differ from $($fmt --version | head -1):"
  printf '  %s\n' "${bad[@]}"
  echo "fix: $fmt -i ${bad[*]}"
  exit 1
fi
echo "format_test: $checked files as $($fmt --version | head -1) writes them"
