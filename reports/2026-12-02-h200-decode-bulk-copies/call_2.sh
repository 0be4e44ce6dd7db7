set -u
. .carry/prep.sh
cd /work/main
export PYTHONPATH=/work/main/python:${PYTHONPATH:-}
mkdir -p /tmp/L
st() { echo "$1 exit $2 $(date -u +%T)" | tee -a /tmp/L/steps.txt; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee /tmp/L/env.txt
B=build/hopper
(cd $B && timeout 120 ctest -R "(chunked_fuse_cuda|fused_recurrent_rwkv6_cuda)/(make_decode|verify_decode)" --output-on-failure) > /tmp/L/ctest_decode.log 2>&1; st ctest_decode $?
grep -E "Test +#|tests passed" /tmp/L/ctest_decode.log
for tool in memcheck racecheck; do
  for bf in chunked_fuse_cuda:gla fused_recurrent_rwkv6_cuda:rwkv6; do be=${bf%%:*} op=${bf#*:}
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $GB --call-timeout 600 verify --backend $be --no-gradcheck \
      $(for w in b3_k64 b8_k100_v30 b4_k256; do echo --fixture $B/backends/$be/decode_fixtures/${op}_decode_$w.h5; done) \
      --dtype fp16 --dtype bf16 --dtype fp32 > /tmp/L/san_${tool}_$be.log 2>&1; st san_${tool}_$be $?
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY" /tmp/L/san_${tool}_$be.log | sort | uniq -c
  done
done
OURS="--backend chunked_fuse_cuda --backend fused_recurrent_rwkv6_cuda"
FLA="--python fla.fused_recurrent_gla=glabench.fla:fused_recurrent_gla --python fla.fused_recurrent_rwkv6=glabench.fla:fused_recurrent_rwkv6"
timeout 300 $GB $FLA bench $OURS --backend fla.fused_recurrent_gla --backend fla.fused_recurrent_rwkv6 --shapes decode --dtype bf16 --dtype fp16 --dtype fp32 --mode fwd --timing graph --max-call-seconds 60 --json /tmp/L/decode.json > /tmp/L/decode.log 2>&1; st decode $?
PARALLEL_SCAN_CUDA_DECODE_REGISTERS=1 FUSED_RECURRENT_RWKV6_CUDA_DECODE_REGISTERS=1 timeout 100 $GB bench $OURS --shapes decode --dtype bf16 --dtype fp16 --dtype fp32 --mode fwd --timing graph --max-call-seconds 60 --json /tmp/L/decode_registers.json > /tmp/L/decode_registers.log 2>&1; st decode_registers $?
grep -E "^\|? *(parallel|fused|chunked|fla)" /tmp/L/decode.log /tmp/L/decode_registers.log | cut -c1-175
timeout 150 $GB decode-drift $OURS --dtype bf16 --dtype fp16 --dtype fp32 --gates mild,strong --json /tmp/L/drift.json > /tmp/L/drift.log 2>&1; st drift $?
tail -25 /tmp/L/drift.log | cut -c1-160
(cd $B && timeout 200 ctest -L fused_recurrent_rwkv6_cuda -j4 --timeout 150 --output-on-failure) > /tmp/L/ctest_fr.log 2>&1; st ctest_fr $?
grep -E "tests passed|Failed|\*\*\*" /tmp/L/ctest_fr.log | head
tar -C /tmp/L -cJf $OUT/logs.tar.xz .
