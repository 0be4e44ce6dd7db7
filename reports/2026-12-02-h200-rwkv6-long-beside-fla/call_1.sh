. .carry/b/prep.sh
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$SECONDS
timeout 520 ctest --test-dir build/hopper -L chunked_fuse_cuda -j6 --output-on-failure > $OUT/ctest.log 2>&1
echo "ctest exit $? in $((SECONDS-t0)) s: $(grep 'tests passed' $OUT/ctest.log)"; grep -E "Failed|\*\*\*|Not Run" $OUT/ctest.log | head -20
$GB --version 2>&1 | head -2
