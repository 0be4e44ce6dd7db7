set -u
. .carry/prep.sh
cd /work/main
export PYTHONPATH=/work/main/python:${PYTHONPATH:-}
mkdir -p /tmp/L
st() { echo "$1 exit $2 $(date -u +%T)" | tee -a /tmp/L/steps.txt; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee /tmp/L/env.txt
B=build/hopper
(cd $B && timeout 120 ctest -R "(chunked_fuse_cuda|parallel_scan_cuda)/(make_decode|verify_decode)" --output-on-failure) > /tmp/L/ctest_decode.log 2>&1; st ctest_decode $?
grep -E "Test +#|tests passed" /tmp/L/ctest_decode.log
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $GB --call-timeout 600 verify --backend chunked_fuse_cuda --no-gradcheck $(for w in b3_k64 b8_k100_v30 b4_k256; do echo --fixture $B/backends/chunked_fuse_cuda/decode_fixtures/rwkv6_decode_$w.h5; done) --fixture datasets/fixtures/rwkv6_t1.h5 --dtype fp16 --dtype bf16 --dtype fp32 > /tmp/L/san_memcheck_chunked_rwkv6.log 2>&1; st san_memcheck_chunked_rwkv6 $?
grep -E "ERROR SUMMARY" /tmp/L/san_memcheck_chunked_rwkv6.log | sort | uniq -c
FLA="--python fla.fused_recurrent_gla=glabench.fla:fused_recurrent_gla --python fla.fused_recurrent_rwkv6=glabench.fla:fused_recurrent_rwkv6"
timeout 240 $GB $FLA bench --backend chunked_fuse_cuda --backend parallel_scan_cuda --backend fla.fused_recurrent_gla --backend fla.fused_recurrent_rwkv6 --shapes decode --dtype bf16 --dtype fp16 --dtype fp32 --mode fwd --timing graph --max-call-seconds 60 --json /tmp/L/decode.json > /tmp/L/decode.log 2>&1; st decode $?
grep -E "^(parallel|fused|chunked|fla)" /tmp/L/decode.log | grep -v " B1 " | cut -c1-34,60-160
(cd $B && timeout 150 ctest -L chunked_fuse_cuda -R rwkv6 -j4 --timeout 140 --output-on-failure) > /tmp/L/ctest_chunked_rwkv6.log 2>&1; st ctest_chunked_rwkv6 $?
grep -E "tests passed|Failed|\*\*\*" /tmp/L/ctest_chunked_rwkv6.log | head
(cd $B && timeout 200 ctest -L parallel_scan_cuda -j4 --timeout 150 --output-on-failure) > /tmp/L/ctest_ps.log 2>&1; st ctest_ps $?
grep -E "tests passed|Failed|\*\*\*" /tmp/L/ctest_ps.log | head
tar -C /tmp/L -cJf $OUT/logs.tar.xz .
