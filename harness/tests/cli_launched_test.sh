#!/usr/bin/env bash
# A process started by a launcher (here torchrun's variables, set by hand), or one of
# glabench's own ranks (GLABENCH_NCCL_*): `--json` is written by rank 0 alone, the other
# ranks say so and still verify; a launcher variable that holds no rank exits 2 naming
# it, before anything runs.
set -u
glabench=$1 fixture=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
run() { env "$@" "$glabench" verify --backend naive_recurrent --fixture "$fixture" --json "$dir/out.json"; }

out=$(run RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 MASTER_PORT=29500 TORCHELASTIC_RUN_ID=t 2>&1); rc=$?
((rc == 0)) || fail "rank 1 exited $rc: $out"
[[ -e $dir/out.json ]] && fail "rank 1 wrote the results file"
grep -q "rank 1 of 2 (torchrun): .* is written by rank 0" <<<"$out" || fail "rank 1 did not say: $out"

out=$(run RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 MASTER_PORT=29500 TORCHELASTIC_RUN_ID=t 2>&1); rc=$?
((rc == 0)) || fail "rank 0 exited $rc: $out"
[[ -s $dir/out.json ]] || fail "rank 0 did not write the results file"
rm -f "$dir/out.json"

# Without a launcher, glabench's own ranks (set beside a backend's fallback variables).
out=$(run GLABENCH_NCCL_WORLD=2 GLABENCH_NCCL_RANK=1 GLABENCH_NCCL_ID_FILE=$dir/id 2>&1); rc=$?
((rc == 0)) || fail "GLABENCH_NCCL_RANK=1 exited $rc: $out"
[[ -e $dir/out.json ]] && fail "GLABENCH_NCCL_RANK=1 wrote the results file"

out=$(run RANK=one WORLD_SIZE=2 2>&1); rc=$?
((rc == 2)) || fail "RANK=one exited $rc, not 2: $out"
grep -q "RANK must be an integer" <<<"$out" || fail "RANK=one not named: $out"
[[ -e $dir/out.json ]] && fail "RANK=one wrote the results file"

((failures == 0)) && echo "launched runs: ok"
((failures == 0))
