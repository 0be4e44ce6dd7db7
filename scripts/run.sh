#!/usr/bin/env bash
# The main job: set up, build, then verify every backend found on the committed
# fixtures, print the table and write reports/latest/verify.json. On a machine
# without a GPU the CUDA backends report themselves unavailable and the CPU backends
# run. Extra arguments go to `glabench verify` (e.g. --backend naive_recurrent).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
exec build/release/glabench verify --fixture datasets/fixtures --json reports/latest/verify.json "$@"
