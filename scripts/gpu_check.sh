#!/usr/bin/env bash
# The GPU evidence run for the CUDA backends, on a machine with a GPU and a build
# made elsewhere (scripts/bundle_runtime_libs.sh carries its libraries):
#   ctest's gpu tests (verify per fixture and dtype, compute-sanitizer memcheck and
#   racecheck), verify of every CUDA backend on the committed gla fixtures with JSON,
#   verify at the accuracy shape B2 T1024 H4 D128, and `glabench bench` timings.
# usage: scripts/gpu_check.sh BUILD_DIR OUT_DIR
set -uo pipefail
build=$(cd "$1" && pwd) out=$2
mkdir -p "$out"
export LD_LIBRARY_PATH=$build/runtime-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
ctest --test-dir "$build" -L gpu -j4 --output-on-failure 2>&1 | tee "$out/ctest_gpu.log" | tail -40
"$build/glabench" verify --backend parallel_scan_cuda --op gla --json "$out/verify_fixtures.json" > "$out/verify_fixtures.txt" 2>&1
echo "verify on committed fixtures: exit $?"; tail -1 "$out/verify_fixtures.txt"
"$build/glabench" fixtures make --preset bench --only gla_b2_t1024_h4_d128 --out /tmp/glabench-bench >/dev/null
"$build/glabench" verify --backend parallel_scan_cuda --fixture /tmp/glabench-bench/gla_b2_t1024_h4_d128.h5 \
  --json "$out/verify_b2_t1024_h4_d128.json" > "$out/verify_b2_t1024_h4_d128.txt" 2>&1
echo "verify at B2 T1024 H4 D128: exit $?"; cat "$out/verify_b2_t1024_h4_d128.txt"
"$build/glabench" bench --backend parallel_scan_cuda --shapes seed --shape 4,2048,16,128,128 \
  --shape 2,16384,16,128,128 --dtype fp32 --dtype bf16 --json "$out/bench.json" 2>&1
