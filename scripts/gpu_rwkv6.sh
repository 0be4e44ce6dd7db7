#!/usr/bin/env bash
# The GPU evidence run for fused_recurrent_rwkv6_cuda, on a machine with a GPU and a
# build made elsewhere (scripts/bundle_runtime_libs.sh carries its libraries; the
# fla-core wheel comes in .whl/ when PEERS=1):
#   ctest's fused_recurrent_rwkv6_cuda tests (verify per fixture, dtype and kernel
#   choice, both modes, compute-sanitizer), verify of both modes at the accuracy shape
#   B2 T1024 H4 D128 with JSON, `glabench bench` of both modes at the seed's shape,
#   B4 T2048 H16 D128 and B2 T16384 H16 D128 (fp32 and bf16, fwd and fwdbwd), and with
#   PEERS=1 fla's kernels (FLA, default fla.fused_recurrent_rwkv6 and fla.chunk_rwkv6;
#   Python backends, docs/python.md) in the fast mode's bench, beside ours, and its peer
#   table (scripts/peer_table.py); with SWEEP=1 first, bf16 at the seed's shape and
#   B4 T2048 H16 D128 with each kernel choice forced (the knobs of
#   backends/common/parallel_scan/knobs.hpp).
# usage: [CTEST=0] [PEERS=1] [FLA="fla.chunk_rwkv6"] [MAX_CALL_S=3600] [SWEEP=1]
#        scripts/gpu_rwkv6.sh BUILD_DIR OUT_DIR
set -uo pipefail
build=$(cd "$1" && pwd) out=$2
mkdir -p "$out"
export LD_LIBRARY_PATH=$build/runtime-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GLABENCH_BACKEND_PATH=${GLABENCH_BACKEND_PATH:-$build/backends}
gb=$build/glabench backend=fused_recurrent_rwkv6_cuda
shapes=(--shape 4,1024,4,100,100 --shape 4,2048,16,128,128 --shape 2,16384,16,128,128)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
if [[ ${CTEST:-1} == 1 ]]; then
  t0=$SECONDS
  ctest --test-dir "$build" -L $backend -j4 --output-on-failure > "$out/ctest_rwkv6.log" 2>&1
  echo "ctest -L $backend: exit $? in $((SECONDS - t0)) s; $(grep 'tests passed' "$out/ctest_rwkv6.log")"
  grep -E "^ *[0-9]+/[0-9]+ Test .*(Failed|Timeout|Exception)" "$out/ctest_rwkv6.log" | head -20
fi
"$gb" fixtures make --preset bench --only rwkv6_b2_t1024_h4_d128 --out /tmp/glabench-bench >/dev/null
for mode in fast seed; do
  FUSED_RECURRENT_RWKV6_CUDA_MODE=$mode "$gb" verify --backend $backend \
    --fixture /tmp/glabench-bench/rwkv6_b2_t1024_h4_d128.h5 --json "$out/verify_accuracy_$mode.json" \
    > "$out/verify_accuracy_$mode.txt" 2>&1
  echo "verify $mode at B2 T1024 H4 D128: exit $?"
  FUSED_RECURRENT_RWKV6_CUDA_FP32_STATE=64 FUSED_RECURRENT_RWKV6_CUDA_MODE=$mode "$gb" verify \
    --backend $backend --dtype fp32 --fixture /tmp/glabench-bench/rwkv6_b2_t1024_h4_d128.h5 \
    --json "$out/verify_accuracy_${mode}_precise_fp32.json" > /dev/null 2>&1
done
if [[ ${SWEEP:-0} == 1 ]]; then
  mkdir -p "$out/sweep"
  for knobs in default STRIP=16 STRIP=16,WIDTH=2 STRIP=16,WIDTH=4 STRIP=8,WIDTH=2 STRIP=8,WIDTH=4 \
               ROW_CHUNK=16 STRIP=16,ROW_CHUNK=16; do
    env=()
    [[ $knobs != default ]] && for k in ${knobs//,/ }; do env+=("FUSED_RECURRENT_RWKV6_CUDA_$k"); done
    env "${env[@]}" "$gb" bench --backend $backend --shape 4,1024,4,100,100 --shape 4,2048,16,128,128 \
      --dtype bf16 --json "$out/sweep/$knobs.json" > "$out/sweep/$knobs.log" 2>&1
    echo "sweep $knobs: exit $?"
  done
fi
# PEERS=1: fla's kernels as Python backends, timed in the fast mode's bench beside ours.
# Their first call of each dtype and mode compiles and autotunes Triton kernels (a minute
# or more), and bench predicts a larger shape's call from it: --max-call-seconds 3600
# keeps that from skipping fla's larger shapes; --call-timeout (600 s) still stops a
# stuck call.
python=() peers=()
if [[ ${PEERS:-0} == 1 ]]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  for k in ${FLA:-fla.fused_recurrent_rwkv6 fla.chunk_rwkv6}; do
    python+=(--python "$k=glabench.fla:${k#fla.}") peers+=(--backend "$k")
  done
  peers+=(--max-call-seconds "${MAX_CALL_S:-3600}")
fi
for mode in fast seed; do
  t0=$SECONDS
  FUSED_RECURRENT_RWKV6_CUDA_MODE=$mode "$gb" "${python[@]}" bench --backend $backend "${peers[@]}" \
    "${shapes[@]}" --dtype fp32 --dtype bf16 --json "$out/bench_$mode.json" > "$out/bench_$mode.log" 2>&1
  echo "bench $mode: exit $? in $((SECONDS - t0)) s"
  if (( ${#peers[@]} )); then
    python3 "$(dirname "$0")/peer_table.py" "$out/bench_$mode.json" > "$out/peer_table.md" 2>&1
    python=() peers=()  # the peers once, beside the fast mode's bench
  fi
done
