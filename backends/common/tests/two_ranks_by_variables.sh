#!/usr/bin/env bash
# Two processes of one rank each on devices 0 and 1, joined by a backend's fallback
# variables (<PREFIX>_NCCL_WORLD=2, _RANK, _ID_FILE: backends/common/nccl), each running
# the same glabench command with --devices its rank, so their calls pair up. Prints both
# outputs; exits 77 when the backend says it needs NCCL, else 0 when both passed.
# usage: two_ranks_by_variables.sh PREFIX WORK_DIR GLABENCH ARG...
set -u
prefix=$1 work=$2
shift 2
for rank in 0 1; do
  env "${prefix}_NCCL_WORLD=2" "${prefix}_NCCL_RANK=$rank" "${prefix}_NCCL_ID_FILE=$work/nccl_id" \
    timeout 600 "$@" --devices $rank > "$work/rank$rank.txt" 2>&1 &
  pids[$rank]=$!
done
wait ${pids[0]}; rc0=$?
wait ${pids[1]}; rc1=$?
for rank in 0 1; do echo "== rank $rank (exit $([[ $rank == 0 ]] && echo $rc0 || echo $rc1))"; cat "$work/rank$rank.txt"; done
if grep -q "needs NCCL" "$work/rank0.txt"; then echo "no NCCL: skipped"; exit 77; fi
(( rc0 == 0 && rc1 == 0 ))
