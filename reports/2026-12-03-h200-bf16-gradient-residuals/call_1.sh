set -u
. .carry/prep.sh
cd /work/main
export PYTHONPATH=/work/main/build/hopper/python:${PYTHONPATH:-} TRITON_CACHE_DIR=/tmp/triton TRITON_CACHE_AUTOTUNING=1
mkdir -p /tmp/L
st() { echo "$1 exit $2 $(date -u +%T)" | tee -a /tmp/L/steps.txt; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee /tmp/L/env.txt
B=build/hopper
P=$B/backends/glabench_backend_chunked_fuse_cuda.so
cp $P /tmp/after.so; cp .carry/before.so /tmp/before.so
(cd $B && timeout 150 ctest -L chunked_fuse_cuda -R "/(bf16|fp16)$|verify_fused|verify_rwkv6_fused" -j6 --output-on-failure) > /tmp/L/ctest_16bit.log 2>&1; st ctest_16bit $?
grep -E "tests passed|Failed|\*\*\*" /tmp/L/ctest_16bit.log | head
FLA="--python fla.chunk_gla=glabench.fla:chunk_gla --python fla.chunk_rwkv6=glabench.fla:chunk_rwkv6"
for v in after before; do
  cp /tmp/$v.so $P
  peers=""; [ $v = after ] && peers="--backend fla.chunk_gla --backend fla.chunk_rwkv6"
  timeout 240 $GB $FLA bench --backend chunked_fuse_cuda $peers --op gla --op rwkv6 --shape 2,1024,4,128,128 --dtype bf16 --gates all --mode fwdbwd --timing graph --time-cap 0.05 --max-call-seconds 600 --json /tmp/L/acc_$v.json > /tmp/L/acc_$v.log 2>&1; st acc_$v $?
done
for r in 1 2; do for v in before after; do
  cp /tmp/$v.so $P
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --dtype bf16 --gates mild,strong,cliff --mode fwdbwd --timing graph --time-cap 0.1 --json /tmp/L/time_gla_${v}_$r.json > /tmp/L/time_gla_${v}_$r.log 2>&1; st time_gla_${v}_$r $?
  timeout 40 $GB bench --backend chunked_fuse_cuda --op rwkv6 --shape 4,2048,16,128,128 --dtype bf16 --gates mild,strong --mode fwdbwd --timing graph --time-cap 0.1 --json /tmp/L/time_rwkv6_${v}_$r.json > /tmp/L/time_rwkv6_${v}_$r.log 2>&1; st time_rwkv6_${v}_$r $?
done; done
grep -hE "graph" /tmp/L/time_*_1.log /tmp/L/time_*_2.log | cut -c1-130
cp /tmp/after.so $P
bash scripts/triton_cache.sh save $OUT/triton_cache.tar.xz
tar -C /tmp/L -cJf $OUT/logs.tar.xz .
