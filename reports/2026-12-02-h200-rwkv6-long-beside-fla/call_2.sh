. .carry/b/prep.sh
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .carry/b/whl/*.whl
export PYTHONPATH=/tmp/site:/work/main/build/hopper/python TRITON_CACHE_DIR=/tmp/triton TRITON_CACHE_AUTOTUNING=1
t0=$SECONDS
timeout 530 $GB --python fla.chunk_rwkv6=glabench.fla:chunk_rwkv6 bench --backend chunked_fuse_cuda --backend fla.chunk_rwkv6 --op rwkv6 --shape 2,16384,16,128,128 --dtype bf16 --gates mild,fla,strong --timing graph --time-cap 0.15 --max-call-seconds 3600 --json $OUT/bench.json > $OUT/bench.log 2>&1
echo "bench exit $? in $((SECONDS-t0)) s"; grep -E "graph" $OUT/bench.log | cut -c1-150
bash scripts/triton_cache.sh save $OUT/triton_cache.tar.xz
python3 scripts/peer_table.py $OUT/bench.json > $OUT/peer_table.md 2>&1; head -30 $OUT/peer_table.md
