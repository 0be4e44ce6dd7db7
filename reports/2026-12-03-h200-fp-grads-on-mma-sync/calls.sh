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
