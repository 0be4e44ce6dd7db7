# The two calls of 2026-12-05 (04:41 and 04:47 UTC, fresh machines; `run`). prep.sh links
# the carried build (main c938d1c) at build/hopper; each variant's plugin came xz'd in .carry/v/.

## call 1: bash .carry/call_rw.sh (carry .carry/b, .carry/v/rw = 0ae9c0d, prep.sh, the script)
set -u
. .carry/prep.sh
L=/tmp/L; rm -rf $L; mkdir -p $L
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; tar -C $L -cJf $OUT/logs.tar.xz .; }
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
cp $P /tmp/old.so; xz -dc .carry/v/rw/glabench_backend_chunked_fuse_cuda.so.xz > /tmp/new.so; cp /tmp/new.so $P
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; for f in /tmp/old.so /tmp/new.so; do echo "$f $(strings $f | grep -m1 -E '^[0-9a-f]{12}(-dirty)?$')"; done; } > $L/env.txt 2>&1
(cd build/hopper && timeout 150 ctest -L chunked_fuse_cuda -LE "multi_gpu|sanitizer" -R "rwkv6|varlen|packed|graph_replay|decode" -j8 --output-on-failure > $L/ctest.log 2>&1); st ctest $?
F=datasets/fixtures; FX=""; for n in basic mixed_gates strong_gates reference_edges varlen no_h0 k100; do FX="$FX $F/rwkv6_$n.h5"; done
for run in memcheck:fused racecheck:fused synccheck:fused memcheck:separate; do
  CHUNKED_FUSE_CUDA_STAGES=${run#*:} timeout 120 bash backends/common/tests/sanitizer_test.sh ${run%:*} $GB chunked_fuse_cuda $FX > $L/san_${run/:/_}.log 2>&1; st san_${run/:/_} $?
done
S="--op rwkv6 --dtype bf16 --timing graph --time-cap 0.1 --gates mild --gates fla --gates strong"
for r in 1 2; do for v in old new; do
  cp /tmp/$v.so $P
  timeout 100 $GB bench --backend chunked_fuse_cuda $S --shape 4,1024,4,100,100 --shape 4,2048,16,128,128 --shape 1,16384,16,128,128:512+1536+1024+2048+768+1280+3072+256+2560+896+1152+640+384+256 --json $L/b_${v}_$r.json > $L/b_${v}_$r.log 2>&1; st b_${v}_$r $?
done; done
cp /tmp/new.so $P
NCU="ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum -k regex:walk|shift|terms|prologue|decay|prepare|inner|combine|state|grads|dstate|listed"
timeout 90 $NCU $GB --no-isolate bench --backend chunked_fuse_cuda --op rwkv6 --shape 4,1024,4,100,100 --dtype bf16 --mode fwdbwd --gates mild --timing eager --min-reps 2 --max-reps 2 --warmup 0 --time-cap 0.001 > $L/ncu_rwkv6_mild.txt 2>&1; st ncu $?
for r in 1 2; do for v in old new; do python3 scripts/peer_table.py $L/b_${v}_$r.json 2>/dev/null | grep -E "^\| rwkv6 gates" | sed "s|^|$v $r |" ; done; done | head -80
tail -n 3 $L/ctest.log; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|passed\|FAIL" $L/san_*.log | head; cat $L/env.txt $L/steps.txt

## call 2: bash .carry/call_t.sh (carry .carry/b, .carry/v/t3 = d95d32f, .carry/v/t4 = 4ec8bde, prep.sh, the script)
set -u
. .carry/prep.sh
L=/tmp/L; rm -rf $L; mkdir -p $L
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; tar -C $L -cJf $OUT/logs.tar.xz .; }
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
cp $P /tmp/old.so; for v in t3 t4; do xz -dc .carry/v/$v/glabench_backend_chunked_fuse_cuda.so.xz > /tmp/$v.so; done
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; for f in /tmp/old.so /tmp/t3.so /tmp/t4.so; do echo "$f $(strings $f | grep -m1 -E '^[0-9a-f]{12}(-dirty)?$')"; done; } > $L/env.txt 2>&1
cp /tmp/t4.so $P
(cd build/hopper && timeout 50 ctest -L chunked_fuse_cuda -LE "multi_gpu|sanitizer" -R "rwkv6" -j8 --output-on-failure > $L/ctest.log 2>&1); st ctest $?
F=datasets/fixtures; FX=""; for n in basic strong_gates varlen no_h0 k100; do FX="$FX $F/rwkv6_$n.h5"; done
for t in memcheck racecheck; do timeout 45 bash backends/common/tests/sanitizer_test.sh $t $GB chunked_fuse_cuda $FX > $L/san_$t.log 2>&1; st san_$t $?; done
S="--op rwkv6 --dtype bf16 --timing graph --time-cap 0.08 --gates mild --gates strong --mode fwdbwd"
for r in 1 2; do for v in old t4 t3; do
  cp /tmp/$v.so $P
  timeout 30 $GB bench --backend chunked_fuse_cuda $S --shape 4,1024,4,100,100 --shape 4,2048,16,128,128 --json $L/b_${v}_$r.json > $L/b_${v}_$r.log 2>&1; st b_${v}_$r $?
done; done
for r in 1 2; do for v in old t4 t3; do python3 scripts/peer_table.py $L/b_${v}_$r.json 2>/dev/null | grep -E "^\| rwkv6 gates" | sed "s|^|$v $r |" | cut -d'|' -f1,2,5,7; done; done
tail -n 3 $L/ctest.log; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|passed" $L/san_*.log | head; cat $L/env.txt $L/steps.txt
