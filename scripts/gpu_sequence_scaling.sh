#!/usr/bin/env bash
# chunked_fuse_cuda's sequence split over N GPUs of one host (N = GPUS, 2…8), one process
# driving every GPU, causal gla, bf16, graph timing (device time), in the steps STEPS
# names (default: all, in this order):
#   verify  every committed gla fixture in fp64, fp32 and bf16 with the fp64
#           finite-difference check, split across the N GPUs: verify_Ngpu.json
#   split   strong scaling's split: B1 T$STRONG_T (default 524288) H16 D128 across the N
#           GPUs, graph and eager (eager rows carry each rank's phases): strong_Ngpu.json
#   one     the same on one GPU, beside fla's chunk_gla when PEERS=1 (.whl/ holds
#           fla-core; its first call at a shape autotunes): strong_1gpu.json
#   weak    B1 T(131072·W) H16 D128 on W = 1, 2, … N/2 GPUs (W = N is split's):
#           weak_Wgpu.json
#   longest B1 T$LONGEST_T (default 1048576) H16 D128 across the N GPUs, fwdbwd, mild
# GATES (default mild,strong) the gate regimes of split, one and weak; CHUNKED_FUSE_CUDA_HEAD_GROUPS
# passes through (sequence_parallel.hpp). Then
# scripts/sequence_scaling_summary.py OUT N prints the speed-ups, efficiencies and each
# rank's phases. NCCL_NVLS_ENABLE=0 throughout.
# usage: GPUS=N [STEPS="verify split one weak longest"] [PEERS=1] scripts/gpu_sequence_scaling.sh BUILD_DIR OUT_DIR
set -uo pipefail
build=$(cd "$1" && pwd) out=$2 n=${GPUS:?GPUS=N, the GPUs to scale over}
mkdir -p "$out"
. "$(dirname "$0")/gpu_runtime_env.sh" "$build"
gb=$build/glabench devices=$(seq -s, 0 $((n - 1))) gates=${GATES:-mild,strong}
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; free -g | head -2
python=() peers=()
if [[ ${PEERS:-0} == 1 ]]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD/python${PYTHONPATH:+:$PYTHONPATH}
  python=(--python fla.chunk_gla=glabench.fla:chunk_gla) peers=(--backend fla.chunk_gla)
fi
bench() {  # NAME DEVICES T [bench options...]
  local name=$1 devs=$2 T=$3; shift 3
  local t0=$SECONDS
  "$gb" "${python[@]}" --call-timeout 500 bench --backend chunked_fuse_cuda --op gla \
    --shape 1,$T,16,128,128 --dtype bf16 --devices "$devs" --max-call-seconds 600 \
    --json "$out/$name.json" "$@" > "$out/$name.log" 2>&1
  echo "$name: exit $? in $((SECONDS - t0)) s $(date -u +%T)"
}
for step in ${STEPS:-verify split one weak longest}; do
  case $step in
    verify)
      t0=$SECONDS
      "$gb" verify --backend chunked_fuse_cuda --op gla --dtype fp64 --dtype fp32 --dtype bf16 \
        --devices "$devices" --json "$out/verify_${n}gpu.json" > "$out/verify_${n}gpu.log" 2>&1
      echo "verify across $n GPUs: exit $? in $((SECONDS - t0)) s; $(tail -1 "$out/verify_${n}gpu.log")" ;;
    split)
      bench "strong_${n}gpu" "$devices" "${STRONG_T:-524288}" --gates "$gates" --timing graph,eager ;;
    one)
      bench strong_1gpu 0 "${STRONG_T:-524288}" --gates "$gates" --timing graph "${peers[@]}" ;;
    weak)
      for ((w = 1; w <= n / 2; w *= 2)); do
        bench "weak_${w}gpu" "$(seq -s, 0 $((w - 1)))" $((131072 * w)) --gates "$gates" --timing graph
      done ;;
    longest)
      bench "longest_${n}gpu" "$devices" "${LONGEST_T:-1048576}" --gates mild --mode fwdbwd \
        --timing graph ;;
  esac
done
