#!/usr/bin/env bash
# Configures and builds glabench into build/ (Release): everything, or the CMake targets
# given (scripts/run.sh: glabench glabench_plugins, without the tests). Puts the CUDA
# toolkit on PATH when it sits at /usr/local/cuda, so the CUDA backends build where nvcc
# exists.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" ${1:+--target "$@"}
