. .carry/b/prep.sh
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$SECONDS
(cd build/hopper && timeout 170 ctest -L ring_softmax_cuda -E "two_gpus|racecheck|knob" --timeout 160 --output-on-failure) > $OUT/ctest_ring.log 2>&1
echo "ctest exit $? in $((SECONDS-t0)) s"; grep -E "Test +#|tests passed" $OUT/ctest_ring.log | sed -E 's/\s+/ /g' | cut -c1-110
grep -E "fp16" $OUT/ctest_ring.log | head -12 | cut -c1-160
export PYTHONPATH=/work/main/build/hopper/python
timeout 90 $GB --python sdpa.cudnn=glabench.sdpa:cudnn bench --backend ring_softmax_cuda --backend sdpa.cudnn --op softmax_attn --shape 4,2048,16,128,128 --dtype fp16 --dtype bf16 --timing graph --time-cap 0.1 --json $OUT/bench_ring.json > $OUT/bench_ring.log 2>&1
echo "bench exit $? at $((SECONDS-t0)) s"; grep -E "B[0-9]+ T" $OUT/bench_ring.log | cut -c1-150
xz -9 $OUT/ctest_ring.log
# ---- call 2 (the same machine, warm)
. .carry/b/prep.sh; date -u; $GB verify --backend ring_softmax_cuda --op softmax_attn --dtype fp16 --fixture datasets/fixtures > $OUT/verify_fp16_auto.txt 2>&1; echo "auto exit $?"; RING_SOFTMAX_CUDA_BLOCK=own RING_SOFTMAX_CUDA_SHARDS=3 RING_SOFTMAX_CUDA_LAYOUT=zigzag $GB verify --backend ring_softmax_cuda --op softmax_attn --dtype fp16 --fixture datasets/fixtures > $OUT/verify_fp16_own3.txt 2>&1; echo "own3 exit $?"; build/hopper/backends/ring_softmax_cuda/ring_shard_equality_test > $OUT/shard_equality.txt 2>&1; echo "shard exit $?"
