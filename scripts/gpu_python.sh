#!/usr/bin/env bash
# The Python bridge on a GPU machine (docs/python.md), logs and results under $OUT:
#   overhead  the bridge's own cost per eager call (an empty kernel; python_bridge_overhead)
#   verify    fla's four kernels and torch's SDPA kernels, as Python backends, beside
#             glabench's own backends, on every committed fixture in fp32, bf16 and fp16:
#             one verify per Python backend and dtype, $JOBS at a time, fla with one
#             autotune configuration per kernel (GLABENCH_FLA_AUTOTUNE=one, python/glabench/
#             fla.py); verify_table.md (scripts/verify_table.py) sums them up
#   warm      fla's autotuning at $SHAPES, one process per kernel, all at once, so that
#             bench finds Triton's cache filled (each kernel alone takes minutes)
#   bench     all of them in one `glabench bench`, eager and graph, at $SHAPES and $GATES
#   graph     fla's chunk_gla timed directly in a CUDA graph beside the bridge's graph row
#             (scripts/bridge_graph_check.py)
# STEPS picks steps (default: all five, in that order). fla comes from PYTHONPATH (fla-core).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/glabench-python}
mkdir -p "$OUT"
G=${GLABENCH:-build/hopper/glabench}
BUILD=$(dirname "$G")
export GLABENCH_BACKEND_PATH=${GLABENCH_BACKEND_PATH:-$PWD/$BUILD/backends}
export PYTHONPATH=$PWD/backends/python_bridge/tests${PYTHONPATH:+:$PYTHONPATH}
SHAPES=${SHAPES:-4,2048,16,128,128}
GATES=${GATES:-mild,strong}
PEERS=(--python fla.chunk_gla=glabench.fla:chunk_gla
  --python fla.fused_recurrent_gla=glabench.fla:fused_recurrent_gla
  --python fla.chunk_rwkv6=glabench.fla:chunk_rwkv6
  --python fla.fused_recurrent_rwkv6=glabench.fla:fused_recurrent_rwkv6
  --python torch.sdpa.flash=glabench.sdpa:flash
  --python torch.sdpa.efficient=glabench.sdpa:efficient
  --python torch.sdpa.cudnn=glabench.sdpa:cudnn)
PYTHON_BACKENDS=(fla.chunk_gla fla.fused_recurrent_gla fla.chunk_rwkv6 fla.fused_recurrent_rwkv6
  torch.sdpa.flash torch.sdpa.efficient torch.sdpa.cudnn)
shape_args=()
for s in ${SHAPES//;/ }; do shape_args+=(--shape "$s"); done
# One verify of every committed fixture: NAME, then verify's options.
verify_one() {
  local name=$1
  shift
  GLABENCH_FLA_AUTOTUNE=one "$G" "${PEERS[@]}" --call-timeout 600 verify \
    --fixture datasets/fixtures "$@" --json "$OUT/verify/$name.json" >"$OUT/verify/$name.log" 2>&1
  echo "verify $name exit $? $(date -u +%T) (1: some case failed)"
}
status=0
for step in ${STEPS:-overhead verify warm bench graph}; do
  echo "== $step $(date -u +%FT%TZ)"
  case $step in
    overhead)
      for dev in cuda cpu; do
        kernel=$([[ $dev == cuda ]] && echo empty_cuda || echo empty)
        "$BUILD/backends/python_bridge/tests/python_bridge_overhead" \
          "$GLABENCH_BACKEND_PATH/glabench_python_bridge.so" "empty=torch_kernels:$kernel" "$dev" \
          20000 | tee "$OUT/overhead_$dev.json" || status=1
      done ;;
    verify)
      mkdir -p "$OUT/verify"
      ours=()
      for b in chunked_fuse_cuda parallel_scan_cuda fused_recurrent_rwkv6_cuda ring_softmax_cuda; do
        ours+=(--backend "$b")
      done
      verify_one ours "${ours[@]}" --dtype fp32 --dtype bf16 --dtype fp16 &
      running=1
      for b in "${PYTHON_BACKENDS[@]}"; do
        for d in fp32 bf16 fp16; do
          if ((running >= ${JOBS:-16})); then wait -n; running=$((running - 1)); fi
          verify_one "${b}_$d" --backend "$b" --dtype "$d" &
          running=$((running + 1))
        done
      done
      wait
      python3 scripts/verify_table.py "$OUT"/verify/*.json >"$OUT/verify_table.md" || status=1
      cat "$OUT/verify_table.md" ;;
    warm)
      for b in "${PYTHON_BACKENDS[@]}"; do
        [[ $b == fla.* ]] || continue
        "$G" "${PEERS[@]}" --call-timeout 600 bench --backend "$b" "${shape_args[@]}" --dtype bf16 \
          --gates mild --min-reps 1 --max-reps 1 --warmup 0 --time-cap 0.001 \
          --max-call-seconds 3600 >"$OUT/warm_$b.log" 2>&1 &
      done
      wait
      echo "warm done $(date -u +%T)" ;;
    bench)
      backends=()
      for b in chunked_fuse_cuda parallel_scan_cuda fused_recurrent_rwkv6_cuda ring_softmax_cuda \
        fla.chunk_gla fla.fused_recurrent_gla fla.chunk_rwkv6 fla.fused_recurrent_rwkv6 \
        torch.sdpa.flash torch.sdpa.efficient torch.sdpa.cudnn; do backends+=(--backend "$b"); done
      "$G" "${PEERS[@]}" --call-timeout 600 bench "${backends[@]}" "${shape_args[@]}" --dtype bf16 \
        --gates "$GATES" --timing eager,graph --time-cap "${TIME_CAP:-1}" --max-call-seconds 3600 --json "$OUT/bench.json" \
        >"$OUT/bench.log" 2>&1 || status=1
      tail -5 "$OUT/bench.log" ;;
    graph)
      for gates in ${GATES//,/ }; do
        python3 scripts/bridge_graph_check.py --shape "${SHAPES%%;*}" --gates "$gates" \
          --bench "$OUT/bench.json" --out "$OUT/graph_$gates.json" >"$OUT/graph_$gates.log" 2>&1 ||
          status=1
        tail -30 "$OUT/graph_$gates.log"
      done ;;
    *) echo "gpu_python.sh: unknown step $step"; exit 2 ;;
  esac
done
exit $status
