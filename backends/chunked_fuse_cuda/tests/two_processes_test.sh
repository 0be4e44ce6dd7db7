#!/usr/bin/env bash
# The sequence split across two GPUs with one process per rank, NCCL between them:
# `glabench verify` on every committed gla fixture (T ≥ 2: the others are refused, one
# token a rank) in both processes, whose calls pair up. Started by torchrun where Python
# has torch (the launcher's own variables; NCCL's id through the node's rendezvous file),
# else by the documented fallback (CHUNKED_FUSE_CUDA_NCCL_WORLD, _RANK, _ID_FILE).
# Skipped (77) with fewer than two GPUs or without NCCL. NCCL_NVLS_ENABLE=0.
# usage: two_processes_test.sh GLABENCH FIXTURE_DIR torchrun|variables
set -u
glabench=$1 fixtures=$2 how=$3
export NCCL_NVLS_ENABLE=0
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if (( ${gpus:-0} < 2 )); then echo "fewer than two GPUs (${gpus:-0}): skipped"; exit 77; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
verify=(verify --backend chunked_fuse_cuda --op gla --fixture "$fixtures")

if [[ $how == torchrun ]]; then
  if ! python3 -c "import torch.distributed.run" 2>/dev/null; then
    echo "no torchrun (python3 -m torch.distributed.run): skipped"; exit 77
  fi
  # --no-python: torchrun starts glabench itself (its agent the launcher's process).
  python3 -m torch.distributed.run --standalone --nproc-per-node 2 --no-python \
    --log-dir "$work/logs" --tee 3 "$glabench" "${verify[@]}" > "$work/out.txt" 2>&1
  rc=$?
  cat "$work/out.txt"
  if grep -q "needs NCCL" "$work/out.txt"; then echo "no NCCL: skipped"; exit 77; fi
  (( rc == 0 )) || exit 1
  # Both ranks verified the split (not a single-GPU run): each log names two ranks.
  (( $(grep -c "passed, 0 failed" "$work/out.txt") == 2 )) || exit 1
  exit 0
fi

bash "$(dirname "$0")/../../common/tests/two_ranks_by_variables.sh" CHUNKED_FUSE_CUDA "$work" \
  "$glabench" "${verify[@]}"
