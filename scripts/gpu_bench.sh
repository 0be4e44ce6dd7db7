#!/usr/bin/env bash
# The GPU benchmark evidence for `glabench bench / compare / report`, on a machine with a
# GPU and a build made elsewhere (scripts/bundle_runtime_libs.sh carries its libraries).
#   scripts/gpu_bench.sh BUILD OUT ab     bench A and bench B back to back over
#                                         --shapes seed --shapes fla, then compare A B
#   scripts/gpu_bench.sh BUILD OUT slow SLOW_SO A_JSON
#                                         bench with SLOW_SO (parallel_scan_cuda built
#                                         with PARALLEL_SCAN_CUDA_DEMO_SLOWDOWN) in place
#                                         of the real one, compare A against it, then
#                                         bench --shapes t-sweep and report A + t-sweep
#   scripts/gpu_bench.sh BUILD OUT gate BASELINE_JSON
#                                         the CI gate as the README runs it: bench
#                                         parallel_scan_cuda over --shapes seed
#                                         --shapes fla, compare against BASELINE_JSON
# Everything lands in OUT (logs, JSON, the report's markdown and PNGs).
set -uo pipefail
build=$(cd "$1" && pwd) out=$2 step=$3
mkdir -p "$out"
export LD_LIBRARY_PATH=$build/runtime-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
gb=$build/glabench
set_=(--shapes seed --shapes fla --dtype fp32 --dtype bf16)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv

bench() {  # bench NAME ARGS...
  local name=$1; shift
  local t0=$SECONDS
  "$gb" bench "$@" --json "$out/$name.json" > "$out/$name.log" 2>&1
  echo "bench $name: exit $? in $((SECONDS - t0)) s; $(tail -2 "$out/$name.log" | head -1)"
}

case $step in
  ab)
    bench bench_a "${set_[@]}"
    bench bench_b "${set_[@]}"
    "$gb" compare "$out/bench_a.json" "$out/bench_b.json" --fail-on-regression 5 \
      --json "$out/compare_a_b.json" > "$out/compare_a_b.md"
    echo "compare A B --fail-on-regression 5: exit $?"; tail -8 "$out/compare_a_b.md"
    ;;
  slow)
    slow_so=$4 a_json=$5
    real=$build/backends/glabench_backend_parallel_scan_cuda.so
    cp "$real" "$out/real.so.keep" && cp "$slow_so" "$real"
    bench bench_slow "${set_[@]}"
    cp "$out/real.so.keep" "$real" && rm "$out/real.so.keep"
    "$gb" compare "$a_json" "$out/bench_slow.json" --fail-on-regression 5 \
      --json "$out/compare_a_slow.json" > "$out/compare_a_slow.md"
    echo "compare A SLOW --fail-on-regression 5: exit $?"; tail -8 "$out/compare_a_slow.md"
    bench bench_t_sweep --shapes t-sweep --dtype fp32 --dtype bf16
    "$gb" report "$a_json" "$out/bench_t_sweep.json" --out "$out/report" --baseline naive_recurrent
    echo "report: exit $?"
    ;;
  gate)
    baseline=$4
    bench bench_gate --backend parallel_scan_cuda "${set_[@]}"
    "$gb" compare "$baseline" "$out/bench_gate.json" --backend parallel_scan_cuda \
      --fail-on-regression 5 --json "$out/compare_baseline.json" > "$out/compare_baseline.md"
    echo "compare BASELINE GATE --fail-on-regression 5: exit $?"; tail -4 "$out/compare_baseline.md"
    ;;
esac
