. .carry/b/prep.sh
date -u
for g in mild strong; do for op in rwkv6; do
timeout 100 ncu --target-processes all --metrics gpu__time_duration.sum --print-summary per-kernel \
  $GB bench --backend chunked_fuse_cuda --op $op --shape 4,1024,4,100,100 --dtype bf16 --gates $g --timing eager --min-reps 3 --max-reps 3 --warmup 1 --time-cap 1 > $OUT/ncu_${op}_$g.txt 2>&1
echo "ncu $op $g exit $?"
done; done
for f in $OUT/ncu_*.txt; do echo "== $f"; grep -E "^  [a-z_A-Z].*\(|gpu__time_duration.sum" $f | paste - - | sed -E 's/\s+/ /g' | awk '{print}' | cut -c1-200 | head -40; done
