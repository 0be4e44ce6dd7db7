#!/usr/bin/env bash
# The GPU run for chunked_fuse_cuda, on a machine with a GPU and a build made elsewhere
# (scripts/bundle_runtime_libs.sh carries its libraries; the fla-core wheel comes in
# .whl/ when PEERS=1), for OP (gla, default, or rwkv6): verify of both paths on every
# committed fixture of OP and at the accuracy shape B2 T1024 H4 D128 (JSON),
# compute-sanitizer on both paths (SANITIZE=1),
# ctest's chunked_fuse_cuda tests (CTEST=1), each kernel's time under Nsight Compute
# (NCU=1), `glabench bench` at the seed's shape,
# B4 T2048 H16 D128 and B2 T16384 H16 D128 in fp64, fp32 and bf16, fwd and fwdbwd; with
# PEERS=1 fla's kernels (FLA, default fla.chunk_OP; Python backends, docs/python.md) in
# the first BENCH_STAGES bench, beside ours, and its peer table (scripts/peer_table.py);
# GATES the bench's gate regimes (e.g. mild,fla,strong; default the bench's). With PEERS=1,
# TRITON_CARRY names a Triton cache saved by an earlier call (scripts/triton_cache.sh),
# restored first, and the cache is saved to OUT_DIR/triton_cache.tar.xz at the end.
# usage: [OP=gla|rwkv6] [GATES=…] [CTEST=1] [SANITIZE=1] [SANITIZERS="memcheck racecheck"] [NCU=1] [BENCH=0] [BENCH_STAGES="fused separate"] [PEERS=1] [TRITON_CARRY=FILE]
#        [FLA="fla.chunk_gla fla.fused_recurrent_gla"] [MAX_CALL_S=3600] [STAGES="fused separate"]
#        scripts/gpu_chunked.sh BUILD_DIR OUT_DIR
set -uo pipefail
build=$(cd "$1" && pwd) out=$2
mkdir -p "$out"
export LD_LIBRARY_PATH=$build/runtime-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GLABENCH_BACKEND_PATH=${GLABENCH_BACKEND_PATH:-$build/backends}
gb=$build/glabench backend=chunked_fuse_cuda op=${OP:-gla}
gates=(); [[ -n ${GATES:-} ]] && gates=(--gates "$GATES")
shapes=(${SHAPES:---shape 4,1024,4,100,100 --shape 4,2048,16,128,128 --shape 2,16384,16,128,128})
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
"$gb" fixtures make --preset bench --only ${op}_b2_t1024_h4_d128 --out /tmp/glabench-bench >/dev/null
for stages in ${STAGES:-fused separate}; do
  export CHUNKED_FUSE_CUDA_STAGES=$stages
  "$gb" verify --backend $backend --op $op --json "$out/verify_fixtures_$stages.json" \
    > "$out/verify_fixtures_$stages.txt" 2>&1
  echo "verify $stages, committed fixtures: exit $?; $(grep -c FAIL "$out/verify_fixtures_$stages.txt") FAIL lines"
  "$gb" verify --backend $backend --fixture /tmp/glabench-bench/${op}_b2_t1024_h4_d128.h5 --no-gradcheck \
    --json "$out/verify_accuracy_$stages.json" > "$out/verify_accuracy_$stages.txt" 2>&1
  echo "verify $stages, B2 T1024 H4 D128: exit $?"
  if [[ ${SANITIZE:-0} == 1 ]]; then
    for tool in ${SANITIZERS:-memcheck racecheck}; do
      bash backends/common/tests/sanitizer_test.sh $tool "$gb" $backend \
        datasets/fixtures/${op}_{basic,odd_t_k_ne_v,k100,no_h0,reset,mixed_gates,strong_gates,varlen}.h5 \
        $([[ $op == gla ]] && echo datasets/fixtures/gla_t65.h5) \
        > "$out/sanitizer_${tool}_$stages.log" 2>&1
      echo "compute-sanitizer $tool $stages: exit $?"
    done
  fi
done
unset CHUNKED_FUSE_CUDA_STAGES
if [[ ${CTEST:-0} == 1 ]]; then
  t0=$SECONDS
  ctest --test-dir "$build" -L $backend -j4 --output-on-failure > "$out/ctest_chunked.log" 2>&1
  echo "ctest -L $backend: exit $? in $((SECONDS - t0)) s; $(grep 'tests passed' "$out/ctest_chunked.log")"
fi
if [[ ${NCU:-0} == 1 ]]; then  # each kernel's time, both paths, bf16 B4 T2048 H16 D128 (base clocks)
  for stages in fused separate; do
    CHUNKED_FUSE_CUDA_STAGES=$stages ncu --metrics gpu__time_duration.sum --launch-count 40 \
      --kernel-name regex:"chunk|decay|prepare|fused|fwd_inner|combine" \
      "$gb" bench --backend $backend --shape 4,2048,16,128,128 --dtype bf16 --min-reps 1 \
      --max-reps 1 --warmup 0 --time-cap 0.01 --max-call-seconds 100 > "$out/ncu_kernel_times_$stages.log" 2>&1
    python3 scripts/ncu_kernel_times.py "$out/ncu_kernel_times_$stages.log" | tail -9 > "$out/kernel_times_$stages.txt"
    echo "ncu $stages: $(wc -l < "$out/kernel_times_$stages.txt") kernels"
  done
fi
# PEERS=1: fla's kernels as Python backends, timed in the first bench beside ours. Their
# first call of each dtype and mode compiles and autotunes Triton kernels (a minute or
# more), and bench predicts a larger shape's call from it: --max-call-seconds 3600 keeps
# that from skipping fla's larger shapes; --call-timeout (600 s) still stops a stuck call.
python=() peers=()
if [[ ${PEERS:-0} == 1 ]]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  export TRITON_CACHE_AUTOTUNING=1
  bash "$(dirname "$0")/triton_cache.sh" restore "${TRITON_CARRY:-/nonexistent}"
  for k in ${FLA:-fla.chunk_$op}; do python+=(--python "$k=glabench.fla:${k#fla.}") peers+=(--backend "$k"); done
  peers+=(--max-call-seconds "${MAX_CALL_S:-3600}")
fi
if [[ ${BENCH:-1} == 1 ]]; then
  for stages in ${BENCH_STAGES:-fused}; do
    t0=$SECONDS
    dtypes=${BENCH_DTYPES:---dtype fp64 --dtype fp32 --dtype bf16}
    [[ $stages == separate ]] && dtypes=${BENCH_DTYPES_SEPARATE:-$dtypes}
    CHUNKED_FUSE_CUDA_STAGES=$stages "$gb" "${python[@]}" bench --backend $backend "${peers[@]}" --op $op \
      "${shapes[@]}" $dtypes "${gates[@]}" --json "$out/bench_$stages.json" > "$out/bench_$stages.log" 2>&1
    echo "bench $stages: exit $? in $((SECONDS - t0)) s"
    if (( ${#peers[@]} )); then
      python3 "$(dirname "$0")/peer_table.py" "$out/bench_$stages.json" > "$out/peer_table.md" 2>&1
      python=() peers=()  # the peers once, beside the first BENCH_STAGES bench
    fi
  done
fi
if [[ ${PEERS:-0} == 1 ]]; then
  bash "$(dirname "$0")/triton_cache.sh" save "$out/triton_cache.tar.xz"
fi
