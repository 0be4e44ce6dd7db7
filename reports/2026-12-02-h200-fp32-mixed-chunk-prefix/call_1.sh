set -u
. .carry/prep.sh
cd /work/main
mkdir -p /tmp/L
st() { echo "$1 exit $2 $(date -u +%T)" | tee -a /tmp/L/steps.txt; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee /tmp/L/env.txt
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
cp $P /tmp/after.so
SH="--timing graph --time-cap 0.1 --max-call-seconds 10"
for v in before after; do cp .carry/$v.so $P 2>/dev/null || cp /tmp/$v.so $P
  timeout 90 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 $SH --dtype fp32 --mode fwd --mode fwdbwd --gates all --json /tmp/L/fp32_$v.json > /tmp/L/fp32_$v.log 2>&1; st fp32_$v $?
  grep -E "B[0-9]+ T" /tmp/L/fp32_$v.log | cut -c1-130
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --shape 2,16384,16,128,128 $SH --dtype fp32 --mode fwd --mode fwdbwd --gates mild,strong,cliff --json /tmp/L/fp32_long_$v.json > /tmp/L/fp32_long_$v.log 2>&1; st fp32_long_$v $?
  grep -E "B[0-9]+ T" /tmp/L/fp32_long_$v.log | cut -c1-130
done
cp /tmp/after.so $P
(cd build/hopper && timeout 330 ctest -L chunked_fuse_cuda -E "two_processes|head_groups" -j4 --timeout 300 --output-on-failure) > /tmp/L/ctest.log 2>&1; st ctest $?
grep -E "tests passed|Failed|\*\*\*|Total Test" /tmp/L/ctest.log | head -20
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $GB --call-timeout 600 verify --backend chunked_fuse_cuda --no-gradcheck $(for op in gla rwkv6; do echo --fixture build/hopper/backends/chunked_fuse_cuda/decode_fixtures/${op}_decode_b5_k3_v8_no_h0.h5; done) --dtype fp16 --dtype bf16 --dtype fp32 > /tmp/L/san_$tool.log 2>&1; st san_$tool $?
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" /tmp/L/san_$tool.log | sort | uniq -c
done
tar -C /tmp/L -cJf $OUT/logs.tar.xz .
