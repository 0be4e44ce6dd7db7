set -u
. .carry/prep.sh
cd /work/main
mkdir -p /tmp/L
st() { echo "$1 exit $2 $(date -u +%T)" | tee -a /tmp/L/steps.txt; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee /tmp/L/env.txt
B=build/hopper
P=$B/backends/glabench_backend_chunked_fuse_cuda.so
cp $P /tmp/dgfix.so; cp .carry/before.so /tmp/before.so; cp .carry/dvfix.so /tmp/dvfix.so
for r in 1 2; do for v in before dgfix dvfix; do
  cp /tmp/$v.so $P
  if [ $r = 2 ]; then timeout 30 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --dtype bf16 --gates mild,strong --mode fwdbwd --timing graph --time-cap 0.1 --json /tmp/L/time_gla_${v}_$r.json > /tmp/L/time_gla_${v}_$r.log 2>&1; st time_gla_${v}_$r $?; continue; fi
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --shape 4,2048,16,128,128 --shape 2,16384,16,128,128 --dtype bf16 --gates mild,strong,cliff --mode fwdbwd --timing graph --time-cap 0.1 --json /tmp/L/time_gla_${v}_$r.json > /tmp/L/time_gla_${v}_$r.log 2>&1; st time_gla_${v}_$r $?
  timeout 40 $GB bench --backend chunked_fuse_cuda --op rwkv6 --shape 4,2048,16,128,128 --dtype bf16 --gates mild,strong --mode fwdbwd --timing graph --time-cap 0.1 --json /tmp/L/time_rwkv6_${v}_$r.json > /tmp/L/time_rwkv6_${v}_$r.log 2>&1; st time_rwkv6_${v}_$r $?
done; done
for f in /tmp/L/time_*.log; do echo "== $(basename $f)"; grep -E "graph" $f | cut -c1-112; done
for v in dgfix dvfix; do
  cp /tmp/$v.so $P
  timeout 60 $GB bench --backend chunked_fuse_cuda --op gla --op rwkv6 --shape 2,1024,4,128,128 --dtype bf16 --gates all --mode fwdbwd --timing graph --time-cap 0.05 --json /tmp/L/acc_$v.json > /tmp/L/acc_$v.log 2>&1; st acc_$v $?
  [ $v = dgfix ] && { (cd $B && timeout 60 ctest -L chunked_fuse_cuda -R "/(bf16|fp16)$" -j8 --output-on-failure) > /tmp/L/ctest_16bit_$v.log 2>&1; st ctest_16bit_$v $?; }
  grep -E "tests passed|\*\*\*Failed" /tmp/L/ctest_16bit_$v.log | head -5
done
tar -C /tmp/L -cJf $OUT/logs.tar.xz .
cp /tmp/dvfix.so $P
(cd $B && timeout 300 ctest -L chunked_fuse_cuda -j8 --output-on-failure) > /tmp/L/ctest_chunked.log 2>&1; st ctest_chunked_dvfix $?
grep -E "tests passed|\*\*\*Failed|Timeout|Total Test" /tmp/L/ctest_chunked.log | head -20
tar -C /tmp/L -cJf $OUT/logs.tar.xz .
