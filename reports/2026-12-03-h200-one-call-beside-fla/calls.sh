# The calls of this report, in order, each run from the repository root on the device.

# .carry/prep.sh, sourced first by each call: links the carried build (this machine's
# build/hopper, trimmed by scripts/carry_build.sh) at build/hopper, unpacks its runtime
# libraries, installs the carried wheels with pip --no-index --target /tmp/site, sources
# scripts/gpu_runtime_env.sh build/hopper and sets GB=build/hopper/glabench.

# call 1: bash call_fla.sh 4,2048,16,128,128 b4 560   call 2: bash call_fla.sh 2,16384,16,128,128 b2 550
# call_fla.sh
# fla chunk_gla beside chunked_fuse_cuda, one shape, fla tuned at that shape (fresh Triton cache), every regime, fwd and fwd+bwd
set -u
SHAPE=$1; TAG=$2; LIMIT=${3:-540}
. .carry/prep.sh
cd /work/main
export PYTHONPATH=/tmp/site:/work/main/build/hopper/python TRITON_CACHE_DIR=/tmp/triton_$TAG TRITON_CACHE_AUTOTUNING=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch,triton;print('torch',torch.__version__,'triton',triton.__version__)"; } > $OUT/env_$TAG.txt
P="--python fla.chunk_gla=glabench.fla:chunk_gla"
C="--dtype bf16 --timing graph --time-cap 0.1 --max-call-seconds 3600"
timeout $LIMIT $GB $P bench --backend chunked_fuse_cuda --backend fla.chunk_gla --op gla --shape $SHAPE --gates all $C --json $OUT/$TAG.json > $OUT/$TAG.log 2>&1
echo "bench exit $? at $SECONDS s" >> $OUT/env_$TAG.txt
(cd /tmp && find triton_$TAG -name "*.autotune.json" | tar -cJf $OUT/${TAG}_fla_autotune.tar.xz -T -)
grep -hE "graph" $OUT/$TAG.log | cut -c1-160
cat $OUT/env_$TAG.txt

# call 3
# the chunked tests on the GPU (sanitizers included)
set -u
. .carry/prep.sh
cd /work/main
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $OUT/env7.txt
(cd build/hopper && timeout 400 ctest -L chunked_fuse_cuda -LE multi_gpu -j8 --output-on-failure > $OUT/ctest.log 2>&1); echo "ctest exit $? at $SECONDS s" >> $OUT/env7.txt
tail -4 $OUT/ctest.log; grep -E "Failed|\*\*\*" $OUT/ctest.log | head -20
cat $OUT/env7.txt

# call 4: bash call_rwkv6.sh 4,2048,16,128,128 rwkv6_b4 420
# call_rwkv6.sh
# rwkv6: fla chunk_rwkv6 beside chunked_fuse_cuda, tuned at the shape, every regime
set -u
SHAPE=$1; TAG=$2; LIMIT=${3:-400}
. .carry/prep.sh
cd /work/main
export PYTHONPATH=/tmp/site:/work/main/build/hopper/python TRITON_CACHE_DIR=/tmp/triton_$TAG TRITON_CACHE_AUTOTUNING=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $OUT/env_$TAG.txt
P="--python fla.chunk_rwkv6=glabench.fla:chunk_rwkv6"
C="--dtype bf16 --timing graph --time-cap 0.1 --max-call-seconds 3600"
timeout $LIMIT $GB $P bench --backend chunked_fuse_cuda --backend fla.chunk_rwkv6 --op rwkv6 --shape $SHAPE --gates all $C --json $OUT/$TAG.json > $OUT/$TAG.log 2>&1
echo "bench exit $? at $SECONDS s" >> $OUT/env_$TAG.txt
grep -hE "graph" $OUT/$TAG.log | cut -c1-160
cat $OUT/env_$TAG.txt
