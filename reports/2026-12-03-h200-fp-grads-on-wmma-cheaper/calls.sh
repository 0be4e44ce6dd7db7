# The calls of this report, in order, each run from the repository root on the device.
#
# .carry/prep.sh, sourced first by each call: links the carried build (this machine's
# build/hopper, trimmed by scripts/carry_build.sh) at build/hopper, unpacks its runtime
# libraries, installs the carried wheels (fla-core 0.6.0, einops) with pip --no-index
# --target /tmp/site, sources scripts/gpu_runtime_env.sh build/hopper and sets GB=build/hopper/glabench.
# .carry/fla_tuned/: the Triton autotune files fla wrote when tuned at each shape in
# ../2026-12-03-h200-one-call-beside-fla/ (its calls 1 and 2, same GPU kind, triton 3.6.0).

# ---- call 1: .carry/call9.sh
# A/B of the forward's non-mild prepare (new plugin vs bf3bc74's) beside fla (tuned configs from the 12-03 12:03 call, carried), then ncu of fp32's backward
set -u
. .carry/prep.sh
cd /work/main
for t in b4 b2; do tar -C /tmp -xJf .carry/fla_tuned/${t}_fla_autotune.tar.xz; done
export PYTHONPATH=/tmp/site:/work/main/build/hopper/python TRITON_CACHE_AUTOTUNING=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; strings build/hopper/backends/glabench_backend_chunked_fuse_cuda.so | grep -m1 -E "^[0-9a-f]{12}$"; } > $OUT/env9.txt
P="--python fla.chunk_gla=glabench.fla:chunk_gla"
C="--dtype bf16 --timing graph --time-cap 0.1 --max-call-seconds 3600"
for s in "4,2048,16,128,128 b4" "2,16384,16,128,128 b2"; do set -- $s
  TRITON_CACHE_DIR=/tmp/triton_$2 timeout 200 $GB $P bench --backend chunked_fuse_cuda --backend fla.chunk_gla --op gla --shape $1 --gates all $C --json $OUT/new_$2.json > $OUT/new_$2.log 2>&1
  echo "new $2 exit $? at $SECONDS s" >> $OUT/env9.txt
done
cp build/hopper/backends/glabench_backend_chunked_fuse_cuda.so /tmp/new.so
cp .carry/old/glabench_backend_chunked_fuse_cuda.so build/hopper/backends/
for s in "4,2048,16,128,128 b4" "2,16384,16,128,128 b2"; do set -- $s
  timeout 100 $GB bench --backend chunked_fuse_cuda --op gla --shape $1 --gates all $C --json $OUT/old_$2.json > $OUT/old_$2.log 2>&1
  echo "old $2 exit $? at $SECONDS s" >> $OUT/env9.txt
done
cp /tmp/new.so build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
# fp32 backward: every kernel's time, then dq/dk/dg's hot spots
N="--backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --dtype fp32 --mode fwdbwd --gates mild --timing eager --min-reps 1 --max-reps 1 --warmup 0"
timeout 120 ncu --target-processes all --metrics gpu__time_duration.sum --csv $GB bench $N > $OUT/fp32_kernels.csv 2> $OUT/ncu1.err
echo "ncu1 exit $? at $SECONDS s" >> $OUT/env9.txt
timeout 150 ncu --target-processes all -k regex:chunk_dq_dk_dg --launch-count 1 --set full --import-source no -o /tmp/dq $GB bench $N > $OUT/ncu2.log 2>&1
echo "ncu2 exit $? at $SECONDS s" >> $OUT/env9.txt
ncu -i /tmp/dq.ncu-rep --page details > $OUT/dq_details.txt 2>&1
ncu -i /tmp/dq.ncu-rep --page source --csv --print-source sass 2>/dev/null | xz > $OUT/dq_sass.csv.xz
grep -hE "graph" $OUT/new_*.log $OUT/old_*.log | cut -c1-150
cat $OUT/env9.txt

# ---- call 2: .carry/call10.sh
# A/B: this build (fp32 WMMA splits, wide V-loop loads, stack rows without loops, the forward's j pairing) vs bf3bc74's plugin; bf16 beside fla (fla's configs tuned in the 12-03 12:03 call, carried)
set -u
. .carry/prep.sh
cd /work/main
for t in b4 b2; do tar -C /tmp -xJf .carry/fla_tuned/${t}_fla_autotune.tar.xz; done
export PYTHONPATH=/tmp/site:/work/main/build/hopper/python TRITON_CACHE_AUTOTUNING=1
L=/tmp/L; mkdir -p $L
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; }
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; strings $P | grep -m1 -E "^[0-9a-f]{12}$"; } > $L/env.txt
cp $P /tmp/new.so
FLA="--python fla.chunk_gla=glabench.fla:chunk_gla"
C="--timing graph --time-cap 0.1 --max-call-seconds 60"
B4="--shape 4,2048,16,128,128"; B2="--shape 2,16384,16,128,128"
for s in "4,2048,16,128,128 b4" "2,16384,16,128,128 b2"; do set -- $s
  TRITON_CACHE_DIR=/tmp/triton_$2 timeout 200 $GB $FLA bench --backend chunked_fuse_cuda --backend fla.chunk_gla --op gla --shape $1 --gates all --dtype bf16 $C --json $L/bf16_new_$2.json > $L/bf16_new_$2.log 2>&1; st bf16_new_$2 $?
done
for v in new old; do
  if [ $v = old ]; then cp .carry/old/glabench_backend_chunked_fuse_cuda.so $P; else cp /tmp/new.so $P; fi
  timeout 100 $GB bench --backend chunked_fuse_cuda --op gla $B4 --gates all --dtype fp32 --mode fwdbwd $C --json $L/fp32_b4_$v.json > $L/fp32_b4_$v.log 2>&1; st fp32_b4_$v $?
  timeout 100 $GB bench --backend chunked_fuse_cuda --op gla $B2 --gates mild,strong,cliff --dtype fp32 --mode fwdbwd $C --json $L/fp32_b2_$v.json > $L/fp32_b2_$v.log 2>&1; st fp32_b2_$v $?
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla $B4 --gates mild,strong --dtype fp64 --mode fwdbwd $C --json $L/fp64_b4_$v.json > $L/fp64_b4_$v.log 2>&1; st fp64_b4_$v $?
  if [ $v = old ]; then
    timeout 60 $GB bench --backend chunked_fuse_cuda --op gla $B4 $B2 --gates all --dtype bf16 $C --json $L/bf16_old.json > $L/bf16_old.log 2>&1; st bf16_old $?
  fi
done
cp /tmp/new.so $P
N="--backend chunked_fuse_cuda --op gla $B4 --dtype fp32 --mode fwdbwd --gates mild --timing eager --min-reps 1 --max-reps 1 --warmup 0 --max-call-seconds 60"
timeout 100 ncu --target-processes all -k regex:chunk_dq_dk_dg --launch-count 1 --set full --import-source no -o /tmp/dq $GB bench $N > $L/ncu.log 2>&1; st ncu $?
ncu -i /tmp/dq.ncu-rep --page details > $L/dq_details.txt 2>&1
ncu -i /tmp/dq.ncu-rep --page source --csv --print-source sass 2>/dev/null | xz > $OUT/dq_sass.csv.xz
tar -C $L -cJf $OUT/logs.tar.xz .
grep -hE " (fwd|fwdbwd) " $L/*.log | cut -c1-150
grep -E "Duration|Registers Per|Achieved Occ" $L/dq_details.txt
cat $L/env.txt $L/steps.txt

# ---- call 3: .carry/call11.sh
# A/B of the vectorized slab stores (this build vs f3bf7e5's plugin), then the chunked ctests (sanitizers included)
set -u
. .carry/prep.sh
cd /work/main
L=/tmp/L; mkdir -p $L
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; }
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; strings $P | grep -m1 -E "^[0-9a-f]{12}$"; } > $L/env.txt
cp $P /tmp/new.so
C="--timing graph --time-cap 0.1 --max-call-seconds 60"
B4="--shape 4,2048,16,128,128"
for v in new prev new2; do
  if [ $v = prev ]; then cp .carry/prev/glabench_backend_chunked_fuse_cuda.so $P; else cp /tmp/new.so $P; fi
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla $B4 --gates all --dtype fp32 --mode fwdbwd $C --json $L/fp32_b4_$v.json > $L/fp32_b4_$v.log 2>&1; st fp32_b4_$v $?
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla $B4 --gates mild,strong --dtype fp64 --dtype bf16 --mode fwdbwd $C --json $L/fp64_bf16_b4_$v.json > $L/fp64_bf16_b4_$v.log 2>&1; st fp64_bf16_b4_$v $?
done
cp /tmp/new.so $P
(cd build/hopper && timeout 330 ctest -L chunked_fuse_cuda -LE multi_gpu -j8 --output-on-failure > $L/ctest.log 2>&1); st ctest $?
tar -C $L -cJf $OUT/logs.tar.xz .
grep -hE " (fwd|fwdbwd) " $L/*.log | cut -c1-120
tail -4 $L/ctest.log; grep -E "Failed|\*\*\*" $L/ctest.log | head -20
cat $L/env.txt $L/steps.txt

# ---- call 4: .carry/call12.sh
# the final build: fp32 at B2 T16384, then the chunked ctests (sanitizers included)
set -u
. .carry/prep.sh
cd /work/main
L=/tmp/L; mkdir -p $L
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; }
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; strings $P | grep -m1 -E "^[0-9a-f]{12}$"; } > $L/env.txt
timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --shape 2,16384,16,128,128 --gates mild,strong,cliff --dtype fp32 --mode fwdbwd --timing graph --time-cap 0.1 --max-call-seconds 60 --json $L/fp32_b2.json > $L/fp32_b2.log 2>&1; st fp32_b2 $?
(cd build/hopper && timeout 320 ctest -L chunked_fuse_cuda -LE multi_gpu -j8 --output-on-failure > $L/ctest.log 2>&1); st ctest $?
tar -C $L -cJf $OUT/logs.tar.xz .
grep -hE " (fwd|fwdbwd) " $L/*.log | cut -c1-120
tail -4 $L/ctest.log; grep -E "Failed|\*\*\*" $L/ctest.log | head -20
cat $L/env.txt $L/steps.txt

