. .carry/b/prep.sh
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$SECONDS
(cd build/hopper && timeout 480 ctest -L chunked_fuse_cuda -R "rwkv6|verify_fused|verify_decode|sanitizer|three_ranks|head_groups" --timeout 450 --output-on-failure) > $OUT/ctest.log 2>&1
echo "ctest exit $? in $((SECONDS-t0)) s"; grep -E "tests passed|Failed|\*\*\*|Total Test" $OUT/ctest.log | head -20
xz -9 $OUT/ctest.log
t1=$SECONDS
timeout 120 ncu --target-processes all --metrics gpu__time_duration.sum --print-summary per-kernel \
  $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --dtype fp32 --mode fwdbwd --gates mild --timing eager --min-reps 2 --max-reps 2 --warmup 1 --time-cap 1 > $OUT/ncu_fp32.txt 2>&1
echo "ncu fp32 exit $? in $((SECONDS-t1)) s"
grep -E "^  [a-z_A-Z].*\(|gpu__time_duration.sum" $OUT/ncu_fp32.txt | paste - - | sed -E 's/\s+/ /g' | cut -c1-220 | head -30
xz -9 $OUT/ncu_fp32.txt
# ---- call 2
. .carry/b/prep.sh
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .carry/b/whl/*.whl
export PYTHONPATH=/tmp/site:/work/main/build/hopper/python TRITON_CACHE_DIR=/tmp/triton TRITON_CACHE_AUTOTUNING=1
t0=$SECONDS
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
cp $P /tmp/list.so
SEED="--op rwkv6 --shape 4,1024,4,100,100 --dtype bf16 --gates mild,fla,strong --timing graph --time-cap 0.1"
GLA="--op gla --shape 4,2048,16,128,128 --dtype bf16 --mode fwdbwd --gates mild,strong --timing graph --time-cap 0.1"
timeout 300 $GB --python fla.chunk_rwkv6=glabench.fla:chunk_rwkv6 bench --backend chunked_fuse_cuda --backend fla.chunk_rwkv6 $SEED --max-call-seconds 3600 --json $OUT/seed_list_fla.json > $OUT/seed_list_fla.log 2>&1
echo "seed list+fla exit $? at $((SECONDS-t0)) s"; grep -E "B[0-9]+ T" $OUT/seed_list_fla.log | cut -c1-150
for v in before ft; do cp .carry/b/$v.so $P
timeout 60 $GB bench --backend chunked_fuse_cuda $SEED --json $OUT/seed_$v.json > $OUT/seed_$v.log 2>&1
echo "seed $v exit $? at $((SECONDS-t0)) s"; grep -E "B[0-9]+ T" $OUT/seed_$v.log | cut -c1-150
timeout 60 $GB bench --backend chunked_fuse_cuda $GLA --json $OUT/gla_$v.json > $OUT/gla_$v.log 2>&1
echo "gla $v exit $? at $((SECONDS-t0)) s"; grep -E "B[0-9]+ T" $OUT/gla_$v.log | cut -c1-150
done
cp /tmp/list.so $P
timeout 60 $GB bench --backend chunked_fuse_cuda $GLA --json $OUT/gla_list.json > $OUT/gla_list.log 2>&1
echo "gla list exit $? at $((SECONDS-t0)) s"; grep -E "B[0-9]+ T" $OUT/gla_list.log | cut -c1-150
timeout 60 $GB bench --backend chunked_fuse_cuda $SEED --json $OUT/seed_list2.json > $OUT/seed_list2.log 2>&1
echo "seed list2 exit $? at $((SECONDS-t0)) s"; grep -E "B[0-9]+ T" $OUT/seed_list2.log | cut -c1-150
python3 scripts/peer_table.py $OUT/seed_list_fla.json > $OUT/peer_table.md 2>&1; head -30 $OUT/peer_table.md
