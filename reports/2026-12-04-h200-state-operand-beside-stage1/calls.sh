# The four device calls of 2026-12-04 (night), each run as `bash .carry/call_next.sh` from the
# repository root with .carry (a trimmed build, A/B plugins, Triton's cache) and .whl
# (fla-core 0.6.0, einops) carried. prep.sh links the carried build at build/hopper, unpacks
# its runtime libraries and the plugins (.carry/*/*.so.xz), sources
# scripts/gpu_runtime_env.sh and sets GB=build/hopper/glabench.

# ---- call 1 (20:59 UTC): d934a33 (main) vs 443bf6b (lead), bf16 fwd, both shapes, twice;
# then the chunked ctest, which includes the reference_edges fixtures.
. .carry/prep.sh
L=/tmp/Ln; mkdir -p $L
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; }
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
cp $P /tmp/main.so; cp .carry/v/lead/glabench_backend_chunked_fuse_cuda.so /tmp/lead.so
C="--timing graph --time-cap 0.1 --max-call-seconds 60 --dtype bf16 --mode fwd"
for v in main lead main2 lead2; do
  cp /tmp/${v%2}.so $P
  timeout 40 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --gates all $C --json $L/t_$v.json > $L/t_$v.log 2>&1; st t_$v $?
done
cp /tmp/main.so $P
(cd build/hopper && timeout 200 ctest -L chunked_fuse_cuda -LE "multi_gpu|sanitizer" -j8 --output-on-failure > $L/ctest.log 2>&1); st ctest $?

# ---- call 2 (21:08 UTC): d934a33 vs e4aa918 (early: S's operand beside stage 1 unless the
# last chunk was mild), fwd, twice; e4aa918 beside fla chunk_gla at B4 T2048 (fla tuned here,
# Triton's cache saved); the 16-bit chunked ctest.
. .carry/prep.sh
L=/tmp/Lc2; mkdir -p $L
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:/work/main/build/hopper/python TRITON_CACHE_DIR=/tmp/triton_c2 TRITON_CACHE_AUTOTUNING=1
bash scripts/triton_cache.sh restore .carry/tc/triton_cache.tar.xz   # B2 T16384's, saved 2026-12-04 19:41
cp $P /tmp/early.so; cp .carry/v/main/glabench_backend_chunked_fuse_cuda.so /tmp/main.so
for v in main early main2 early2; do
  cp /tmp/${v%2}.so $P
  timeout 40 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --gates all $C --json $L/t_$v.json > $L/t_$v.log 2>&1; st t_$v $?
done
cp /tmp/early.so $P
FLA="--python fla.chunk_gla=glabench.fla:chunk_gla"
timeout 300 $GB $FLA bench --backend chunked_fuse_cuda --backend fla.chunk_gla --op gla --shape 4,2048,16,128,128 --gates all --dtype bf16 --timing graph --time-cap 0.1 --max-call-seconds 240 --json $L/b4_fla.json > $L/b4_fla.log 2>&1; st b4_fla $?
bash scripts/triton_cache.sh save $OUT/triton_cache.tar.xz
(cd build/hopper && timeout 100 ctest -L chunked_fuse_cuda -LE "multi_gpu|sanitizer" -R "(bf16|fp16)$|verify_fused|verify_rwkv6_fused|decode|packed|reference_edges" -j8 --output-on-failure > $L/ctest.log 2>&1); st ctest $?

# ---- call 3 (21:20 UTC): 534ad0f (walk SASS = d934a33) beside fla chunk_gla (cache from
# call 2: both shapes), fwd and fwd+bwd, five regimes, one bench command; the fused path's
# memcheck, racecheck and synccheck, now with the reference_edges fixtures.
. .carry/prep.sh
L=/tmp/Lc3; mkdir -p $L   # pip, PYTHONPATH and the cache restore as in call 2
timeout 330 $GB $FLA bench --backend chunked_fuse_cuda --backend fla.chunk_gla --op gla --shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --gates all --dtype bf16 --timing graph --time-cap 0.1 --max-call-seconds 150 --json $L/both_fla.json > $L/both_fla.log 2>&1; st both_fla $?
(cd build/hopper && timeout 220 ctest -R "compute_sanitizer_(memcheck|racecheck|synccheck)_fused" -j3 --output-on-failure > $L/sanitizers.log 2>&1); st sanitizers $?

# ---- call 4 (21:31 UTC): 77bbd7e (landed; walk SASS identical to 443bf6b) beside fla
# chunk_gla, fwd, five regimes, both shapes; racecheck and memcheck of the bf16 fused walk.
. .carry/prep.sh
L=$OUT   # pip, PYTHONPATH and the cache restore as in call 2
S="--shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --gates all --dtype bf16 --timing graph --time-cap 0.1"
timeout 100 $GB $FLA bench --backend chunked_fuse_cuda --backend fla.chunk_gla --op gla $S --mode fwd --max-call-seconds 90 --json $L/s1_fla.json > $L/s1_fla.log 2>&1; st s1_fla $?
F=""; for x in gla_basic gla_reference_edges gla_strong_gates gla_mixed_gates gla_no_h0 rwkv6_reference_edges rwkv6_strong_gates; do F="$F --fixture datasets/fixtures/$x.h5"; done
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in racecheck memcheck; do
  CHUNKED_FUSE_CUDA_STAGES=fused timeout 45 $SAN --tool $tool --error-exitcode 1 $GB verify --backend chunked_fuse_cuda --dtype bf16 --no-gradcheck $F > $L/$tool.log 2>&1; st $tool $?
done
