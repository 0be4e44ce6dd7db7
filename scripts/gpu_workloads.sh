#!/usr/bin/env bash
# The real-workloads run on a GPU machine (fp16, decoding, packed batches; docs/design.md),
# logs and results under $OUT. STEPS picks steps (default: all, in this order):
#   verify    parallel_scan_cuda, fused_recurrent_rwkv6_cuda and chunked_fuse_cuda on
#             every committed fixture in every dtype each declares (fp16 too), with the
#             fp64 finite-difference check: verify.json
#   sanitize  compute-sanitizer memcheck and racecheck of the three on the one-token
#             fixtures (the decode kernel), memcheck on a packed one (chunked's prepared
#             offsets) and on gla_basic (chunked's fp16 widening), fp16, bf16 and fp32
#   decode    bench --shapes decode --timing graph: ours beside fla's fused_recurrent_gla
#             and fused_recurrent_rwkv6, bf16 and fp16: decode.json
#   drift     decode-drift, ours, bf16 and fp16, strong gates: drift.json
#   fp16      bench at B4 T2048 and B2 T16384 H16 D128, bf16 beside fp16, $FP16_GATES
#             (default strong), graph: fp16.json
#   packed    bench --shapes packed ($PACKED_GATES, default mild,strong): chunked_fuse_cuda
#             and parallel_scan_cuda in graph and eager timing, fla.chunk_gla eager (its packed
#             path syncs with the host; $CALL_TIMEOUT s a call for its autotuning): packed.json
# fla comes from PYTHONPATH (fla-core). GLABENCH: the glabench binary (build/hopper/glabench).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/glabench-workloads}
mkdir -p "$OUT"
G=${GLABENCH:-build/hopper/glabench}
BUILD=$(dirname "$G")
export GLABENCH_BACKEND_PATH=${GLABENCH_BACKEND_PATH:-$PWD/$BUILD/backends}
OURS=(--backend parallel_scan_cuda --backend fused_recurrent_rwkv6_cuda --backend chunked_fuse_cuda)
FLA=(--python fla.fused_recurrent_gla=glabench.fla:fused_recurrent_gla
  --python fla.fused_recurrent_rwkv6=glabench.fla:fused_recurrent_rwkv6
  --python fla.chunk_gla=glabench.fla:chunk_gla)
stamp() { echo "$1 exit $2 $(date -u +%T)"; }
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for step in ${STEPS:-verify sanitize decode drift fp16 packed}; do
  case $step in
    verify)
      "$G" verify "${OURS[@]}" --fixture datasets/fixtures --json "$OUT/verify.json" \
        >"$OUT/verify.log" 2>&1
      stamp verify $?
      tail -3 "$OUT/verify.log" ;;
    sanitize)
      for run in memcheck:gla_t1 memcheck:rwkv6_t1 memcheck:gla_varlen memcheck:gla_basic \
        racecheck:gla_t1 racecheck:rwkv6_t1; do
        compute-sanitizer --tool "${run%%:*}" --error-exitcode 9 "$G" --call-timeout 600 verify \
          "${OURS[@]}" --fixture "datasets/fixtures/${run#*:}.h5" --dtype fp16 --dtype bf16 \
          --dtype fp32 >>"$OUT/sanitize.log" 2>&1
        stamp "$run" $?
      done 2>&1 | tee "$OUT/sanitize_summary.txt" ;;
    decode)
      # fla's first call compiles its kernel (10–15 s): --max-call-seconds lets it through.
      timeout 420 "$G" "${FLA[@]}" bench "${OURS[@]}" --backend fla.fused_recurrent_gla \
        --backend fla.fused_recurrent_rwkv6 --shapes decode --dtype bf16 --dtype fp16 \
        --mode fwd --timing graph --max-call-seconds 60 --json "$OUT/decode.json" \
        >"$OUT/decode.log" 2>&1
      stamp decode $?
      grep -E "^\|? *(parallel|fused|chunked|fla)" "$OUT/decode.log" | head -40 ;;
    drift)
      timeout 240 "$G" decode-drift "${OURS[@]}" --dtype bf16 --dtype fp16 --gates mild,strong \
        --json "$OUT/drift.json" >"$OUT/drift.log" 2>&1
      stamp drift $? ;;
    fp16)
      timeout 400 "$G" bench "${OURS[@]}" --shape 4,2048,16,128,128 --shape 2,16384,16,128,128 \
        --dtype bf16 --dtype fp16 --gates "${FP16_GATES:-strong}" --timing graph \
        --json "$OUT/fp16.json" >"$OUT/fp16.log" 2>&1
      stamp fp16 $? ;;
    packed)
      # fla autotunes at the new shape: each call may take minutes ($CALL_TIMEOUT).
      timeout 500 "$G" "${FLA[@]}" --call-timeout "${CALL_TIMEOUT:-30}" bench \
        --backend chunked_fuse_cuda --backend parallel_scan_cuda --backend fla.chunk_gla \
        --shapes packed --dtype bf16 --gates "${PACKED_GATES:-mild,strong}" --timing graph,eager \
        --max-call-seconds 600 --json "$OUT/packed.json" >"$OUT/packed.log" 2>&1
      stamp packed $? ;;
    *) echo "unknown step $step" >&2 ;;
  esac
done
