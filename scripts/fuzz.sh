#!/usr/bin/env bash
# Builds the libFuzzer targets of the two file readers (the fuzz preset: clang, ASan,
# UBSan; build/fuzz) and runs each for GLABENCH_FUZZ_SECONDS (default 30) seconds from
# seeds copied from the committed fixtures and results: ctest --preset fuzz. Where clang
# cannot link libFuzzer it says so and exits 0 (scripts/setup.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' \
  >"$probe/probe.cpp"
if ! command -v clang++ >/dev/null ||
  ! clang++ -fsanitize=fuzzer,address,undefined "$probe/probe.cpp" -o "$probe/probe" 2>/dev/null; then
  echo "fuzz: skipped: clang++ cannot link libFuzzer (-fsanitize=fuzzer); scripts/setup.sh installs it"
  exit 0
fi
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$(nproc)"
ctest --preset fuzz "$@"
