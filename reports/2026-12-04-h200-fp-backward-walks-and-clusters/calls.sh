# The calls of this report, in order, each run from the repository root on the device
# (carry: .carry/).
#
# .carry/prep.sh, sourced first:
#   # Sourced first by each device call: links the carried build at build/hopper, unpacks its
#   # runtime libraries and the A/B plugins, sets the runtime environment and GB.
#   cd /work/main
#   mkdir -p build && ln -sfn "$PWD/.carry/b" build/hopper
#   [ -d .carry/b/runtime-libs ] || tar -C .carry/b -xJf .carry/b/runtime-libs.tar.xz
#   for f in .carry/*/*.so.xz; do [ -f "${f%.xz}" ] || xz -dk "$f"; done
#   . scripts/gpu_runtime_env.sh build/hopper
#   GB=build/hopper/glabench
# .carry/b: this machine's build/hopper, trimmed by scripts/carry_build.sh, its runtime-libs/
# xz-packed, with the plugin under test; .carry/main_plugin: ef90824's plugin (xz), .carry/prev:
# ad42af4's, .carry/exp: a4fe6d1's tree built before its commit (SASS identical to a4fe6d1's).

# ---- call 2 (.carry/call2.sh), plugin ad42af4

# ad42af4 (fp dS walk reads the tokens backwards, kRev; fp32 mild threshold −48 a half) beside ef90824 (.carry/main_plugin):
# chunked ctest, A/B fp32/fp64 fwd and fwd+bwd, bf16 denominators, kernel times, sanitizers
set -u
. .carry/prep.sh
L=/tmp/L; mkdir -p $L
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; }
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; for p in $P .carry/main_plugin/*.so; do strings $p | grep -m1 -E "^[0-9a-f]{12}$"; done; } > $L/env.txt
cp $P /tmp/new.so
(cd build/hopper && timeout 150 ctest -L chunked_fuse_cuda -LE "multi_gpu|sanitizer" -j8 --output-on-failure > $L/ctest.log 2>&1); st ctest $?
C="--timing graph --time-cap 0.1 --max-call-seconds 60"
for v in new old; do
  case $v in new) cp /tmp/new.so $P;; old) cp .carry/main_plugin/glabench_backend_chunked_fuse_cuda.so $P;; esac
  timeout 50 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --gates all --dtype fp32 $C --json $L/fp32_b4_$v.json > $L/fp32_b4_$v.log 2>&1; st fp32_b4_$v $?
  timeout 40 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --gates mild,strong,cliff --dtype fp64 $C --json $L/fp64_b4_$v.json > $L/fp64_b4_$v.log 2>&1; st fp64_b4_$v $?
  timeout 80 $GB bench --backend chunked_fuse_cuda --op gla --shape 2,16384,16,128,128 --gates all --dtype fp32 $C --json $L/fp32_b2_$v.json > $L/fp32_b2_$v.log 2>&1; st fp32_b2_$v $?
  [ $v = new ] || continue
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --gates all --dtype bf16 $C --json $L/bf16_$v.json > $L/bf16_$v.log 2>&1; st bf16_$v $?
  tar -C $L -cJf $OUT/logs.tar.xz .
done
cp /tmp/new.so $P
tar -C $L -cJf $OUT/logs.tar.xz .
for dt in fp32 fp64; do
  N="--backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --dtype $dt --mode fwdbwd --gates mild --timing eager --min-reps 1 --max-reps 1 --warmup 0"
  timeout 40 ncu --target-processes all -k regex:"walk|dh0|grads" --metrics gpu__time_duration.sum --csv $GB bench $N > $L/${dt}_kernels.csv 2> $L/ncu_$dt.err; st ncu_$dt $?
done
tar -C $L -cJf $OUT/logs.tar.xz .
(cd build/hopper && timeout 170 ctest -R "compute_sanitizer_(memcheck|racecheck)_fused" -j2 --output-on-failure > $L/sanitizers.log 2>&1); st sanitizers $?
tar -C $L -cJf $OUT/logs.tar.xz .
grep -hE " (fwd|fwdbwd) " $L/*.log | cut -c1-118
tail -3 $L/ctest.log; grep -E "Failed|\*\*\*" $L/ctest.log | head -20
for dt in fp32 fp64; do grep -E "gpu__time_duration" $L/${dt}_kernels.csv | awk -F'","' '{print $5, $NF}' | cut -c1-100 | head -8; done
tail -4 $L/sanitizers.log; cat $L/env.txt $L/steps.txt

# ---- call 3 (.carry/call3.sh), plugin 57171e5
# the grads kernel in clusters sharing dA, beside ad42af4 (.carry/prev): chunked ctest, A/B fp32/fp64 fwd+bwd, bf16 denominators, kernel times, sanitizers
set -u
. .carry/prep.sh
L=/tmp/L; mkdir -p $L
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; }
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; for p in $P .carry/prev/*.so; do strings $p | grep -m1 -E "^[0-9a-f]{12}$"; done; } > $L/env.txt
cp $P /tmp/new.so
(cd build/hopper && timeout 150 ctest -L chunked_fuse_cuda -LE "multi_gpu|sanitizer" -j8 --output-on-failure > $L/ctest.log 2>&1); st ctest $?
C="--timing graph --time-cap 0.1 --max-call-seconds 60"
for v in new prev; do
  case $v in new) cp /tmp/new.so $P;; prev) cp .carry/prev/glabench_backend_chunked_fuse_cuda.so $P;; esac
  timeout 50 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --gates all --dtype fp32 --mode fwdbwd $C --json $L/fp32_b4_$v.json > $L/fp32_b4_$v.log 2>&1; st fp32_b4_$v $?
  timeout 40 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --gates mild,strong --dtype fp64 --mode fwdbwd $C --json $L/fp64_b4_$v.json > $L/fp64_b4_$v.log 2>&1; st fp64_b4_$v $?
  timeout 80 $GB bench --backend chunked_fuse_cuda --op gla --shape 2,16384,16,128,128 --gates all --dtype fp32 --mode fwdbwd $C --json $L/fp32_b2_$v.json > $L/fp32_b2_$v.log 2>&1; st fp32_b2_$v $?
  [ $v = new ] || continue
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --gates all --dtype bf16 --mode fwdbwd $C --json $L/bf16_$v.json > $L/bf16_$v.log 2>&1; st bf16_$v $?
  tar -C $L -cJf $OUT/logs.tar.xz .
done
cp /tmp/new.so $P
tar -C $L -cJf $OUT/logs.tar.xz .
for dt in fp32 fp64; do
  N="--backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --dtype $dt --mode fwdbwd --gates mild --timing eager --min-reps 1 --max-reps 1 --warmup 0"
  timeout 40 ncu --target-processes all -k regex:"grads" --metrics gpu__time_duration.sum --csv $GB bench $N > $L/${dt}_kernels.csv 2> $L/ncu_$dt.err; st ncu_$dt $?
done
tar -C $L -cJf $OUT/logs.tar.xz .
(cd build/hopper && timeout 200 ctest -R "compute_sanitizer_(memcheck|racecheck|synccheck)_fused" -j3 --output-on-failure > $L/sanitizers.log 2>&1); st sanitizers $?
tar -C $L -cJf $OUT/logs.tar.xz .
grep -hE " (fwd|fwdbwd) " $L/*.log | cut -c1-118
tail -3 $L/ctest.log; grep -E "Failed|\*\*\*" $L/ctest.log | head -20
for dt in fp32 fp64; do grep -E "gpu__time_duration" $L/${dt}_kernels.csv | awk -F'","' '{print $5, $NF}' | cut -c1-100 | head -8; done
tail -4 $L/sanitizers.log; cat $L/env.txt $L/steps.txt

# ---- call 4 (.carry/call4.sh), plugin 2a1caa7 and .carry/exp
# 2a1caa7 (fp32 grads in clusters of 2; fp64 none) beside the same with fp64 in clusters of 2 (.carry/exp): fp64 verify with exp, A/B fp64 fwd+bwd
set -u
. .carry/prep.sh
L=/tmp/L; mkdir -p $L
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; }
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; for p in $P .carry/exp/*.so; do strings $p | grep -m1 -E "^[0-9a-f]{12}$"; done; } > $L/env.txt
cp $P /tmp/fin.so
cp .carry/exp/glabench_backend_chunked_fuse_cuda.so $P
(cd build/hopper && timeout 120 ctest -R "verify/chunked_fuse_cuda/.*/fp64$|chunked_fuse_cuda/verify_fused$" -j8 --output-on-failure > $L/ctest_exp.log 2>&1); st ctest_exp $?
C="--timing graph --time-cap 0.1 --max-call-seconds 60 --mode fwdbwd"
for v in exp fin exp2 fin2; do
  case $v in fin*) cp /tmp/fin.so $P;; exp*) cp .carry/exp/glabench_backend_chunked_fuse_cuda.so $P;; esac
  timeout 40 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --gates mild,strong --dtype fp64 $C --json $L/fp64_b4_$v.json > $L/fp64_b4_$v.log 2>&1; st fp64_b4_$v $?
done
for v in exp fin; do
  case $v in fin*) cp /tmp/fin.so $P;; exp*) cp .carry/exp/glabench_backend_chunked_fuse_cuda.so $P;; esac
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --shape 2,16384,16,128,128 --gates mild --dtype fp64 $C --json $L/fp64_b2_$v.json > $L/fp64_b2_$v.log 2>&1; st fp64_b2_$v $?
done
cp /tmp/fin.so $P
tar -C $L -cJf $OUT/logs.tar.xz .
grep -hE " (fwd|fwdbwd) " $L/fp64*.log | cut -c1-118
tail -3 $L/ctest_exp.log; grep -E "Failed|\*\*\*" $L/ctest_exp.log | head
cat $L/env.txt $L/steps.txt
