set -u
. .carry/prep.sh
cd /work/main
export PYTHONPATH=/tmp/site:/work/main/build/hopper/python TRITON_CACHE_DIR=/tmp/triton TRITON_CACHE_AUTOTUNING=1
bash scripts/triton_cache.sh restore .carry/triton_cache.tar.xz
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log -1 --format=%h 2>/dev/null; } | tee $OUT/env.txt
P="--python fla.chunk_gla=glabench.fla:chunk_gla --python fla.chunk_rwkv6=glabench.fla:chunk_rwkv6"
C="--dtype bf16 --timing graph --time-cap 0.1 --max-call-seconds 3600"
left() { echo $((575 - SECONDS)); }
st() { echo "$1 exit $2 at $SECONDS s" | tee -a $OUT/steps.txt; }
timeout 250 $GB $P bench --backend chunked_fuse_cuda --backend fla.chunk_gla --op gla --shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --gates all $C --json $OUT/gla.json > $OUT/gla.log 2>&1; st gla $?
bash scripts/triton_cache.sh save $OUT/triton_cache.tar.xz
timeout $(( $(left) - 120 )) $GB $P bench --backend chunked_fuse_cuda --backend fla.chunk_rwkv6 --op rwkv6 --shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --gates mild,fla,strong $C --json $OUT/rwkv6.json > $OUT/rwkv6.log 2>&1; st rwkv6 $?
bash scripts/triton_cache.sh save $OUT/triton_cache.tar.xz
timeout $(( $(left) - 25 )) $GB $P bench --backend chunked_fuse_cuda --backend fla.chunk_rwkv6 --op rwkv6 --shape 2,1024,4,128,128 --gates all --mode fwdbwd --dtype bf16 --timing graph --time-cap 0.05 --max-call-seconds 3600 --json $OUT/rwkv6_acc.json > $OUT/rwkv6_acc.log 2>&1; st rwkv6_acc $?
bash scripts/triton_cache.sh save $OUT/triton_cache.tar.xz
grep -hE "graph" $OUT/gla.log $OUT/rwkv6.log | cut -c1-150
