#!/usr/bin/env bash
# ring_softmax_cuda's scaling over N GPUs of one host (N = GPUS, 2…8), causal bf16, in
# one device call: `glabench bench` on one GPU and across N GPUs with the zigzag and the
# plain ring layout, at the strong-scaling shape B1 T131072 H16 D128 and the weak-scaling
# shape B2 T(16384·N) H16 D128, then scaling_summary.md (speed-up over one GPU, scaling
# efficiency = speed-up / N, and the communication hidden, from each row's
# backend_report). NCCL from torch's nvidia-nccl package, NCCL_NVLS_ENABLE=0.
# usage: GPUS=N scripts/gpu_ring_scaling.sh BUILD_DIR OUT_DIR   (SHAPES=... overrides)
set -uo pipefail
build=$(cd "$1" && pwd) out=$2 n=${GPUS:?GPUS=N, the GPUs to scale over}
mkdir -p "$out"
. "$(dirname "$0")/gpu_runtime_env.sh" "$build"
shapes=(${SHAPES:---shape 1,131072,16,128,128 --shape 2,$((16384 * n)),16,128,128})
devices=$(seq -s, 0 $((n - 1)))
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvidia-smi topo -m
python3 -c "import torch; print('NCCL', torch.cuda.nccl.version())" 2>/dev/null
bench() {  # NAME DEVICES [ENV...]
  local name=$1 devs=$2; shift 2
  local t0=$SECONDS
  env "$@" "$build/glabench" bench --backend ring_softmax_cuda --op softmax_attn "${shapes[@]}" --dtype bf16 \
    --devices "$devs" --max-call-seconds 10 --json "$out/$name.json" > "$out/$name.log" 2>&1
  echo "$name: exit $? in $((SECONDS - t0)) s"
}
bench one_gpu 0
bench ${n}gpu_zigzag "$devices" RING_SOFTMAX_CUDA_LAYOUT=zigzag
bench ${n}gpu_ring "$devices" RING_SOFTMAX_CUDA_LAYOUT=ring
python3 "$(dirname "$0")/ring_scaling_summary.py" "$out" "$n" | tee "$out/scaling_summary.md"
