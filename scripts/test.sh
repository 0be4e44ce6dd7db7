#!/usr/bin/env bash
# Set up, build, and run the whole ctest suite. CUDA tests report skipped without a GPU.
# Then, where clang's libFuzzer is installed, fuzz the fixture and results readers for
# 30 s each (scripts/fuzz.sh; GLABENCH_SKIP_FUZZ=1 leaves that out).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --preset release "$@"
[[ ${GLABENCH_SKIP_FUZZ:-0} == 1 ]] || scripts/fuzz.sh
