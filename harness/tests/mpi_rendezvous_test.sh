#!/usr/bin/env bash
# glabench's MPI rendezvous under a launcher, on this machine (no GPU needed): Open MPI's
# mpirun, or Slurm's srun with its PMIx plugin (`--mpi=pmix`). The store's address reaches
# every rank and ids cross it one round at a time (mpi_rendezvous_check); GLABENCH_MPI=0
# turns it off (and, under srun, so does `--mpi=none`); glabench verify runs under the
# launcher with the store shared (no fallback message), its workers starting after MPI is
# finalized; glabench list, which runs no backend, stays out of MPI. Skipped (77) without
# mpirun, or without a Slurm controller that answers.
# usage: mpi_rendezvous_test.sh mpirun|srun CHECK GLABENCH FIXTURE
set -u
launcher=$1 check=$2 glabench=$3 fixture=$4
case $launcher in
  mpirun)
    command -v mpirun >/dev/null || { echo "no mpirun: skipped"; exit 77; }
    # As root (containers, CI) Open MPI wants the first two; 3 ranks on 2 cores
    # oversubscribe; `isolated`: every rank on this node, so mpirun needs no ssh (which a
    # bare machine lacks).
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_plm=isolated
    run() { timeout 120 mpirun -np "$@"; }
    ;;
  srun)
    command -v srun >/dev/null && timeout 10 sinfo -h >/dev/null 2>&1 ||
      { echo "no Slurm controller answers: skipped"; exit 77; }
    srun --mpi=list 2>&1 | grep -q pmix || { echo "Slurm has no PMIx plugin: skipped"; exit 77; }
    run() { timeout 120 srun --mpi=pmix -n "$@"; }
    ;;
  *) echo "usage: $0 mpirun|srun CHECK GLABENCH FIXTURE"; exit 2 ;;
esac
fail=0
run 3 "$check" used || { echo "FAIL: 3 ranks through the store"; fail=1; }
# srun and mpirun both pass the caller's environment to every rank.
GLABENCH_MPI=0 run 2 "$check" unused || { echo "FAIL: GLABENCH_MPI=0 still used MPI"; fail=1; }
if [[ $launcher == srun ]]; then
  timeout 120 srun --mpi=none -n 2 "$check" unused ||
    { echo "FAIL: srun --mpi=none still used MPI"; fail=1; }
fi
out=$(run 2 "$glabench" verify --backend naive_recurrent --fixture "$fixture" --dtype fp64 2>&1) ||
  { echo "FAIL: glabench verify under $launcher: $out"; fail=1; }
grep -q "1 passed, 0 failed" <<<"$out" || { echo "FAIL: verify under $launcher printed: $out"; fail=1; }
if grep -q "rendezvous file" <<<"$out"; then echo "FAIL: verify did not share the store: $out"; fail=1; fi
out=$(run 2 "$glabench" list 2>&1) || { echo "FAIL: glabench list under $launcher: $out"; fail=1; }
grep -q naive_recurrent <<<"$out" || { echo "FAIL: glabench list under $launcher listed: $out"; fail=1; }
((fail)) || echo "mpi rendezvous under $launcher: ok"
exit $fail
