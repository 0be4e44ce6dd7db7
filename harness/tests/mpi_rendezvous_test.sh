#!/usr/bin/env bash
# glabench's MPI rendezvous under Open MPI's mpirun, on this machine (no GPU needed): the
# store's address reaches every rank and ids cross it one round at a time
# (mpi_rendezvous_check); GLABENCH_MPI=0 turns it off; glabench verify runs under mpirun
# with the store shared (no fallback message) and its workers starting after MPI is
# finalized; glabench list, which runs no backend, stays out of MPI. Skipped (77) without
# mpirun.
# usage: mpi_rendezvous_test.sh CHECK GLABENCH FIXTURE
set -u
check=$1 glabench=$2 fixture=$3
command -v mpirun >/dev/null || { echo "no mpirun: skipped"; exit 77; }
# As root (containers, CI) Open MPI wants the first two; 3 ranks on 2 cores oversubscribe;
# `isolated`: every rank on this node, so mpirun needs no ssh (which a bare machine lacks).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_plm=isolated
run() { timeout 120 mpirun -np "$@"; }
fail=0
run 3 "$check" used || { echo "FAIL: 3 ranks through the store"; fail=1; }
run 2 -x GLABENCH_MPI=0 "$check" unused || { echo "FAIL: GLABENCH_MPI=0 still used MPI"; fail=1; }
out=$(run 2 "$glabench" verify --backend naive_recurrent --fixture "$fixture" --dtype fp64 2>&1) ||
  { echo "FAIL: glabench verify under mpirun: $out"; fail=1; }
grep -q "1 passed, 0 failed" <<<"$out" || { echo "FAIL: verify under mpirun printed: $out"; fail=1; }
if grep -q "rendezvous file" <<<"$out"; then echo "FAIL: verify did not share the store: $out"; fail=1; fi
out=$(run 2 "$glabench" list 2>&1) || { echo "FAIL: glabench list under mpirun: $out"; fail=1; }
grep -q naive_recurrent <<<"$out" || { echo "FAIL: glabench list under mpirun listed: $out"; fail=1; }
((fail)) || echo "mpi rendezvous: ok"
exit $fail
