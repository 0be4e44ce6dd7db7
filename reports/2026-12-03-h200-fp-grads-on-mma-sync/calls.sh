# The calls of this report, in order, each run from the repository root on the device.
#
# .carry/prep.sh, sourced first by each call: links the carried build (this machine's
# build/hopper, trimmed by scripts/carry_build.sh) at build/hopper, unpacks its runtime
# libraries, sources scripts/gpu_runtime_env.sh build/hopper and sets GB=build/hopper/glabench.
# .carry/main_plugin/: 18945af's glabench_backend_chunked_fuse_cuda.so (SASS = bfc4f4a's).

# ---- call 1: .carry/call13.sh
# chunk_fp_grads_kernel (fp32/fp64 dq,dk,dg on mma.sync): verify fp fixtures, A/B vs main's plugin (18945af, SASS = bfc4f4a), sanitizers
set -u
. .carry/prep.sh
cd /work/main
L=/tmp/L; mkdir -p $L
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; }
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; strings $P | grep -m1 -E "^[0-9a-f]{12}$"; } > $L/env.txt
cp $P /tmp/new.so
(cd build/hopper && timeout 150 ctest -R "verify/chunked_fuse_cuda/.*/(fp64|fp32|fp16)$|chunked_fuse_cuda/verify_fused$|chunked_fuse_cuda/verify_rwkv6_fused$" -j8 --output-on-failure > $L/verify.log 2>&1); st verify $?
C="--timing graph --time-cap 0.1 --max-call-seconds 60 --mode fwdbwd"
for v in new old; do
  [ $v = old ] && cp .carry/main_plugin/glabench_backend_chunked_fuse_cuda.so $P
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --gates mild,strong,cliff --dtype fp32 $C --json $L/fp32_b4_$v.json > $L/fp32_b4_$v.log 2>&1; st fp32_b4_$v $?
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --gates mild,strong --dtype fp64 $C --json $L/fp64_b4_$v.json > $L/fp64_b4_$v.log 2>&1; st fp64_b4_$v $?
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --gates strong,cliff --dtype bf16 $C --json $L/bf16_b4_$v.json > $L/bf16_b4_$v.log 2>&1; st bf16_b4_$v $?
  timeout 80 $GB bench --backend chunked_fuse_cuda --op gla --shape 2,16384,16,128,128 --gates mild,strong,cliff --dtype fp32 $C --json $L/fp32_b2_$v.json > $L/fp32_b2_$v.log 2>&1; st fp32_b2_$v $?
done
cp /tmp/new.so $P
(cd build/hopper && timeout 200 ctest -R "compute_sanitizer_(memcheck|racecheck)_fused" -j2 --output-on-failure > $L/sanitizers.log 2>&1); st sanitizers $?
tar -C $L -cJf $OUT/logs.tar.xz .
grep -hE " (fwd|fwdbwd) " $L/*.log | cut -c1-150
tail -3 $L/verify.log; grep -E "Failed|\*\*\*" $L/verify.log | head -20
tail -3 $L/sanitizers.log
cat $L/env.txt $L/steps.txt

# ---- call 2: .carry/call15.sh
# (its bf16 benches exited 2, --time-cap given twice: bf16 comes from call 3; its ncu kernel
# lists held the reference's cuBLAS kernels too, dropped from call2/fp32_kernels.csv)
# chunked ctest (all but multi_gpu and the sanitizers, which ran on a64b7e7); A/B vs main's old plugin (18945af = bfc4f4a) fp32/fp64/bf16 fwd+bwd; kernel times and chunk_fp_grads_kernel<float> in full
set -u
. .carry/prep.sh
cd /work/main
L=/tmp/L; mkdir -p $L
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; }
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; strings $P | grep -m1 -E "^[0-9a-f]{12}$"; } > $L/env.txt
cp $P /tmp/new.so
(cd build/hopper && timeout 200 ctest -L chunked_fuse_cuda -LE "multi_gpu|sanitizer" -j8 --output-on-failure > $L/ctest.log 2>&1); st ctest $?
C="--timing graph --time-cap 0.1 --max-call-seconds 60 --mode fwdbwd"
for v in new old; do
  [ $v = old ] && cp .carry/main_plugin/glabench_backend_chunked_fuse_cuda.so $P
  timeout 40 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --gates mild,strong,cliff --dtype fp32 $C --json $L/fp32_b4_$v.json > $L/fp32_b4_$v.log 2>&1; st fp32_b4_$v $?
  timeout 40 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --gates mild,strong --dtype fp64 $C --json $L/fp64_b4_$v.json > $L/fp64_b4_$v.log 2>&1; st fp64_b4_$v $?
  timeout 40 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --gates mild,strong,cliff --dtype bf16 --time-cap 0.2 $C --json $L/bf16_b4_$v.json > $L/bf16_b4_$v.log 2>&1; st bf16_b4_$v $?
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --shape 2,16384,16,128,128 --gates mild,strong,cliff --dtype fp32 $C --json $L/fp32_b2_$v.json > $L/fp32_b2_$v.log 2>&1; st fp32_b2_$v $?
done
cp /tmp/new.so $P
tar -C $L -cJf $OUT/logs.tar.xz .
for dt in fp32 fp64; do
  N="--backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --dtype $dt --mode fwdbwd --gates mild --timing eager --min-reps 1 --max-reps 1 --warmup 0"
  timeout 45 ncu --target-processes all --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active --csv $GB bench $N > $L/${dt}_kernels.csv 2> $L/ncu_$dt.err; st ncu_$dt $?
done
tar -C $L -cJf $OUT/logs.tar.xz .
N="--backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --dtype fp32 --mode fwdbwd --gates mild --timing eager --min-reps 1 --max-reps 1 --warmup 0"
timeout 100 ncu --target-processes all -k regex:chunk_fp_grads --launch-count 1 --set full --import-source no -o /tmp/g $GB bench $N > $L/ncu_full.log 2>&1; st ncu_full $?
ncu -i /tmp/g.ncu-rep --page details > $L/grads_details.txt 2>&1
ncu -i /tmp/g.ncu-rep --page source --csv --print-source sass 2>/dev/null | xz > $L/grads_sass.csv.xz
tar -C $L -cJf $OUT/logs.tar.xz .
grep -hE " (fwd|fwdbwd) " $L/*.log | cut -c1-120
tail -3 $L/ctest.log; grep -E "Failed|\*\*\*" $L/ctest.log | head -20
grep -E "gpu__time_duration" $L/fp32_kernels.csv | awk -F'","' '{print $5, $NF}' | cut -c1-120 | head -30
cat $L/env.txt $L/steps.txt

# ---- call 3: .carry/call16.sh (.carry/p1: c476075's plugin)
# e332d2e (dg_sums; token reversal a block a row): chunked ctest (all but multi_gpu, sanitizers); A/B beside c476075 (reversal only, .carry/p1) and 18945af (= bfc4f4a, .carry/main_plugin); fp32 kernel times
set -u
. .carry/prep.sh
cd /work/main
L=/tmp/L; mkdir -p $L
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; }
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; strings $P | grep -m1 -E "^[0-9a-f]{12}$"; strings .carry/p1/*.so | grep -m1 -E "^[0-9a-f]{12}$"; } > $L/env.txt
cp $P /tmp/new.so
(cd build/hopper && timeout 200 ctest -L chunked_fuse_cuda -LE "multi_gpu|sanitizer" -j8 --output-on-failure > $L/ctest.log 2>&1); rc=$?; st ctest $rc
if [ $rc != 0 ]; then
  cp .carry/p1/glabench_backend_chunked_fuse_cuda.so $P
  (cd build/hopper && timeout 100 ctest -R "verify/chunked_fuse_cuda/.*/(fp64|fp32)$|chunked_fuse_cuda/verify_fused$" -j8 --output-on-failure > $L/ctest_p1.log 2>&1); st ctest_p1 $?
fi
C="--timing graph --time-cap 0.1 --max-call-seconds 60 --mode fwdbwd"
for v in new p1 old; do
  case $v in new) cp /tmp/new.so $P;; p1) cp .carry/p1/glabench_backend_chunked_fuse_cuda.so $P;; old) cp .carry/main_plugin/glabench_backend_chunked_fuse_cuda.so $P;; esac
  timeout 40 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --gates mild,strong,cliff --dtype fp32 $C --json $L/fp32_b4_$v.json > $L/fp32_b4_$v.log 2>&1; st fp32_b4_$v $?
  timeout 40 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --gates mild,strong --dtype fp64 $C --json $L/fp64_b4_$v.json > $L/fp64_b4_$v.log 2>&1; st fp64_b4_$v $?
  [ $v = p1 ] && continue
  timeout 40 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --gates mild,strong,cliff --dtype bf16 $C --json $L/bf16_b4_$v.json > $L/bf16_b4_$v.log 2>&1; st bf16_b4_$v $?
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --shape 2,16384,16,128,128 --gates mild,strong,cliff --dtype fp32 $C --json $L/fp32_b2_$v.json > $L/fp32_b2_$v.log 2>&1; st fp32_b2_$v $?
done
cp /tmp/new.so $P
tar -C $L -cJf $OUT/logs.tar.xz .
N="--backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --dtype fp32 --mode fwdbwd --gates mild --timing eager --min-reps 1 --max-reps 1 --warmup 0"
timeout 45 ncu --target-processes all -k regex:"walk|revers|grads" --metrics gpu__time_duration.sum --csv $GB bench $N > $L/fp32_kernels.csv 2> $L/ncu_fp32.err; st ncu_fp32 $?
tar -C $L -cJf $OUT/logs.tar.xz .
grep -hE " (fwd|fwdbwd) " $L/*.log | cut -c1-110
tail -3 $L/ctest.log; grep -E "Failed|\*\*\*" $L/ctest.log | head -20
grep -E "gpu__time_duration" $L/fp32_kernels.csv | awk -F'","' '{print $5, $NF}' | cut -c1-120 | head -20
cat $L/env.txt $L/steps.txt

# ---- call 4: .carry/call17.sh
# e332d2e: compute-sanitizer racecheck and memcheck on the fused path
set -u
. .carry/prep.sh
cd /work/main
L=/tmp/L; mkdir -p $L
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
{ date -u; strings $P | grep -m1 -E "^[0-9a-f]{12}$"; } > $L/env.txt
(cd build/hopper && timeout 170 ctest -R "compute_sanitizer_(racecheck|memcheck)_fused" -j2 --output-on-failure > $L/sanitizers.log 2>&1); echo "sanitizers exit $? at $SECONDS s" >> $L/env.txt
cp $L/* $OUT/
tail -8 $L/sanitizers.log; cat $L/env.txt
