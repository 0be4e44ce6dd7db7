#!/usr/bin/env bash
# compute-sanitizer (memcheck or racecheck) over `glabench verify` of the CUDA backend
# on the gla fixtures given. Skipped (77) without a GPU or without compute-sanitizer.
# usage: sanitizer_test.sh TOOL GLABENCH FIXTURE...
set -u
tool=$1 glabench=$2
shift 2
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
"$glabench" verify --backend parallel_scan_cuda --dtype fp32 --fixture "$1" --no-gradcheck >/dev/null
case $? in 77) echo "no usable GPU: skipped"; exit 77 ;; esac
[[ -x $sanitizer ]] || { echo "compute-sanitizer not found: skipped"; exit 77; }
args=()
for f in "$@"; do args+=(--fixture "$f"); done
exec "$sanitizer" --tool "$tool" --error-exitcode 1 \
  "$glabench" verify --backend parallel_scan_cuda --no-gradcheck "${args[@]}"
