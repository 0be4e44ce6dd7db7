#!/usr/bin/env bash
# The GPU run for ring_softmax_cuda, on a machine with a GPU and a build made elsewhere
# (scripts/bundle_runtime_libs.sh carries its libraries). cuDNN is not carried: it is
# found in the PyTorch environment's nvidia-cudnn package and put on the library path.
# Runs ctest's ring_softmax_cuda tests (CTEST=1: shard equality, verify, sanitizers),
# verify on the committed softmax fixtures (JSON), the bf16 accuracy at B2 T1024 H4
# D128 for 1, 2 and 8 shards (JSON), `glabench bench` in bf16 at B4 T2048 H16 D128 and
# B2 T16384 H16 D128 unsharded and on SHARDS_BENCH shards (causal), and with PEERS=1
# torch SDPA's kernels (SDPA, default "flash efficient cudnn": torch.sdpa.<kernel>,
# Python backends, docs/python.md) in the unsharded bench, beside ours, and its peer
# table (scripts/peer_table.py). With GPUS=N (N ≥ 2; NCCL from torch's nvidia-nccl
# package, NCCL_NVLS_ENABLE=0): verify across N GPUs at B2 T1024 (JSON) and the bench
# across them, zigzag and plain ring, beside the one-GPU bench of the same call.
# MASKS (default causal; e.g. causal,full) is the benches' --mask.
# usage: [CTEST=1] [BENCH=1] [PEERS=1] [SDPA="flash cudnn"] [MAX_CALL_S=600] [SHARDS_BENCH="2 4 8"] [GPUS=2]
#        [MASKS=causal,full] scripts/gpu_ring.sh BUILD_DIR OUT_DIR
set -uo pipefail
build=$(cd "$1" && pwd) out=$2
mkdir -p "$out"
# cuDNN, the CUDA 13 runtime cudnn-frontend loads beside it, and NCCL: from torch's environment.
. "$(dirname "$0")/gpu_runtime_env.sh" "$build"
gb=$build/glabench backend=ring_softmax_cuda masks=${MASKS:-causal}
shapes=(${SHAPES:---shape 4,2048,16,128,128 --shape 2,16384,16,128,128})
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
echo "cuDNN and CUDA runtime from: ${torch_libs:-nowhere (own kernels only)}"
for d in ${torch_libs//:/ }; do ls "$d" | grep -E '^lib(cudnn|cudart|nccl)\.so' | sed "s|^|$d/|"; done
python3 -c "import torch; print('NCCL (torch.cuda.nccl.version):', torch.cuda.nccl.version())" 2>/dev/null
if [[ ${CTEST:-1} == 1 ]]; then
  t0=$SECONDS
  ctest --test-dir "$build" -R "$backend" -j4 --output-on-failure > "$out/ctest_ring.log" 2>&1
  echo "ctest -R $backend: exit $? in $((SECONDS - t0)) s; $(grep 'tests passed' "$out/ctest_ring.log")"
  grep -E '^(ok|FAIL) ' "$out/ctest_ring.log" | sort | uniq -c | sort -rn | head -3
fi
"$gb" verify --backend $backend --op softmax_attn --json "$out/verify_fixtures.json" > "$out/verify_fixtures.txt" 2>&1
echo "verify, committed fixtures: exit $?"
"$gb" fixtures make --preset bench --only softmax_attn_b2_t1024_h4_d128 --out /tmp/glabench-bench >/dev/null
for n in 1 2 8; do
  RING_SOFTMAX_CUDA_SHARDS=$n "$gb" verify --backend $backend --dtype bf16 --dtype fp32 --dtype fp64 \
    --fixture /tmp/glabench-bench/softmax_attn_b2_t1024_h4_d128.h5 --no-gradcheck \
    --json "$out/verify_accuracy_shards$n.json" > "$out/verify_accuracy_shards$n.txt" 2>&1
  echo "verify B2 T1024 H4 D128, $n shards: exit $?"
done
if [[ ${BENCH:-1} == 1 ]]; then
  # PEERS=1: SDPA's kernels as Python backends in the unsharded bench. A first call that
  # loads cuDNN or the kernel takes seconds, and bench predicts a larger shape's call from
  # it: --max-call-seconds 600 (5 without peers) keeps that from skipping larger shapes.
  python=() peers=() max_call=5
  if [[ ${PEERS:-0} == 1 ]]; then
    for k in ${SDPA:-flash efficient cudnn}; do
      python+=(--python "torch.sdpa.$k=glabench.sdpa:$k") peers+=(--backend "torch.sdpa.$k")
    done
    max_call=${MAX_CALL_S:-600}
  fi
  for n in 1 ${SHARDS_BENCH:-2 4 8}; do
    t0=$SECONDS
    RING_SOFTMAX_CUDA_SHARDS=$n "$gb" "${python[@]}" bench --backend $backend "${peers[@]}" --op softmax_attn \
      "${shapes[@]}" --dtype bf16 --mask "$masks" --max-call-seconds "$max_call" \
      --json "$out/bench_shards$n.json" > "$out/bench_shards$n.log" 2>&1
    echo "bench bf16, $n shards: exit $? in $((SECONDS - t0)) s"
    if (( ${#peers[@]} )); then
      python3 "$(dirname "$0")/peer_table.py" "$out/bench_shards$n.json" > "$out/peer_table.md" 2>&1
      python=() peers=() max_call=5  # the peers once, beside the unsharded bench
    fi
  done
  if [[ -n ${BENCH_OWN:-} ]]; then  # the own kernel in every dtype at one shape
    RING_SOFTMAX_CUDA_BLOCK=own "$gb" bench --backend $backend --op softmax_attn --shape 4,2048,16,128,128 \
      --max-call-seconds 5 --json "$out/bench_own.json" > "$out/bench_own.log" 2>&1
    echo "bench own kernel: exit $?"
  fi
fi
if (( ${GPUS:-1} >= 2 )); then
  devices=$(seq -s, 0 $((GPUS - 1)))
  for n in fp64 bf16; do
    "$gb" verify --backend $backend --dtype $n --fixture /tmp/glabench-bench/softmax_attn_b2_t1024_h4_d128.h5 \
      --no-gradcheck --devices "$devices" --json "$out/verify_accuracy_${GPUS}gpu_$n.json" \
      > "$out/verify_accuracy_${GPUS}gpu_$n.txt" 2>&1
    echo "verify B2 T1024 H4 D128 $n across $GPUS GPUs: exit $?"
  done
  for layout in zigzag ring; do
    t0=$SECONDS
    RING_SOFTMAX_CUDA_LAYOUT=$layout "$gb" bench --backend $backend --op softmax_attn "${shapes[@]}" --dtype bf16 --mask "$masks" \
      --devices "$devices" --max-call-seconds 5 --json "$out/bench_${GPUS}gpu_$layout.json" \
      > "$out/bench_${GPUS}gpu_$layout.log" 2>&1
    echo "bench bf16 across $GPUS GPUs, $layout: exit $? in $((SECONDS - t0)) s"
  done
fi
