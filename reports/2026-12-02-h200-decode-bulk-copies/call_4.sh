set -u
. .carry/prep.sh
cd /work/main
mkdir -p /tmp/L
st() { echo "$1 exit $2 $(date -u +%T)" | tee -a /tmp/L/steps.txt; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1 2>/dev/null; } | tee /tmp/L/env.txt
B=build/hopper
OURS="--backend parallel_scan_cuda --backend chunked_fuse_cuda"
timeout 100 $GB bench $OURS --shapes decode --dtype bf16 --dtype fp32 --mode fwd --timing graph --max-call-seconds 30 --json /tmp/L/decode.json > /tmp/L/decode.log 2>&1; st decode $?
PARALLEL_SCAN_CUDA_DECODE_REGISTERS=1 timeout 60 $GB bench --backend parallel_scan_cuda --shapes decode --dtype bf16 --mode fwd --timing graph --max-call-seconds 30 --json /tmp/L/decode_registers.json > /tmp/L/decode_registers.log 2>&1; st decode_registers $?
grep -E "^\|? *(parallel|chunked)" /tmp/L/decode.log /tmp/L/decode_registers.log | cut -c1-175
(cd $B && timeout 90 ctest -R "parallel_scan_cuda/(make_decode|verify_decode|knob_refuses)" --output-on-failure) > /tmp/L/ctest_ps.log 2>&1; st ctest_ps $?
grep -E "tests passed|Failed|\*\*\*" /tmp/L/ctest_ps.log
(cd $B && timeout 380 ctest -L chunked_fuse_cuda -j4 --output-on-failure) > /tmp/L/ctest_chunked.log 2>&1; st ctest_chunked $?
grep -E "tests passed|Failed|\*\*\*|Total Test" /tmp/L/ctest_chunked.log
tar -C /tmp/L -cJf $OUT/logs.tar.xz .
