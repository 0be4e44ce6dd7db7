set -u
. .carry/prep.sh
cd /work/main
export PYTHONPATH=/tmp/site:/work/main/build/hopper/python TRITON_CACHE_DIR=/tmp/triton TRITON_CACHE_AUTOTUNING=1
bash scripts/triton_cache.sh restore .carry/triton_cache.tar.xz
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $OUT/env.txt
P="--python fla.chunk_gla=glabench.fla:chunk_gla --python fla.chunk_rwkv6=glabench.fla:chunk_rwkv6"
C="--dtype bf16 --timing graph --time-cap 0.1 --max-call-seconds 3600"
left() { echo $((580 - SECONDS)); }
st() { echo "$1 exit $2 at $SECONDS s" | tee -a $OUT/steps.txt; }
# Triton's own keys: fla keeps the configurations of the carried cache (tuned at another shape)
GLABENCH_AUTOTUNE_SCOPE=kernel timeout 90 $GB $P bench --backend chunked_fuse_cuda --backend fla.chunk_gla --op gla --shape 4,2048,16,128,128 --gates mild $C --json $OUT/gla_kernel_scope.json > $OUT/gla_kernel_scope.log 2>&1; st gla_kernel_scope $?
# per shape (the default): fla tunes at each shape
timeout 300 $GB $P bench --backend chunked_fuse_cuda --backend fla.chunk_gla --op gla --shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --gates all $C --json $OUT/gla.json > $OUT/gla.log 2>&1; st gla $?
for s in 2,16384,16,128,128 4,2048,16,128,128; do
  timeout $(left) $GB $P bench --backend chunked_fuse_cuda --backend fla.chunk_rwkv6 --op rwkv6 --shape $s --gates mild,fla,strong $C --json $OUT/rwkv6_${s%%,*}.json > $OUT/rwkv6_${s%%,*}.log 2>&1; st rwkv6_$s $?
done
grep -hE "graph" $OUT/*.log | cut -c1-120
