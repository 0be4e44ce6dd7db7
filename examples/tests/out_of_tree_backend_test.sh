#!/usr/bin/env bash
# usage: out_of_tree_backend_test.sh BUILD_DIR SOURCE_DIR CMAKE CTEST CXX GENERATOR
# Installs BUILD_DIR into a fresh prefix, builds examples/out_of_tree_backend against it
# with the same compiler, and verifies the plugin (gla, fp64 and fp32) with the
# installed glabench, finding it through GLABENCH_BACKEND_PATH.
set -euo pipefail
build=$1 source=$2 cmake=$3 ctest=$4 cxx=$5 generator=$6
tmp=$(mktemp -d "${TMPDIR:-/tmp}/glabench_sdk.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix example=$tmp/example

"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }
for f in bin/glabench include/glabench/backend.h include/glabench/backend_support.hpp \
         include/dlpack/dlpack.h lib/cmake/glabench/glabenchConfig.cmake \
         lib/cmake/glabench/glabenchConfigVersion.cmake lib/cmake/glabench/glabench_backend.cmake; do
  [[ -f $prefix/$f ]] || { echo "not installed: $f"; exit 1; }
done

# The installed headers compile on their own (DLPack's comes with them).
printf '#include "glabench/backend_support.hpp"\nint main() { return GLABENCH_ABI_MAJOR == 0; }\n' >"$tmp/headers.cpp"
"$cxx" -std=c++20 -fsyntax-only -I"$prefix/include" "$tmp/headers.cpp"

"$cmake" -S "$source/examples/out_of_tree_backend" -B "$example" -G "$generator" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/configure.log" ||
  { cat "$tmp/configure.log"; exit 1; }
"$cmake" --build "$example" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
plugin=$example/glabench_backend_example_gla.so
[[ -f $plugin ]] || { echo "no $plugin"; ls "$example"; exit 1; }
# Built optimised with no build type, exporting only the entry symbol and the commit it was
# built from (backend.h's GLABENCH_GIT_COMMIT_SYMBOL).
grep -rq --include=flags.make --include=build.ninja -e '-O3' "$example" ||
  { echo "example_gla was not built with -O3"; exit 1; }
exported=$(nm -D --defined-only "$plugin" | awk '$2 == "T" { print $3 }' | sort | tr '\n' ' ')
[[ $exported == "glabench_backend_entry glabench_backend_git_commit " ]] ||
  { echo "exported: $exported"; exit 1; }

# It says how it was built, with no line of its own: glabench_add_backend's -O3, no build
# type, the compiler CMake found, the commit of the checkout it was built in.
GLABENCH_BACKEND_PATH=$example "$prefix/bin/glabench" list >"$tmp/list.txt"
grep -Eq "built: no build type, [A-Za-z]* [0-9.]*, optimised, git ([0-9a-f]{12}(-dirty)?|unknown)$" \
  "$tmp/list.txt" ||
  { echo "example_gla's build description:"; cat "$tmp/list.txt"; exit 1; }

for dtype in fp64 fp32; do
  GLABENCH_BACKEND_PATH=$example "$prefix/bin/glabench" verify --backend example_gla --op gla \
    --fixture "$source/datasets/fixtures" --dtype "$dtype"
done
# The verify tests glabench_add_backend made, against the installed fixtures.
"$ctest" --test-dir "$example" --output-on-failure >"$tmp/ctest.log" || { cat "$tmp/ctest.log"; exit 1; }
tail -n 3 "$tmp/ctest.log"
expected=$(( 2 * $(find "$prefix/share/glabench/fixtures" -name 'gla_*.h5' | wc -l) ))
grep -q "100% tests passed, 0 tests failed out of $expected\$" "$tmp/ctest.log" ||
  { echo "expected $expected verify tests (gla fixtures x fp64, fp32)"; exit 1; }

# Built as Debug (no optimisation): bench times it, but warns on stderr and in the results.
debug=$tmp/example_debug
"$cmake" -S "$source/examples/out_of_tree_backend" -B "$debug" -G "$generator" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/configure_debug.log" ||
  { cat "$tmp/configure_debug.log"; exit 1; }
"$cmake" --build "$debug" >"$tmp/build_debug.log" 2>&1 || { cat "$tmp/build_debug.log"; exit 1; }
GLABENCH_BACKEND_PATH=$debug "$prefix/bin/glabench" bench --backend example_gla --shape 1,16,1,4,4 \
  --mode fwd --dtype fp64 --time-cap 0.1 --min-reps 5 --json "$tmp/debug.json" 2>"$tmp/debug.err" >/dev/null
grep -q "^WARNING: backend 'example_gla' was built WITHOUT OPTIMISATION (Debug, " "$tmp/debug.err" ||
  { echo "no warning for the Debug build:"; cat "$tmp/debug.err"; exit 1; }
grep -q '"build_type": "Debug"' "$tmp/debug.json" && grep -q '"optimized": false' "$tmp/debug.json" ||
  { echo "the Debug build is not recorded in the results"; exit 1; }
echo "out-of-tree backend: OK"
