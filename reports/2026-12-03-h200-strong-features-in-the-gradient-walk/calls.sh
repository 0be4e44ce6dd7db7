# call 4 (10:10 UTC): tests, benches, forward profiles
set -u
. .carry/prep.sh
cd /work/main
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $OUT/env.txt
st() { echo "$1 exit $2 at $SECONDS s" >> $OUT/env.txt; }
C="--dtype bf16 --timing graph --time-cap 0.1"
timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --gates all $C --json $OUT/b4.json > $OUT/bench.log 2>&1; st b4 $?
(cd build/hopper && timeout 420 ctest -L chunked_fuse_cuda -LE multi_gpu -j8 --output-on-failure > $OUT/ctest.log 2>&1); st ctest $?
tail -5 $OUT/ctest.log
timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --shape 2,16384,16,128,128 --gates mild,strong --mode fwdbwd $C --json $OUT/b2.json >> $OUT/bench.log 2>&1; st b2 $?
grep -hE "graph" $OUT/bench.log | cut -c1-150
cat $OUT/env.txt
B="$GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --dtype bf16 --timing eager --warmup 0 --min-reps 1 --max-reps 1 --time-cap 0.01 --mode fwd"
for g in fla strong; do
  echo "=== $g fwd kernel" >> $OUT/prof.txt
  timeout 100 ncu --target-processes all -k regex:chunk_walk_bf16_kernel -c 1 --set full $B --gates $g >> $OUT/prof.txt 2>&1
done
st prof $?

# call 5 (10:15 UTC): beside fla, cut short by the session's device time
set -u
. .carry/prep.sh
cd /work/main
export PYTHONPATH=/tmp/site:/work/main/build/hopper/python TRITON_CACHE_DIR=/tmp/triton TRITON_CACHE_AUTOTUNING=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $OUT/env.txt
st() { echo "$1 exit $2 at $SECONDS s" >> $OUT/env.txt; }
P="--python fla.chunk_gla=glabench.fla:chunk_gla"
C="--dtype bf16 --timing graph --time-cap 0.1 --max-call-seconds 3600"
timeout 500 $GB $P bench --backend chunked_fuse_cuda --backend fla.chunk_gla --op gla --shape 4,2048,16,128,128 --gates all $C --json $OUT/b4_fla.json > $OUT/bench.log 2>&1; st b4_fla $?
grep -hE "graph" $OUT/bench.log | cut -c1-150
cat $OUT/env.txt

# .carry/prep.sh (sourced by both)
# sourced on the device: link the carried build, unpack libs, fla wheels, env
cd /work/main 2>/dev/null || { mkdir -p /work && ln -sfn "$PWD" /work/main && cd /work/main; }
mkdir -p build && ln -sfn /work/main/.carry/b build/hopper
[ -d .carry/b/runtime-libs ] || tar -C .carry/b -xJf .carry/b/runtime-libs.tar.xz
if [ -d .whl ]; then python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site; fi
. scripts/gpu_runtime_env.sh /work/main/build/hopper
GB=/work/main/build/hopper/glabench

# call 1 (08:50 UTC, d896712): the baseline, .carry/call1.sh
set -u
. .carry/prep.sh
cd /work/main
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log -1 --format=%H 2>/dev/null; } | tee $OUT/env.txt
st() { echo "$1 exit $2 at $SECONDS s" >> $OUT/steps.log; }
(cd build/hopper && timeout 300 ctest -L chunked_fuse_cuda -LE sanitizer -j8 --output-on-failure > $OUT/ctest.log 2>&1); st ctest $?
tail -4 $OUT/ctest.log
C="--dtype bf16 --timing graph --time-cap 0.1"
timeout 200 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --gates all $C --json $OUT/b4.json > $OUT/b4.log 2>&1; st b4 $?
grep -hE "graph" $OUT/b4.log | cut -c1-140
for g in mild fla strong; do
timeout 120 ncu --target-processes all --metrics gpu__time_duration.sum --csv --log-file $OUT/ncu_$g.csv $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --gates $g --dtype bf16 --mode fwdbwd --timing eager --warmup 0 --min-reps 3 --max-reps 3 --time-cap 0.01 > $OUT/ncu_$g.log 2>&1; st ncu_$g $?
done
cat $OUT/steps.log

# call 2 (08:55 UTC, d896712): kernel times under ncu, .carry/call2.sh
set -u
. .carry/prep.sh
cd /work/main
B="$GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --dtype bf16 --timing eager --warmup 0 --min-reps 1 --max-reps 1 --time-cap 0.01"
for g in mild fla strong; do
  echo "=== $g fwd kernel" >> $OUT/prof.txt
  timeout 100 ncu --target-processes all -k regex:chunk_walk_bf16_kernel -s 2 -c 1 --set full --print-details all $B --gates $g --mode fwd >> $OUT/prof.txt 2>&1
done
for g in fla strong; do
  echo "=== $g grads kernel" >> $OUT/prof_grads.txt
  timeout 100 ncu --target-processes all -k regex:chunk_walk_grads_kernel -s 1 -c 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section LaunchStats $B --gates $g --mode fwdbwd >> $OUT/prof_grads.txt 2>&1
  echo "=== $g all kernels" >> $OUT/prof_grads.txt
  timeout 100 ncu --target-processes all --metrics gpu__time_duration.sum -k regex:walk $B --gates $g --mode fwdbwd 2>&1 | grep -E "walk|gpu__time" >> $OUT/prof_grads.txt
done
wc -l $OUT/*.txt
