#!/usr/bin/env bash
# scripts/triton_cache.sh on a made-up cache: save and restore keep every file; save-tuning
# keeps only the autotune choices, restorable into a fresh cache; a wrong mode exits 2.
# usage: triton_cache_test.sh TRITON_CACHE_SH
set -u
script=${1:?usage: triton_cache_test.sh TRITON_CACHE_SH}
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$tmp/cache/aa11" "$tmp/cache/bb22"
echo '{"key": "k", "configs_timings": []}' > "$tmp/cache/aa11/chunk_kernel.autotune.json"
head -c 4096 /dev/urandom > "$tmp/cache/bb22/chunk_kernel.cubin"
echo '{}' > "$tmp/cache/bb22/chunk_kernel.json"
TRITON_CACHE_DIR=$tmp/cache bash "$script" save "$tmp/all.tar.xz" > /dev/null || fail "save"
TRITON_CACHE_DIR=$tmp/cache bash "$script" save-tuning "$tmp/tuning.tar.xz" > "$tmp/out.txt" ||
  fail "save-tuning"
grep -q "1 tuning choices" "$tmp/out.txt" || fail "save-tuning's count: $(cat "$tmp/out.txt")"
[[ $(tar -tJf "$tmp/all.tar.xz" | grep -c '[^/]$') == 3 ]] || fail "save left files out"
[[ $(tar -tJf "$tmp/tuning.tar.xz") == ./aa11/chunk_kernel.autotune.json ]] ||
  fail "save-tuning packed: $(tar -tJf "$tmp/tuning.tar.xz" | tr '\n' ' ')"
TRITON_CACHE_DIR=$tmp/fresh bash "$script" restore "$tmp/tuning.tar.xz" > /dev/null || fail "restore"
cmp -s "$tmp/cache/aa11/chunk_kernel.autotune.json" "$tmp/fresh/aa11/chunk_kernel.autotune.json" ||
  fail "the restored choice differs"
[[ ! -e $tmp/fresh/bb22 ]] || fail "save-tuning restored a compiled kernel"
TRITON_CACHE_DIR=$tmp/none bash "$script" restore "$tmp/missing.tar.xz" > /dev/null ||
  fail "a missing file should restore nothing"
bash "$script" bogus "$tmp/x" 2> /dev/null
[[ $? == 2 ]] || fail "an unknown mode should exit 2"
echo "triton_cache: save, save-tuning and restore as documented"
