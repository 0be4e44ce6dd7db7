#!/usr/bin/env bash
# Set up, build, and run the whole ctest suite. CUDA tests report skipped without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --preset release "$@"
