# The calls of this report, in order, each run from the repository root on the device.
#
# .carry/prep.sh, sourced first by each call: links the carried build (this machine's
# build/hopper, trimmed by scripts/carry_build.sh) at build/hopper, unpacks its runtime
# libraries, sources scripts/gpu_runtime_env.sh build/hopper and sets GB=build/hopper/glabench.
# .carry/v/NAME/: the A/B plugins, xz-compressed. .whl/: fla-core 0.6.0 and einops wheels.
# Call 1's A/B found no plugins to swap in (the glob missed .carry/v/*/): its four benches all ran 62ca674.

# ---- call 1: .carry/call1.sh
# 62ca674 (mid) vs f4b3fb0 (slo: S single) vs a8b4210 (before): bf16 16-bit ctests on mid, A/B/C bench, accuracy, ncu of mid's walk
set -u
. .carry/prep.sh
L=/tmp/L; mkdir -p $L
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; }
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
cp $P /tmp/mid.so
for v in before slo; do cp .carry/v/$v/glabench_backend_chunked_fuse_cuda.so /tmp/$v.so; done
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; for v in mid slo before; do echo "$v $(strings /tmp/$v.so | grep -m1 -E '^[0-9a-f]{12}(-dirty)?$')"; done; } > $L/env.txt
(cd build/hopper && timeout 150 ctest -L chunked_fuse_cuda -LE "multi_gpu|sanitizer" -R "(bf16|fp16)$|verify_fused|verify_rwkv6_fused|decode|packed" -j8 --output-on-failure > $L/ctest_16bit.log 2>&1); st ctest_16bit $?
C="--timing graph --time-cap 0.1 --max-call-seconds 60 --dtype bf16"
for v in mid slo before mid2; do
  cp /tmp/${v%2}.so $P
  timeout 70 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --gates all $C --json $L/t_$v.json > $L/t_$v.log 2>&1; st t_$v $?
done
for v in mid slo before; do
  cp /tmp/$v.so $P
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --op rwkv6 --shape 2,1024,4,128,128 --gates all --mode fwd --timing graph --time-cap 0.02 --dtype bf16 --json $L/acc_$v.json > $L/acc_$v.log 2>&1; st acc_$v $?
done
cp /tmp/mid.so $P
N="--backend chunked_fuse_cuda --op gla --dtype bf16 --mode fwd --timing eager --min-reps 1 --max-reps 1 --warmup 0 --max-call-seconds 60"
for g in mild fla strong; do
  timeout 60 ncu --target-processes all --metrics gpu__time_duration.sum --csv $GB bench $N --shape 2,16384,16,128,128 --gates $g > $L/ncu_b2_$g.csv 2> $L/ncu_b2_$g.err; st ncu_b2_$g $?
done
timeout 120 ncu --target-processes all -k regex:chunk_walk_bf16_kernel --launch-count 1 --set full --import-source no -o /tmp/walk $GB bench $N --shape 4,2048,16,128,128 --gates fla > $L/ncu_full.log 2>&1; st ncu_full $?
ncu -i /tmp/walk.ncu-rep --page details > $L/walk_details.txt 2>&1
ncu -i /tmp/walk.ncu-rep --page source --csv --print-source sass 2>/dev/null | xz > $L/walk_sass.csv.xz
tar -C $L -cJf $OUT/logs.tar.xz .
grep -hE " (fwd|fwdbwd) " $L/t_*.log | cut -c1-130
tail -3 $L/ctest_16bit.log; grep -E "Failed|\*\*\*" $L/ctest_16bit.log | head
grep -E "Duration|Registers Per|Achieved Occ|Issue Slots Busy|Executed Ipc A" $L/walk_details.txt | head
cat $L/env.txt $L/steps.txt

# ---- call 2: .carry/call2.sh
# A/B/C in one call: a8b4210 (before) vs f4b3fb0 (slo: S single) vs 62ca674 (mid), bf16 graph, all gates; accuracy of each
set -u
. .carry/prep.sh
L=/tmp/L; mkdir -p $L
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; }
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
cp $P /tmp/mid.so
for v in before slo; do xz -dc .carry/v/$v/glabench_backend_chunked_fuse_cuda.so.xz > /tmp/$v.so; done
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; for v in mid slo before; do echo "$v $(strings /tmp/$v.so | grep -m1 -E '^[0-9a-f]{12}(-dirty)?$')"; done; } > $L/env.txt
C="--timing graph --time-cap 0.1 --max-call-seconds 60 --dtype bf16"
for v in before slo mid; do
  cp /tmp/$v.so $P
  timeout 70 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --gates all $C --json $L/t_$v.json > $L/t_$v.log 2>&1; st t_$v $?
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --op rwkv6 --shape 2,1024,4,128,128 --gates all --mode fwd --timing graph --time-cap 0.02 --dtype bf16 --json $L/acc_$v.json > $L/acc_$v.log 2>&1; st acc_$v $?
done
cp /tmp/mid.so $P
tar -C $L -cJf $OUT/logs.tar.xz .
for v in before slo mid; do echo "== $v"; grep -hE " (fwd|fwdbwd) " $L/t_$v.log | cut -c20-95; done
cat $L/env.txt $L/steps.txt

# ---- call 3: .carry/call3.sh
# 10731ee (keys) vs 01b7a45 (mid2) vs a8b4210 (before): chunked ctest (all but multi-GPU), sanitizers of the fused path on keys, A/B/C bench, accuracy, ncu of keys's walk
set -u
. .carry/prep.sh
L=/tmp/L3; mkdir -p $L
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; }
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
cp $P /tmp/keys.so
for v in before mid2; do xz -dc .carry/v/$v/glabench_backend_chunked_fuse_cuda.so.xz > /tmp/$v.so; done
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; for v in keys mid2 before; do echo "$v $(strings /tmp/$v.so | grep -m1 -E '^[0-9a-f]{12}(-dirty)?$')"; done; } > $L/env.txt
(cd build/hopper && timeout 170 ctest -L chunked_fuse_cuda -LE "multi_gpu|sanitizer" -j8 --output-on-failure > $L/ctest.log 2>&1); st ctest $?
tar -C $L -cJf $OUT/logs.tar.xz .
C="--timing graph --time-cap 0.1 --max-call-seconds 60 --dtype bf16"
for v in before mid2 keys; do
  cp /tmp/$v.so $P
  timeout 70 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --gates all $C --json $L/t_$v.json > $L/t_$v.log 2>&1; st t_$v $?
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --op rwkv6 --shape 2,1024,4,128,128 --gates all --mode fwd --timing graph --time-cap 0.02 --dtype bf16 --json $L/acc_$v.json > $L/acc_$v.log 2>&1; st acc_$v $?
done
cp /tmp/keys.so $P
tar -C $L -cJf $OUT/logs.tar.xz .
N="--backend chunked_fuse_cuda --op gla --dtype bf16 --mode fwd --timing eager --min-reps 1 --max-reps 1 --warmup 0 --max-call-seconds 60"
timeout 90 ncu --target-processes all -k regex:chunk_walk_bf16_kernel --launch-count 1 --set full --import-source no -o /tmp/walk $GB bench $N --shape 4,2048,16,128,128 --gates strong > $L/ncu_full.log 2>&1; st ncu_full $?
ncu -i /tmp/walk.ncu-rep --page details > $L/walk_details.txt 2>&1
ncu -i /tmp/walk.ncu-rep --page source --csv --print-source sass 2>/dev/null | xz > $L/walk_sass.csv.xz
(cd build/hopper && timeout 200 ctest -R "compute_sanitizer_(memcheck|racecheck|synccheck)_fused" -j3 --output-on-failure > $L/sanitizers.log 2>&1); st sanitizers $?
tar -C $L -cJf $OUT/logs.tar.xz .
for v in before mid2 keys; do echo "== $v"; grep -hE " (fwd|fwdbwd) " $L/t_$v.log | cut -c20-95; done
tail -3 $L/ctest.log; grep -E "Failed|\*\*\*" $L/ctest.log | head; tail -3 $L/sanitizers.log
cat $L/env.txt $L/steps.txt

# ---- call 4: .carry/call4.sh
# 8657024 (end: one reference at the chunk's end for mild chunks, S single) vs a8b4210 (before): 16-bit ctests, A/B bench, accuracy, sanitizers of the fused path
set -u
. .carry/prep.sh
L=/tmp/L4; mkdir -p $L
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; }
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
cp $P /tmp/end.so
xz -dc .carry/v/before/glabench_backend_chunked_fuse_cuda.so.xz > /tmp/before.so
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; for v in end before; do echo "$v $(strings /tmp/$v.so | grep -m1 -E '^[0-9a-f]{12}(-dirty)?$')"; done; } > $L/env.txt
(cd build/hopper && timeout 150 ctest -L chunked_fuse_cuda -LE "multi_gpu|sanitizer" -R "(bf16|fp16)$|verify_fused|verify_rwkv6_fused|decode|packed" -j8 --output-on-failure > $L/ctest_16bit.log 2>&1); st ctest_16bit $?
C="--timing graph --time-cap 0.1 --max-call-seconds 60 --dtype bf16"
for v in before end; do
  cp /tmp/$v.so $P
  timeout 70 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --gates all $C --json $L/t_$v.json > $L/t_$v.log 2>&1; st t_$v $?
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --op rwkv6 --shape 2,1024,4,128,128 --gates all --mode fwd --timing graph --time-cap 0.02 --dtype bf16 --json $L/acc_$v.json > $L/acc_$v.log 2>&1; st acc_$v $?
done
cp /tmp/end.so $P
timeout 40 $GB bench --backend chunked_fuse_cuda --op rwkv6 --shape 4,2048,16,128,128 --shape 4,1024,4,100,100 --gates mild,fla,strong $C --json $L/t_rwkv6_end.json > $L/t_rwkv6_end.log 2>&1; st t_rwkv6_end $?
tar -C $L -cJf $OUT/logs.tar.xz .
(cd build/hopper && timeout 200 ctest -R "compute_sanitizer_(memcheck|racecheck|synccheck)_fused" -j3 --output-on-failure > $L/sanitizers.log 2>&1); st sanitizers $?
tar -C $L -cJf $OUT/logs.tar.xz .
for v in before end; do echo "== $v"; grep -hE " (fwd|fwdbwd) " $L/t_$v.log | cut -c20-95; done
grep -hE " (fwd|fwdbwd) " $L/t_rwkv6_end.log | cut -c20-95
tail -3 $L/ctest_16bit.log; grep -E "Failed|\*\*\*" $L/ctest_16bit.log | head; tail -3 $L/sanitizers.log
cat $L/env.txt $L/steps.txt

# ---- call 5: .carry/call5.sh
# 8657024 beside fla chunk_gla (fla-core 0.6.0, tuned at the shape in this call): B2 T16384 H16 D128 bf16, five regimes, fwd and fwd+bwd, device time
set -u
. .carry/prep.sh
L=/tmp/L5; mkdir -p $L
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; }
pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl > $L/pip.log 2>&1; st pip $?
export PYTHONPATH=/tmp/site:/work/main/build/hopper/python TRITON_CACHE_DIR=/tmp/triton TRITON_CACHE_AUTOTUNING=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; strings build/hopper/backends/glabench_backend_chunked_fuse_cuda.so | grep -m1 -E '^[0-9a-f]{12}(-dirty)?$'; python3 -c "import fla, torch, triton; print('fla', fla.__version__, 'torch', torch.__version__, 'triton', triton.__version__)"; } > $L/env.txt 2>&1
FLA="--python fla.chunk_gla=glabench.fla:chunk_gla"
timeout 390 $GB $FLA bench --backend chunked_fuse_cuda --backend fla.chunk_gla --op gla --shape 2,16384,16,128,128 --gates all --dtype bf16 --timing graph --time-cap 0.1 --max-call-seconds 300 --json $L/b2_fla.json > $L/b2_fla.log 2>&1; st b2_fla $?
tar -C $L -cJf $OUT/logs.tar.xz .
bash scripts/triton_cache.sh save $OUT/triton_cache.tar.xz > /dev/null 2>&1
grep -hE " (fwd|fwdbwd) " $L/b2_fla.log | cut -c1-110
cat $L/env.txt $L/steps.txt
