# ---- call 1
set -u
. .carry/prep.sh
cd /work/main
mkdir -p /tmp/L
st() { echo "$1 exit $2 $(date -u +%T)" | tee -a /tmp/L/steps.txt; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee /tmp/L/env.txt
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
cp $P /tmp/after.so; xz -dc .carry/b/before.so.xz > /tmp/before.so
for v in before after; do cp /tmp/$v.so $P
  for dt in fp32 fp64; do
  timeout 100 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --dtype $dt --mode fwd --mode fwdbwd --gates mild,strong --timing graph --time-cap 0.1 --max-call-seconds 10 --json /tmp/L/bench_${dt}_$v.json > /tmp/L/bench_${dt}_$v.log 2>&1; st bench_${dt}_$v $?
  grep -E "B[0-9]+ T" /tmp/L/bench_${dt}_$v.log | cut -c1-140
  done
done
cp /tmp/after.so $P
timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --dtype bf16 --mode fwd --mode fwdbwd --gates mild,strong --timing graph --time-cap 0.1 --json /tmp/L/bench_bf16.json > /tmp/L/bench_bf16.log 2>&1; st bench_bf16 $?
grep -E "B[0-9]+ T" /tmp/L/bench_bf16.log | cut -c1-140
(cd build/hopper && timeout 330 ctest -L chunked_fuse_cuda -E "separate|two_processes|head_groups|knob" --timeout 300 --output-on-failure) > /tmp/L/ctest.log 2>&1; st ctest $?
grep -E "tests passed|Failed|\*\*\*|Total Test" /tmp/L/ctest.log | head -30
tar -C /tmp/L -cJf $OUT/logs.tar.xz .
# ---- call 2
set -u
. .carry/prep.sh
cd /work/main
mkdir -p /tmp/L
st() { echo "$1 exit $2 $(date -u +%T)" | tee -a /tmp/L/steps.txt; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee /tmp/L/env.txt
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
SH="--shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --timing graph --time-cap 0.1 --max-call-seconds 10"
cp $P /tmp/after.so; xz -dc .carry/b/before.so.xz > /tmp/before.so
cp /tmp/before.so $P
timeout 100 $GB bench --backend chunked_fuse_cuda --op gla $SH --dtype fp32 --mode fwd --mode fwdbwd --gates mild,strong --json /tmp/L/fp32_before.json > /tmp/L/fp32_before.log 2>&1; st fp32_before $?
grep -E "B[0-9]+ T" /tmp/L/fp32_before.log | cut -c1-120
cp /tmp/after.so $P
timeout 150 $GB bench --backend chunked_fuse_cuda --op gla $SH --dtype fp32 --mode fwd --mode fwdbwd --gates all --json /tmp/L/fp32.json > /tmp/L/fp32.log 2>&1; st fp32 $?
grep -E "B[0-9]+ T" /tmp/L/fp32.log | cut -c1-120
timeout 100 $GB bench --backend chunked_fuse_cuda --op gla $SH --dtype fp64 --mode fwd --mode fwdbwd --gates mild,strong --json /tmp/L/fp64.json > /tmp/L/fp64.log 2>&1; st fp64 $?
grep -E "B[0-9]+ T" /tmp/L/fp64.log | cut -c1-120
timeout 60 $GB bench --backend chunked_fuse_cuda --op gla $SH --dtype bf16 --mode fwd --mode fwdbwd --gates mild,strong --json /tmp/L/bf16.json > /tmp/L/bf16.log 2>&1; st bf16 $?
grep -E "B[0-9]+ T" /tmp/L/bf16.log | cut -c1-120
timeout 90 ncu -k regex:chunk_dq_dk_dg --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis $GB --no-isolate bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --dtype fp32 --mode fwdbwd --gates mild --timing eager --min-reps 1 --max-reps 1 --warmup 0 --time-cap 1 --max-call-seconds 100 > /tmp/L/ncu_dqdkdg.txt 2>&1; st ncu $?
grep -E "Duration|Throughput|Occupancy|Registers|Stall|Warp Cycles|Eligible|Issued" /tmp/L/ncu_dqdkdg.txt | head -30
(cd build/hopper && timeout 330 ctest -L chunked_fuse_cuda -E "separate|two_processes|head_groups|knob" --timeout 300 --output-on-failure) > /tmp/L/ctest.log 2>&1; st ctest $?
grep -E "tests passed|Failed|\*\*\*|Total Test" /tmp/L/ctest.log | head -30
tar -C /tmp/L -cJf $OUT/logs.tar.xz .
# ---- call 3
set -u
. .carry/prep.sh
cd /work/main
mkdir -p /tmp/L
st() { echo "$1 exit $2 $(date -u +%T)" | tee -a /tmp/L/steps.txt; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee /tmp/L/env.txt
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
SH="--shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --timing graph --time-cap 0.1 --max-call-seconds 10"
cp $P /tmp/after.so
timeout 120 $GB bench --backend chunked_fuse_cuda --op gla $SH --dtype fp32 --mode fwd --mode fwdbwd --gates all --json /tmp/L/fp32.json > /tmp/L/fp32.log 2>&1; st fp32 $?
grep -E "B[0-9]+ T" /tmp/L/fp32.log | cut -c1-120
timeout 40 $GB bench --backend chunked_fuse_cuda --op gla $SH --dtype bf16 --mode fwd --mode fwdbwd --gates mild,strong --json /tmp/L/bf16.json > /tmp/L/bf16.log 2>&1; st bf16 $?
grep -E "B[0-9]+ T" /tmp/L/bf16.log | cut -c1-120
cp /tmp/after.so $P
(cd build/hopper && timeout 200 ctest -L chunked_fuse_cuda -E "racecheck|separate|two_processes|head_groups|knob|fp64|bf16" --timeout 150 --output-on-failure) > /tmp/L/ctest.log 2>&1; st ctest $?
grep -E "tests passed|Failed|\*\*\*|Total Test" /tmp/L/ctest.log | head -30
tar -C /tmp/L -cJf $OUT/logs.tar.xz .
