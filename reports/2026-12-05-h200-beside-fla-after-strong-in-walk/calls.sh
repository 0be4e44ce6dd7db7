# The two calls of 2026-12-05 04:09 and 04:17 UTC on one warm H200 (`run`, carry .carry/b —
# main c938d1c's build —, .carry/tc (fla's Triton cache), .carry/prep.sh, the script, .whl:
# fla-core 0.6.0 and einops wheels). prep.sh links the carried build at build/hopper.

## call 1: bash .carry/call_next.sh
# fused path; the whole chunked ctest.
set -u
. .carry/prep.sh
L=/tmp/L; mkdir -p $L  # logs, packed into $OUT/logs.tar.xz after every step ($OUT takes 8 files)
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; tar -C $L -cJf $OUT/logs.tar.xz .; }
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl > $L/pip.log 2>&1; st pip $?
export PYTHONPATH=/tmp/site:/work/main/build/hopper/python TRITON_CACHE_DIR=/tmp/triton_n1 TRITON_CACHE_AUTOTUNING=1
bash scripts/triton_cache.sh restore .carry/tc/triton_cache.tar.xz > $L/tc.log 2>&1
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; strings $P | grep -m1 -E '^[0-9a-f]{12}(-dirty)?$'; } > $L/env.txt 2>&1
S="--shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --gates all --dtype bf16 --timing graph --time-cap 0.1"
FLA="--python fla.chunk_gla=glabench.fla:chunk_gla"
timeout 220 $GB $FLA bench --backend chunked_fuse_cuda --backend fla.chunk_gla --op gla $S --max-call-seconds 150 --json $L/both_fla.json > $L/both_fla.log 2>&1; st both_fla $?
(cd build/hopper && timeout 170 ctest -R "compute_sanitizer_(memcheck|racecheck|synccheck)_fused" -j3 --output-on-failure > $L/sanitizers.log 2>&1); st sanitizers $?
(cd build/hopper && timeout 150 ctest -L chunked_fuse_cuda -LE "multi_gpu|sanitizer" -j8 --output-on-failure > $L/ctest.log 2>&1); st ctest $?
python3 scripts/peer_table.py $L/both_fla.json | tail -12
tail -n 3 $L/ctest.log; tail -n 8 $L/sanitizers.log; cat $L/env.txt $L/steps.txt

## call 2: bash .carry/call_rwkv6_seed.sh
set -u
. .carry/prep.sh
L=/tmp/L; mkdir -p $L  # logs, packed into $OUT/logs.tar.xz after every step ($OUT takes 8 files)
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; tar -C $L -cJf $OUT/logs.tar.xz .; }
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl > $L/pip.log 2>&1; st pip $?
export PYTHONPATH=/tmp/site:/work/main/build/hopper/python TRITON_CACHE_DIR=/tmp/triton_rs TRITON_CACHE_AUTOTUNING=1
bash scripts/triton_cache.sh restore .carry/tc/triton_cache.tar.xz > $L/tc.log 2>&1
FLA="--python fla.chunk_rwkv6=glabench.fla:chunk_rwkv6"
timeout 480 $GB $FLA bench --backend chunked_fuse_cuda --backend fla.chunk_rwkv6 --op rwkv6 --shape 4,1024,4,100,100 --gates mild --gates fla --gates strong --dtype bf16 --timing graph --time-cap 0.1 --max-call-seconds 420 --json $L/seed_fla.json > $L/seed_fla.log 2>&1; st seed_fla $?
bash scripts/triton_cache.sh save $OUT/triton_cache.tar.xz > $L/tcs.log 2>&1
python3 scripts/peer_table.py $L/seed_fla.json | tail -8; cat $L/steps.txt
