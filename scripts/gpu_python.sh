#!/usr/bin/env bash
# The Python bridge on a GPU machine (docs/python.md), logs and results under $OUT:
#   overhead  the bridge's own cost per eager call (an empty kernel; python_bridge_overhead)
#   verify    fla's four kernels and torch's SDPA kernels, as Python backends, beside
#             glabench's own backends, on every committed fixture in fp32, bf16 and fp16
#   bench     all of them in one `glabench bench`, eager and graph, at $SHAPES and $GATES
#   graph     fla's chunk_gla timed directly in a CUDA graph beside the bridge's graph row
#             (scripts/bridge_graph_check.py)
# STEPS picks steps (default: all four, in that order). fla comes from PYTHONPATH (fla-core).
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
status=0
for step in ${STEPS:-overhead verify bench graph}; do
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
      "$G" "${PEERS[@]}" --call-timeout 600 verify --fixture datasets/fixtures \
        --dtype fp32 --dtype bf16 --dtype fp16 \
        --json "$OUT/verify.json" >"$OUT/verify.log" 2>&1
      echo "verify exit $? (1: some case failed)"
      tail -3 "$OUT/verify.log" ;;
    bench)
      shape_args=()
      for s in ${SHAPES//;/ }; do shape_args+=(--shape "$s"); done
      backends=()
      for b in chunked_fuse_cuda parallel_scan_cuda fused_recurrent_rwkv6_cuda ring_softmax_cuda \
        fla.chunk_gla fla.fused_recurrent_gla fla.chunk_rwkv6 fla.fused_recurrent_rwkv6 \
        torch.sdpa.flash torch.sdpa.efficient torch.sdpa.cudnn; do backends+=(--backend "$b"); done
      "$G" "${PEERS[@]}" --call-timeout 600 bench "${backends[@]}" "${shape_args[@]}" --dtype bf16 \
        --gates "$GATES" --timing eager,graph --max-call-seconds 3600 --json "$OUT/bench.json" \
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
