#!/usr/bin/env bash
# The ring across two GPUs: `glabench verify` on the softmax fixtures (and on a larger
# B2 T1024 problem whose shards are 128–512 rows) with the shards on devices 0 and 1,
# either one process driving both (--devices 0,1; eight-ranks: four ranks on each, by
# RING_SOFTMAX_CUDA_RANKS_PER_DEVICE=4) or two processes of one rank each
# (RING_SOFTMAX_CUDA_NCCL_WORLD=2, the unique id shared through a file). Skipped (77)
# with fewer than two GPUs or, for two processes, without NCCL. NCCL_NVLS_ENABLE=0
# everywhere.
# usage: two_gpu_test.sh GLABENCH FIXTURE_DIR one-process|eight-ranks|two-processes ring|zigzag
set -u
glabench=$1 fixtures=$2 how=$3 layout=$4
export NCCL_NVLS_ENABLE=0 RING_SOFTMAX_CUDA_LAYOUT=$layout
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if (( ${gpus:-0} < 2 )); then echo "fewer than two GPUs (${gpus:-0}): skipped"; exit 77; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$glabench" fixtures make --preset bench --only softmax_attn_b2_t1024_h4_d128 --out "$work" >/dev/null || exit 1
big=(--fixture "$work/softmax_attn_b2_t1024_h4_d128.h5" --no-gradcheck)

[[ $how == eight-ranks ]] && export RING_SOFTMAX_CUDA_RANKS_PER_DEVICE=4
if [[ $how == one-process || $how == eight-ranks ]]; then
  "$glabench" verify --backend ring_softmax_cuda --op softmax_attn --fixture "$fixtures" --devices 0,1 \
    > "$work/fixtures.txt" 2>&1
  rc=$?
  cat "$work/fixtures.txt"
  (( rc == 0 )) || exit 1
  "$glabench" verify --backend ring_softmax_cuda "${big[@]}" --devices 0,1 || exit 1
  exit 0
fi

# Two processes, one rank each: the same verify in both, so their calls pair up.
bash "$(dirname "$0")/../../common/tests/two_ranks_by_variables.sh" RING_SOFTMAX_CUDA "$work" \
  "$glabench" verify --backend ring_softmax_cuda --op softmax_attn --fixture "$fixtures"
