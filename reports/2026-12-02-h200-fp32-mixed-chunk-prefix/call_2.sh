set -u
. .carry/prep.sh
cd /work/main
mkdir -p /tmp/L
st() { echo "$1 exit $2 $(date -u +%T)" | tee -a /tmp/L/steps.txt; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee /tmp/L/env.txt
(cd build/hopper && timeout 60 ctest -R "parallel_scan_cuda/(make_decode|verify_decode|knob_refuses)" --output-on-failure) > /tmp/L/ctest_ps.log 2>&1; st ctest_ps $?
grep -E "Test +#|tests passed" /tmp/L/ctest_ps.log
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
cp $P /tmp/after2.so
for v in after after2; do cp .carry/$v.so $P 2>/dev/null || cp /tmp/$v.so $P
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --timing graph --time-cap 0.1 --max-call-seconds 10 --dtype fp32 --mode fwd --gates mild,cliff --json /tmp/L/fp32_$v.json > /tmp/L/fp32_$v.log 2>&1; st fp32_$v $?
  grep -E "B[0-9]+ T" /tmp/L/fp32_$v.log | cut -c1-120
done
tar -C /tmp/L -cJf $OUT/logs.tar.xz .
