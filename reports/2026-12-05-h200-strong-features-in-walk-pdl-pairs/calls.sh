# The call of 2026-12-05 02:10 UTC (`run`: bash .carry/call_pdl.sh, carry .carry/b, .carry/v,
# .carry/prep.sh, .carry/call_pdl.sh). prep.sh links the carried build at build/hopper.
# A device call (prepared 2026-12-04, late; paired added 2026-12-05) for branch lead/pdl,
# ca54c33: its plugin in .carry/b, main's (72fcb4a) in .carry/v/main, lead/strong-in-walk
# (5f9c59c: main with the gradient walk rewriting up to 4 strong features a K half itself, no
# WMMA listing for them) in .carry/v/strong, lead/paired-slabs (e4e2ec1: main with the forward
# walk's two V slabs of a head as a cluster sharing stages 1–2 by st.async;
# CHUNKED_FUSE_CUDA_PAIRED=1 default) in .carry/v/paired. Carry [".carry/b", ".carry/v",
# ".carry/prep.sh", ".carry/call_pdl.sh"] (the whole .carry with .whl is over the 64 MiB a
# call takes). The branches are rebased on main 47e9478 since; their kernels are the builds'.
#  1. chunked ctest's bf16 walk subset on lead/pdl (PDL on by default; verify_without_pdl);
#     strong: verify of every committed gla/rwkv6 fixture in bf16 and the strong-regime
#     bench fixtures, racecheck and memcheck on the strong-gate fixtures;
#     paired: the same verify (the D128 decay-tail fixtures take the paired walk; most
#     committed fixtures have V ≤ 64 and do not), memcheck, racecheck and synccheck on one;
#  2. two rounds, interleaved: main / lead PDL=0 / lead PDL=1 / paired at the seed's shape
#     (gla and rwkv6, B4 T1024 H4 D100; issue 36: fwd 0.62–0.67× fla, latency-bound); and
#     main / PDL=0 / PDL=1 / strong / paired at B2 T16384, B4 T2048, the packed shape and B2
#     T1024 H4 (accuracy), mild and strong, fwd and fwd+bwd (every configuration passes the
#     bench's quick verify against fp64 first: the D128 ones check the paired walk);
#  3. ncu kernel times at the seed's shape (rwkv6 fwd+bwd, strong): kernels' sum against the
#     call's time is what launches and gaps cost.
set -u
. .carry/prep.sh
L=/tmp/L; mkdir -p $L  # logs, packed into $OUT/logs.tar.xz after every step ($OUT takes 8 files)
st() { echo "$1 exit $2 at $SECONDS s" >> $L/steps.txt; tar -C $L -cJf $OUT/logs.tar.xz .; }
P=build/hopper/backends/glabench_backend_chunked_fuse_cuda.so
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; for f in $P .carry/v/*/*.so; do echo "$f $(strings $f | grep -m1 -E '^[0-9a-f]{12}(-dirty)?$')"; done; } > $L/env.txt 2>&1
(cd build/hopper && timeout 120 ctest -R "(bf16|fp16)$|verify_fused|verify_rwkv6_fused|decode|packed|reference_edges|pdl|PDL|graph_replay" -L chunked_fuse_cuda -LE "multi_gpu|sanitizer" -j8 --output-on-failure > $L/ctest.log 2>&1); st ctest $?
F=datasets/fixtures; M=build/hopper/backends/chunked_fuse_cuda/fixtures
SV="--backend chunked_fuse_cuda --dtype bf16"
SF="--fixture $F/gla_strong_gates.h5 --fixture $F/rwkv6_strong_gates.h5 --fixture $F/gla_varlen_strong_gates.h5"
# Variants take the build's plugin file in turn (glabench always loads the build's backend
# folder: GLABENCH_BACKEND_PATH beside it would name chunked_fuse_cuda twice).
cp $P /tmp/pdl0.so; cp $P /tmp/pdl1.so
for v in main strong paired; do cp .carry/v/$v/glabench_backend_chunked_fuse_cuda.so /tmp/$v.so; done
for x in gla rwkv6; do  # made by the ctest step's fixture setup; again if it was cut short
  [ -s $M/${x}_b2_t1024_h4_d128_decay_tail.h5 ] || timeout 60 $GB fixtures make --preset bench --only ${x}_b2_t1024_h4_d128_decay_tail --out $M >> $L/fixtures.log 2>&1
done
cp /tmp/strong.so $P
timeout 60 $GB verify $SV --op gla --op rwkv6 --fixture $F --fixture $M/gla_b2_t1024_h4_d128_decay_tail.h5 --fixture $M/rwkv6_b2_t1024_h4_d128_decay_tail.h5 > $L/strong_verify.log 2>&1; st strong_verify $?
for t in racecheck memcheck; do timeout 60 compute-sanitizer --tool $t --error-exitcode 9 $GB verify $SV --no-gradcheck $SF > $L/strong_$t.log 2>&1; st strong_$t $?; done
cp /tmp/paired.so $P
timeout 60 $GB verify $SV --op gla --op rwkv6 --fixture $F --fixture $M/gla_b2_t1024_h4_d128_decay_tail.h5 --fixture $M/rwkv6_b2_t1024_h4_d128_decay_tail.h5 > $L/paired_verify.log 2>&1; st paired_verify $?
for t in memcheck racecheck synccheck; do timeout 90 compute-sanitizer --tool $t --error-exitcode 9 $GB verify $SV --no-gradcheck --fixture $M/gla_b2_t1024_h4_d128_decay_tail.h5 > $L/paired_$t.log 2>&1; st paired_$t $?; done
B="--backend chunked_fuse_cuda --dtype bf16 --timing graph --time-cap 0.2 --max-call-seconds 30"
for r in 1 2; do
  for v in main pdl0 pdl1 strong paired; do
    cp /tmp/$v.so $P
    X=1; [ $v = pdl0 ] && X=0
    export CHUNKED_FUSE_CUDA_PDL=$X
    [ $v = strong ] || { timeout 40 $GB bench $B --op rwkv6 --op gla --shapes seed --gates mild,fla,strong --json $L/seed_${v}_$r.json > $L/seed_${v}_$r.log 2>&1; st seed_${v}_$r $?; }
    timeout 60 $GB bench $B --op gla --shape 2,16384,16,128,128 --shape 4,2048,16,128,128 --shape 2,1024,4,128,128 --shapes packed --gates mild,strong --json $L/big_${v}_$r.json > $L/big_${v}_$r.log 2>&1; st big_${v}_$r $?
  done
done
unset CHUNKED_FUSE_CUDA_PDL
cp /tmp/pdl1.so $P
N="--backend chunked_fuse_cuda --dtype bf16 --timing eager --min-reps 1 --max-reps 1 --warmup 0 --max-call-seconds 60 --shapes seed --gates strong --mode fwdbwd"
timeout 60 ncu --metrics gpu__time_duration.sum $GB bench $N --op rwkv6 --json /tmp/ncu.json > $L/ncu_seed.log 2>&1
python3 scripts/ncu_kernel_times.py $L/ncu_seed.log > $L/ncu_seed_rwkv6.txt; st ncu_seed $?
tail -3 $L/ctest.log $L/strong_*.log $L/paired_*.log
for r in 1 2; do for v in main pdl0 pdl1 strong paired; do echo "== $v $r"; cat $L/seed_${v}_$r.log $L/big_${v}_$r.log 2>/dev/null | grep -E "B[0-9]+ T" | awk '{print $2, $4, $5, $6, $10, $12}'; done; done
cat $L/ncu_seed_rwkv6.txt; cat $L/env.txt $L/steps.txt

# .carry/prep.sh, sourced first:
#   # Sourced first by each device call: links the carried build at build/hopper, unpacks its
#   # runtime libraries and the A/B plugins, sets the runtime environment and GB.
#   cd /work/main
#   mkdir -p build && ln -sfn "$PWD/.carry/b" build/hopper
#   [ -d .carry/b/runtime-libs ] || tar -C .carry/b -xJf .carry/b/runtime-libs.tar.xz
#   for f in .carry/*/*.so.xz .carry/*/*/*.so.xz; do [ -e "$f" ] || continue; [ -f "${f%.xz}" ] || xz -dk "$f"; done
#   . scripts/gpu_runtime_env.sh build/hopper
#   GB=build/hopper/glabench
